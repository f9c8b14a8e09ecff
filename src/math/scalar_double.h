// The primitive functions for T = double, so that the formulas in this folder
// instantiated with double are the float64 reference. SIMD number types (CPU), PTX and
// WGSL expression types provide the same names.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include "math/namespace.h"

namespace numr::math::inline NUMR_MATH_ISA {

#define NUMR_STD1(name) \
  inline double name(double x) { return std::name(x); }
NUMR_STD1(sqrt) NUMR_STD1(cbrt) NUMR_STD1(exp) NUMR_STD1(exp2) NUMR_STD1(expm1)
NUMR_STD1(log) NUMR_STD1(log2) NUMR_STD1(log10) NUMR_STD1(log1p) NUMR_STD1(sin)
NUMR_STD1(cos) NUMR_STD1(tan) NUMR_STD1(asin) NUMR_STD1(acos) NUMR_STD1(atan)
NUMR_STD1(sinh) NUMR_STD1(cosh) NUMR_STD1(tanh) NUMR_STD1(asinh) NUMR_STD1(acosh)
NUMR_STD1(atanh) NUMR_STD1(erf) NUMR_STD1(erfc) NUMR_STD1(fabs) NUMR_STD1(floor) NUMR_STD1(ceil)
NUMR_STD1(trunc) NUMR_STD1(rint)
#undef NUMR_STD1
inline double pow(double x, double y) { return std::pow(x, y); }
inline double atan2(double y, double x) { return std::atan2(y, x); }
inline double select(bool c, double a, double b) { return c ? a : b; }
// Primitives of the device math library (math/device_libm.h).
inline double fma(double a, double b, double c) { return std::fma(a, b, c); }
// 2^n for integral n in [-1022, 1023], built from the exponent bits.
inline double pow2i(double n) {
  return std::bit_cast<double>(static_cast<std::uint64_t>(static_cast<std::int64_t>(n) + 1023)
                               << 52);
}
// floor(log2 |x|) for normal finite nonzero x, read from the exponent bits.
inline double ilogb_normal(double x) {
  return static_cast<double>(
      static_cast<std::int64_t>((std::bit_cast<std::uint64_t>(x) >> 52) & 0x7ff) - 1023);
}

}  // namespace numr::math::inline NUMR_MATH_ISA
