#include <cmath>
#include <limits>
#include <vector>

#include "reference/reference.h"

namespace numr::reference {

RefTensor attention(const RefTensor& q, const RefTensor& k, const RefTensor& v,
                    const RefTensor* mask, bool mask_is_bool, bool causal, double scale) {
  const size_t r = q.shape.size();
  const int64_t lq = q.shape[r - 2], e = q.shape[r - 1], lk = k.shape[r - 2], ev = v.shape[r - 1];
  const int64_t batch = shape_numel(Shape(q.shape.begin(), q.shape.end() - 2));
  RefTensor out;
  out.shape = Shape(q.shape.begin(), q.shape.end() - 1);
  out.shape.push_back(ev);
  out.v.assign(size_t(batch * lq * ev), 0.0);
  const double ninf = -std::numeric_limits<double>::infinity();
  std::vector<double> s(static_cast<size_t>(lk));
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < lq; ++i) {
      double m = ninf;
      for (int64_t j = 0; j < lk; ++j) {
        double dot = 0;
        for (int64_t c = 0; c < e; ++c)
          dot += q.v[size_t((b * lq + i) * e + c)] * k.v[size_t((b * lk + j) * e + c)];
        double x = dot * scale;
        if (mask) {
          const double mv = mask->v[size_t((b * lq + i) * lk + j)];
          if (!mask_is_bool)
            x += mv;
          else if (mv == 0)
            x = ninf;
        }
        if (causal && j > i) x = ninf;
        s[size_t(j)] = x;
        m = std::isnan(x) || std::isnan(m) ? std::nan("") : std::max(m, x);
      }
      if (m == ninf) continue;  // every key masked out (or none): zeros
      double z = 0;
      for (int64_t j = 0; j < lk; ++j) z += (s[size_t(j)] = std::exp(s[size_t(j)] - m));
      for (int64_t c = 0; c < ev; ++c) {
        double acc = 0;
        for (int64_t j = 0; j < lk; ++j)
          acc += s[size_t(j)] / z * v.v[size_t((b * lk + j) * ev + c)];
        out.v[size_t((b * lq + i) * ev + c)] = acc;
      }
    }
  return out;
}

}  // namespace numr::reference
