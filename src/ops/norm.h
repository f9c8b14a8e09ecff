// Argument checks shared by the Tensor and Var normalisation front ends.
#pragma once

#include <optional>

#include "numr/op_info.h"
#include "numr/tensor.h"

namespace numr::ops {

// Checks x (at least 1-D, a float dtype), weight (and bias when given) of shape [D] with
// x's dtype and device, and eps (finite, >= 0). Returns eps, or for rms_norm without one
// the machine epsilon of x's dtype.
double check_norm(OpId op, const Tensor& x, const Tensor& weight, const Tensor* bias,
                  std::optional<double> eps);

}  // namespace numr::ops
