#include "core/thread_pool.h"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>

#include "core/thread_count.h"
#include "numr/error.h"

namespace numr {
namespace {
thread_local bool tl_in_pool = false;
// Until when (steady_clock, ns) this thread's parallel_for runs on the OpenMP team its last
// team product ran on (note_openmp_team): that team belongs to this thread.
thread_local int64_t tl_openmp_until_ns = 0;

// How long a thread polls for the next job, or for a job's end, before it blocks on a
// condition variable. Waking a blocked thread costs a system call and a reschedule, which
// small ops back to back would pay every call, and where the core it sleeps on has gone
// idle, waking that core, which on a virtual machine can outlast the op, so that it runs
// on the calling thread alone. The default is about as long as OpenMP's runtime (libgomp)
// polls. NUMR_SPIN_US sets it (0: block at once, for cores shared with other busy
// processes).
std::chrono::microseconds spin_time() {
  static const std::chrono::microseconds t = [] {
    long us = 10000;
    if (const char* env = std::getenv("NUMR_SPIN_US")) us = std::max(0L, std::atol(env));
    return std::chrono::microseconds(us);
  }();
  return t;
}

// Polls done() until it holds or spin_time() has passed.
template <class F>
void spin_until(F&& done) {
  if (spin_time().count() == 0) return;
  const auto end = std::chrono::steady_clock::now() + spin_time();
  for (int i = 1; !done(); ++i) {
    // Yielding, not a pause instruction: where other threads are runnable (another
    // library's spinning workers), a thread that keeps its core slowed every op.
    std::this_thread::yield();
    if (i % 8 == 0 && std::chrono::steady_clock::now() >= end) return;
  }
}

// How many chunks per thread parallel_for cuts a range into (at most; chunks keep at least
// `grain` items). Threads take chunks as they finish, so more chunks than threads even out
// threads that run slower (a busy core, a remote memory node) at the cost of more hand-offs.
// NUMR_POOL_CHUNKS sets it; 1, the default, gives each thread one equal chunk.
int64_t chunks_per_thread() {
  static const int64_t n = [] {
    long v = 1;
    if (const char* env = std::getenv("NUMR_POOL_CHUNKS")) v = std::clamp(std::atol(env), 1L, 64L);
    return int64_t(v);
  }();
  return n;
}

// A bad NUMR_NUM_THREADS is ignored rather than fatal: it is read on the first op, where an
// exception would surface far from its cause.
int default_threads() {
  if (const char* env = std::getenv("NUMR_NUM_THREADS")) {
    if (const int n = parse_thread_count(env)) return n;
    std::fprintf(stderr, "numr: ignoring NUMR_NUM_THREADS='%s' (want an integer in [1, %d])\n", env,
                 kMaxNumThreads);
  }
  const unsigned hw = std::thread::hardware_concurrency();
  return int(std::clamp(hw, 1u, unsigned(kMaxNumThreads)));
}
}  // namespace

int parse_thread_count(const char* text) {
  if (!text || !*text) return 0;
  int n = 0;
  for (const char* c = text; *c; ++c) {
    if (*c < '0' || *c > '9') return 0;
    n = n * 10 + (*c - '0');
    if (n > kMaxNumThreads) return 0;
  }
  return n;
}

bool ThreadPool::in_worker() { return tl_in_pool; }
bool ThreadPool::set_in_worker(bool in) { return std::exchange(tl_in_pool, in); }

namespace {
// How long after a product on an OpenMP team parallel_for runs on that team (note_openmp_team):
// about as long as libgomp's threads poll by default. NUMR_POOL_OMP_MS sets it; 0 never.
int64_t openmp_window_ns() {
  static const int64_t ns = [] {
    double ms = 10;
    if (const char* env = std::getenv("NUMR_POOL_OMP_MS")) ms = std::max(0.0, std::atof(env));
    return int64_t(ms * 1e6);
  }();
  return ns;
}
int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
}  // namespace

void ThreadPool::note_openmp_team() {
  if (openmp_window_ns() > 0) tl_openmp_until_ns = now_ns() + openmp_window_ns();
}

ThreadPool& ThreadPool::instance() {
  static ThreadPool pool(default_threads());
  return pool;
}

ThreadPool::ThreadPool(int n_threads) {
  try {
    start(n_threads);
  } catch (const std::exception&) {
    start(1);  // starts no thread, so cannot fail
  }
}
ThreadPool::~ThreadPool() { stop(); }

void ThreadPool::start(int n_threads) {
  stopping_ = false;
  try {
    workers_.reserve(size_t(n_threads - 1));
    for (int i = 1; i < n_threads; ++i) workers_.emplace_back([this, i] { worker_loop(i); });
  } catch (...) {
    stop();  // the workers that did start
    throw;
  }
  n_threads_ = n_threads;
}

void ThreadPool::stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (auto& t : workers_) t.join();
  workers_.clear();
}

