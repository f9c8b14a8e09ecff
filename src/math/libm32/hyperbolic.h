// Single-precision sinh, cosh and tanh over a number-like T (see libm32.h), from expm1.
#pragma once

#include "math/libm32/common.h"
#include "math/libm32/exp_log.h"
#include "math/namespace.h"

NUMR_MATH_EXACT_BEGIN

namespace numr::math::inline NUMR_MATH_ISA::libm32 {

// From E = expm1(|x|): (2E - E^2/(E+1)) / 2 below 1, (E + E/(E+1)) / 2 up to 88, then h^2/2
// with h = e^(|x|/2), so that sinh overflows only where it should. |x| < 2^-12 gives x.
template <class T>
T sinh(T x) {
  const T a = fabs(x);
  const auto huge = a > T(88.0f);
  const T E = libm32::expm1(select(huge, T(0.5f) * a, a));
  const T e1 = E + T(1.0f);
  const T small = T(0.5f) * (T(2.0f) * E - E * E / e1);
  const T mid = T(0.5f) * (E + E / e1);
  const T large = (T(0.5f) * e1) * e1;
  T res = select(a < T(1.0f), small, select(huge, large, mid));
  res = select(x < T(0.0f), -res, res);
  return select(a < T(0x1p-12f), x, res);
}

// 1 + E^2 / (2 (E+1)) below 1, E/2 + (1/2 + 1/(2 (E+1))) up to 88, h^2/2 beyond.
template <class T>
T cosh(T x) {
  const T a = fabs(x);
  const auto huge = a > T(88.0f);
  const T E = libm32::expm1(select(huge, T(0.5f) * a, a));
  const T e1 = E + T(1.0f);
  const T small = T(1.0f) + E * E / (T(2.0f) * e1);
  const T mid = T(0.5f) * E + (T(0.5f) + T(0.5f) / e1);
  const T large = (T(0.5f) * e1) * e1;
  return select(a < T(1.0f), small, select(huge, large, mid));
}

// From E = expm1(2|x|): E / (E + 2) below 0.55 (quotient corrected), 1 - 2 / (E + 2)
// above (1 past 10). |x| < 2^-12 gives x.
template <class T>
T tanh(T x) {
  const T a = fabs(x);
  const T E = libm32::expm1(T(2.0f) * select(a > T(10.0f), T(10.0f), a));
  const T d = T(2.0f) + E;
  const T dl = E - (d - T(2.0f));
  const T q = E / d;
  const T small = q + (fma(-q, d, E) - q * dl) / d;
  const T res = select(a < T(0.55f), small, T(1.0f) - T(2.0f) / d);
  return select(a < T(0x1p-12f), x, select(x < T(0.0f), -res, res));
}

}  // namespace numr::math::inline NUMR_MATH_ISA::libm32

NUMR_MATH_EXACT_END
