// Single-precision sinh, cosh and tanh over a number-like T (see libm32.h), from expm1:
// libm_core's, shared with the double-precision library.
#pragma once

#include "math/libm32/common.h"
#include "math/libm32/exp_log.h"
#include "math/libm_core/hyperbolic.h"
#include "math/namespace.h"

NUMR_MATH_EXACT_BEGIN

namespace numr::math::inline NUMR_MATH_ISA::libm32 {

// From E = expm1(|x|): (2E - E^2/(E+1)) / 2 below 1, (E + E/(E+1)) / 2 up to 88, then h^2/2
// with h = e^(|x|/2), so that sinh overflows only where it should. |x| < 2^-12 gives x.
template <class T>
T sinh(T x) {
  return libm_core::sinh<libm_core::Prec32>(x);
}

// 1 + E^2 / (2 (E+1)) below 1, E/2 + (1/2 + 1/(2 (E+1))) up to 88, h^2/2 beyond.
template <class T>
T cosh(T x) {
  return libm_core::cosh<libm_core::Prec32>(x);
}

// From E = expm1(2|x|): E / (E + 2) below 0.55 (quotient corrected), 1 - 2 / (E + 2)
// above (1 past 10). |x| < 2^-12 gives x.
template <class T>
T tanh(T x) {
  return libm_core::tanh<libm_core::Prec32>(x);
}

}  // namespace numr::math::inline NUMR_MATH_ISA::libm32

NUMR_MATH_EXACT_END
