// Reference rms_norm and layer_norm: one row at a time, statistics in double.
#include <cmath>
#include <vector>

#include "reference/reference.h"

namespace numr::reference {

RefTensor row_norm(const RefTensor& x, const RefTensor& weight, const RefTensor* bias, double eps,
                   bool centred) {
  RefTensor out = x;
  const int64_t d = x.shape.empty() ? 1 : x.shape.back();
  if (x.v.empty() || d == 0) return out;
  const int64_t rows = int64_t(x.v.size()) / d;
  for (int64_t r = 0; r < rows; ++r) {
    const double* row = x.v.data() + r * d;
    double mean = 0;
    if (centred) {
      for (int64_t i = 0; i < d; ++i) mean += row[i];
      mean /= double(d);
    }
    double ss = 0;
    for (int64_t i = 0; i < d; ++i) ss += (row[i] - mean) * (row[i] - mean);
    const double rstd = 1.0 / std::sqrt(ss / double(d) + eps);
    for (int64_t i = 0; i < d; ++i) {
      double y = (row[i] - mean) * rstd * weight.v[size_t(i)];
      if (bias) y += bias->v[size_t(i)];
      out.v[size_t(r * d + i)] = y;
    }
  }
  return out;
}

void row_norm_bwd(const RefTensor& grad, const RefTensor& x, const RefTensor& weight,
                  double eps, bool centred, RefTensor& d_x, RefTensor& d_weight,
                  RefTensor& d_bias) {
  const int64_t d = x.shape.back();
  d_x = x;
  d_weight = RefTensor{{d}, std::vector<double>(size_t(d), 0.0)};
  d_bias = d_weight;
  if (x.v.empty()) return;
  const int64_t rows = int64_t(x.v.size()) / d;
  std::vector<double> xhat(static_cast<size_t>(d));
  for (int64_t r = 0; r < rows; ++r) {
    const double* row = x.v.data() + r * d;
    const double* g = grad.v.data() + r * d;
    double mean = 0;
    if (centred) {
      for (int64_t i = 0; i < d; ++i) mean += row[i];
      mean /= double(d);
    }
    double ss = 0;
    for (int64_t i = 0; i < d; ++i) ss += (row[i] - mean) * (row[i] - mean);
    const double rstd = 1.0 / std::sqrt(ss / double(d) + eps);
    // d_x = rstd (g w - xhat mean(g w xhat) - [mean(g w)]).
    double a = 0, m = 0;
    for (int64_t i = 0; i < d; ++i) {
      xhat[size_t(i)] = (row[i] - mean) * rstd;
      const double gw = g[i] * weight.v[size_t(i)];
      a += gw * xhat[size_t(i)];
      m += gw;
      d_weight.v[size_t(i)] += g[i] * xhat[size_t(i)];
      d_bias.v[size_t(i)] += g[i];
    }
    a /= double(d);
    m = centred ? m / double(d) : 0.0;
    for (int64_t i = 0; i < d; ++i)
      d_x.v[size_t(r * d + i)] =
          rstd * (g[i] * weight.v[size_t(i)] - xhat[size_t(i)] * a - m);
  }
}

RefTensor group_norm(const RefTensor& x, int64_t groups, const RefTensor& weight,
                     const RefTensor& bias, double eps) {
  RefTensor out = x;
  const int64_t n = x.shape[0], c = x.shape[1];
  int64_t positions = 1;
  for (size_t i = 2; i < x.shape.size(); ++i) positions *= x.shape[i];
  const int64_t per = c / groups * positions;
  for (int64_t b = 0; b < n; ++b)
    for (int64_t g = 0; g < groups; ++g) {
      const size_t base = size_t((b * groups + g) * per);
      double mean = 0, ss = 0;
      for (int64_t i = 0; i < per; ++i) mean += x.v[base + size_t(i)];
      mean /= double(per);
      for (int64_t i = 0; i < per; ++i) ss += (x.v[base + size_t(i)] - mean) * (x.v[base + size_t(i)] - mean);
      const double rstd = 1.0 / std::sqrt(ss / double(per) + eps);
      for (int64_t i = 0; i < per; ++i) {
        const size_t ch = size_t(g * (c / groups) + i / positions);
        out.v[base + size_t(i)] = (x.v[base + size_t(i)] - mean) * rstd * weight.v[ch] + bias.v[ch];
      }
    }
  return out;
}

}  // namespace numr::reference
