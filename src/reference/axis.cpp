// Reference scans and softmax along one dim, one (outer, inner) line at a time.
#include <cmath>
#include <vector>

#include "math/reduce_rules.h"
#include "reference/reference.h"

namespace numr::reference {
namespace {

void line(OpId op, std::vector<double>& v) {
  switch (op) {
    case OpId::cumsum:
      for (size_t i = 1; i < v.size(); ++i) v[i] += v[i - 1];
      return;
    case OpId::cumprod:
      for (size_t i = 1; i < v.size(); ++i) v[i] *= v[i - 1];
      return;
    case OpId::softmax:
    case OpId::log_softmax: {
      // The max shift; a NaN anywhere makes every output NaN.
      double m = v[0];
      for (double x : v) m = math::extreme_merge<true>(m, x);
      double s = 0;
      for (double x : v) s += std::exp(x - m);
      for (double& x : v) x = op == OpId::softmax ? std::exp(x - m) / s : (x - m) - std::log(s);
      return;
    }
    default: return;
  }
}

}  // namespace

RefTensor along_axis(OpId op, const RefTensor& x, int64_t dim) {
  const int64_t nd = int64_t(x.shape.size());
  const int64_t d = nd == 0 ? 0 : (dim < 0 ? dim + nd : dim);
  int64_t outer = 1, n = 1, inner = 1;
  for (int64_t i = 0; i < nd; ++i) {
    if (i < d) outer *= x.shape[size_t(i)];
    else if (i == d) n = x.shape[size_t(i)];
    else inner *= x.shape[size_t(i)];
  }
  RefTensor out = x;
  if (x.v.empty()) return out;
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < inner; ++j) {
      for (int64_t i = 0; i < n; ++i) v[size_t(i)] = x.v[size_t((o * n + i) * inner + j)];
      line(op, v);
      for (int64_t i = 0; i < n; ++i) out.v[size_t((o * n + i) * inner + j)] = v[size_t(i)];
    }
  return out;
}

}  // namespace numr::reference
