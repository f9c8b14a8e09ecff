// Parity of the Norm family (kernel and composition) with the float64 reference:
// every float dtype, D = 1, D off the vector width, long rows, rows and dims of zero
// elements, views, NaN and inf inputs, PyTorch's default eps for rms_norm.
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "core/composition.h"
#include "core/thread_pool.h"
#include "support/harness.h"

namespace numr::test {
namespace {

constexpr Layout kLayouts[] = {Layout::Contiguous, Layout::Transposed, Layout::Strided,
                               Layout::Flipped};

// PyTorch's default eps for rms_norm: the machine epsilon of the dtype.
double machine_eps(DType t) {
  switch (t) {
    case DType::F64: return std::numeric_limits<double>::epsilon();
    case DType::F32: return std::numeric_limits<float>::epsilon();
    case DType::F16: return 1.0 / 1024;
    default: return 1.0 / 128;
  }
}

std::string check_case(OpId op, DType t, Device dev, const Shape& shape, const InputSpec& spec,
                       std::optional<double> eps, uint64_t seed) {
  const int64_t d = shape.back();
  const Tensor x = make_input(shape, t, dev, spec, seed);
  const Tensor w = make_input({d}, t, dev, InputSpec{}, seed + 1000);
  const Tensor b = make_input({d}, t, dev, InputSpec{}, seed + 2000);
  const bool centred = op == OpId::layer_norm;
  const Tensor got = centred ? layer_norm(x, w, b, eps.value_or(1e-5)) : rms_norm(x, w, eps);
  const RefTensor bias = to_ref(b);
  const RefTensor ref = reference::row_norm(to_ref(x), to_ref(w), centred ? &bias : nullptr,
                                            eps.value_or(centred ? 1e-5 : machine_eps(t)), centred);
  if (got.shape() != x.shape()) return "shape " + shape_str(got.shape());
  const std::string m = compare(got, ref, accumulation_tolerance(t, d));
  if (m.empty()) return "";
  return "shape " + shape_str(shape) + " layout " + std::to_string(int(spec.layout)) +
         (spec.specials ? " specials" : "") + ": " + m;
}

void run_parity(OpId op) {
  const std::vector<Shape> shapes = {{1},    {7},    {3, 1},    {5, 33},  {4, 3, 17}, {2, 1030},
                                     {0, 8}, {3, 0}, {2, 0, 5}, {37, 16}, {9, 64},    {6, 4096}};
  for_each_case(op, dtypes_of(op), [&](DType t, Device dev) -> std::string {
    uint64_t seed = 1;
    for (const Shape& s : shapes)
      for (Layout layout : kLayouts) {
        if (layout == Layout::Transposed && s.size() < 2) continue;
        for (std::optional<double> eps : {std::optional<double>(1e-5), std::optional<double>()}) {
          if (op == OpId::layer_norm && !eps) continue;
          const std::string m = check_case(op, t, dev, s, InputSpec{.layout = layout}, eps, ++seed);
          if (!m.empty()) return m;
        }
      }
    return "";
  });
}

// NaN and ±inf in x: a row holding one turns NaN (layer_norm), or NaN where the special is
// and 0 times the weight elsewhere (rms_norm, whose rstd becomes 0 for an infinite row).
void run_specials(OpId op) {
  for_each_case(op, dtypes_of(op), [&](DType t, Device dev) -> std::string {
    uint64_t seed = 100;
    for (const Shape& s : std::vector<Shape>{{7}, {33, 17}, {5, 7, 11}, {37, 16}, {9, 64}}) {
      const std::string m = check_case(op, t, dev, s, InputSpec{.specials = true}, 1e-5, ++seed);
      if (!m.empty()) return m;
    }
    return "";
  });
}

// Many rows on several threads, and long rows.
void run_large(OpId op) {
  ThreadPool& pool = ThreadPool::instance();
  const int saved = pool.size();
  pool.resize(4);
  for_each_case(op, dtypes_of(op), [&](DType t, Device dev) -> std::string {
    uint64_t seed = 500;
    for (const Shape& s : std::vector<Shape>{{256, 4096}, {4000, 24}, {3, 100003}}) {
      const std::string m = check_case(op, t, dev, s, InputSpec{}, 1e-6, ++seed);
      if (!m.empty()) return "large: " + m;
    }
    return "";
  });
  pool.resize(saved);
}

TEST(ParityNorm, RmsNorm) {
  run_parity(OpId::rms_norm);
  run_specials(OpId::rms_norm);
  run_large(OpId::rms_norm);
}

TEST(ParityNorm, LayerNorm) {
  run_parity(OpId::layer_norm);
  run_specials(OpId::layer_norm);
  run_large(OpId::layer_norm);
}

// The backward (fused kernel and composition) from the forward's saved statistics, against
// the reference's backward.
void run_backward(OpId op) {
  const bool centred = op == OpId::layer_norm;
  for_each_case(op, dtypes_of(op), [&](DType t, Device dev) -> std::string {
    uint64_t seed = 900;
    for (const Shape& s :
         std::vector<Shape>{{1}, {3, 1}, {5, 33}, {4, 3, 17}, {300, 24}, {32, 4096}, {0, 5}}) {
      const int64_t d = s.back();
      const Tensor x = make_input(s, t, dev, InputSpec{}, ++seed);
      const Tensor g = make_input(s, t, dev, InputSpec{}, ++seed);
      const Tensor w = make_input({d}, t, dev, InputSpec{}, ++seed);
      const Tensor b = make_input({d}, t, dev, InputSpec{}, ++seed);
      const double eps = 1e-3;
      NormGrads got;
      if (centred) {
        const NormForward f = layer_norm_fwd(x, w, b, eps);
        got = layer_norm_bwd(g, x, w, f.mean, f.rstd);
      } else {
        const NormForward f = rms_norm_fwd(x, w, eps);
        got = rms_norm_bwd(g, x, w, f.rstd);
      }
      RefTensor dx, dw, db;
      reference::row_norm_bwd(to_ref(g), to_ref(x), to_ref(w), eps, centred, dx, dw, db);
      const int64_t rows = d == 0 ? 0 : x.numel() / d;
      std::string m = compare(got.d_x, dx, accumulation_tolerance(t, d));
      if (m.empty()) m = compare(got.d_weight, dw, accumulation_tolerance(t, rows * d));
      if (m.empty() && centred) m = compare(got.d_bias, db, accumulation_tolerance(t, rows));
      if (!m.empty()) return "backward, shape " + shape_str(s) + ": " + m;
    }
    return "";
  });
}

TEST(ParityNorm, RmsNormBackward) { run_backward(OpId::rms_norm); }
TEST(ParityNorm, LayerNormBackward) { run_backward(OpId::layer_norm); }

// The saved statistics and the backward, on both paths, against the reference's formulas.
TEST(ParityNorm, ForwardStatisticsAndBackward) {
  for (bool force : {false, true}) {
    SCOPED_TRACE(force ? "composition" : "as the backend chooses");
    const ForceComposition fc(force, {OpId::rms_norm, OpId::layer_norm});
    // One row [1, 2, 3, 6]: mean 3, biased var (4 + 1 + 0 + 9) / 4 = 3.5, mean of squares 12.5.
    const Tensor x = Tensor::from_vector<double>({1, 2, 3, 6}, {1, 4});
    const Tensor w = Tensor::from_vector<double>({1, -1, 2, 0.5}, {4});
    const Tensor b = Tensor::from_vector<double>({0.5, 0, 0, 1}, {4});
    const NormForward ln = layer_norm_fwd(x, w, b, 0.0);
    EXPECT_EQ(ln.mean.shape(), Shape({1}));
    EXPECT_NEAR(ln.mean.to_vector<double>()[0], 3.0, 1e-15);
    EXPECT_NEAR(ln.rstd.to_vector<double>()[0], 1.0 / std::sqrt(3.5), 1e-15);
    const NormForward rn = rms_norm_fwd(x.cast(DType::F16), w.cast(DType::F16), 0.0);
    EXPECT_FALSE(rn.mean.defined());
    EXPECT_EQ(rn.rstd.dtype(), DType::F32);
    EXPECT_NEAR(rn.rstd.to_vector<float>()[0], 1.0 / std::sqrt(12.5), 1e-7);
    // The backward with grad = e_0: d_bias = grad, d_weight = grad * xhat.
    const Tensor g = Tensor::from_vector<double>({1, 0, 0, 0}, {1, 4});
    const NormGrads lg = layer_norm_bwd(g, x, w, ln.mean, ln.rstd);
    EXPECT_EQ(lg.d_bias.to_vector<double>(), std::vector<double>({1, 0, 0, 0}));
    EXPECT_NEAR(lg.d_weight.to_vector<double>()[0], -2.0 / std::sqrt(3.5), 1e-15);
    // d_x sums to 0 over the row for layer_norm (shifting x changes nothing).
    double s = 0;
    for (double v : lg.d_x.to_vector<double>()) s += v;
    EXPECT_NEAR(s, 0.0, 1e-14);
    // rms_norm is scale invariant: d_x . x = 0.
    const NormForward r64 = rms_norm_fwd(x, w, 1e-300);
    const NormGrads rg = rms_norm_bwd(g, x, w, r64.rstd);
    EXPECT_FALSE(rg.d_bias.defined());
    const std::vector<double> dx = rg.d_x.to_vector<double>(), xv = x.to_vector<double>();
    double dot = 0;
    for (size_t i = 0; i < dx.size(); ++i) dot += dx[i] * xv[i];
    EXPECT_NEAR(dot, 0.0, 1e-14);
    // Rows of no elements: empty d_x, zero d_weight and d_bias.
    const Tensor e = zeros({0, 4}, DType::F32);
    const NormForward ef = layer_norm_fwd(e, ones({4}), zeros({4}));
    const NormGrads eg = layer_norm_bwd(e, e, ones({4}), ef.mean, ef.rstd);
    EXPECT_EQ(eg.d_x.shape(), Shape({0, 4}));
    EXPECT_EQ(eg.d_weight.to_vector<float>(), std::vector<float>(4, 0.f));
    EXPECT_EQ(eg.d_bias.to_vector<float>(), std::vector<float>(4, 0.f));
  }
}

// fused_add_rms_norm and fused_add_layer_norm: the residual is x + residual in x's dtype,
// and out the norm of that sum (its reference from the sum numr returned).
void run_add_norm(OpId op) {
  const bool centred = op == OpId::fused_add_layer_norm;
  const std::vector<Shape> shapes = {{1}, {7}, {5, 33}, {4, 3, 17}, {0, 8}, {37, 16}, {6, 4096}};
  for_each_case(op, dtypes_of(op), [&](DType t, Device dev) -> std::string {
    uint64_t seed = 3000;
    for (const Shape& s : shapes)
      for (Layout layout : {Layout::Contiguous, Layout::Strided, Layout::Flipped}) {
        const int64_t d = s.back();
        const Tensor x = make_input(s, t, dev, InputSpec{.layout = layout}, ++seed);
        const Tensor r = make_input(s, t, dev, InputSpec{}, ++seed);
        const Tensor w = make_input({d}, t, dev, InputSpec{}, ++seed);
        const Tensor b = make_input({d}, t, dev, InputSpec{}, ++seed);
        const AddNorm got =
            centred ? fused_add_layer_norm(x, r, w, b, 1e-5) : fused_add_rms_norm(x, r, w, 1e-5);
        const RefTensor xr = to_ref(x), rr = to_ref(r);
        const RefTensor sum = reference::elementwise(OpId::add, {&xr, &rr});
        std::string m = compare(got.residual, sum, tolerance_for(t));
        const RefTensor bias = to_ref(b);
        const RefTensor want = reference::row_norm(to_ref(got.residual), to_ref(w),
                                                   centred ? &bias : nullptr, 1e-5, centred);
        if (m.empty()) m = compare(got.out, want, accumulation_tolerance(t, d));
        if (!m.empty()) return "shape " + shape_str(s) + ": " + m;
      }
    return "";
  });
}

TEST(ParityNorm, FusedAddRmsNorm) { run_add_norm(OpId::fused_add_rms_norm); }
TEST(ParityNorm, FusedAddLayerNorm) { run_add_norm(OpId::fused_add_layer_norm); }

TEST(ParityNorm, GroupNorm) {
  struct Case {
    Shape shape;
    int64_t groups;
  };
  const std::vector<Case> cases = {{{2, 4}, 2},    {{3, 6, 5}, 3},     {{2, 8, 4, 4}, 4},
                                   {{1, 5, 7}, 1}, {{2, 6, 3}, 6},     {{0, 4, 3}, 2},
                                   {{2, 4, 0}, 2}, {{4, 32, 9, 9}, 8}, {{1, 64, 1030}, 16}};
  for_each_case(
      OpId::group_norm, dtypes_of(OpId::group_norm), [&](DType t, Device dev) -> std::string {
        uint64_t seed = 4000;
        for (const Case& c : cases)
          for (Layout layout : kLayouts) {
            const Tensor x = make_input(c.shape, t, dev, InputSpec{.layout = layout}, ++seed);
            const int64_t ch = c.shape[1];
            const Tensor w = make_input({ch}, t, dev, InputSpec{}, ++seed);
            const Tensor b = make_input({ch}, t, dev, InputSpec{}, ++seed);
            const Tensor got = group_norm(x, c.groups, w, b, 1e-5);
            const RefTensor want =
                reference::group_norm(to_ref(x), c.groups, to_ref(w), to_ref(b), 1e-5);
            if (got.shape() != x.shape()) return "shape " + shape_str(got.shape());
            const int64_t per = c.shape[0] > 0 ? x.numel() / c.shape[0] / c.groups : 0;
            const std::string m = compare(got, want, accumulation_tolerance(t, per));
            if (!m.empty())
              return "shape " + shape_str(c.shape) + " groups " + std::to_string(c.groups) +
                     " layout " + std::to_string(int(layout)) + ": " + m;
          }
        return "";
      });
}

}  // namespace
}  // namespace numr::test
