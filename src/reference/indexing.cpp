// The indexing family as plain loops over row-major coordinates.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "math/reduce_rules.h"
#include "math/scalar_double.h"
#include "reference/reference.h"

namespace numr::reference {
namespace {

std::vector<int64_t> coords_of(int64_t flat, const Shape& shape) {
  std::vector<int64_t> c(shape.size());
  for (size_t k = shape.size(); k-- > 0;) {
    c[k] = flat % shape[k];
    flat /= shape[k];
  }
  return c;
}

int64_t flat_of(const std::vector<int64_t>& c, const Shape& shape) {
  int64_t f = 0;
  for (size_t k = 0; k < shape.size(); ++k) f = f * shape[k] + c[k];
  return f;
}

// t's element at coordinates c of a shape t broadcasts to (trailing dims aligned).
double at_broadcast(const RefTensor& t, const std::vector<int64_t>& c) {
  const size_t lead = c.size() - t.shape.size();
  int64_t f = 0;
  for (size_t k = 0; k < t.shape.size(); ++k)
    f = f * t.shape[k] + (t.shape[k] == 1 ? 0 : c[lead + k]);
  return t.v[size_t(f)];
}

Shape broadcast(const Shape& a, const Shape& b) {
  const size_t r = std::max(a.size(), b.size());
  Shape s(r);
  for (size_t k = 0; k < r; ++k) {
    const int64_t ea = k + a.size() >= r ? a[k + a.size() - r] : 1;
    const int64_t eb = k + b.size() >= r ? b[k + b.size() - r] : 1;
    s[k] = ea == 1 ? eb : ea;
  }
  return s;
}

RefTensor make(const Shape& shape) {
  return {shape, std::vector<double>(size_t(shape_numel(shape)))};
}

}  // namespace

RefTensor gather(const RefTensor& x, int64_t dim, const RefTensor& index) {
  RefTensor out = make(index.shape);
  for (int64_t f = 0; f < int64_t(out.v.size()); ++f) {
    std::vector<int64_t> c = coords_of(f, index.shape);
    c[size_t(dim)] = int64_t(index.v[size_t(f)]);
    out.v[size_t(f)] = x.v[size_t(flat_of(c, x.shape))];
  }
  return out;
}

RefTensor scatter(const RefTensor& x, int64_t dim, const RefTensor& index, const RefTensor& src,
                  std::optional<ScatterReduce> reduce, bool include_self, bool integer) {
  RefTensor out = x;
  std::vector<int64_t> count(x.v.size(), include_self ? 1 : 0);
  for (int64_t f = 0; f < int64_t(index.v.size()); ++f) {
    std::vector<int64_t> c = coords_of(f, index.shape);
    const double v = src.v[size_t(flat_of(c, src.shape))];
    c[size_t(dim)] = int64_t(index.v[size_t(f)]);
    const size_t t = size_t(flat_of(c, x.shape));
    double& o = out.v[t];
    if (!reduce) {
      o = v;
      continue;
    }
    if (count[t]++ == 0) {  // the first value combined (include_self off)
      o = v;
      continue;
    }
    switch (*reduce) {
      case ScatterReduce::Sum:
      case ScatterReduce::Mean: o += v; break;
      case ScatterReduce::Prod: o *= v; break;
      case ScatterReduce::Amax: o = math::extreme_merge<true>(o, v); break;
      case ScatterReduce::Amin: o = math::extreme_merge<false>(o, v); break;
    }
  }
  if (reduce == ScatterReduce::Mean)
    for (size_t t = 0; t < out.v.size(); ++t)
      if (count[t] > 0) {
        out.v[t] /= double(count[t]);
        if (integer) out.v[t] = std::floor(out.v[t]);
      }
  return out;
}

RefTensor index_select(const RefTensor& x, int64_t dim, const RefTensor& index) {
  Shape s = x.shape;
  s[size_t(dim)] = int64_t(index.v.size());
  RefTensor out = make(s);
  for (int64_t f = 0; f < int64_t(out.v.size()); ++f) {
    std::vector<int64_t> c = coords_of(f, s);
    c[size_t(dim)] = int64_t(index.v[size_t(c[size_t(dim)])]);
    out.v[size_t(f)] = x.v[size_t(flat_of(c, x.shape))];
  }
  return out;
}

RefTensor take(const RefTensor& x, const RefTensor& index) {
  RefTensor out = make(index.shape);
  for (size_t f = 0; f < out.v.size(); ++f) out.v[f] = x.v[size_t(index.v[f])];
  return out;
}

RefTensor embedding_lookup(const RefTensor& weight, const RefTensor& index) {
  const int64_t d = weight.shape[1];
  Shape s = index.shape;
  s.push_back(d);
  RefTensor out = make(s);
  for (size_t r = 0; r < index.v.size(); ++r)
    for (int64_t i = 0; i < d; ++i)
      out.v[r * size_t(d) + size_t(i)] = weight.v[size_t(int64_t(index.v[r]) * d + i)];
  return out;
}

RefTensor gather_nd(const RefTensor& x, const RefTensor& index) {
  const size_t k = size_t(index.shape.back());
  Shape s(index.shape.begin(), index.shape.end() - 1);
  const size_t lead = s.size();
  s.insert(s.end(), x.shape.begin() + int64_t(k), x.shape.end());
  RefTensor out = make(s);
  for (int64_t f = 0; f < int64_t(out.v.size()); ++f) {
    const std::vector<int64_t> c = coords_of(f, s);
    std::vector<int64_t> xc;
    const int64_t row = flat_of(std::vector<int64_t>(c.begin(), c.begin() + int64_t(lead)),
                                Shape(s.begin(), s.begin() + int64_t(lead)));
    for (size_t j = 0; j < k; ++j) xc.push_back(int64_t(index.v[size_t(row) * k + j]));
    xc.insert(xc.end(), c.begin() + int64_t(lead), c.end());
    out.v[size_t(f)] = x.v[size_t(flat_of(xc, x.shape))];
  }
  return out;
}

RefTensor index_put(const RefTensor& x, const std::vector<RefTensor>& indices,
                    const RefTensor& values, bool accumulate) {
  Shape b = indices[0].shape;
  for (const RefTensor& t : indices) b = broadcast(b, t.shape);
  const size_t k = indices.size();
  Shape vs = b;
  vs.insert(vs.end(), x.shape.begin() + int64_t(k), x.shape.end());
  RefTensor out = x;
  for (int64_t f = 0; f < shape_numel(vs); ++f) {
    const std::vector<int64_t> c = coords_of(f, vs);
    const std::vector<int64_t> bc(c.begin(), c.begin() + int64_t(b.size()));
    std::vector<int64_t> xc;
    for (const RefTensor& t : indices) xc.push_back(int64_t(at_broadcast(t, bc)));
    xc.insert(xc.end(), c.begin() + int64_t(b.size()), c.end());
    double& o = out.v[size_t(flat_of(xc, x.shape))];
    const double v = at_broadcast(values, c);
    o = accumulate ? o + v : v;
  }
  return out;
}

RefTensor put(const RefTensor& x, const RefTensor& index, const RefTensor& values,
              bool accumulate) {
  RefTensor out = x;
  for (size_t f = 0; f < index.v.size(); ++f) {
    double& o = out.v[size_t(index.v[f])];
    o = accumulate ? o + values.v[f] : values.v[f];
  }
  return out;
}

RefTensor masked_select(const RefTensor& x, const RefTensor& mask) {
  const Shape s = broadcast(x.shape, mask.shape);
  RefTensor out;
  for (int64_t f = 0; f < shape_numel(s); ++f) {
    const std::vector<int64_t> c = coords_of(f, s);
    if (at_broadcast(mask, c) != 0) out.v.push_back(at_broadcast(x, c));
  }
  out.shape = {int64_t(out.v.size())};
  return out;
}

RefTensor nonzero(const RefTensor& x) {
  RefTensor out;
  int64_t n = 0;
  for (int64_t f = 0; f < int64_t(x.v.size()); ++f) {
    if (x.v[size_t(f)] == 0) continue;  // NaN counts as nonzero
    ++n;
    for (int64_t c : coords_of(f, x.shape)) out.v.push_back(double(c));
  }
  out.shape = {n, int64_t(x.shape.size())};
  return out;
}

RefTensor bincount(const RefTensor& x, const RefTensor* weights, int64_t minlength) {
  int64_t len = minlength;
  for (double v : x.v) len = std::max(len, int64_t(v) + 1);
  RefTensor out = make({len});
  for (size_t f = 0; f < x.v.size(); ++f) out.v[size_t(x.v[f])] += weights ? weights->v[f] : 1.0;
  return out;
}

}  // namespace numr::reference
