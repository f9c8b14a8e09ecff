// The CPU backend runs the widest kernels the processor supports, and each ISA's kernels
// really use registers of that width.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "backends/cpu/kernels/kernels.h"

namespace numr::cpu {
namespace {

TEST(CpuIsa, KernelsMatchTheirInstructionSet) {
  const KernelTable& k = kernels();
  const std::string isa = k.isa;
  const int expected = isa == "avx512" ? 64 : isa == "avx2" ? 32 : 16;
  EXPECT_EQ(k.vector_bytes, expected) << isa;
  EXPECT_EQ(avx512::table.vector_bytes, 64);
  EXPECT_EQ(avx2::table.vector_bytes, 32);
  EXPECT_EQ(sse4::table.vector_bytes, 16);
}

TEST(CpuIsa, BestInstructionSetIsChosen) {
  const char* forced = std::getenv("NUMR_CPU_ISA");
  if (forced && *forced) {
    EXPECT_EQ(std::string(kernels().isa), forced);
    return;
  }
  __builtin_cpu_init();
  const char* best = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                             __builtin_cpu_supports("avx512dq") &&
                             __builtin_cpu_supports("avx512vl")
                         ? "avx512"
                     : __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
                             __builtin_cpu_supports("bmi2")
                         ? "avx2"
                         : "sse4";
  EXPECT_EQ(std::string(kernels().isa), best);
}

}  // namespace
}  // namespace numr::cpu
