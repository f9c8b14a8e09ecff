// Reference rms_norm and layer_norm: one row at a time, statistics in double.
#include <cmath>

#include "reference/reference.h"

namespace numr::reference {

RefTensor row_norm(const RefTensor& x, const RefTensor& weight, const RefTensor* bias,
                   double eps, bool centred) {
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

}  // namespace numr::reference
