// numr's own BF16 GEMM for the epilogues (kernels/bf16_gemm.cpp), on CPUs with AVX512-BF16:
// against the float64 reference at sizes past its blocking (tiles of 6 x 64, units of 48
// rows, column blocks of about 1 MiB of packed b), with ragged edges, odd k, a batch with
// one b or one per item, operands needing a copy to rows of unit stride, the pre-activation
// kept, and poisoned outputs. Each check asserts that the kernel ran; skipped elsewhere.
#include <array>
#include <string>

#include "backends/cpu/gemm_epilogue.h"
#include "support/harness.h"

namespace numr::test {
namespace {

constexpr Activation kActs[] = {Activation::Gelu, Activation::Silu, Activation::Sigmoid,
                                Activation::Tanh};

struct Case {
  int64_t nb, m, k, n;
  bool shared_b;
  Layout la, lb;
};
// k = 2049: 4 panels per column block, so n = 600 spans 3 blocks (the last ragged); m = 100:
// 3 units of rows, the last with a tile of 4 rows; k = 1 and 2: one pair, half-filled or not.
constexpr Case kCases[] = {
    {1, 100, 2049, 600, true, Layout::Contiguous, Layout::Contiguous},
    {1, 13, 1, 70, true, Layout::Contiguous, Layout::Contiguous},
    {1, 5, 2, 64, true, Layout::Transposed, Layout::Contiguous},
    {3, 50, 33, 130, true, Layout::Contiguous, Layout::Transposed},
    {3, 7, 300, 65, false, Layout::Strided, Layout::Strided},
};

std::string label(const Case& c, Activation act) {
  return std::to_string(c.nb) + "x" + std::to_string(c.m) + "x" + std::to_string(c.k) + "x" +
         std::to_string(c.n) + (c.shared_b ? " shared b " : " b per item ") +
         std::string(activation_name(act)) + ": ";
}

TEST(CpuBf16Gemm, EpilogueMatchesReference) {
  if (!cpu::uses_own_bf16_gemm(DType::BF16, Activation::Gelu))
    GTEST_SKIP() << "this CPU (or NUMR_CPU_ISA) has no AVX512-BF16: oneDNN runs instead";
  set_poison(true);
  uint64_t seed = 4100;
  for (const Case& c : kCases) {
    const Shape as = c.nb == 1 ? Shape{c.m, c.k} : Shape{c.nb, c.m, c.k};
    const Shape bs = c.shared_b ? Shape{c.k, c.n} : Shape{c.nb, c.k, c.n};
    const Tensor a = make_input(as, DType::BF16, Device::cpu(), unit_spec(c.la), seed += 3);
    const Tensor b = make_input(bs, DType::BF16, Device::cpu(), unit_spec(c.lb), seed + 1);
    const Tensor bias =
        make_input({c.n}, DType::BF16, Device::cpu(), unit_spec(Layout::Contiguous), seed + 2);
    const Tolerance tol = gemm_tolerance(DType::BF16, c.k);
    for (Activation act : kActs) {
      RefTensor pre_ref;
      const RefTensor want =
          reference::matmul_bias_act(to_ref(a), to_ref(b), to_ref(bias), act, nullptr, &pre_ref);
      int64_t before = cpu::own_bf16_gemm_count();
      const Tensor got = matmul_bias_activation(a, b, bias, act);
      EXPECT_EQ(cpu::own_bf16_gemm_count(), before + 1) << label(c, act);
      std::string msg = compare(got, want, tol);
      EXPECT_EQ(msg, "") << label(c, act) << msg;
      before = cpu::own_bf16_gemm_count();
      const EpilogueForward f = matmul_bias_activation_fwd(a, b, bias, act);
      EXPECT_EQ(cpu::own_bf16_gemm_count(), before + 1) << label(c, act) << "fwd";
      msg = compare(f.out, want, tol);
      EXPECT_EQ(msg, "") << label(c, act) << "fwd out " << msg;
      msg = compare(f.saved, needs_preactivation(act) ? pre_ref : want, tol);
      EXPECT_EQ(msg, "") << label(c, act) << "fwd saved " << msg;
    }
  }
  set_poison(false);
}

}  // namespace
}  // namespace numr::test
