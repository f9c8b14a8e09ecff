// The mask behind tril and triu, shared by their Tensor and Var forms.
#pragma once

#include <cstdint>
#include <string_view>

#include "numr/tensor.h"

namespace numr::ops {

// Bool [rows, cols] for the last two dims of x (broadcast over its batch dims): true where
// col - row <= diagonal (lower) or col - row >= diagonal (upper). Throws InvalidArgument
// naming `op` when x has fewer than 2 dims.
Tensor triangle_mask(std::string_view op, const Tensor& x, int64_t diagonal, bool lower);

}  // namespace numr::ops
