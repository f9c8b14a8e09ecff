// The WebGPU GEMM kernel (backends/webgpu/matmul.cpp) at shapes that end inside its 64x64
// tiles and 16-deep K slices: odd sizes, batches (per item, shared and broadcast both
// ways), transposed and strided operands, K = 1, M = 1, N = 1 and several tiles in every
// dim; the epilogue forward (bias, each activation, the saved pre-activation, the
// residual) at the same edges; and the epilogue's fused backward pass over several chunks
// of rows. Products are checked against a float64 product of the same inputs with the
// bound of f32 accumulation, |got - exact| <= γ_K Σ|a||b| (γ_K = Ku/(1-Ku), u = 2^-24),
// which holds for any summation order; the CPU's product must meet the same bound. Every
// test skips, naming the reason, where no WebGPU device is usable.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "backends/webgpu/context.h"
#include "core/backend.h"
#include "core/composition.h"
#include "math/activation.h"
#include "numr/numr.h"
#include "support/matmul_oracle.h"
#include "support/webgpu_device.h"

namespace numr {
namespace {

#define REQUIRE_WEBGPU()                                                                \
  std::string why_;                                                                     \
  if (!test::usable_webgpu(&why_)) GTEST_SKIP() << "no usable WebGPU device: " << why_; \
  const PoisonScope poison_;                                                            \
  const Device gpu = Device::webgpu(0)

// Fresh outputs are filled with 0x5A bytes, so an element the kernel skips is a large
// wrong value, never a stale right one from the allocator's cache.
struct PoisonScope {
  PoisonScope() { set_poison_allocations(true); }
  ~PoisonScope() { set_poison_allocations(false); }
};

using namespace test;

// The first element outside its bound, or "".
std::string first_outside(const std::vector<float>& got, const std::vector<double>& want,
                          const std::vector<double>& bound) {
  if (got.size() != want.size())
    return "size " + std::to_string(got.size()) + ", expected " + std::to_string(want.size());
  for (size_t i = 0; i < got.size(); ++i)
    if (!(std::fabs(double(got[i]) - want[i]) <= bound[i]))
      return "element " + std::to_string(i) + ": " + std::to_string(got[i]) + ", expected " +
             std::to_string(want[i]) + " within " + std::to_string(bound[i]);
  return "";
}

void check_matmul(const MatmulOperand& oa, const MatmulOperand& ob, Device gpu, uint64_t seed) {
  const OperandPair a = make_operand(oa, DType::F32, gpu, seed),
                    b = make_operand(ob, DType::F32, gpu, seed + 1);
  const std::string label = shape_str(a.cpu.shape()) + " @ " + shape_str(b.cpu.shape());
  const PathCounts before = path_counts(OpId::matmul);
  const Tensor got = matmul(a.gpu, b.gpu);
  EXPECT_EQ(path_counts(OpId::matmul).kernel, before.kernel + 1) << label << ": not the kernel";
  const Tensor cpu = matmul(a.cpu, b.cpu);
  ASSERT_EQ(got.shape(), cpu.shape()) << label;
  const int64_t k = a.cpu.shape().back();
  const ExactProduct e = exact_product(a.cpu, b.cpu);
  std::vector<double> bound(e.magnitude.size());
  for (size_t i = 0; i < bound.size(); ++i) bound[i] = gamma_f32(k) * e.magnitude[i];
  EXPECT_EQ(first_outside(got.to(Device::cpu()).to_vector<float>(), e.value, bound), "")
      << "webgpu " << label;
  EXPECT_EQ(first_outside(cpu.contiguous().to_vector<float>(), e.value, bound), "")
      << "cpu " << label;
}

TEST(WebGpuMatmul, OddSizesEndInsideTiles) {
  REQUIRE_WEBGPU();
  check_matmul(plain({65, 129}), plain({129, 67}), gpu, 1);
  check_matmul(plain({63, 17}), plain({17, 65}), gpu, 3);
  check_matmul(plain({256, 512}), plain({512, 384}), gpu, 5);
}

TEST(WebGpuMatmul, ThinDims) {
  REQUIRE_WEBGPU();
  check_matmul(plain({65, 1}), plain({1, 67}), gpu, 11);     // K = 1
  check_matmul(plain({1, 129}), plain({129, 67}), gpu, 13);  // M = 1
  check_matmul(plain({65, 129}), plain({129, 1}), gpu, 15);  // N = 1
  check_matmul(plain({1, 1}), plain({1, 1}), gpu, 17);
  check_matmul(plain({3, 1, 300}), plain({300, 1}), gpu, 19);
}

TEST(WebGpuMatmul, Batches) {
  REQUIRE_WEBGPU();
  check_matmul(plain({3, 65, 129}), plain({3, 129, 67}), gpu, 21);     // a pair per item
  check_matmul(plain({3, 65, 129}), plain({129, 67}), gpu, 23);        // b shared (stride 0)
  check_matmul(plain({65, 129}), plain({3, 129, 67}), gpu, 25);        // a shared
  check_matmul(plain({2, 1, 65, 129}), plain({3, 129, 67}), gpu, 27);  // broadcast both ways
  check_matmul(plain({2, 3, 5, 7, 9}), plain({1, 3, 1, 9, 4}), gpu, 29);
}

TEST(WebGpuMatmul, TransposedAndStridedOperands) {
  REQUIRE_WEBGPU();
  check_matmul(transposed({65, 129}), plain({129, 67}), gpu, 31);
  check_matmul(plain({65, 129}), transposed({129, 67}), gpu, 33);
  check_matmul(transposed({65, 129}), transposed({129, 67}), gpu, 35);
  check_matmul(transposed({3, 65, 129}), transposed({129, 67}), gpu, 37);
  check_matmul(strided({65, 129}), strided({3, 129, 67}), gpu, 39);
  check_matmul(strided({2, 33, 70}), transposed({2, 70, 65}), gpu, 41);
  // A row broadcast along M (stride 0) and a batch dim reversed (a negative stride).
  const MatmulOperand row_a{{1, 129}, [](const Tensor& t) { return t.broadcast_to({65, 129}); }};
  const MatmulOperand flipped_b{{3, 129, 67}, [](const Tensor& t) { return t.flip({0}); }};
  check_matmul(row_a, plain({129, 67}), gpu, 43);
  check_matmul(plain({3, 65, 129}), flipped_b, gpu, 45);
}

// out = act(a @ b + bias) (+ residual) and the saved pre-activation, against float64: pre
// is off by at most γ_{K+1}(Σ|a||b| + |bias|); the activation moves that by its slope and
// adds its own f32 rounding, a few units of its argument and result (formulas such as
// x·(1 + erf(x/√2)) round on the argument's scale); the residual adds one rounding.
void check_epilogue(const MatmulOperand& oa, const MatmulOperand& ob, Activation act, bool residual,
                    Device gpu, uint64_t seed) {
  const OperandPair a = make_operand(oa, DType::F32, gpu, seed),
                    b = make_operand(ob, DType::F32, gpu, seed + 1);
  const int64_t k = a.cpu.shape().back(), n = b.cpu.shape().back();
  const OperandPair bias = make_operand(plain({n}), DType::F32, gpu, seed + 2);
  Shape out_shape = a.cpu.shape();
  out_shape.back() = n;
  const OperandPair res = make_operand(plain(out_shape), DType::F32, gpu, seed + 3);
  const std::string label = std::string(activation_name(act)) + (residual ? " + residual " : " ") +
                            shape_str(a.cpu.shape()) + " @ " + shape_str(b.cpu.shape());
  const OpId op = residual ? OpId::matmul_bias_residual : OpId::matmul_bias_activation;
  const PathCounts before = path_counts(op);
  const auto [got, got_pre] = run_epilogue(a.gpu, b.gpu, bias.gpu, res.gpu, act, residual);
  EXPECT_EQ(path_counts(op).kernel, before.kernel + 1) << label << ": not the kernel";

  const ExactProduct e = exact_product(a.cpu, b.cpu);
  const std::vector<float> bv = bias.cpu.to_vector<float>();
  const std::vector<float> rv = res.cpu.contiguous().to_vector<float>();
  const auto [pre, pre_bound, out, out_bound] =
      epilogue_expected(e, bv, residual ? &rv : nullptr, k, act, DType::F32);
  EXPECT_EQ(first_outside(got.to(Device::cpu()).to_vector<float>(), out, out_bound), "")
      << "out " << label;
  if (got_pre.defined()) {
    EXPECT_EQ(first_outside(got_pre.to(Device::cpu()).to_vector<float>(), pre, pre_bound), "")
        << "pre " << label;
  }
}

TEST(WebGpuMatmul, EpilogueAtTileEdges) {
  REQUIRE_WEBGPU();
  uint64_t seed = 51;
  for (Activation act : {Activation::None, Activation::Relu, Activation::Gelu, Activation::Silu,
                         Activation::Sigmoid, Activation::Tanh}) {
    check_epilogue(plain({65, 129}), plain({129, 67}), act, false, gpu, seed += 4);
    check_epilogue(plain({3, 65, 129}), transposed({129, 67}), act, false, gpu, seed += 4);
  }
  check_epilogue(transposed({65, 129}), plain({129, 67}), Activation::None, true, gpu, 91);
  check_epilogue(plain({3, 65, 129}), plain({3, 129, 67}), Activation::None, true, gpu, 95);
  check_epilogue(plain({1, 1}), plain({1, 1}), Activation::None, true, gpu, 99);
}

// The epilogue's fused backward pass over several chunks of rows and column tiles, each
// ending part-way: grad_pre = g·act'(x) against float64 within a few units of the
// derivative's terms (|d| + |x| + 1, as act' sums products of x with its sigmoid or erf),
// and d_bias against the exact sum of the grad_pre it returned within γ_rows Σ|grad_pre|.
TEST(WebGpuMatmul, BiasActivationBackwardOverChunks) {
  REQUIRE_WEBGPU();
  uint64_t seed = 201;
  for (Activation act : {Activation::None, Activation::Relu, Activation::Gelu, Activation::Silu,
                         Activation::Sigmoid, Activation::Tanh})
    for (const Shape& shape : {Shape{3, 300, 67}, Shape{1, 1}, Shape{257, 1}}) {
      const OperandPair g = make_operand(plain(shape), DType::F32, gpu, seed += 2),
                        x = make_operand(plain(shape), DType::F32, gpu, seed + 1);
      const std::string label = std::string(activation_name(act)) + " " + shape_str(shape);
      const PathCounts before = path_counts(OpId::bias_activation_bwd);
      const auto [gp_gpu, db_gpu] = bias_activation_bwd(g.gpu, x.gpu, act);
      EXPECT_EQ(path_counts(OpId::bias_activation_bwd).kernel, before.kernel + 1) << label;
      const bool from_pre = needs_preactivation(act);
      const std::vector<float> gv = g.cpu.to_vector<float>(), xv = x.cpu.to_vector<float>();
      const std::vector<float> gp = gp_gpu.to(Device::cpu()).to_vector<float>();
      const int64_t n = shape.back(), rows = int64_t(gv.size()) / n;
      std::vector<double> want(gv.size()), bound(gv.size());
      std::vector<double> sum(size_t(n), 0.0), mag(size_t(n), 0.0);
      for (size_t i = 0; i < gv.size(); ++i) {
        const double d = math::finite_or_zero(math::activation_grad(act, double(xv[i]), from_pre));
        want[i] = gv[i] * d;
        bound[i] = 16 * kF32Unit * std::fabs(gv[i]) * (std::fabs(d) + std::fabs(xv[i]) + 1.0);
        sum[i % size_t(n)] += gp[i];
        mag[i % size_t(n)] += std::fabs(gp[i]);
      }
      EXPECT_EQ(first_outside(gp, want, bound), "") << "grad_pre " << label;
      for (double& m : mag) m *= gamma_f32(rows);
      EXPECT_EQ(first_outside(db_gpu.to(Device::cpu()).to_vector<float>(), sum, mag), "")
          << "d_bias " << label;
    }
}

}  // namespace
}  // namespace numr
