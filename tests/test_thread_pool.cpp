// numr's thread pool: every item of a parallel_for runs exactly once, in chunks of at least
// the grain, a nested call runs serially, and an exception reaches the caller; on numr's
// workers and on the OpenMP team it hands chunks to after a GEMM ran on one
// (note_openmp_team), and with several chunks per thread.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <stdexcept>
#include <vector>

#include "core/thread_pool.h"
#include "numr/numr.h"

namespace numr {
namespace {

// With `openmp`, each call follows note_openmp_team(), so that its chunks go to OpenMP.
void check_pool(const char* where, bool openmp) {
  ThreadPool& pool = ThreadPool::instance();
  auto before = [&] {
    if (openmp) pool.note_openmp_team();
  };
  for (const int64_t grain : {1, 7, 1000}) {
    const int64_t n = 10007;
    std::vector<std::atomic<int>> seen(static_cast<size_t>(n));
    std::atomic<int> short_chunks{0}, nested_serial{0}, on_team{0};
    before();
    pool.parallel_for(n, grain, [&](int64_t b, int64_t e) {
      if (e - b < grain && e != n) short_chunks.fetch_add(1);
      if (ThreadPool::on_openmp_team()) on_team.fetch_add(1);
      for (int64_t i = b; i < e; ++i) seen[size_t(i)].fetch_add(1);
      // A nested call runs on this thread, in one range.
      int calls = 0;
      pool.parallel_for(100, 1, [&](int64_t nb, int64_t ne) {
        ++calls;
        if (nb == 0 && ne == 100) nested_serial.fetch_add(1);
      });
      EXPECT_EQ(calls, 1) << where;
    });
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(seen[size_t(i)].load(), 1) << where << " item " << i;
    EXPECT_EQ(short_chunks.load(), 0) << where << " grain " << grain;
    EXPECT_GT(nested_serial.load(), 0) << where;
    EXPECT_EQ(on_team.load() > 0, openmp) << where;
  }
  before();
  EXPECT_THROW(pool.parallel_for(1000, 1,
                                 [](int64_t b, int64_t) {
                                   if (b == 0) throw std::runtime_error("chunk 0");
                                 }),
               std::runtime_error)
      << where;
}

TEST(ThreadPool, ItemsOnceNestedSerialErrorsPropagate) {
  const int threads = num_threads();
  set_num_threads(3);
  check_pool("numr's workers", false);
  const char* window = std::getenv("NUMR_POOL_OMP_MS");
  if (!window || std::atof(window) > 0) check_pool("OpenMP's team", true);
  set_num_threads(threads);
}

}  // namespace
}  // namespace numr
