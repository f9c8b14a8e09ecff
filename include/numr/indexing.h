// Indexing (DESIGN §10), PyTorch's semantics. Index tensors are I64 or I32; every index
// must lie in [0, n) for the dim it indexes (negative indexes included) or the op throws
// IndexOutOfBounds before writing anything. Checking reads the index's min and max to the
// host, so on a GPU these ops wait for the work queued before them. Dims may be negative.
// The results of scatter and scatter_reduce are the same on every run (see
// docs/semantics.md). Var forms, differentiable in x, src and values, are in
// autograd_ops.h.
//
//   Tensor rows = index_select(x, 0, idx);          // x [N, D], idx [K] -> [K, D]
//   Tensor e = embedding_lookup(weight, tokens);    // weight [V, D], tokens [B, T] -> [B, T, D]
//   Tensor s = scatter_reduce(zeros({5}), 0, idx, v, ScatterReduce::Sum);
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "numr/tensor.h"

namespace numr {

// out[..., j, ...] = x[..., index[..., j, ...], ...] along dim: index has x's rank, and
// at most x's size in every other dim; out has index's shape.
Tensor gather(const Tensor& x, int64_t dim, const Tensor& index);
// A copy of x with out[..., index[..., j, ...], ...] = src[..., j, ...] along dim for every
// element of index (index and src as in gather; src at least index's size in every dim).
// Where an index repeats, the last j in row-major order wins.
Tensor scatter(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src);

enum class ScatterReduce : uint8_t { Sum, Prod, Mean, Amax, Amin };
// scatter, with the values landing on one element combined by `reduce` together with that
// element of x (include_self), or without it (an element no index reaches keeps x's value).
// Mean divides by the number of values combined; integer dtypes round it down. Amax and
// Amin propagate NaN. F16 and BF16 reduce in F32 and round once.
Tensor scatter_reduce(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src,
                      ScatterReduce reduce, bool include_self = true);

// x's slices at index (1-D, or 0-d as one index) along dim: x's shape with dim's size
// replaced by index's length.
Tensor index_select(const Tensor& x, int64_t dim, const Tensor& index);
// x read as 1-D (row-major) at each element of index: index's shape.
Tensor take(const Tensor& x, const Tensor& index);
// Rows of weight [V, D] at index (any shape, values in [0, V)) -> [index.shape.., D].
Tensor embedding_lookup(const Tensor& weight, const Tensor& index);
// index [.., k] (1 <= k <= x.dim()) picks x's element or slice at its first k coordinates
// -> [index.shape[:-1].., x.shape[k:]..].
Tensor gather_nd(const Tensor& x, const Tensor& index);
// A copy of x with x[indices[0][b], ..., indices[k-1][b], ...] = values[b, ...] (or += when
// accumulate), the k index tensors broadcast together to B and values broadcast to
// [B.., x.shape[k:]..], as x[i0, i1] = v in PyTorch. Without accumulate a repeated position
// takes the last value in row-major order of B.
Tensor index_put(const Tensor& x, const std::vector<Tensor>& indices, const Tensor& values,
                 bool accumulate = false);
// A copy of x with its row-major element index[k] = values[k] (or += when accumulate);
// values has index's element count. A repeated index takes the last value.
Tensor put(const Tensor& x, const Tensor& index, const Tensor& values, bool accumulate = false);
// x's elements where mask (Bool, broadcast with x) is true, in row-major order -> [n].
Tensor masked_select(const Tensor& x, const Tensor& mask);
// The coordinates of x's nonzero (true) elements in row-major order -> [n, x.dim()] I64.
Tensor nonzero(const Tensor& x);
// Counts of each value of x (1-D I64, I32 or U8, values >= 0) -> I64 [max(x) + 1, at least
// minlength]; with weights (x's shape) the sums of the weights instead, in their dtype.
Tensor bincount(const Tensor& x, const std::optional<Tensor>& weights = std::nullopt,
                int64_t minlength = 0);

}  // namespace numr
