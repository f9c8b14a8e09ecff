// sinh, cosh and tanh written once for both precisions over expm1 (see libm_core/exp_log.h
// for P and T). The inverse functions exist in double precision only (libm/hyperbolic.h).
#pragma once

#include "math/libm_core/exp_log.h"
#include "math/namespace.h"

NUMR_MATH_EXACT_BEGIN

namespace numr::math::inline NUMR_MATH_ISA::libm_core {

// sinh x from E = expm1(|x|): (2E - E^2/(E+1)) / 2 below 1, (E + E/(E+1)) / 2 up to
// hyp_huge, then h^2/2 with h = e^(|x|/2) so that sinh does not overflow before e^|x| does.
// |x| < hyp_tiny returns x.
template <class P, class T>
T sinh(T x) {
  using S = typename P::S;
  const T a = fabs(x);
  const auto huge = a > T(P::hyp_huge);
  const T E = libm_core::expm1<P>(select(huge, T(S(0.5)) * a, a));
  const T e1 = E + T(S(1));
  const T small = T(S(0.5)) * (T(S(2)) * E - E * E / e1);
  const T mid = T(S(0.5)) * (E + E / e1);
  const T large = (T(S(0.5)) * e1) * e1;
  T res = select(a < T(S(1)), small, select(huge, large, mid));
  res = select(x < T(S(0)), -res, res);
  return select(a < T(P::hyp_tiny), x, res);
}

// cosh x from E = expm1(|x|): 1 + E^2 / (2 (E+1)) below 1, E/2 + (1/2 + 1/(2 (E+1))) up to
// hyp_huge, h^2/2 with h = e^(|x|/2) beyond.
template <class P, class T>
T cosh(T x) {
  using S = typename P::S;
  const T a = fabs(x);
  const auto huge = a > T(P::hyp_huge);
  const T E = libm_core::expm1<P>(select(huge, T(S(0.5)) * a, a));
  const T e1 = E + T(S(1));
  const T small = T(S(1)) + E * E / (T(S(2)) * e1);
  const T mid = T(S(0.5)) * E + (T(S(0.5)) + T(S(0.5)) / e1);
  const T large = (T(S(0.5)) * e1) * e1;
  return select(a < T(S(1)), small, select(huge, large, mid));
}

// tanh x from E = expm1(2|x|): E / (E + 2) below 0.55, 1 - 2 / (E + 2) above (1 past
// tanh_one). |x| < hyp_tiny returns x.
template <class P, class T>
T tanh(T x) {
  using S = typename P::S;
  const T a = fabs(x);
  const T E = libm_core::expm1<P>(T(S(2)) * select(a > T(P::tanh_one), T(P::tanh_one), a));
  // E / (E + 2) with the rounding of E + 2 and of the quotient corrected (E <= 2 here).
  const T d = T(S(2)) + E;
  const T dl = E - (d - T(S(2)));
  const T q = E / d;
  const T small = q + (fma(-q, d, E) - q * dl) / d;
  const T res = select(a < T(S(0.55)), small, T(S(1)) - T(S(2)) / d);
  return select(a < T(P::hyp_tiny), x, select(x < T(S(0)), -res, res));
}

}  // namespace numr::math::inline NUMR_MATH_ISA::libm_core

NUMR_MATH_EXACT_END
