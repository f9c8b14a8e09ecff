// Hyperbolic functions and their inverses over a number-like T (see device_libm.h), written
// on top of expm1 and log1p; sinh, cosh and tanh are libm_core's, shared with libm32.
#pragma once

#include "math/libm/common.h"
#include "math/libm/exp_log.h"
#include "math/libm_core/hyperbolic.h"
#include "math/namespace.h"

NUMR_MATH_EXACT_BEGIN

namespace numr::math::inline NUMR_MATH_ISA::libm {

// sinh x from E = expm1(|x|): (2E - E^2/(E+1)) / 2 below 1, (E + E/(E+1)) / 2 up to 709,
// then h^2/2 with h = e^(|x|/2) so that sinh does not overflow before e^|x| does. |x| < 2^-28
// returns x. About 2 ulp.
template <class T>
T sinh(T x) {
  return libm_core::sinh<libm_core::Prec64>(x);
}

// cosh x from E = expm1(|x|): 1 + E^2 / (2 (E+1)) below 1, E/2 + (1/2 + 1/(2 (E+1))) up to
// 709, h^2/2 with h = e^(|x|/2) beyond. About 2 ulp.
template <class T>
T cosh(T x) {
  return libm_core::cosh<libm_core::Prec64>(x);
}

// tanh x from E = expm1(2|x|): E / (E + 2) below 0.55, 1 - 2 / (E + 2) above (1 past 22).
// |x| < 2^-28 returns x. About 1.5 ulp.
template <class T>
T tanh(T x) {
  return libm_core::tanh<libm_core::Prec64>(x);
}

// asinh x = sign(x) log1p(|x| + x^2 / (1 + sqrt(1 + x^2))); log(2|x|) past 2^28 and
// log(|x|) + ln2 past 2^1000. |x| < 2^-28 returns x. About 2 ulp.
template <class T>
T asinh(T x) {
  using namespace detail;
  const T a = fabs(x);
  const auto big = a > T(0x1p28), huge = a > T(0x1p1000);
  const T a2 = a * a;
  const T u = select(big, select(huge, a, T(2) * a - T(1)), a + a2 / (T(1) + sqrt(T(1) + a2)));
  const T res = libm::log1p(u) + select(huge, T(kLn2Hi), T(0));
  return select(a < T(0x1p-28), x, select(x < T(0), -res, res));
}

// acosh x = log1p(t + sqrt(t (t + 2))), t = x - 1 (exact), the sum carried in two parts;
// log(2x) past 2^28, log(x) + ln2 past 2^1000. NaN below 1. About 1 ulp.
template <class T>
T acosh(T x) {
  using namespace detail;
  const auto big = x > T(0x1p28), huge = x > T(0x1p1000);
  const T t = x - T(1);
  const T w = fma(t, t, T(2) * t);
  const T ws = select(w > T(0), w, T(1));
  const T sq = sqrt(ws);
  const T sql = fma(-sq, sq, ws) / (sq + sq);  // sqrt(ws) = sq + sql to second order
  const T u = t + sq;
  const T ul = select(w > T(0), (t - (u - sq)) + sql, T(0));  // sq >= t
  const T v = select(big, select(huge, x, T(2) * x - T(1)), u);
  T res = log1p_dd(v, select(big, T(0), ul)) + select(huge, T(kLn2Hi), T(0));
  res = select(x == T(1), T(0), res);
  return select(x != x, x, select(x < T(1), T(kNaN), res));
}

// atanh x = sign(x) log1p(2|x| / (1 - |x|)) / 2 (the argument written as 2a + 2a^2/(1-a)
// below 1/2). ±1 gives ±inf, |x| > 1 NaN, |x| < 2^-28 returns x. About 2 ulp.
template <class T>
T atanh(T x) {
  using namespace detail;
  const T a = fabs(x);
  const T u = select(a < T(0.5), T(2) * a + T(2) * a * a / (T(1) - a), T(2) * a / (T(1) - a));
  T res = T(0.5) * libm::log1p(u);
  res = select(a > T(1), T(kNaN), res);
  return select(a < T(0x1p-28), x, select(x < T(0), -res, res));
}

}  // namespace numr::math::inline NUMR_MATH_ISA::libm

NUMR_MATH_EXACT_END