// Callers check the bounds. Where a thread cannot be started, the previous count is
// restored (1 if even that fails, which starts no thread) and BackendError thrown.
void ThreadPool::resize(int n_threads) {
  std::function<void(int)> hook;
  std::string error;
  bool failed = false;
  int size = 0;
  {
    std::lock_guard<std::mutex> call(call_mu_);
    if (n_threads != n_threads_) {
      const int previous = n_threads_;
      stop();
      try {
        start(n_threads);
      } catch (const std::exception& e) {
        failed = true;
        error = e.what();
        try {
          start(previous);
        } catch (const std::exception&) {
          start(1);  // starts no thread, so cannot fail
        }
      }
    }
    hook = resize_hook_;
    size = n_threads_;
  }
  if (hook) hook(size);
  if (failed)
    fail<BackendError>("set_num_threads", "could not start ", n_threads, " threads (", error,
                       "); keeping ", size);
}

void ThreadPool::set_resize_hook(std::function<void(int)> hook) {
  std::lock_guard<std::mutex> call(call_mu_);
  resize_hook_ = std::move(hook);
  if (resize_hook_) resize_hook_(n_threads_);
}

void ThreadPool::run_chunks() {
  for (;;) {
    int64_t c;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (next_chunk_ >= n_chunks_) return;
      c = next_chunk_++;
    }
    const int64_t b = c * chunk_, e = std::min(n_, b + chunk_);
    try {
      fn_(ctx_, b, e);
    } catch (...) {
      std::lock_guard<std::mutex> lock(mu_);
      if (!error_) error_ = std::current_exception();
    }
    std::lock_guard<std::mutex> lock(mu_);
    if (++chunks_done_ == n_chunks_) done_.notify_all();
  }
}

void ThreadPool::worker_loop(int /*id*/) {
  tl_in_pool = true;
  uint64_t seen = 0;
  for (;;) {
    const uint64_t parked = park_.load(std::memory_order_acquire);
    spin_until([&] {
      return generation_.load(std::memory_order_acquire) != seen ||
             park_.load(std::memory_order_acquire) != parked;
    });
    {
      std::unique_lock<std::mutex> lock(mu_);
      wake_.wait(lock, [&] { return stopping_ || generation_ != seen; });
      if (stopping_) return;
      seen = generation_;
    }
    run_chunks();
  }
}

void ThreadPool::parallel_for(int64_t n, int64_t grain, RangeFn fn, void* ctx) {
  if (n <= 0) return;
  grain = std::max<int64_t>(grain, 1);
  if (tl_in_pool || n_threads_ == 1 || n <= grain) {
    fn(ctx, 0, n);
    return;
  }
  if (tl_openmp_until_ns > now_ns() && !omp_in_parallel()) {
    const int64_t max_chunks =
        std::min<int64_t>(n_threads_ * chunks_per_thread(), (n + grain - 1) / grain);
    const int64_t chunk = (n + max_chunks - 1) / max_chunks;
    run_openmp(int(std::min<int64_t>(n_threads_, (n + chunk - 1) / chunk)), n, chunk, fn, ctx);
    return;
  }
  std::lock_guard<std::mutex> call(call_mu_);
  const int64_t max_chunks =
      std::min<int64_t>(n_threads_ * chunks_per_thread(), (n + grain - 1) / grain);
  {
    std::lock_guard<std::mutex> lock(mu_);
    fn_ = fn;
    ctx_ = ctx;
    n_ = n;
    chunk_ = (n + max_chunks - 1) / max_chunks;
    n_chunks_ = (n + chunk_ - 1) / chunk_;
    next_chunk_ = 0;
    chunks_done_ = 0;
    error_ = nullptr;
    ++generation_;
  }
  wake_.notify_all();
  tl_in_pool = true;
  run_chunks();
  tl_in_pool = false;
  std::exception_ptr err;
  spin_until([&] { return chunks_done_.load(std::memory_order_acquire) == n_chunks_; });
  {
    std::unique_lock<std::mutex> lock(mu_);
    done_.wait(lock, [&] { return chunks_done_ == n_chunks_; });
    err = error_;
  }
  if (err) std::rethrow_exception(err);
}

}  // namespace numr
