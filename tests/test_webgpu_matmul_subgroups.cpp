// The WebGPU GEMM's three kernels (backends/webgpu/matmul.cpp): of the 64x64-tile kernels, the
// subgroup kernel, which the backend runs where the device has subgroups, and the staged
// kernel, which it runs otherwise or under NUMR_WEBGPU_SUBGROUPS=0; and the wide 128x128-tile
// kernel of large products (NUMR_WEBGPU_GEMM=wide or =narrow forces either kind). Each test
// runs once per kernel in one process and checks, through the backend's dispatch counters,
// that the kernel it names ran. Where
// the device has subgroups, a probe dispatch confirms that its workgroups take the shuffled
// loop (and not the staged one the subgroup kernel keeps for other layouts). Products and
// epilogues at F32, F16 and BF16 are checked against float64 of the same (rounded) inputs
// at the edges of the 64x64 and 128x128 tiles, the 16- and 8-deep K slices and the subgroup's
// runs of K (K = 1, 3, 7, 12, 17, 129), batched, transposed and strided: |got - exact| <= γ_K
// Σ|a||b| for the f32 accumulation (any order), plus one rounding to the stored dtype. Skips,
// naming the reason, where no WebGPU device is usable.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <string>
#include <vector>

#include "backends/webgpu/context.h"
#include "backends/webgpu/kernels.h"
#include "core/composition.h"
#include "math/activation.h"
#include "numr/numr.h"
#include "support/matmul_oracle.h"
#include "support/webgpu_device.h"

namespace numr {
namespace {

enum class Kernel { Subgroups, Staged, Wide };

// Sets an environment variable (unsets it for nullptr), restoring the old value after.
class EnvScope {
 public:
  EnvScope(const char* var, const char* value) : var_(var) {
    if (const char* old = std::getenv(var)) {
      old_ = old;
      had_ = true;
    }
    if (value)
      setenv(var, value, 1);
    else
      unsetenv(var);
  }
  ~EnvScope() {
    if (had_)
      setenv(var_, old_.c_str(), 1);
    else
      unsetenv(var_);
  }
  EnvScope(const EnvScope&) = delete;
  EnvScope& operator=(const EnvScope&) = delete;

