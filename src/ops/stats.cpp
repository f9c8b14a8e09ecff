// Statistics, composed of sort, gather, reductions and matmul, written once over Tensor
// and Var where differentiable.
#include "numr/stats.h"

#include <cmath>
#include <limits>

#include "core/op_scope.h"
#include "numr/indexing.h"
#include "numr/ops.h"
#include "ops/common.h"

namespace numr {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

const Tensor& value_of(const Tensor& t) { return t; }
const Tensor& value_of(const Var& v) { return v.tensor(); }

// F16/BF16 statistics are computed in f32 and rounded once at the end.
template <class T>
T widened(const T& x) {
  return compute_dtype(x.dtype()) == x.dtype() ? x : cast(x, compute_dtype(x.dtype()));
}
template <class T>
T narrowed(const T& r, DType t) {
  return r.dtype() == t ? r : cast(r, t);
}

Tensor nan_where(const Tensor& mask, const Tensor& v) {
  return where_cond(mask, full({}, kNaN, v.dtype(), v.device()), v);
}
Var nan_where(const Tensor& mask, const Var& v) { return where_cond(mask, kNaN, v); }

void check_input(OpId op, const Tensor& x) {
  ops::check_defined(op_name(op), x);
  ops::check_dtype(op, x.dtype());
}

// x with the reduced dim: x flattened (dim 0) when dim is empty.
template <class T>
std::pair<T, int64_t> along(std::string_view op, const T& x, std::optional<int64_t> dim) {
  if (!dim) return {reshape(x, {value_of(x).numel()}), 0};
  if (x.dim() == 0) return {reshape(x, {1}), 0};
  return {x, wrap_dim(op, *dim, x.dim())};
}

// r (reduced dim d kept with extent 1) shaped as the op returns it.
template <class T>
T finish_reduced(const T& r, const Shape& x_shape, std::optional<int64_t> dim, int64_t d,
                 bool keepdim) {
  if (!dim) return keepdim ? reshape(r, Shape(x_shape.size(), 1)) : reshape(r, Shape{});
  if (x_shape.empty()) return reshape(r, Shape{});
  return keepdim ? r : squeeze(r, d);
}

// a + w (b - a) as torch.lerp rounds it: from the nearer end.
template <class T>
T lerp(const T& a, const T& b, double w) {
  return w < 0.5 ? a + (b - a) * w : b - (b - a) * (1.0 - w);
}

template <class T>
T quantile_impl(const T& x_in, const std::vector<double>& qs, bool scalar_q,
                std::optional<int64_t> dim, bool keepdim, QuantileInterpolation mode) {
  constexpr std::string_view op = "quantile";
  check_input(OpId::quantile, value_of(x_in));
  if (qs.empty()) fail<InvalidArgument>(op, "no quantiles asked for");
  for (double q : qs)
    if (!(q >= 0.0 && q <= 1.0)) fail<InvalidArgument>(op, "q = ", q, " is not in [0, 1]");
  const DType dt = x_in.dtype();
  const Shape x_shape = x_in.shape();
  auto [x, d] = along(op, widened(x_in), dim);
  const int64_t n = x.shape()[size_t(d)];
  if (n == 0) fail<InvalidArgument>(op, "cannot take a quantile of an empty dim");
  const T s = sort(x, d).values;  // NaN last: a slice with a NaN ends with one
  const Tensor has_nan = isnan(value_of(narrow(s, d, n - 1, 1)));
  std::vector<T> out;
  for (double q : qs) {
    const double p = q * double(n - 1);
    const auto lo = int64_t(std::floor(p)), hi = int64_t(std::ceil(p));
    const T a = narrow(s, d, lo, 1), b = narrow(s, d, hi, 1);
    T r;
    switch (mode) {
      case QuantileInterpolation::Linear: r = lo == hi ? a : lerp(a, b, p - double(lo)); break;
      case QuantileInterpolation::Lower: r = a; break;
      case QuantileInterpolation::Higher: r = b; break;
      case QuantileInterpolation::Midpoint: r = lo == hi ? a : lerp(a, b, 0.5); break;
      case QuantileInterpolation::Nearest: r = narrow(s, d, int64_t(std::nearbyint(p)), 1); break;
    }
    out.push_back(narrowed(finish_reduced(nan_where(has_nan, r), x_shape, dim, d, keepdim), dt));
  }
  return scalar_q ? out[0] : stack(out, 0);
}

// The observation weights of cov, checked: 1-D of n entries on x's device, non-negative,
// integral for fweights; as dtype `acc`.
Tensor cov_weights(const Tensor& w, const char* name, bool integral, int64_t n, Device dev,
                   DType acc) {
  if (w.dim() != 1 || w.size(0) != n)
    fail<ShapeMismatch>("cov", name, " must be 1-D with one entry per observation (", n, "), got ",
                        shape_str(w.shape()));
  if (w.device() != dev) fail<DeviceMismatch>("cov", name, " is on ", w.device(), ", x on ", dev);
  if (integral ? is_floating(w.dtype()) || w.dtype() == DType::Bool : !is_floating(w.dtype()))
    fail<UnsupportedDType>("cov", name, " must have ", integral ? "an integer" : "a floating",
                           " dtype, got ", w.dtype());
  const Tensor wa = w.cast(acc);
  if (n > 0 && min(wa).item_double() < 0)
    fail<InvalidArgument>("cov", name, " has a negative entry");
  return wa;
}

template <class T>
T cov_impl(const T& x_in, int64_t correction, const std::optional<Tensor>& fweights = std::nullopt,
           const std::optional<Tensor>& aweights = std::nullopt) {
  check_input(OpId::cov, value_of(x_in));
  if (x_in.dim() > 2)
    fail<InvalidArgument>("cov", "x must have 1 or 2 dims (variables x observations), it has ",
                          x_in.dim());
  const DType dt = x_in.dtype();
  const T x = x_in.dim() < 2 ? reshape(widened(x_in), {1, -1}) : widened(x_in);
  const int64_t n = x.shape()[1];
  if (!fweights && !aweights) {
    const T xc = x - mean(x, {1}, true);
    const double norm = std::max<double>(0.0, double(n - correction));
    const T c = matmul(xc, transpose(xc, 0, 1)) / norm;
    return narrowed(x_in.dim() < 2 ? reshape(c, Shape{}) : c, dt);
  }
  const Device dev = value_of(x).device();
  const DType acc = value_of(x).dtype();
  std::optional<Tensor> fw, aw;
  if (fweights) fw = cov_weights(*fweights, "fweights", true, n, dev, acc);
  if (aweights) aw = cov_weights(*aweights, "aweights", false, n, dev, acc);
  const Tensor w = fw && aw ? *fw * *aw : fw ? *fw : *aw;
  const Tensor w_sum = sum(w);
  const T avg = sum(x * w, {1}, true) / w_sum;
  const Tensor norm =
      aw ? w_sum - sum(w * *aw) * double(correction) / w_sum : w_sum - double(correction);
  const T xc = x - avg;
  const T c = matmul(xc * w, transpose(xc, 0, 1)) / clamp(norm, 0.0, std::nullopt);
  return narrowed(x_in.dim() < 2 ? reshape(c, Shape{}) : c, dt);
}

template <class T>
T corrcoef_impl(const T& x_in) {
  check_input(OpId::corrcoef, value_of(x_in));
  const DType dt = x_in.dtype();
  const T c = cov_impl(widened(x_in), 1);
  if (c.dim() == 0) return narrowed(clamp(c / c, -1.0, 1.0), dt);
  const int64_t v = c.shape()[0];
  const T sd = sqrt(sum(c * eye(v, v, c.dtype(), value_of(c).device()), {1}));
  return narrowed(clamp(c / reshape(sd, {v, 1}) / reshape(sd, {1, v}), -1.0, 1.0), dt);
}

// The central moments m2 and m_k (k = 3 or 4) along d, kept as a dim of 1.
template <class T>
std::pair<T, T> moments(const T& x, int64_t d, int k) {
  const T dev = x - mean(x, {d}, true);
  const T sq = dev * dev;
  return {mean(sq, {d}, true), mean(k == 3 ? sq * dev : sq * sq, {d}, true)};
}

template <class T>
T skew_impl(const T& x_in, std::optional<int64_t> dim, bool keepdim, bool bias) {
  check_input(OpId::skew, value_of(x_in));
  const DType dt = x_in.dtype();
  const Shape x_shape = x_in.shape();
  auto [x, d] = along("skew", widened(x_in), dim);
  const auto n = double(x.shape()[size_t(d)]);
  auto [m2, m3] = moments(x, d, 3);
  T g = m3 / (m2 * sqrt(m2));
  if (!bias) g = g * (std::sqrt(n * (n - 1)) / (n - 2));
  return narrowed(finish_reduced(g, x_shape, dim, d, keepdim), dt);
}

template <class T>
T kurtosis_impl(const T& x_in, std::optional<int64_t> dim, bool keepdim, bool fisher, bool bias) {
  check_input(OpId::kurtosis, value_of(x_in));
  const DType dt = x_in.dtype();
  const Shape x_shape = x_in.shape();
  auto [x, d] = along("kurtosis", widened(x_in), dim);
  const auto n = double(x.shape()[size_t(d)]);
  auto [m2, m4] = moments(x, d, 4);
  T g = m4 / (m2 * m2);
  if (!bias) g = (g * (n * n - 1) - 3 * (n - 1) * (n - 1)) / ((n - 2) * (n - 3)) + 3.0;
  if (fisher) g = g - 3.0;
  return narrowed(finish_reduced(g, x_shape, dim, d, keepdim), dt);
}

// The position of the lower median along d of sorted s (kept dim of 1), or of the first
// NaN where the slice holds one.
Tensor median_position(const Tensor& s, int64_t d) {
  const int64_t n = s.shape()[size_t(d)];
  const Tensor lower = full({}, double((n - 1) / 2), DType::I64, s.device());
  Shape kept = s.shape();
  kept[size_t(d)] = 1;
  if (!is_floating(s.dtype())) return lower.broadcast_to(kept).contiguous();
  const Tensor nans = sum(isnan(s).cast(DType::I64), {d}, true);
  return where_cond(gt(nans, zeros({}, DType::I64, s.device())), rsub_scalar(nans, double(n)),
                    lower.broadcast_to(nans.shape()));
}

template <class T, class R>
R median_dim_impl(const T& x, int64_t dim, bool keepdim) {
  check_input(OpId::median, value_of(x));
  const Shape x_shape = x.shape();
  auto [xv, d] = along("median", x, std::optional<int64_t>(dim));
  if (xv.shape()[size_t(d)] == 0)
    fail<InvalidArgument>("median", "cannot take the median of an empty dim");
  const auto sorted = sort(xv, d);
  const Tensor pos = median_position(value_of(sorted.values), d);
  auto values = gather(sorted.values, d, pos);
  Tensor indices = gather(sorted.indices, d, pos);
  const std::optional<int64_t> kept(dim);
  return R{finish_reduced(values, x_shape, kept, d, keepdim),
           finish_reduced(indices, x_shape, kept, d, keepdim)};
}

template <class T>
T median_all_impl(const T& x) {
  check_input(OpId::median, value_of(x));
  if (value_of(x).numel() == 0)
    fail<InvalidArgument>("median", "cannot take the median of an empty tensor");
  const T flat = reshape(x, {value_of(x).numel()});
  const auto sorted = sort(flat, 0);
  return reshape(gather(sorted.values, 0, median_position(value_of(sorted.values), 0)), Shape{});
}

}  // namespace

