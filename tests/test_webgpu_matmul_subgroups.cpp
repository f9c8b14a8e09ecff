// The WebGPU GEMM's two kernels (backends/webgpu/matmul.cpp): the subgroup kernel, which
// the backend runs where the device has subgroups, and the staged kernel, which it runs
// otherwise or under NUMR_WEBGPU_SUBGROUPS=0. Each test runs once per kernel in one process
// and checks, through the backend's dispatch counter, that the kernel it names ran. Where
// the device has subgroups, a probe dispatch confirms that its workgroups take the shuffled
// loop (and not the staged one the subgroup kernel keeps for other layouts). Products and
// epilogues at F32, F16 and BF16 are checked against float64 of the same (rounded) inputs
// at the edges of the 64x64 tiles, the 16-deep K slices and the subgroup's runs of K
// (K = 1, 3, 7, 17, 129), batched, transposed and strided: |got - exact| <= γ_K Σ|a||b|
// for the f32 accumulation (any order), plus one rounding to the stored dtype. Skips,
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
#include "support/webgpu_device.h"

namespace numr {
namespace {

enum class Kernel { Subgroups, Staged };

// Sets NUMR_WEBGPU_SUBGROUPS for the kernel asked for, restoring the old value after.
class KernelScope {
 public:
  explicit KernelScope(Kernel k) {
    if (const char* old = std::getenv(kVar)) {
      old_ = old;
      had_ = true;
    }
    if (k == Kernel::Staged)
      setenv(kVar, "0", 1);
    else
      unsetenv(kVar);
  }
  ~KernelScope() {
    if (had_)
      setenv(kVar, old_.c_str(), 1);
    else
      unsetenv(kVar);
  }
  KernelScope(const KernelScope&) = delete;
  KernelScope& operator=(const KernelScope&) = delete;