 private:
  const char* var_;
  std::string old_;
  bool had_ = false;
};

// NUMR_WEBGPU_GEMM and NUMR_WEBGPU_SUBGROUPS as the kernel asked for needs them.
struct KernelScope {
  explicit KernelScope(Kernel k)
      : gemm("NUMR_WEBGPU_GEMM", k == Kernel::Wide ? "wide" : "narrow"),
        subgroups("NUMR_WEBGPU_SUBGROUPS", k == Kernel::Staged ? "0" : nullptr) {}
  EnvScope gemm, subgroups;
};

struct PoisonScope {
  PoisonScope() { set_poison_allocations(true); }
  ~PoisonScope() { set_poison_allocations(false); }
};

#define REQUIRE_WEBGPU()                                          \
  std::string why_;                                               \
  webgpu::Context* ctx_ = test::usable_webgpu(&why_);             \
  if (!ctx_) GTEST_SKIP() << "no usable WebGPU device: " << why_; \
  [[maybe_unused]] webgpu::Context& ctx = *ctx_;                  \
  const PoisonScope poison_;                                      \
  [[maybe_unused]] const Device gpu = Device::webgpu(0)

using namespace test;

std::string first_outside(const Tensor& got, const std::vector<double>& want,
                          const std::vector<double>& bound) {
  const std::vector<float> g =
      got.to(Device::cpu()).contiguous().cast(DType::F32).to_vector<float>();
  if (g.size() != want.size())
    return "size " + std::to_string(g.size()) + ", expected " + std::to_string(want.size());
  for (size_t i = 0; i < g.size(); ++i)
    if (!(std::fabs(double(g[i]) - want[i]) <= bound[i]))
      return "element " + std::to_string(i) + ": " + std::to_string(g[i]) + ", expected " +
             std::to_string(want[i]) + " within " + std::to_string(bound[i]);
  return "";
}

const char* kernel_name(Kernel k) {
  return k == Kernel::Subgroups ? "subgroups" : k == Kernel::Staged ? "staged" : "wide";
}

struct Dispatches {
  uint64_t subgroup = webgpu::matmul_subgroup_dispatches();
  uint64_t wide = webgpu::matmul_wide_dispatches();
};

// The dispatch counters moved as the kernel asked for predicts: the subgroup kernel's by one
// where the device has subgroups, the wide kernel's by one for that kernel.
void expect_kernel(webgpu::Context& ctx, Kernel k, Dispatches before, const std::string& label) {
  const Dispatches now;
  EXPECT_EQ(now.subgroup, before.subgroup + (k == Kernel::Subgroups && ctx.has_subgroups() ? 1 : 0))
      << label << ": not the " << kernel_name(k) << " kernel";
  EXPECT_EQ(now.wide, before.wide + (k == Kernel::Wide ? 1 : 0))
      << label << ": not the " << kernel_name(k) << " kernel";
}

void check_matmul(webgpu::Context& ctx, Kernel kern, DType t, const MatmulOperand& oa,
                  const MatmulOperand& ob, Device gpu, uint64_t seed) {
  const OperandPair a = make_operand(oa, t, gpu, seed), b = make_operand(ob, t, gpu, seed + 1);
  const std::string label = std::string(kernel_name(kern)) + " " + std::string(dtype_name(t)) +
                            " " + shape_str(a.cpu.shape()) + " @ " + shape_str(b.cpu.shape());
  const Dispatches before;
  const PathCounts paths = path_counts(OpId::matmul);
  const Tensor got = matmul(a.gpu, b.gpu);
  EXPECT_EQ(path_counts(OpId::matmul).kernel, paths.kernel + 1) << label << ": not a kernel";
  expect_kernel(ctx, kern, before, label);
  const ExactProduct e = exact_product(a.cpu, b.cpu);
  const int64_t k = a.cpu.shape().back();
  std::vector<double> bound(e.value.size());
  for (size_t i = 0; i < bound.size(); ++i) {
    const double acc = gamma_f32(k) * e.magnitude[i];
    bound[i] = acc + store_err(t, std::fabs(e.value[i]) + acc);
  }
  EXPECT_EQ(first_outside(got, e.value, bound), "") << label;
}

// out = act(a @ b + bias) (+ residual) and the saved pre-activation: pre within
// γ_{K+1}(Σ|a||b| + |bias|), moved by the activation's slope plus a few units of its own
// rounding, one more for the residual, then one rounding to the stored dtype.
void check_epilogue(webgpu::Context& ctx, Kernel kern, DType t, const MatmulOperand& oa,
                    const MatmulOperand& ob, Activation act, bool residual, Device gpu,
                    uint64_t seed) {
  const OperandPair a = make_operand(oa, t, gpu, seed), b = make_operand(ob, t, gpu, seed + 1);
  const int64_t k = a.cpu.shape().back(), n = b.cpu.shape().back();
  const OperandPair bias = make_operand(plain({n}), t, gpu, seed + 2);
  Shape out_shape = a.cpu.shape();
  if (b.cpu.dim() > a.cpu.dim()) out_shape.insert(out_shape.begin(), b.cpu.shape()[0]);
  out_shape.back() = n;
  const OperandPair res = make_operand(plain(out_shape), t, gpu, seed + 3);
  const std::string label = std::string(kernel_name(kern)) + " " + std::string(dtype_name(t)) +
                            " " + std::string(activation_name(act)) +
                            (residual ? " + residual " : " ") + shape_str(a.cpu.shape()) + " @ " +
                            shape_str(b.cpu.shape());
  const Dispatches before;
  const OpId op = residual ? OpId::matmul_bias_residual : OpId::matmul_bias_activation;
  const PathCounts paths = path_counts(op);
  const auto [got, got_pre] = run_epilogue(a.gpu, b.gpu, bias.gpu, res.gpu, act, residual);
  EXPECT_EQ(path_counts(op).kernel, paths.kernel + 1) << label << ": not a kernel";
  expect_kernel(ctx, kern, before, label);

  const ExactProduct e = exact_product(a.cpu, b.cpu);
  const std::vector<float> bv = bias.cpu.cast(DType::F32).to_vector<float>();
  const std::vector<float> rv = res.cpu.cast(DType::F32).to_vector<float>();
  const auto [pre, pre_bound, out, out_bound] =
      epilogue_expected(e, bv, residual ? &rv : nullptr, k, act, t);
  EXPECT_EQ(first_outside(got, out, out_bound), "") << "out " << label;
  if (got_pre.defined()) {
    EXPECT_EQ(first_outside(got_pre, pre, pre_bound), "") << "pre " << label;
  }
}

constexpr Kernel kKernels[] = {Kernel::Subgroups, Kernel::Staged, Kernel::Wide};
constexpr DType kTypes[] = {DType::F32, DType::F16, DType::BF16};

// Where the device has subgroups, the subgroup kernel's workgroups find the layout its
// shuffled loop needs, at a size the adapter reports; the log names what was found.
TEST(WebGpuMatmulSubgroups, DeviceRecordsSubgroupsAndTheKernelUsesThem) {
  REQUIRE_WEBGPU();
  const webgpu::SubgroupLayout l = webgpu::probe_subgroup_layout(ctx);
  if (!ctx.has_subgroups()) {
    std::cout << "WebGPU subgroups: off; the GEMM runs its staged kernel\n";
    EXPECT_FALSE(l.linear);
    return;
  }
  std::cout << "WebGPU subgroups: on, sizes " << ctx.subgroup_min_size() << ".."
            << ctx.subgroup_max_size() << "; a GEMM workgroup sees " << l.size << " ("
            << (l.linear ? "shuffled loop" : "staged loop: subgroups not laid out linearly")
            << ")\n";
  EXPECT_GE(ctx.subgroup_min_size(), 1u);
  EXPECT_LE(ctx.subgroup_min_size(), ctx.subgroup_max_size());
  EXPECT_GE(l.size, ctx.subgroup_min_size());
  EXPECT_LE(l.size, ctx.subgroup_max_size());
  EXPECT_TRUE(l.linear) << "the subgroup kernel would fall back to its staged loop here";
}

TEST(WebGpuMatmulSubgroups, OddSizesAndThinDims) {
  REQUIRE_WEBGPU();
  uint64_t seed = 301;
  for (Kernel kern : kKernels) {
    const KernelScope scope(kern);
    for (DType t : kTypes) {
      check_matmul(ctx, kern, t, plain({65, 129}), plain({129, 67}), gpu, seed += 2);
      check_matmul(ctx, kern, t, plain({63, 17}), plain({17, 65}), gpu, seed += 2);
      check_matmul(ctx, kern, t, plain({70, 7}), plain({7, 130}), gpu, seed += 2);
      check_matmul(ctx, kern, t, plain({257, 12}), plain({12, 131}), gpu, seed += 2);
      check_matmul(ctx, kern, t, plain({33, 3}), plain({3, 5}), gpu, seed += 2);
      check_matmul(ctx, kern, t, plain({65, 1}), plain({1, 67}), gpu, seed += 2);     // K = 1
      check_matmul(ctx, kern, t, plain({1, 129}), plain({129, 67}), gpu, seed += 2);  // M = 1
      check_matmul(ctx, kern, t, plain({65, 129}), plain({129, 1}), gpu, seed += 2);  // N = 1
      check_matmul(ctx, kern, t, plain({1, 1}), plain({1, 1}), gpu, seed += 2);
    }
  }
}

TEST(WebGpuMatmulSubgroups, BatchedTransposedStrided) {
  REQUIRE_WEBGPU();
  uint64_t seed = 401;
  for (Kernel kern : kKernels) {
    const KernelScope scope(kern);
    for (DType t : kTypes) {
      check_matmul(ctx, kern, t, plain({3, 65, 129}), plain({129, 67}), gpu, seed += 2);
      check_matmul(ctx, kern, t, plain({2, 1, 33, 70}), plain({3, 70, 65}), gpu, seed += 2);
      check_matmul(ctx, kern, t, transposed({65, 129}), plain({129, 67}), gpu, seed += 2);
      check_matmul(ctx, kern, t, plain({65, 129}), transposed({129, 67}), gpu, seed += 2);
      check_matmul(ctx, kern, t, transposed({3, 65, 17}), transposed({17, 67}), gpu, seed += 2);
      check_matmul(ctx, kern, t, strided({65, 129}), strided({3, 129, 67}), gpu, seed += 2);
      const MatmulOperand flipped{{3, 65, 19}, [](const Tensor& x) { return x.flip({0}); }};
      check_matmul(ctx, kern, t, flipped, plain({3, 19, 66}), gpu, seed += 2);
    }
  }
}

// Every activation at F32; at F16 and BF16 (the same kernel but for its loads and stores) one
// activation that saves the pre-activation and the residual. Kept to few configurations:
// each is a pipeline, which SwiftShader takes seconds to compile.
TEST(WebGpuMatmulSubgroups, EveryEpilogueAtTileEdges) {
  REQUIRE_WEBGPU();
  uint64_t seed = 501;
  for (Kernel kern : kKernels) {
    const KernelScope scope(kern);
    for (Activation act : {Activation::None, Activation::Relu, Activation::Gelu, Activation::Silu,
                           Activation::Sigmoid, Activation::Tanh})
      check_epilogue(ctx, kern, DType::F32, plain({65, 129}), plain({129, 67}), act, false, gpu,
                     seed += 4);
    check_epilogue(ctx, kern, DType::F32, plain({2, 33, 17}), transposed({17, 65}),
                   Activation::Silu, false, gpu, seed += 4);
    check_epilogue(ctx, kern, DType::F32, plain({3, 65, 7}), plain({3, 7, 67}), Activation::None,
                   true, gpu, seed += 4);
    check_epilogue(ctx, kern, DType::F32, plain({1, 1}), plain({1, 1}), Activation::None, true, gpu,
                   seed += 4);
    check_epilogue(ctx, kern, DType::F32, plain({2, 130, 9}), plain({9, 129}), Activation::Gelu,
                   false, gpu, seed += 4);
    check_epilogue(ctx, kern, DType::F32, plain({2, 130, 9}), plain({9, 129}), Activation::None,
                   true, gpu, seed += 4);
    for (DType t : {DType::F16, DType::BF16}) {
      check_epilogue(ctx, kern, t, plain({2, 33, 17}), plain({17, 65}), Activation::Gelu, false,
                     gpu, seed += 4);
      check_epilogue(ctx, kern, t, transposed({65, 129}), plain({129, 67}), Activation::None, true,
                     gpu, seed += 4);
    }
  }
}

}  // namespace
}  // namespace numr
