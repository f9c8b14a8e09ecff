// Sorting as ranks: element i of a row goes to position
//   rank_i = #{j : x_j sorts before x_i} + #{j < i : x_j ties with x_i},
// which is a permutation and keeps ties in order (stable). Position r then takes the one
// element whose rank is r, picked by a max over the row with every other element replaced
// by the dtype's lowest value (a max, not a sum, keeps -0.0 and NaN as they are).
#include "ops/compose/sort.h"

#include <limits>

#include "numr/ops.h"

namespace numr::compose {
namespace {

// Whether a sorts strictly before b (a, b broadcast together) in ascending order: a < b, or
// b is NaN and a is not.
Tensor sorts_before(const Tensor& a, const Tensor& b) {
  Tensor before = lt(a, b);
  if (is_floating(a.dtype()))
    before = logical_or(before, logical_and(isnan(b), logical_not(isnan(a))));
  return before;
}

// a ties with b: equal, or both NaN.
Tensor ties(const Tensor& a, const Tensor& b) {
  Tensor same = eq(a, b);
  if (is_floating(a.dtype())) same = logical_or(same, logical_and(isnan(a), isnan(b)));
  return same;
}

double lowest(DType t) {
  switch (t) {
    case DType::I64: return double(std::numeric_limits<int64_t>::min());
    case DType::I32: return double(std::numeric_limits<int32_t>::min());
    case DType::U8: return 0.0;
    default: return -std::numeric_limits<double>::infinity();
  }
}

Tensor count(const Tensor& mask) { return sum(mask.cast(DType::I64), {-1}); }

}  // namespace

SortResult sort_last(const Tensor& x, int64_t k, bool descending) {
  const int64_t n = x.size(-1);
  const Device dev = x.device();
  const Tensor xi = unsqueeze(x, -1), xj = unsqueeze(x, -2);  // [.., n, 1], [.., 1, n]
  const Tensor pos = arange(0, double(n), 1, DType::I64, dev);
  const Tensor earlier = lt(unsqueeze(pos, 0), unsqueeze(pos, 1));  // [i, j]: j < i
  const Tensor before = descending ? sorts_before(xi, xj) : sorts_before(xj, xi);
  const Tensor rank = count(logical_or(before, logical_and(ties(xj, xi), earlier)));  // [.., n]
  // sel[.., r, i]: element i goes to position r.
  const Tensor slot = unsqueeze(arange(0, double(k), 1, DType::I64, dev), 1);  // [k, 1]
  const Tensor sel = eq(unsqueeze(rank, -2), slot);                            // [.., k, n]
  SortResult r;
  r.indices = sum(where_cond(sel, unsqueeze(pos, 0), 0.0), {-1});
  r.values = max(where_cond(sel, xj, lowest(x.dtype())), {-1});
  return r;
}

Tensor searchsorted_last(const Tensor& seq, const Tensor& values, bool right) {
  const Tensor s = unsqueeze(seq, -2), v = unsqueeze(values, -1);  // [.., 1, n], [.., m, 1]
  return count(right ? logical_not(sorts_before(v, s)) : sorts_before(s, v));
}

}  // namespace numr::compose
