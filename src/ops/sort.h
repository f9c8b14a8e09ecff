// Shared between the Sort family's front ends (src/ops/sort.cpp) and Var ops.
#pragma once

#include <cstdint>

#include "numr/sort.h"

namespace numr::ops {

// Checks x (defined, a dtype op accepts) and dim, and returns dim wrapped into range; a 0-d
// x takes dim 0 or -1 and counts as one element along dim 0.
int64_t check_sort(OpId op, const Tensor& x, int64_t dim);
// The length of the (wrapped) sort dim: 1 for a 0-d x.
int64_t sort_size(const Tensor& x, int64_t dim);
// Throws InvalidArgument unless 0 <= k <= sort_size(x, dim).
void check_topk_k(const Tensor& x, int64_t k, int64_t dim);
// The first k elements along dim (already wrapped) in sort's order and their positions,
// from the backend's kernel for op or the composition. Contiguous results.
SortResult sort_along(OpId op, const Tensor& x, int64_t dim, int64_t k, bool descending);

}  // namespace numr::ops
