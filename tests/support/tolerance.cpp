#include "support/tolerance.h"

#include <algorithm>
#include <cmath>

namespace numr::test {

Tolerance tolerance_for(DType dtype) {
  switch (dtype) {
    // The reference and the kernel differ by the rounding of a few correctly rounded or
    // 1-ULP operations; formulas that compose several (gelu, softplus) amplify it a little.
    case DType::F64: return {1e-13, 1e-11, 1e-12};
    case DType::F32: return {1e-6, 1e-5, 1e-6};
    // Computed in f32 and rounded once; the reference is rounded to the same format, so
    // they may land one unit apart (2^-11 for F16, 2^-8 for BF16, relative).
    case DType::F16: return {1e-6, 2e-3, 1e-3};
    case DType::BF16: return {1e-6, 1.6e-2, 8e-3};
    default: return {0.0, 0.0, 0.0};  // integers and Bool are exact
  }
}

Tolerance accumulation_tolerance(DType dtype, int64_t k) {
  // Summing k terms of magnitude ~1 in the accumulation type (f32 for the 16-bit types)
  // loses about sqrt(k) units in the worst plausible case, k in the adversarial one.
  const double kk = double(std::max<int64_t>(k, 1));
  Tolerance t = tolerance_for(dtype);
  const double unit = dtype == DType::F64 ? 1.2e-16 : 6e-8;
  t.atol += 4.0 * unit * kk;
  t.rel_norm += 4.0 * unit * std::sqrt(kk);
  return t;
}

Tolerance gemm_tolerance(DType dtype, int64_t k) {
  const double kk = double(std::max<int64_t>(k, 1));
  Tolerance t = tolerance_for(dtype);
  const double unit = dtype == DType::F64 ? 1.2e-16 : 6e-8;
  t.atol += 4.0 * unit * kk * std::sqrt(kk);
  t.rel_norm += 4.0 * unit * std::sqrt(kk);
  return t;
}

}  // namespace numr::test
