// The text form of tensors, shared by Tensor::to_string and Var::to_string.
#pragma once

#include <string>
#include <string_view>

#include "numr/tensor.h"

namespace numr {

// "tensor(<nested values>, dtype=f32, device=cpu<extra>)"; extra is appended verbatim
// before the closing parenthesis (", requires_grad=true" for a Var).
std::string format_tensor(const Tensor& t, std::string_view extra = {});

}  // namespace numr
