// ThreadPool::run_openmp: a parallel_for's chunks on an OpenMP team. Its own file, the one
// compiled with OpenMP (src/CMakeLists.txt).
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <exception>

#include "core/thread_pool.h"

namespace numr {

bool ThreadPool::on_openmp_team() { return omp_in_parallel() != 0; }

void ThreadPool::run_openmp(int threads, int64_t n, int64_t chunk, RangeFn fn, void* ctx) {
  const int64_t n_chunks = (n + chunk - 1) / chunk;
  std::atomic<int64_t> next{0};
  std::exception_ptr error;
#pragma omp parallel num_threads(threads)
  {
    const bool outer = set_in_worker(true);  // nested parallel_for calls run serially
    for (;;) {
      const int64_t c = next.fetch_add(1, std::memory_order_relaxed);
      if (c >= n_chunks) break;
      try {
        fn(ctx, c * chunk, std::min(n, (c + 1) * chunk));
      } catch (...) {
#pragma omp critical(numr_pool_error)
        if (!error) error = std::current_exception();
      }
    }
    set_in_worker(outer);
  }
  if (error) std::rethrow_exception(error);
}

}  // namespace numr
