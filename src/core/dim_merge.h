// The dimension-merging rule every backend's strided loops share: dims of extent 1 are
// dropped, and a dim is merged into the one before it when, for every operand, stepping
// the earlier dim once is the same as running through the later one. Most views then
// become one long row.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "numr/shape.h"

namespace numr {

struct MergedDims {
  std::vector<int64_t> extents;               // outermost first; empty for one element
  std::vector<std::vector<int64_t>> strides;  // per operand, one per extent
};

// shape with each operand's strides (in elements) merged.
MergedDims merge_dims(const Shape& shape, std::span<const Strides* const> strides);

}  // namespace numr
