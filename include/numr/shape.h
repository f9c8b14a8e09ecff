// Shapes and strides. Strides count elements (not bytes) and may be negative (flip) or
// zero (broadcast).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace numr {

using Shape = std::vector<int64_t>;
using Strides = std::vector<int64_t>;

// Product of the extents; 1 for a 0-d shape.
int64_t shape_numel(const Shape& shape);
// The largest element count a tensor may have: its bytes, at 8 per element, fit an
// int64_t.
inline constexpr int64_t kMaxNumel = int64_t(1) << 60;
// Checks that every extent is >= 0 and that the product of the nonzero extents is at
// most kMaxNumel; throws InvalidArgument naming `op` otherwise. Returns the element count.
int64_t checked_numel(std::string_view op, const Shape& shape);
// Row-major strides of a contiguous tensor of this shape.
Strides contiguous_strides(const Shape& shape);
// NumPy broadcasting of two shapes; throws BroadcastError naming `op`.
Shape broadcast_shapes(std::string_view op, const Shape& a, const Shape& b);
// Wraps a possibly negative dim into [0, ndim); throws InvalidDimension naming `op`.
int64_t wrap_dim(std::string_view op, int64_t dim, int64_t ndim);
// "[2, 3]"
std::string shape_str(const Shape& shape);

}  // namespace numr
