#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

#include "reference/reference.h"

namespace numr::reference {

bool sorts_before(double a, double b) {
  if (std::isnan(a)) return false;
  return std::isnan(b) || a < b;
}

void sort(const RefTensor& x, int64_t dim, int64_t k, bool descending, RefTensor& values,
          RefTensor& indices) {
  const Shape& s = x.shape;
  const int64_t n = s.empty() ? 1 : s[size_t(dim)];
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < int64_t(s.size()); ++d) {
    if (d < dim) outer *= s[size_t(d)];
    if (d > dim) inner *= s[size_t(d)];
  }
  values.shape = indices.shape = s;
  if (!s.empty()) values.shape[size_t(dim)] = indices.shape[size_t(dim)] = k;
  if (s.empty() && k == 0) values.shape = indices.shape = Shape{0};
  values.v.assign(size_t(outer * k * inner), 0.0);
  indices.v.assign(values.v.size(), 0.0);
  std::vector<int64_t> line;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t in = 0; in < inner; ++in) {
      const auto at = [&](int64_t i) { return x.v[size_t((o * n + i) * inner + in)]; };
      // Insertion sort: an element moves only past elements it sorts strictly before.
      line.clear();
      for (int64_t i = 0; i < n; ++i) {
        size_t p = line.size();
        while (p > 0 && (descending ? sorts_before(at(line[p - 1]), at(i))
                                    : sorts_before(at(i), at(line[p - 1]))))
          --p;
        line.insert(line.begin() + std::ptrdiff_t(p), i);
      }
      for (int64_t j = 0; j < k; ++j) {
        const size_t o_at = size_t((o * k + j) * inner + in);
        values.v[o_at] = at(line[size_t(j)]);
        indices.v[o_at] = double(line[size_t(j)]);
      }
    }
}

RefTensor searchsorted(const RefTensor& seq, const RefTensor& values, bool right) {
  const int64_t n = seq.shape.back();
  const int64_t rows = int64_t(seq.v.size()) / std::max<int64_t>(n, 1);
  const int64_t m = seq.shape.size() == 1 ? int64_t(values.v.size())
                                          : (values.shape.empty() ? 1 : values.shape.back());
  RefTensor out{values.shape, std::vector<double>(values.v.size(), 0.0)};
  for (size_t e = 0; e < values.v.size(); ++e) {
    const int64_t r = seq.shape.size() == 1 ? 0 : int64_t(e) / m;
    const double v = values.v[e];
    int64_t c = 0;
    for (int64_t j = 0; j < n && rows > 0; ++j) {
      const double sj = seq.v[size_t(r * n + j)];
      c += right ? !sorts_before(v, sj) : sorts_before(sj, v);
    }
    out.v[e] = double(c);
  }
  return out;
}

void unique(const RefTensor& x, RefTensor& values, RefTensor& counts) {
  RefTensor flat{Shape{int64_t(x.v.size())}, x.v}, sorted, order;
  sort(flat, 0, int64_t(x.v.size()), false, sorted, order);
  values.v.clear();
  counts.v.clear();
  for (size_t i = 0; i < sorted.v.size(); ++i) {
    // NaN != NaN: each NaN starts a run of its own.
    if (i > 0 && sorted.v[i] == sorted.v[i - 1]) {
      counts.v.back() += 1;
    } else {
      values.v.push_back(sorted.v[i]);
      counts.v.push_back(1);
    }
  }
  values.shape = counts.shape = Shape{int64_t(values.v.size())};
}

}  // namespace numr::reference
