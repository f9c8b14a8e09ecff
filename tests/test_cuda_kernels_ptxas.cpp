// Every kernel the CUDA backend can generate (kernel_catalog.h) assembles with ptxas for
// sm_80 and sm_90 with no error and no warning. Needs no GPU: only ptxas (skipped without).
#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "backends/cuda/kernel_catalog.h"
#include "support/ptxas.h"

namespace numr::cuda {
namespace {

constexpr int kThreads = 2;
constexpr size_t kMaxReported = 5;

void expect_catalog_assembles(const ptx::Target& target) {
  if (!numr::test::find_ptxas())
    GTEST_SKIP() << "ptxas not found (set NUMR_PTXAS, put it on PATH, or install it in "
                    "/usr/local/cuda/bin)";
  const std::vector<GeneratedKernel> kernels = all_kernels(target);
  ASSERT_FALSE(kernels.empty());

  // Entry names must be unique: the kernel cache keys and the names are one string.
  std::set<std::string> names;
  for (const GeneratedKernel& k : kernels)
    EXPECT_TRUE(names.insert(k.name).second) << "two kernels named " << k.name;

  std::atomic<size_t> next{0};
  std::mutex mu;
  std::vector<std::string> failures;
  auto worker = [&] {
    for (size_t i; (i = next.fetch_add(1)) < kernels.size();) {
      const numr::test::PtxasResult r = numr::test::assemble(kernels[i].ptx, target.sm);
      if (r.ok()) continue;
      std::lock_guard lock(mu);
      failures.push_back(kernels[i].name + " (exit " + std::to_string(r.exit_status) + "):\n" +
                         r.output + (failures.size() < 1 ? "\n" + kernels[i].ptx : ""));
    }
  };
  std::vector<std::thread> pool;
  for (int t = 0; t < kThreads; ++t) pool.emplace_back(worker);
  for (std::thread& t : pool) t.join();

  EXPECT_TRUE(failures.empty()) << failures.size() << " of " << kernels.size()
                                << " kernels fail on sm_" << target.sm;
  for (size_t i = 0; i < failures.size() && i < kMaxReported; ++i)
    ADD_FAILURE() << "sm_" << target.sm << ": " << failures[i];
  std::printf("[ PtxCatalog ] %zu kernels assembled for sm_%d\n", kernels.size(), target.sm);
}

TEST(PtxCatalog, AssemblesForSm80) { expect_catalog_assembles(ptx::Target{80, 8, 7}); }
TEST(PtxCatalog, AssemblesForSm90) { expect_catalog_assembles(ptx::Target{90, 8, 7}); }

}  // namespace
}  // namespace numr::cuda
