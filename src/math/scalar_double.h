// The primitive functions for T = double, so that the formulas in this folder
// instantiated with double are the float64 reference. SIMD number types (CPU), PTX and
// WGSL expression types provide the same names.
#pragma once

#include <cmath>

namespace numr::math {

#define NUMR_STD1(name) \
  inline double name(double x) { return std::name(x); }
NUMR_STD1(sqrt) NUMR_STD1(cbrt) NUMR_STD1(exp) NUMR_STD1(exp2) NUMR_STD1(expm1)
NUMR_STD1(log) NUMR_STD1(log2) NUMR_STD1(log10) NUMR_STD1(log1p) NUMR_STD1(sin)
NUMR_STD1(cos) NUMR_STD1(tan) NUMR_STD1(asin) NUMR_STD1(acos) NUMR_STD1(atan)
NUMR_STD1(sinh) NUMR_STD1(cosh) NUMR_STD1(tanh) NUMR_STD1(asinh) NUMR_STD1(acosh)
NUMR_STD1(atanh) NUMR_STD1(erf) NUMR_STD1(fabs) NUMR_STD1(floor) NUMR_STD1(ceil)
NUMR_STD1(trunc) NUMR_STD1(rint)
#undef NUMR_STD1
inline double pow(double x, double y) { return std::pow(x, y); }
inline double atan2(double y, double x) { return std::atan2(y, x); }
inline double select(bool c, double a, double b) { return c ? a : b; }

}  // namespace numr::math