Tensor quantile(const Tensor& x, double q, std::optional<int64_t> dim, bool keepdim,
                QuantileInterpolation interpolation) {
  const OpScope scope("quantile");
  return quantile_impl(x, {q}, true, dim, keepdim, interpolation);
}
Tensor quantile(const Tensor& x, const std::vector<double>& q, std::optional<int64_t> dim,
                bool keepdim, QuantileInterpolation interpolation) {
  const OpScope scope("quantile");
  return quantile_impl(x, q, false, dim, keepdim, interpolation);
}
Var quantile(const Var& x, double q, std::optional<int64_t> dim, bool keepdim,
             QuantileInterpolation interpolation) {
  const OpScope scope("quantile");
  return quantile_impl(x, {q}, true, dim, keepdim, interpolation);
}
Var quantile(const Var& x, const std::vector<double>& q, std::optional<int64_t> dim, bool keepdim,
             QuantileInterpolation interpolation) {
  const OpScope scope("quantile");
  return quantile_impl(x, q, false, dim, keepdim, interpolation);
}

Tensor median(const Tensor& x) {
  const OpScope scope("median");
  return median_all_impl(x);
}
Var median(const Var& x) {
  const OpScope scope("median");
  return median_all_impl(x);
}
SortResult median(const Tensor& x, int64_t dim, bool keepdim) {
  const OpScope scope("median");
  return median_dim_impl<Tensor, SortResult>(x, dim, keepdim);
}
SortVar median(const Var& x, int64_t dim, bool keepdim) {
  const OpScope scope("median");
  return median_dim_impl<Var, SortVar>(x, dim, keepdim);
}

