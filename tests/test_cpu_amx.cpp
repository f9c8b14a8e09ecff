// oneDNN's AMX kernels for the BF16 GEMMs: used wherever the CPU and the OS offer AMX-BF16
// (oneDNN asks Linux for the tile state itself), and then taking the BF16 epilogues from
// numr's own GEMM; their results against the float64 reference, on the pool's row blocks
// and on an OpenMP team. On a CPU without AMX, or with ONEDNN_MAX_CPU_ISA capping oneDNN
// below it (as the numr_tests_gemm_* runs of tests/CMakeLists.txt do, to keep the AVX-512
// and AVX2 paths tested on AMX machines), the AMX checks are skipped and say why.
#include <cpuid.h>

#include <cstdlib>
#include <string>

#include "backends/cpu/gemm_epilogue.h"
#include "backends/cpu/onednn_matmul.h"
#include "support/harness.h"

namespace numr::test {
namespace {

// AMX-BF16 and AMX-TILE in CPUID, and the tile state enabled by the OS (XCR0 bits 17, 18).
bool cpu_has_amx_bf16() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return false;
  if (!(d & (1u << 22)) || !(d & (1u << 24))) return false;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return false;
  if (!(c & (1u << 27))) return false;  // OSXSAVE
  unsigned lo = 0, hi = 0;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (lo & (3u << 17)) == (3u << 17);
}

std::string why_no_amx() {
  if (!cpu_has_amx_bf16()) return "this CPU (or its OS) has no AMX-BF16";
  if (const char* cap = std::getenv("ONEDNN_MAX_CPU_ISA"))
    return std::string("ONEDNN_MAX_CPU_ISA=") + cap + " caps oneDNN below AMX";
  return "";
}

TEST(CpuIsaAmx, OnednnUsesAmxWhereTheCpuHasIt) {
  const std::string why = why_no_amx();
  if (!why.empty()) {
    EXPECT_FALSE(cpu_has_amx_bf16() && std::getenv("ONEDNN_MAX_CPU_ISA") == nullptr);
    GTEST_SKIP() << why << "; oneDNN runs its AVX-512 or AVX2 kernels";
  }
  EXPECT_TRUE(cpu::onednn_uses_amx());
  EXPECT_FALSE(cpu::uses_own_gemm(DType::BF16, Activation::Gelu));
}

// BF16 products and epilogues (every activation, the pre-activation kept) through the AMX
// kernels, split over the pool and on a team of two.
TEST(CpuIsaAmx, Bf16GemmsMatchReference) {
  const std::string why = why_no_amx();
  if (!why.empty()) GTEST_SKIP() << why;
  const int threads = num_threads();
  set_num_threads(2);
  uint64_t seed = 1300;
  for (const bool team : {false, true}) {
    cpu::set_gemm_team_min_macs_for_testing(team ? 0.0 : 1e300);
    const std::string split = team ? "team: " : "pool: ";
    const int64_t m = 300, k = 520, n = 136;
    const Tensor a =
        make_input({m, k}, DType::BF16, Device::cpu(), unit_spec(Layout::Contiguous), seed += 3);
    const Tensor b =
        make_input({k, n}, DType::BF16, Device::cpu(), unit_spec(Layout::Transposed), seed + 1);
    const Tensor bias =
        make_input({n}, DType::BF16, Device::cpu(), unit_spec(Layout::Contiguous), seed + 2);
    std::string msg = compare(matmul(a, b), reference::matmul(to_ref(a), to_ref(b)),
                              accumulation_tolerance(DType::BF16, k));
    EXPECT_EQ(msg, "") << split << "matmul " << msg;
    for (Activation act : {Activation::None, Activation::Relu, Activation::Gelu, Activation::Silu,
                           Activation::Sigmoid, Activation::Tanh}) {
      RefTensor pre_ref;
      const RefTensor want =
          reference::matmul_bias_act(to_ref(a), to_ref(b), to_ref(bias), act, nullptr, &pre_ref);
      const int64_t own = cpu::own_gemm_count();
      msg = compare(matmul_bias_activation(a, b, bias, act), want, gemm_tolerance(DType::BF16, k));
      EXPECT_EQ(msg, "") << split << activation_name(act) << " " << msg;
      const EpilogueForward f = matmul_bias_activation_fwd(a, b, bias, act);
      EXPECT_EQ(cpu::own_gemm_count(), own) << split << activation_name(act);
      msg = compare(f.out, want, gemm_tolerance(DType::BF16, k));
      EXPECT_EQ(msg, "") << split << activation_name(act) << " fwd out " << msg;
      msg = compare(f.saved, needs_preactivation(act) ? pre_ref : want,
                    gemm_tolerance(DType::BF16, k));
      EXPECT_EQ(msg, "") << split << activation_name(act) << " fwd saved " << msg;
    }
  }
  cpu::set_gemm_team_min_macs_for_testing(-1.0);
  set_num_threads(threads);
}

}  // namespace
}  // namespace numr::test
