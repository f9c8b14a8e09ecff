// Every kernel the CUDA backend can generate (kernel_catalog.h) is generated with unique
// entry names, and assembles with ptxas for sm_80 and sm_90 with no error and no warning.
// Needs no GPU; the assembly needs ptxas (skipped without, and in the sanitized tier).
// With NUMR_PTX_DUMP=<dir>, the generation tests also write every kernel's PTX, sorted by
// name, to <dir>/sm_<N>.ptx, so that a refactoring of a generator can be diffed.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <fstream>
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

// Generates the whole catalog for `target`; its entry names must be unique, since the
// kernel cache keys and the names are one string.
void expect_catalog_generates(const ptx::Target& target) {
  const std::vector<GeneratedKernel> kernels = all_kernels(target);
  ASSERT_FALSE(kernels.empty());
  std::set<std::string> names;
  for (const GeneratedKernel& k : kernels) {
    EXPECT_TRUE(names.insert(k.name).second) << "two kernels named " << k.name;
    EXPECT_NE(k.ptx.find(".entry " + k.name + "("), std::string::npos) << k.name;
  }
  std::printf("[ PtxCatalog ] %zu kernels generated for sm_%d\n", kernels.size(), target.sm);
  if (const char* dir = std::getenv("NUMR_PTX_DUMP")) {
    std::vector<const GeneratedKernel*> sorted;
    for (const GeneratedKernel& k : kernels) sorted.push_back(&k);
    std::sort(sorted.begin(), sorted.end(), [](auto* a, auto* b) { return a->name < b->name; });
    std::ofstream f(std::string(dir) + "/sm_" + std::to_string(target.sm) + ".ptx");
    for (const GeneratedKernel* k : sorted) f << "// ==== " << k->name << "\n" << k->ptx << "\n";
    ASSERT_TRUE(f.good()) << "cannot write the PTX dump in " << dir;
  }
}

void expect_catalog_assembles(const ptx::Target& target) {
  NUMR_REQUIRE_PTXAS();
  const std::vector<GeneratedKernel> kernels = all_kernels(target);
  ASSERT_FALSE(kernels.empty());

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

TEST(PtxCatalog, GeneratesForSm80) { expect_catalog_generates(ptx::Target{80, 8, 7}); }
TEST(PtxCatalog, GeneratesForSm90) { expect_catalog_generates(ptx::Target{90, 8, 7}); }
TEST(PtxCatalog, AssemblesForSm80) { expect_catalog_assembles(ptx::Target{80, 8, 7}); }
TEST(PtxCatalog, AssemblesForSm90) { expect_catalog_assembles(ptx::Target{90, 8, 7}); }

}  // namespace
}  // namespace numr::cuda