SortResult mode(const Tensor& x, int64_t dim, bool keepdim) {
  const OpScope scope("mode");
  check_input(OpId::mode, x);
  const Shape x_shape = x.shape();
  auto [xv, d] = along("mode", x, std::optional<int64_t>(dim));
  const int64_t n = xv.shape()[size_t(d)];
  if (n == 0) fail<InvalidArgument>("mode", "cannot take the mode of an empty dim");
  // Runs of equal values in sorted order (NaNs one run): each element's run number, the
  // length of each run, and the run with the most elements (argmax takes the first, the
  // smallest value).
  const auto [s, idx] = sort(xv.dim() == 1 ? xv.unsqueeze(0) : xv.transpose(d, -1), -1);
  const int64_t last = s.dim() - 1;
  Tensor starts = ones(s.shape(), DType::I64, s.device());
  if (n > 1) {
    const Tensor prev = s.narrow(last, 0, n - 1), cur = s.narrow(last, 1, n - 1);
    Tensor differ = ne(prev, cur);
    if (is_floating(s.dtype()))
      differ = logical_and(differ, logical_not(logical_and(isnan(prev), isnan(cur))));
    starts = cat({ones(Shape(s.shape().begin(), s.shape().end() - 1), DType::I64, s.device())
                      .unsqueeze(last),
                  differ.cast(DType::I64)},
                 last);
  }
  const Tensor run = sub_scalar(cumsum(starts, last), 1.0);  // run number of each element
  const Tensor counts = scatter_reduce(zeros(s.shape(), DType::I64, s.device()), last, run,
                                       ones(s.shape(), DType::I64, s.device()), ScatterReduce::Sum);
  const Tensor best = argmax(counts, last, true);  // the run number of the mode
  // The first element of that run: the number of elements in earlier runs.
  const Tensor first = sum(lt(run, best).cast(DType::I64), {last}, true);
  Tensor values = gather(s, last, first), indices = gather(idx, last, first);
  if (xv.dim() == 1) {
    values = values.squeeze(0);
    indices = indices.squeeze(0);
  } else {
    values = values.transpose(d, -1);
    indices = indices.transpose(d, -1);
  }
  const std::optional<int64_t> kept(dim);
  return {finish_reduced(values, x_shape, kept, d, keepdim),
          finish_reduced(indices, x_shape, kept, d, keepdim)};
}