 private:
  static constexpr const char* kVar = "NUMR_WEBGPU_SUBGROUPS";
  std::string old_;
  bool had_ = false;
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

constexpr double kU = 0x1p-24;  // f32's unit roundoff
double gamma(int64_t n) { return double(n) * kU / (1.0 - double(n) * kU); }
// The rounding to the stored dtype of a value v: u|v| with u its unit roundoff, or half the
// spacing of F16's subnormals below its normal range; F32's results are stored as
// accumulated.
double store_err(DType t, double v) {
  if (t == DType::F16) return std::max(0x1p-11 * v, 0x1p-25);
  return t == DType::BF16 ? 0x1p-8 * v : 0.0;
}

struct Operand {
  Shape base;
  std::function<Tensor(const Tensor&)> view = [](const Tensor& t) { return t; };
};
Operand plain(Shape s) { return {std::move(s)}; }
Operand transposed(Shape s) {
  std::swap(s[s.size() - 1], s[s.size() - 2]);
  return {s, [](const Tensor& t) { return t.transpose(t.dim() - 2, t.dim() - 1); }};
}
// Every other column of a base with one more row, from the second row on: no unit stride.
Operand strided(Shape s) {
  const int64_t rows = s[s.size() - 2], cols = s.back();
  Shape base = s, split = s;
  base[base.size() - 2] = rows + 1;
  base.back() = 2 * cols;
  split[split.size() - 2] = rows + 1;
  split.push_back(2);
  return {base, [split, rows](const Tensor& t) {
            return t.view(split).narrow(-1, 1, 1).squeeze(-1).narrow(-2, 1, rows);
          }};
}

// The CPU operand (in dtype t, values uniform in [-1, 1) rounded to t) and the same view
// of its copy on the device.
struct Pair {
  Tensor cpu, gpu;
};
Pair make(const Operand& o, DType t, Device gpu, uint64_t seed) {
  Generator g(seed);
  const Tensor base = (rand(o.base, DType::F32, Device::cpu(), g) * 2.0 - 1.0).cast(t);
  return {o.view(base), o.view(base.to(gpu))};
}

std::vector<float> values(const Tensor& t, const Shape& full) {
  return broadcast_to(t, full).contiguous().cast(DType::F32).to_vector<float>();
}

// exact[i] and Σ|a||b| per output element, in float64.
struct Exact {
  std::vector<double> value, magnitude;
};
Exact exact_product(const Tensor& a, const Tensor& b) {
  const Shape& sa = a.shape();
  const int64_t m = sa[sa.size() - 2], k = sa.back(), n = b.shape().back();
  Shape batch = broadcast_shapes("matmul", Shape(sa.begin(), sa.end() - 2),
                                 Shape(b.shape().begin(), b.shape().end() - 2));
  Shape fa = batch, fb = batch;
  fa.insert(fa.end(), {m, k});
  fb.insert(fb.end(), {k, n});
  const std::vector<float> av = values(a, fa), bv = values(b, fb);
  const int64_t items = shape_numel(batch);
  Exact e;
  e.value.assign(size_t(items * m * n), 0.0);
  e.magnitude.assign(e.value.size(), 0.0);
  for (int64_t t = 0; t < items; ++t)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t p = 0; p < k; ++p) {
        const double x = av[size_t((t * m + i) * k + p)];
        for (int64_t j = 0; j < n; ++j) {
          const double y = bv[size_t((t * k + p) * n + j)];
          const size_t o = size_t((t * m + i) * n + j);
          e.value[o] += x * y;
          e.magnitude[o] += std::fabs(x * y);
        }
      }
  return e;
}

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

const char* kernel_name(Kernel k) { return k == Kernel::Subgroups ? "subgroups" : "staged"; }

// The dispatch counter moved as the kernel asked for predicts: by one for the subgroup
// kernel where the device has subgroups, else not at all.
void expect_kernel(webgpu::Context& ctx, Kernel k, uint64_t before, const std::string& label) {
  const uint64_t want = before + (k == Kernel::Subgroups && ctx.has_subgroups() ? 1 : 0);
  EXPECT_EQ(webgpu::matmul_subgroup_dispatches(), want)
      << label << ": not the " << kernel_name(k) << " kernel";
}

void check_matmul(webgpu::Context& ctx, Kernel kern, DType t, const Operand& oa, const Operand& ob,
                  Device gpu, uint64_t seed) {
  const Pair a = make(oa, t, gpu, seed), b = make(ob, t, gpu, seed + 1);
  const std::string label = std::string(kernel_name(kern)) + " " + std::string(dtype_name(t)) +
                            " " + shape_str(a.cpu.shape()) + " @ " + shape_str(b.cpu.shape());
  const uint64_t before = webgpu::matmul_subgroup_dispatches();
  const PathCounts paths = path_counts(OpId::matmul);
  const Tensor got = matmul(a.gpu, b.gpu);
  EXPECT_EQ(path_counts(OpId::matmul).kernel, paths.kernel + 1) << label << ": not a kernel";
  expect_kernel(ctx, kern, before, label);
  const Exact e = exact_product(a.cpu, b.cpu);
  const int64_t k = a.cpu.shape().back();
  std::vector<double> bound(e.value.size());
  for (size_t i = 0; i < bound.size(); ++i) {
    const double acc = gamma(k) * e.magnitude[i];
    bound[i] = acc + store_err(t, std::fabs(e.value[i]) + acc);
  }
  EXPECT_EQ(first_outside(got, e.value, bound), "") << label;
}

double slope(Activation act) {
  switch (act) {
    case Activation::Gelu: return 1.13;  // Φ(x) + xφ(x) peaks at 1.1289 (x = √2)
    case Activation::Silu: return 1.1;   // peaks at 1.0998
    case Activation::Sigmoid: return 0.25;
    default: return 1.0;  // None, Relu, Tanh
  }
}

// out = act(a @ b + bias) (+ residual) and the saved pre-activation: pre within
// γ_{K+1}(Σ|a||b| + |bias|), moved by the activation's slope plus a few units of its own
// rounding, one more for the residual, then one rounding to the stored dtype.
void check_epilogue(webgpu::Context& ctx, Kernel kern, DType t, const Operand& oa,
                    const Operand& ob, Activation act, bool residual, Device gpu, uint64_t seed) {
  const Pair a = make(oa, t, gpu, seed), b = make(ob, t, gpu, seed + 1);
  const int64_t k = a.cpu.shape().back(), n = b.cpu.shape().back();
  const Pair bias = make(plain({n}), t, gpu, seed + 2);
  Shape out_shape = a.cpu.shape();
  if (b.cpu.dim() > a.cpu.dim()) out_shape.insert(out_shape.begin(), b.cpu.shape()[0]);
  out_shape.back() = n;
  const Pair res = make(plain(out_shape), t, gpu, seed + 3);
  const std::string label = std::string(kernel_name(kern)) + " " + std::string(dtype_name(t)) +
                            " " + std::string(activation_name(act)) +
                            (residual ? " + residual " : " ") + shape_str(a.cpu.shape()) + " @ " +
                            shape_str(b.cpu.shape());
  const uint64_t before = webgpu::matmul_subgroup_dispatches();
  const OpId op = residual ? OpId::matmul_bias_residual : OpId::matmul_bias_activation;
  const PathCounts paths = path_counts(op);
  Tensor got, got_pre;
  if (residual) {
    got = matmul_bias_residual(a.gpu, b.gpu, bias.gpu, res.gpu);
  } else {
    const EpilogueForward f = matmul_bias_activation_fwd(a.gpu, b.gpu, bias.gpu, act);
    got = f.out;
    if (needs_preactivation(act)) got_pre = f.saved;
  }
  EXPECT_EQ(path_counts(op).kernel, paths.kernel + 1) << label << ": not a kernel";
  expect_kernel(ctx, kern, before, label);

  const Exact e = exact_product(a.cpu, b.cpu);
  const std::vector<float> bv = bias.cpu.cast(DType::F32).to_vector<float>();
  const std::vector<float> rv = res.cpu.cast(DType::F32).to_vector<float>();
  const size_t count = e.value.size();
  std::vector<double> pre(count), pre_bound(count), out(count), out_bound(count);
  for (size_t i = 0; i < count; ++i) {
    const double bi = bv[i % size_t(n)];
    pre[i] = e.value[i] + bi;
    const double pb = gamma(k + 1) * (e.magnitude[i] + std::fabs(bi));
    pre_bound[i] = pb + store_err(t, std::fabs(pre[i]) + pb);
    const double y = math::activate(act, pre[i]);
    out[i] = y + (residual ? double(rv[i]) : 0.0);
    double ob_ = slope(act) * pb + 8 * kU * (std::fabs(pre[i]) + std::fabs(y));
    if (residual) ob_ += kU * (std::fabs(y) + std::fabs(double(rv[i])));
    out_bound[i] = ob_ + store_err(t, std::fabs(out[i]) + ob_);
  }
  EXPECT_EQ(first_outside(got, out, out_bound), "") << "out " << label;
  if (got_pre.defined()) {
    EXPECT_EQ(first_outside(got_pre, pre, pre_bound), "") << "pre " << label;
  }
}

constexpr Kernel kKernels[] = {Kernel::Subgroups, Kernel::Staged};
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
      const Operand flipped{{3, 65, 19}, [](const Tensor& x) { return x.flip({0}); }};
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
