// The compositions of the indexing primitives (gather, scatter, scatter_reduce) from
// compares, selects and reductions, for backends without index_gather / index_scatter
// kernels. They spend O(m * n) memory per column, where the kernels spend O(m): they are
// for correctness on a new backend, not speed.
#pragma once

#include <cstdint>

#include "core/backend.h"
#include "numr/tensor.h"

namespace numr::compose {

// out[.., j, ..] = x[.., index[.., j, ..], ..] along d; index (I64, in range) has x's
// extents in every dim but d.
Tensor gather(const Tensor& x, int64_t d, const Tensor& index);

// init (x's box: index's extents in every dim but d) with src scattered into it along d by
// op, as ScatterCall describes; returns the new values of the box.
Tensor scatter(ScatterOp op, const Tensor& init, int64_t d, const Tensor& index, const Tensor& src);

// The identity of op (Sum, Prod, Amax, Amin) as a 0-d tensor of dtype t: -0.0 (0 for
// integers), 1, the lowest and the highest value of t (-inf and +inf for floats).
Tensor scatter_identity(ScatterOp op, DType t, Device device);

}  // namespace numr::compose