HistogramResult histogram(const Tensor& x, int64_t bins,
                          std::optional<std::pair<double, double>> range,
                          const std::optional<Tensor>& weights, bool density) {
  const OpScope scope("histogram");
  check_input(OpId::histogram, x);
  if (bins <= 0) fail<InvalidArgument>("histogram", "bins must be positive, got ", bins);
  if (weights) {
    ops::check_same("histogram", {&x, &*weights});
    if (weights->shape() != x.shape())
      fail<ShapeMismatch>("histogram", "weights have shape ", shape_str(weights->shape()),
                          ", x has ", shape_str(x.shape()));
  }
  double lo = 0, hi = 1;
  if (range) {
    std::tie(lo, hi) = *range;
  } else if (x.numel() > 0) {
    lo = min(x).item_double();
    hi = max(x).item_double();
  }
  if (!std::isfinite(lo) || !std::isfinite(hi))
    fail<InvalidArgument>("histogram", "the range [", lo, ", ", hi, "] is not finite");
  if (lo > hi) fail<InvalidArgument>("histogram", "the range [", lo, ", ", hi, "] is reversed");
  if (lo == hi) {
    lo -= 0.5;
    hi += 0.5;
  }
  const DType t = x.dtype();
  const Tensor edges = linspace(lo, hi, bins + 1, t, x.device());
  const Tensor flat = x.reshape({x.numel()});
  const Tensor e_lo = edges.narrow(0, 0, 1), e_hi = edges.narrow(0, bins, 1);
  const DType acc = compute_dtype(t) == DType::F64 ? DType::F64 : DType::F32;
  Tensor counts;
  if (!weights && !x.device().is_cpu()) {
    // Counts from one sort: bin i holds the values below edge i+1 (at or below hi for the
    // last) less those below edge i. NaN sorts last, past hi. GPUs sort fast but serialise
    // a deterministic scatter into a few bins; the CPU is the other way round.
    const Tensor sorted = sort(flat, 0).values;
    const Tensor below =
        cat({searchsorted(sorted, edges.narrow(0, 0, bins)), searchsorted(sorted, e_hi, true)}, 0);
    counts = (below.narrow(0, 1, bins) - below.narrow(0, 0, bins)).cast(acc);
  } else {
    // Bin i holds [edge_i, edge_i+1): the count of edges <= v, less one; hi joins the last.
    const Tensor inside = logical_and(ge(flat, e_lo), le(flat, e_hi));
    Tensor bin = sub_scalar(searchsorted(edges, flat, true), 1.0);
    bin = where_cond(inside, clamp(bin, 0.0, double(bins - 1)), zeros({}, DType::I64, x.device()));
    Tensor w = inside.cast(acc);
    if (weights) w = w * weights->reshape({x.numel()}).cast(acc);
    counts = bincount(bin, w, bins);
  }
  if (density) {
    const Tensor total = sum(counts);
    counts = counts / (total * ((hi - lo) / double(bins)));
  }
  return {counts.cast(t), edges};
}

