// Memory-overlap checks for the ops that write into existing tensors (in-place methods and
// out= forms). Both are conservative: they may report overlap where there is none, never
// the reverse.
#pragma once

#include <string_view>

#include "numr/tensor.h"

namespace numr::ops {

// Whether two different indexes of t may name the same element (a broadcast dim of
// stride 0, or strides too small for the extents inside them).
bool has_internal_overlap(const Tensor& t);
// Throws InvalidArgument naming op when t has internal overlap: writing into it would
// write some elements more than once.
void check_writable(std::string_view op, const Tensor& t, std::string_view what = "self");
// Whether a and b may share bytes: same storage and intersecting byte ranges.
bool may_overlap(const Tensor& a, const Tensor& b);

}  // namespace numr::ops
