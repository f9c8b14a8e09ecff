// The CUDA reduction, along-axis and bias-gradient kernels on what the parity harness's
// small shapes do not reach: every kernel variant (warp rows, block rows, split rows with a
// second pass, strided columns with and without a split) chosen by sizes around the
// thresholds of reduce.cpp, a long sum against a float64 host sum, argmax ties and NaNs
// across block boundaries, softmax rows of length 1 and 100000, and bias_activation_bwd for
// every activation. CUDA results are compared with the CPU backend's. Without a CUDA
// device these tests skip; the PtxReduce tests assemble the kernels with ptxas instead.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "backends/cuda/context.h"
#include "backends/cuda/kernel_catalog.h"
#include "numr/numr.h"
#include "support/cuda_test.h"
#include "support/ptxas.h"

namespace {

using namespace numr;

// The first CUDA device, or nullopt with the reason.
std::optional<Device> cuda_or_reason(std::string* reason) {
  if (!test::first_cuda_device(reason)) return std::nullopt;
  return Device::cuda(0);
}

#define REQUIRE_CUDA_AS(dev)                                                    \
  std::string no_cuda_reason_;                                                  \
  const std::optional<Device> dev##_opt = cuda_or_reason(&no_cuda_reason_);     \
  if (!dev##_opt) GTEST_SKIP() << "no usable CUDA device: " << no_cuda_reason_; \
  const Device dev = *dev##_opt

std::vector<double> host_values(const Tensor& t) {
  return t.to(Device::cpu()).cast(DType::F64).contiguous().to_vector<double>();
}

Tensor random_tensor(const Shape& shape, DType dt, uint64_t seed, double lo = -2, double hi = 2) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<double> v(static_cast<size_t>(shape_numel(shape)));
  for (double& x : v) x = is_integral(dt) ? std::floor(u(rng)) : u(rng);
  return Tensor::from_vector<double>(v, shape, Device::cpu()).cast(dt);
}

// got (CUDA) against want (CPU): |got - want| <= atol + rtol |want|, NaN matching NaN.
void expect_close(const Tensor& got, const Tensor& want, double atol, double rtol,
                  const std::string& what) {
  ASSERT_EQ(got.shape(), want.shape()) << what;
  ASSERT_EQ(got.dtype(), want.dtype()) << what;
  const std::vector<double> g = host_values(got), w = host_values(want);
  int bad = 0;
  for (size_t i = 0; i < g.size() && bad < 5; ++i) {
    const bool ok = (std::isnan(g[i]) && std::isnan(w[i])) || g[i] == w[i] ||
                    std::abs(g[i] - w[i]) <= atol + rtol * std::abs(w[i]);
    if (!ok) {
      ++bad;
      ADD_FAILURE() << what << ": element " << i << " got " << g[i] << ", want " << w[i];
    }
  }
}

double tol_of(DType t) {
  switch (t) {
    case DType::F64: return 1e-10;
    case DType::F32: return 2e-5;
    case DType::F16: return 4e-3;
    case DType::BF16: return 2e-2;
    default: return 0;
  }
}

Tensor reduce_by(OpId op, const Tensor& x, const std::vector<int64_t>& dims) {
  switch (op) {
    case OpId::sum: return sum(x, dims);
    case OpId::mean: return mean(x, dims);
    case OpId::max: return max(x, dims);
    case OpId::min: return min(x, dims);
    case OpId::prod: return prod(x, dims);
    case OpId::any: return any(x, dims);
    case OpId::all: return all(x, dims);
    case OpId::argmax: return argmax(x, dims.empty() ? std::nullopt : std::optional(dims[0]));
    case OpId::argmin: return argmin(x, dims.empty() ? std::nullopt : std::optional(dims[0]));
    case OpId::var: return var(x, dims, 1);
    case OpId::std: return numr::std(x, dims, 1);
    case OpId::logsumexp: return logsumexp(x, dims);
    default: return {};
  }
}

struct Case {
  Shape shape;
  std::vector<int64_t> dims;
  const char* variant;
};

// Shapes around the thresholds of reduce.cpp (warp rows up to 1024 elements, splits from
// 32768 elements when outputs are few, columns for a strided reduced dim, vector columns
// when the kept inner dim holds whole 16-byte vectors).
const std::vector<Case> kCases = {
    {{1000, 300}, {1}, "warp rows"},
    {{64, 1024}, {1}, "warp rows at the limit"},
    {{64, 1025}, {1}, "block rows just past it"},
    {{700, 4099}, {1}, "block rows, odd length"},
    {{3, 100003}, {1}, "split rows"},
    {{2, 32768}, {1}, "split rows at the limit"},
    {{256, 4096}, {1}, "block rows, aligned: unrolled loads only"},
    {{64, 5001}, {1}, "block rows, unrolled loads and a remainder"},
    {{5000, 300}, {0}, "columns, split (vector columns where 300 divides)"},
    {{777, 64}, {0}, "vector columns, one pass"},
    {{3, 4096, 8}, {1}, "vector columns, two kept dims"},
    {{40, 10000}, {0}, "columns, one pass"},
    {{30, 7, 5}, {0}, "columns, narrow"},
    {{100, 50, 7}, {0, 2}, "strided rows"},
    {{9, 40000, 3}, {1}, "strided rows, split"},
};

void check_op(Device dev, OpId op, DType t) {
  uint64_t seed = 1;
  for (const Case& c : kCases) {
    if ((op == OpId::argmax || op == OpId::argmin) && c.dims.size() > 1) continue;
    const double lo = op == OpId::prod ? 0.999 : (op == OpId::any || op == OpId::all) ? -1 : -2;
    const double hi = op == OpId::prod ? 1.001 : (op == OpId::any || op == OpId::all) ? 2 : 2;
    Tensor x = random_tensor(c.shape, t, ++seed, lo, hi);
    if (op == OpId::any || op == OpId::all) x = random_tensor(c.shape, t, seed, 0, 1.02);
    const Tensor want = reduce_by(op, x, c.dims);
    const Tensor got = reduce_by(op, x.to(dev), c.dims);
    const int64_t n = shape_numel(c.shape) / std::max<int64_t>(1, want.numel());
    // Accumulations differ in order from the CPU's (f32 trees against double totals);
    // selections and logic are exact.
    const bool accumulates = op == OpId::sum || op == OpId::mean || op == OpId::prod ||
                             op == OpId::var || op == OpId::std || op == OpId::logsumexp;
    const double rtol = accumulates ? tol_of(t) * std::max(1.0, std::sqrt(double(n)) / 16) : 0.0;
    const double atol = op == OpId::sum ? tol_of(t) * std::sqrt(double(n)) : rtol;
    expect_close(got, want, atol, rtol,
                 std::string(op_name(op)) + " " + std::string(dtype_name(t)) + " " + c.variant);
  }
}

TEST(CudaReduce, EveryVariantF32) {
  REQUIRE_CUDA_AS(dev);
  for (OpId op : {OpId::sum, OpId::mean, OpId::max, OpId::min, OpId::prod, OpId::any, OpId::all,
                  OpId::argmax, OpId::argmin, OpId::var, OpId::std, OpId::logsumexp})
    check_op(dev, op, DType::F32);
}

TEST(CudaReduce, EveryVariantOtherDtypes) {
  REQUIRE_CUDA_AS(dev);
  for (DType t : {DType::F64, DType::F16, DType::BF16})
    for (OpId op : {OpId::sum, OpId::max, OpId::argmin, OpId::var, OpId::logsumexp})
      check_op(dev, op, t);
  for (DType t : {DType::I64, DType::I32, DType::U8})
    for (OpId op : {OpId::sum, OpId::max, OpId::min, OpId::argmax, OpId::any}) check_op(dev, op, t);
}

TEST(CudaReduce, LongSumAgainstFloat64) {
  REQUIRE_CUDA_AS(dev);
  const int64_t n = (int64_t(1) << 24) + 3;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(0.f, 1.f);
  std::vector<float> v(static_cast<size_t>(n));
  double exact = 0;
  for (float& x : v) {
    x = u(rng);
    exact += double(x);
  }
  const Tensor x = Tensor::from_vector<float>(v, {n}, dev);
  const double got = host_values(sum(x, {}))[0];
  EXPECT_NEAR(got, exact, exact * 1e-6);
  const double got_mean = host_values(mean(x, {}))[0];
  EXPECT_NEAR(got_mean, exact / double(n), 1e-6);
  // Reproducible: the split of the work depends only on the sizes.
  EXPECT_EQ(host_values(sum(x, {}))[0], got);
}

TEST(CudaReduce, ArgmaxTiesAndNaN) {
  REQUIRE_CUDA_AS(dev);
  for (int64_t n : {int64_t(100), int64_t(5000), int64_t(100003)}) {
    std::vector<float> v(static_cast<size_t>(n), 0.f);
    v[size_t(n * 7 / 10)] = 5.f;
    v[size_t(n * 3 / 10)] = 5.f;  // the first of the ties wins
    v[size_t(n / 2)] = -5.f;
    v[size_t(n * 9 / 10)] = -5.f;
    Tensor x = Tensor::from_vector<float>(v, {n}, dev);
    EXPECT_EQ(argmax(x, 0).to(Device::cpu()).to_vector<int64_t>()[0], n * 3 / 10) << n;
    EXPECT_EQ(argmin(x, 0).to(Device::cpu()).to_vector<int64_t>()[0], n / 2) << n;
    const float nan = std::numeric_limits<float>::quiet_NaN();
    v[size_t(n * 8 / 10)] = nan;
    v[size_t(n * 6 / 10)] = nan;  // the first NaN wins over any value
    x = Tensor::from_vector<float>(v, {n}, dev);
    EXPECT_EQ(argmax(x, 0).to(Device::cpu()).to_vector<int64_t>()[0], n * 6 / 10) << n;
    EXPECT_EQ(argmin(x, 0).to(Device::cpu()).to_vector<int64_t>()[0], n * 6 / 10) << n;
    EXPECT_TRUE(std::isnan(host_values(max(x, {}))[0])) << n;
    // The same along dim 0 of a [n, 40] tensor: the column kernel.
    std::vector<float> w(static_cast<size_t>(n * 40), 0.f);
    for (int64_t j = 0; j < 40; ++j) {
      w[size_t((n * 7 / 10) * 40 + j)] = 5.f;
      w[size_t((n * 3 / 10) * 40 + j)] = 5.f;
    }
    const Tensor cols = Tensor::from_vector<float>(w, {n, 40}, dev);
    for (int64_t i : argmax(cols, 0).to(Device::cpu()).to_vector<int64_t>())
      EXPECT_EQ(i, n * 3 / 10) << n;
  }
}

TEST(CudaReduce, SpecialValues) {
  REQUIRE_CUDA_AS(dev);
  const float inf = std::numeric_limits<float>::infinity(),
              nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> v = {1, -inf, 3, -inf, -inf, -inf, inf, 2, 1, nan, 0, 4};
  for (const Shape& s : {Shape{4, 3}, Shape{2, 6}, Shape{12}}) {
    const Tensor x = Tensor::from_vector<float>(v, s, Device::cpu());
    for (OpId op : {OpId::sum, OpId::max, OpId::min, OpId::logsumexp, OpId::var, OpId::argmax}) {
      for (int64_t d = 0; d < int64_t(s.size()); ++d)
        expect_close(reduce_by(op, x.to(dev), {d}), reduce_by(op, x, {d}), 1e-6, 1e-6,
                     std::string(op_name(op)) + " " + shape_str(s));
    }
    for (OpId op : {OpId::softmax, OpId::log_softmax})
      for (int64_t d = 0; d < int64_t(s.size()); ++d) {
        const Tensor want = op == OpId::softmax ? softmax(x, d) : log_softmax(x, d);
        const Tensor got = op == OpId::softmax ? softmax(x.to(dev), d) : log_softmax(x.to(dev), d);
        expect_close(got, want, 1e-6, 1e-6, std::string(op_name(op)) + " " + shape_str(s));
      }
  }
}

// Values whose squares overflow f32, with a small spread: the idle lanes of CUDA's group
// merges must not turn the variance into NaN.
TEST(CudaReduce, VarianceOfHugeValues) {
  REQUIRE_CUDA_AS(dev);
  std::vector<float> v;
  for (int i = 0; i < 3 * 37; ++i) v.push_back(1e20f * (1.0f + 1e-3f * float(i % 7)));
  for (const Shape& s : {Shape{111}, Shape{37, 3}, Shape{3, 37}}) {
    const Tensor x = Tensor::from_vector<float>(v, s, Device::cpu());
    for (int64_t d = 0; d < int64_t(s.size()); ++d)
      for (OpId op : {OpId::var, OpId::std}) {
        const Tensor want = reduce_by(op, x, {d});
        for (double w : host_values(want)) ASSERT_TRUE(std::isfinite(w)) << shape_str(s);
        expect_close(reduce_by(op, x.to(dev), {d}), want, 0, 1e-5,
                     std::string(op_name(op)) + " " + shape_str(s));
      }
  }
}

TEST(CudaReduce, SoftmaxRows) {
  REQUIRE_CUDA_AS(dev);
  for (DType t : {DType::F32, DType::F64, DType::BF16})
    for (const Shape& s : {Shape{300, 1}, Shape{2, 100000}, Shape{33, 1024}, Shape{33, 1025},
                           Shape{17, 5, 9}, Shape{3, 70000, 2}}) {
      const Tensor x = random_tensor(s, t, 11, -8, 8);
      for (int64_t d : {int64_t(-1), int64_t(0)}) {
        expect_close(softmax(x.to(dev), d), softmax(x, d), 1e-7 + tol_of(t) * 0.01, tol_of(t),
                     "softmax " + shape_str(s));
        expect_close(log_softmax(x.to(dev), d), log_softmax(x, d), tol_of(t), tol_of(t),
                     "log_softmax " + shape_str(s));
      }
    }
  // Around the register kernels' limits: warp_regs up to 1024 elements (512 for F64), with
  // partly filled slots; block_regs up to 8192 (4096 for F64); aligned rows past that take
  // the two-pass block kernel.
  for (DType t : {DType::F32, DType::F16, DType::BF16, DType::F64})
    for (const Shape& s : {Shape{5, 8}, Shape{7, 96}, Shape{9, 512}, Shape{9, 520}, Shape{6, 1032},
                           Shape{3, 4096}, Shape{4, 8192}, Shape{3, 8200}}) {
      const Tensor x = random_tensor(s, t, 13, -8, 8);
      expect_close(softmax(x.to(dev), -1), softmax(x, -1), 1e-7 + tol_of(t) * 0.01, tol_of(t),
                   "softmax " + std::string(dtype_name(t)) + " " + shape_str(s));
      expect_close(log_softmax(x.to(dev), -1), log_softmax(x, -1), tol_of(t), tol_of(t),
                   "log_softmax " + std::string(dtype_name(t)) + " " + shape_str(s));
    }
  // A view with an odd offset: input and output rows misaligned differently.
  const Tensor big = random_tensor({1 + 3 * 999}, DType::F32, 12);
  const Tensor x = narrow(big, 0, 1, 3 * 999).view({3, 999});
  expect_close(softmax(x.to(dev), 1), softmax(x, 1), 1e-7, 2e-5, "softmax, misaligned view");
}

// The register softmax on rows with -inf, +inf and NaN: the same rules as the CPU's.
TEST(CudaReduce, SoftmaxRegisterRowsSpecialValues) {
  REQUIRE_CUDA_AS(dev);
  const float inf = std::numeric_limits<float>::infinity(),
              nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> v = {1,    -inf, 3,    -inf, 0,      2,       -1,   0.5f,  // some -inf
                                -inf, -inf, -inf, -inf, -inf,   -inf,    -inf, -inf,  // all -inf
                                1,    inf,  2,    3,    -inf,   0,       1,    2,     // +inf
                                1,    2,    nan,  3,    4,      5,       6,    7,     // NaN
                                -inf, inf,  nan,  0,    0,      0,       0,    0,     // everything
                                -0.f, 0,    -0.f, 0,    1e-30f, -1e-30f, 80,   -80};
  for (DType t : {DType::F32, DType::BF16, DType::F16}) {
    const Tensor x = Tensor::from_vector<float>(v, {6, 8}, Device::cpu()).cast(t);
    expect_close(softmax(x.to(dev), 1), softmax(x, 1), 1e-7, tol_of(t),
                 "softmax " + std::string(dtype_name(t)));
    expect_close(log_softmax(x.to(dev), 1), log_softmax(x, 1), 1e-6, tol_of(t),
                 "log_softmax " + std::string(dtype_name(t)));
  }
}

TEST(CudaReduce, Scans) {
  REQUIRE_CUDA_AS(dev);
  // Aligned rows (n * size a multiple of 16) take 16-byte vectors: 1024 and 4100 (warp rows
  // of two tiles; block rows with a partial second tile), 5000 (F32, F64, I32) and 8192.
  for (DType t : {DType::F32, DType::F64, DType::I32, DType::U8, DType::BF16})
    for (const Shape& s : {Shape{1}, Shape{100, 37}, Shape{5, 5000}, Shape{2, 1025},
                           Shape{40, 3, 17}, Shape{6, 1024}, Shape{3, 4100}, Shape{2, 8192}}) {
      const Tensor x = random_tensor(s, t, 21, t == DType::U8 ? 0 : -2, 3);
      for (int64_t d = 0; d < int64_t(s.size()); ++d) {
        const int64_t n = s[size_t(d)];
        expect_close(cumsum(x.to(dev), d), cumsum(x, d), tol_of(t) * double(n), tol_of(t),
                     "cumsum " + shape_str(s));
      }
      const Tensor p = random_tensor(s, t, 22, 0.99, 1.01);
      if (is_floating(t))
        expect_close(cumprod(p.to(dev), -1), cumprod(p, -1), tol_of(t), tol_of(t) * 100,
                     "cumprod " + shape_str(s));
    }
}

TEST(CudaReduce, BiasActivationBwd) {
  REQUIRE_CUDA_AS(dev);
  for (DType t : {DType::F32, DType::F64, DType::BF16})
    for (Activation act : {Activation::None, Activation::Relu, Activation::Gelu, Activation::Silu,
                           Activation::Sigmoid, Activation::Tanh})
      // Vector lanes (N a multiple of 8 or 4) in one or many column tiles, with and without
      // split rows; scalar lanes; rows left over by the two-row steps.
      for (const Shape& s : {Shape{5, 7}, Shape{1000, 300}, Shape{4, 64, 33}, Shape{20000, 3},
                             Shape{517, 1024}, Shape{3, 40}, Shape{9, 2, 520}}) {
        const Tensor g = random_tensor(s, t, 31);
        const Tensor saved = random_tensor(s, t, 32, -4, 4);
        const auto [gp_want, db_want] = bias_activation_bwd(g, saved, act);
        const auto [gp_got, db_got] = bias_activation_bwd(g.to(dev), saved.to(dev), act);
        const std::string what = std::string(activation_name(act)) + " " +
                                 std::string(dtype_name(t)) + " " + shape_str(s);
        expect_close(gp_got, gp_want, tol_of(t), tol_of(t), "grad_pre " + what);
        const double rows = double(shape_numel(s) / s.back());
        expect_close(db_got, db_want, tol_of(t) * std::sqrt(rows) * 4, tol_of(t), "d_bias " + what);
      }
}

// ---------------------------------------------------------------- ptxas

// A subset covering every variant and every storage width: every kernel of F32, and for
// the other dtypes the block-row kernels of sum and argmax, the block-row axis kernels and
// the Gelu and bias-sum kernels.
bool in_subset(const std::string& name) {
  const auto has = [&](const char* part) { return name.find(part) != std::string::npos; };
  const auto starts = [&](const char* part) { return name.rfind(part, 0) == 0; };
  if (has("_F32")) return true;
  if ((starts("reduce_sum_") || starts("reduce_argmax_")) && has("_block_k1_c")) return true;
  if (starts("axis_") && has("_block")) return true;
  return starts("bias_act_bwd_Gelu") || starts("bias_sum_");
}

// Generation alone (the sanitized tier runs it with no ptxas): unique names, and a subset
// of at least 150 kernels for the assembly below.
TEST(PtxReduce, CatalogNamesAreUnique) {
  for (const ptx::Target t : {ptx::Target{80, 8, 0}, ptx::Target{90, 8, 0}}) {
    const std::vector<cuda::GeneratedKernel> ks = cuda::reduce_kernels(t);
    std::set<std::string> names;
    for (const auto& k : ks) EXPECT_TRUE(names.insert(k.name).second) << k.name;
    EXPECT_GT(ks.size(), 500u);
    EXPECT_GT(std::count_if(ks.begin(), ks.end(),
                            [](const cuda::GeneratedKernel& k) { return in_subset(k.name); }),
              150);
  }
}

TEST(PtxReduce, AssemblesForSm80AndSm90) {
  NUMR_REQUIRE_PTXAS();
  for (const ptx::Target t : {ptx::Target{80, 8, 0}, ptx::Target{90, 8, 0}}) {
    int assembled = 0;
    for (const cuda::GeneratedKernel& k : cuda::reduce_kernels(t)) {
      if (!in_subset(k.name)) continue;
      const numr::test::PtxasResult r = numr::test::assemble(k.ptx, t.sm);
      EXPECT_TRUE(r.ok()) << k.name << " sm_" << t.sm << ": " << r.output;
      ++assembled;
    }
    EXPECT_GT(assembled, 150);
  }
}

}  // namespace
