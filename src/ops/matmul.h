// matmul's front end in two steps, shared by matmul(a, b) and its out= form.
#pragma once

#include "numr/tensor.h"

namespace numr::ops {

// Checks a @ b (dtypes, devices, dims) and returns the result's shape.
Shape matmul_shape(const Tensor& a, const Tensor& b);
// Writes a @ b into out: contiguous, of matmul_shape(a, b) and a's dtype and device,
// sharing no memory with a or b.
void matmul_into(const Tensor& a, const Tensor& b, const Tensor& out);

}  // namespace numr::ops
