// Bounds on numr's CPU thread count, shared by set_num_threads and NUMR_NUM_THREADS.
#pragma once

namespace numr {

// The most threads set_num_threads accepts. Far above any core count numr runs on, yet
// low enough that the pool's threads and stacks stay a bounded cost.
inline constexpr int kMaxNumThreads = 1024;

// The thread count `text` asks for (NUMR_NUM_THREADS): decimal digits only, with a value
// in [1, kMaxNumThreads]; 0 for anything else (empty, signs, spaces, other characters).
int parse_thread_count(const char* text);

}  // namespace numr
