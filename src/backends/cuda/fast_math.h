// The approximations an f32 formula may use on CUDA (FastMath, codegen/ptx/value.h). One
// rule for every kernel, so that an op and its fused forms (the elementwise gelu_bwd, the
// epilogue's backward pass, the epilogue's forward pass) compute the same bits.
#pragma once

#include "codegen/ptx/value.h"
#include "numr/dtype.h"

namespace numr::cuda {

// With F16 or BF16 values every result is rounded to 11 bits or fewer, far coarser than
// approximate exp (4e-6 relative) and division (2 ulp of f32). With F32 values only the
// activation formulas and their derivatives divide approximately; ops whose result is a
// quotient (div, div_scalar, recip, mean, ...) stay IEEE. F64 is never approximated.
inline ptx::FastMath formula_fast_math(DType storage, bool activation) {
  if (storage == DType::F16 || storage == DType::BF16) return {.div = true, .exp = true};
  if (storage == DType::F32 && activation) return {.div = true, .exp = false};
  return {};
}

}  // namespace numr::cuda