Tensor cov(const Tensor& x, int64_t correction, const std::optional<Tensor>& fweights,
           const std::optional<Tensor>& aweights) {
  const OpScope scope("cov");
  return cov_impl(x, correction, fweights, aweights);
}
Var cov(const Var& x, int64_t correction, const std::optional<Tensor>& fweights,
        const std::optional<Tensor>& aweights) {
  const OpScope scope("cov");
  return cov_impl(x, correction, fweights, aweights);
}
Tensor corrcoef(const Tensor& x) {
  const OpScope scope("corrcoef");
  return corrcoef_impl(x);
}
Var corrcoef(const Var& x) {
  const OpScope scope("corrcoef");
  return corrcoef_impl(x);
}
Tensor skew(const Tensor& x, std::optional<int64_t> dim, bool keepdim, bool bias) {
  const OpScope scope("skew");
  return skew_impl(x, dim, keepdim, bias);
}
Var skew(const Var& x, std::optional<int64_t> dim, bool keepdim, bool bias) {
  const OpScope scope("skew");
  return skew_impl(x, dim, keepdim, bias);
}
Tensor kurtosis(const Tensor& x, std::optional<int64_t> dim, bool keepdim, bool fisher, bool bias) {
  const OpScope scope("kurtosis");
  return kurtosis_impl(x, dim, keepdim, fisher, bias);
}
Var kurtosis(const Var& x, std::optional<int64_t> dim, bool keepdim, bool fisher, bool bias) {
  const OpScope scope("kurtosis");
  return kurtosis_impl(x, dim, keepdim, fisher, bias);
}

}  // namespace numr
