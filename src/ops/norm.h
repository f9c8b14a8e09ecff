// Argument checks shared by the Tensor and Var normalisation front ends.
#pragma once

#include <cstdint>
#include <optional>

#include "numr/op_info.h"
#include "numr/tensor.h"
#include "ops/common.h"

namespace numr::ops {

// Checks x (at least 1-D, a float dtype), weight (and bias when given) of shape [D] with
// x's dtype and device, and eps (finite, >= 0). Returns eps, or for rms_norm without one
// the machine epsilon of x's dtype.
double check_norm(OpId op, const Tensor& x, const Tensor& weight, const Tensor* bias,
                  std::optional<double> eps);

// check_norm, and residual defined, of x's dtype, device and shape (the fused_add ops).
double check_add_norm(OpId op, const Tensor& x, const Tensor& residual, const Tensor& weight,
                      const Tensor* bias, std::optional<double> eps);

// Checks group_norm's x [N, C, *] (at least 2-D, a float dtype), groups (>= 1, dividing C),
// weight and bias [C] of x's dtype and device, and eps (finite, >= 0).
void check_group_norm(const Tensor& x, int64_t groups, const Tensor& weight, const Tensor& bias,
                      double eps);

}  // namespace numr::ops
