// numr's own GEMM for the epilogues (kernels/own_gemm.cpp), F32 and BF16 (on CPUs with
// AVX512-BF16): against the float64 reference at sizes past its blocking (tiles of 6 x 64, units of
// 48 rows, column blocks of about 1 MiB of packed b), with ragged edges, odd k, a batch with one b
// or one per item (a large b per item packed a group of items at a time), operands needing a copy
// to rows of unit stride, the pre-activation kept, and poisoned outputs. Each check asserts that
// the kernel ran; a dtype it does not run for on this CPU (or NUMR_CPU_ISA) is skipped.
#include <array>
#include <cmath>
#include <string>
#include <vector>

#include "backends/cpu/gemm_epilogue.h"
#include "backends/cpu/gemm_support.h"
#include "backends/cpu/kernels/kernels.h"
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
// A b per item of 8 MiB (F32) or 4 MiB (BF16) packed: ten items take three groups (F32) or two
// (BF16) under kOwnGemmPackLimit.
constexpr Case kGroupedCase = {10, 6, 2048, 1024, false, Layout::Contiguous, Layout::Contiguous};
// k = 2049: 4 panels per column block, so n = 600 spans 3 blocks (the last ragged); m = 100:
// 3 units of rows, the last with a tile of 4 rows; k = 1 and 2: one pair, half-filled or not.
// Each has at least kOnednnMinMacs multiply-adds (BF16 takes the kernel only from there).
constexpr Case kCases[] = {
    {1, 100, 2049, 600, true, Layout::Contiguous, Layout::Contiguous},
    {1, 301, 1, 250, true, Layout::Contiguous, Layout::Contiguous},
    {1, 203, 2, 200, true, Layout::Transposed, Layout::Contiguous},
    {3, 50, 33, 130, true, Layout::Contiguous, Layout::Transposed},
    {3, 7, 300, 65, false, Layout::Strided, Layout::Strided},
    kGroupedCase,
};

std::string label(DType t, const Case& c, Activation act) {
  return std::string(dtype_name(t)) + " " + std::to_string(c.nb) + "x" + std::to_string(c.m) + "x" +
         std::to_string(c.k) + "x" + std::to_string(c.n) +
         (c.shared_b ? " shared b " : " b per item ") + std::string(activation_name(act)) + ": ";
}

void check_dtype(DType t, uint64_t seed) {
  set_poison(true);
  for (const Case& c : kCases) {
    const Shape as = c.nb == 1 ? Shape{c.m, c.k} : Shape{c.nb, c.m, c.k};
    const Shape bs = c.shared_b ? Shape{c.k, c.n} : Shape{c.nb, c.k, c.n};
    const Tensor a = make_input(as, t, Device::cpu(), unit_spec(c.la), seed += 3);
    const Tensor b = make_input(bs, t, Device::cpu(), unit_spec(c.lb), seed + 1);
    const Tensor bias =
        make_input({c.n}, t, Device::cpu(), unit_spec(Layout::Contiguous), seed + 2);
    const Tolerance tol = gemm_tolerance(t, c.k);
    for (Activation act : kActs) {
      RefTensor pre_ref;
      const RefTensor want =
          reference::matmul_bias_act(to_ref(a), to_ref(b), to_ref(bias), act, nullptr, &pre_ref);
      int64_t before = cpu::own_gemm_count();
      const Tensor got = matmul_bias_activation(a, b, bias, act);
      EXPECT_EQ(cpu::own_gemm_count(), before + 1) << label(t, c, act);
      std::string msg = compare(got, want, tol);
      EXPECT_EQ(msg, "") << label(t, c, act) << msg;
      before = cpu::own_gemm_count();
      const EpilogueForward f = matmul_bias_activation_fwd(a, b, bias, act);
      EXPECT_EQ(cpu::own_gemm_count(), before + 1) << label(t, c, act) << "fwd";
      msg = compare(f.out, want, tol);
      EXPECT_EQ(msg, "") << label(t, c, act) << "fwd out " << msg;
      msg = compare(f.saved, needs_preactivation(act) ? pre_ref : want, tol);
      EXPECT_EQ(msg, "") << label(t, c, act) << "fwd saved " << msg;
    }
  }
  set_poison(false);
}

TEST(CpuOwnGemm, BatchesOfLargeBsArePackedInGroups) {
  for (DType t : {DType::F32, DType::BF16}) {
    cpu::OwnGemmCall call;
    call.dtype = t;
    call.nb = kGroupedCase.nb;
    call.k = kGroupedCase.k;
    call.n = kGroupedCase.n;
    call.b_bs = kGroupedCase.k * kGroupedCase.n;
    const int64_t group = cpu::own_gemm_group_items(call);
    EXPECT_EQ(group, t == DType::F32 ? 4 : 8) << dtype_name(t);
    EXPECT_EQ(cpu::own_gemm_scratch_bytes(call),
              group * cpu::own_gemm_packed_bytes(t, call.k, call.n))
        << dtype_name(t);
    call.b_bs = 0;  // one b for every item: packed once, whatever its size
    EXPECT_EQ(cpu::own_gemm_scratch_bytes(call), cpu::own_gemm_packed_bytes(t, call.k, call.n))
        << dtype_name(t);
  }
}

TEST(CpuOwnGemm, F32EpilogueMatchesReference) {
  if (!cpu::uses_own_gemm(DType::F32, Activation::Gelu))
    GTEST_SKIP() << "CPU kernels below AVX-512 (NUMR_CPU_ISA or the CPU): oneDNN runs instead";
  check_dtype(DType::F32, 4100);
}

TEST(CpuOwnGemm, Bf16BelowTheThresholdKeepsSubnormals) {
  if (!cpu::uses_own_gemm(DType::BF16, Activation::Gelu))
    GTEST_SKIP() << "no AVX512-BF16 on this CPU (or NUMR_CPU_ISA below AVX-512): oneDNN runs";
  // 2^-130 (a subnormal BF16) x 2^100: the product, 2^-30, is a normal float.
  const double tiny = std::ldexp(1.0, -130), big = std::ldexp(1.0, 100);
  const Tensor a =
      Tensor::from_vector(std::vector<double>{tiny, 0, 0, 0}, {2, 2}).cast(DType::BF16);
  const Tensor b =
      Tensor::from_vector(std::vector<double>{big, 0, 0, 0, 0, 0}, {2, 3}).cast(DType::BF16);
  const Tensor bias = zeros({3}, DType::BF16);
  const int64_t before = cpu::own_gemm_count();
  const Tensor got = matmul_bias_activation(a, b, bias, Activation::Tanh).cast(DType::F64);
  EXPECT_EQ(cpu::own_gemm_count(), before);
  EXPECT_NEAR(got.to_vector<double>()[0], std::ldexp(1.0, -30), std::ldexp(1.0, -38));
}

TEST(CpuOwnGemm, Bf16EpilogueMatchesReference) {
  if (!cpu::uses_own_gemm(DType::BF16, Activation::Gelu))
    GTEST_SKIP() << "no AVX512-BF16 on this CPU (or NUMR_CPU_ISA below AVX-512): oneDNN runs";
  check_dtype(DType::BF16, 4200);
}

}  // namespace
}  // namespace numr::test
