// A fixed pool of worker threads for the CPU backend. parallel_for splits [0, n) into
// contiguous ranges of at least `grain` items (one per thread, or NUMR_POOL_CHUNKS per
// thread taken as threads finish); the calling thread takes part. Calls made
// from inside a worker run serially.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

namespace numr {

class ThreadPool {
 public:
  using RangeFn = void (*)(void* ctx, int64_t begin, int64_t end);

  static ThreadPool& instance();
  ~ThreadPool();

  int size() const { return n_threads_; }
  // Whether the calling thread is running a chunk of a parallel_for (where a nested call
  // runs serially).
  static bool in_worker();
  void resize(int n_threads);
  // Called with the new size after every resize (the BLAS follows the pool).
  void set_resize_hook(std::function<void(int)> hook);

  void parallel_for(int64_t n, int64_t grain, RangeFn fn, void* ctx);

  // Tells workers polling for the next job to block now: called before work is handed to
  // another library's threads (the BLAS's), which would otherwise share the cores with
  // numr's polling workers.
  void park() { park_.fetch_add(1, std::memory_order_release); }

  // Called after a product ran on an OpenMP team (the CPU GEMMs). For NUMR_POOL_OMP_MS
  // after it (while OpenMP's threads still poll for work, which they do with the core to
  // themselves), parallel_for calls from the same thread hand their chunks to that team
  // rather than waking numr's workers onto the same cores.
  void note_openmp_team();
  // Whether the calling thread is inside an OpenMP parallel region.
  static bool on_openmp_team();

  template <class F>
  void parallel_for(int64_t n, int64_t grain, F&& f) {
    using Fn = std::remove_reference_t<F>;
    parallel_for(
        n, grain, [](void* c, int64_t b, int64_t e) { (*static_cast<Fn*>(c))(b, e); },
        const_cast<void*>(static_cast<const void*>(&f)));
  }

 private:
  explicit ThreadPool(int n_threads);
  // Runs chunks of `chunk` items of [0, n) on an OpenMP team (thread_pool_omp.cpp).
  void run_openmp(int threads, int64_t n, int64_t chunk, RangeFn fn, void* ctx);
  // Marks the calling thread as running a chunk; returns the previous mark.
  static bool set_in_worker(bool in);
  void start(int n_threads);
  void stop();
  void worker_loop(int id);
  void run_chunks();

  int n_threads_ = 1;
  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable wake_, done_;
  bool stopping_ = false;
  // Written under mu_; also read without it by threads spinning before they block.
  std::atomic<uint64_t> generation_{0};
  std::atomic<uint64_t> park_{0};  // bumped by park()
  // The job in flight.
  RangeFn fn_ = nullptr;
  void* ctx_ = nullptr;
  int64_t n_ = 0, chunk_ = 0, n_chunks_ = 0;
  int64_t next_chunk_ = 0;
  std::atomic<int64_t> chunks_done_{0};
  std::exception_ptr error_;
  std::mutex call_mu_;  // one parallel_for at a time from outside the pool
  std::function<void(int)> resize_hook_;
};

inline void parallel_for(int64_t n, int64_t grain, auto&& f) {
  ThreadPool::instance().parallel_for(n, grain, f);
}

}  // namespace numr
