// Sorting (DESIGN §10), for Tensor, and for Var where the values are differentiable.
// Contracts in docs/semantics.md: sorts are stable, NaN sorts as the largest value, -0.0
// and +0.0 are equal; indices are I64.
//
//   auto [v, i] = sort(x, /*dim=*/0, /*descending=*/true);
//   Tensor pos = searchsorted(boundaries, x);
//   SortVar top = topk(xv, 5);  // top.values is a Var, top.indices a Tensor
#pragma once

#include <cstdint>

#include "numr/autograd.h"
#include "numr/tensor.h"

namespace numr {

struct SortResult {
  Tensor values, indices;
};
struct SortVar {
  Var values;
  Tensor indices;  // I64
};

// x sorted along dim: values (x's dtype and shape) and, for each, its position along dim
// in x (I64). Stable: equal elements keep their order, descending or not.
SortResult sort(const Tensor& x, int64_t dim = -1, bool descending = false);
// sort(x, dim, descending).indices.
Tensor argsort(const Tensor& x, int64_t dim = -1, bool descending = false);
// The k largest (smallest when !largest) elements along dim and their positions, x's shape
// with k along dim. Always in sorted order (largest first when largest), equal elements by
// position, so `sorted` only documents the caller's intent. 0 <= k <= x.size(dim).
SortResult topk(const Tensor& x, int64_t k, int64_t dim = -1, bool largest = true,
                bool sorted = true);
// For each element v of values, the number of elements of sorted_sequence that sort before
// v (right: that do not sort after v), in sort's order. sorted_sequence is 1-D [n] (values
// any shape) or [.., n] with values [.., m] of the same leading dims; it must be sorted
// ascending (NaN last), else the result is unspecified. I64, values' shape.
Tensor searchsorted(const Tensor& sorted_sequence, const Tensor& values, bool right = false);
// The distinct elements of x (flattened), ascending. Each NaN is distinct (as PyTorch);
// -0.0 and +0.0 are one value, the first in sort's order standing for both.
Tensor unique(const Tensor& x);
// unique(x) and how many elements of x equal each (I64).
struct UniqueCounts {
  Tensor values, counts;
};
UniqueCounts unique_with_counts(const Tensor& x);

// Differentiable in x to any order: the gradient of values goes back to the positions in
// indices, other positions getting 0.
SortVar sort(const Var& x, int64_t dim = -1, bool descending = false);
SortVar topk(const Var& x, int64_t k, int64_t dim = -1, bool largest = true, bool sorted = true);

}  // namespace numr
