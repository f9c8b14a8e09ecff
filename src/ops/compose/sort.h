// The compositions of the Sort family, from compares, sums and max alone, for backends
// without sort kernels. The sort dim is the last; O(n^2) memory per row.
#pragma once

#include <cstdint>

#include "numr/sort.h"

namespace numr::compose {

// The first k elements of each row of x [.., n] in sort's order (stable, NaN largest, -0.0
// equal to +0.0) and their positions in the row: values [.., k], indices [.., k] I64.
SortResult sort_last(const Tensor& x, int64_t k, bool descending);

// For rows seq [.., n] (sorted) and values [.., m] of the same leading dims: how many
// elements of each row sort before each value (right: do not sort after it), I64 [.., m].
Tensor searchsorted_last(const Tensor& seq, const Tensor& values, bool right);

}  // namespace numr::compose
