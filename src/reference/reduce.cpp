// Reference reductions: every output gathers its reduced elements in row-major order,
// then the op is applied to that list with plain double arithmetic, by the rules of
// math/reduce_rules.h.
#include <cmath>
#include <limits>
#include <vector>

#include "math/reduce_rules.h"
#include "reference/reference.h"

namespace numr::reference {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

bool has_nan(const std::vector<double>& v) {
  for (double x : v)
    if (std::isnan(x)) return true;
  return false;
}

// NaN-sticky max (kMax) or min; NaN for no elements.
template <bool kMax>
double extreme(const std::vector<double>& v) {
  if (v.empty()) return kNaN;
  double best = v[0];
  for (double x : v) best = math::extreme_merge<kMax>(best, x);
  return best;
}

// First index of the extreme; a NaN counts as the extreme. 0 for no elements.
template <bool kMax>
double arg_extreme(const std::vector<double>& v) {
  int64_t idx = -1;
  double best = 0;
  for (size_t i = 0; i < v.size(); ++i)
    if (math::arg_feed_takes<kMax>([&] { return idx < 0; }, v[i], best)) {
      best = v[i];
      idx = int64_t(i);
    }
  return idx < 0 ? 0.0 : double(idx);
}

// Two passes: the mean, then the squared deviations from it.
double variance(const std::vector<double>& v, int64_t correction) {
  const double n = double(v.size()), denom = n - double(correction);
  double mean = 0;
  for (double x : v) mean += x;
  mean /= n;
  double ss = 0;
  for (double x : v) ss += (x - mean) * (x - mean);
  return math::variance_from_m2(ss, denom, !v.empty() && denom > 0);
}

// Two passes over the finite elements: their max, then Σ exp(x - max).
double log_sum_exp(const std::vector<double>& v) {
  math::LogSumExp<double> s{-kInf, 0.0};
  bool pos_inf = false;
  for (double x : v) {
    if (std::isfinite(x) && x > s.max) s.max = x;
    pos_inf = pos_inf || x == kInf;
  }
  for (double x : v)
    if (std::isfinite(x)) s.sum += std::exp(x - s.max);
  return math::lse_result(
      s, [&] { return pos_inf; }, [&] { return has_nan(v); });
}

double apply(OpId op, const std::vector<double>& v, int64_t correction) {
  switch (op) {
    case OpId::sum: {
      double s = 0;
      for (double x : v) s += x;
      return s;
    }
    case OpId::mean: {
      double s = 0;
      for (double x : v) s += x;
      return math::mean_of(s, double(v.size()));
    }
    case OpId::prod: {
      double p = 1;
      for (double x : v) p *= x;
      return p;
    }
    case OpId::max: return extreme<true>(v);
    case OpId::min: return extreme<false>(v);
    case OpId::any:
      for (double x : v)
        if (math::reduce_truth(x)) return 1.0;
      return 0.0;
    case OpId::all:
      for (double x : v)
        if (!math::reduce_truth(x)) return 0.0;
      return 1.0;
    case OpId::argmax: return arg_extreme<true>(v);
    case OpId::argmin: return arg_extreme<false>(v);
    case OpId::var: return variance(v, correction);
    case OpId::std: return std::sqrt(variance(v, correction));
    case OpId::logsumexp: return log_sum_exp(v);
    default: return kNaN;
  }
}

}  // namespace

RefTensor reduce(OpId op, const RefTensor& x, const std::vector<int64_t>& dims, bool keepdim,
                 int64_t correction) {
  const size_t nd = x.shape.size();
  std::vector<bool> reduced(nd, dims.empty());
  for (int64_t d : dims) reduced[size_t(d)] = true;

  RefTensor out;
  Shape kept;
  for (size_t d = 0; d < nd; ++d) {
    if (!reduced[d]) kept.push_back(x.shape[d]);
    if (!reduced[d] || keepdim) out.shape.push_back(reduced[d] ? 1 : x.shape[d]);
  }
  std::vector<std::vector<double>> groups(size_t(shape_numel(kept)));

  // Walk the input in row-major order; each element joins its output's group.
  std::vector<int64_t> idx(nd, 0);
  for (size_t i = 0; i < x.v.size(); ++i) {
    int64_t k = 0;
    for (size_t d = 0; d < nd; ++d)
      if (!reduced[d]) k = k * x.shape[d] + idx[d];
    groups[size_t(k)].push_back(x.v[i]);
    for (size_t d = nd; d-- > 0;) {
      if (++idx[d] < x.shape[d]) break;
      idx[d] = 0;
    }
  }
  out.v.reserve(groups.size());
  for (const auto& g : groups) out.v.push_back(apply(op, g, correction));
  return out;
}

}  // namespace numr::reference
