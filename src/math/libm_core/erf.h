// erf and erfc written once for both precisions (see libm_core/exp_log.h for P and T); the
// polynomials (P::erf_small, P::erfc_exp) come from scripts/fit_erf_coefficients.py. erfinv
// differs between the precisions (the double one refines with a Halley step) and stays in
// libm/erf.h and libm32/erf.h.
#pragma once

#include "math/libm_core/exp_log.h"
#include "math/namespace.h"

NUMR_MATH_EXACT_BEGIN

namespace numr::math::inline NUMR_MATH_ISA::libm_core {

// erfc(z) for z >= 0 (NaN allowed: the result is then meaningless but every step sane).
// erfc(z) = t exp(-z^2 + P(t)), t = 2 / (2 + z): P is smooth on t in (0, 1]; -z^2 is
// carried as z^2 = h + l (exact) and -h + P as a two-sum into the exponential's tail.
template <class P, class T>
T erfc_pos(T z) {
  using S = typename P::S;
  const T zc = select(z < T(P::erfc_zero), z, T(P::erfc_zero));
  // t + tl = 2 / (2 + z) to about twice the precision, for the factor t (P(t) takes t).
  const T d = T(S(2)) + zc;
  const T db = d - zc;
  const T dl = (T(S(2)) - db) + (zc - (d - db));
  const T t = T(S(2)) / d;
  const T tl = (fma(-t, d, T(S(2))) - t * dl) / d;
  const T p = poly((t - T(P::erfc_center)) * T(S(2)), P::erfc_exp);
  const T h = zc * zc;
  const T l = fma(zc, zc, -h);
  const T s = p - h;
  const T bb = s - p;
  const T e = (p - (s - bb)) + (-h - bb);
  const T ex = exp_core<P>(s, e - l);
  return select(z > T(P::erfc_zero), T(S(0)), fma(tl, ex, t * ex));
}
// erf(x) for |x| <= 1 as x + x Q(2 x^2 - 1), Q = erf(x) / x - 1 small: its rounding errors
// count little next to x.
template <class P, class T>
T erf_small(T x) {
  using S = typename P::S;
  return fma(x, poly(fma(T(S(2)) * x, x, T(S(-1))), P::erf_small), x);
}
// erfc(z) for 0 <= z <= 1 as 1 - z - z Q, with the rounding of 1 - z carried.
template <class P, class T>
T erfc_small(T z) {
  using S = typename P::S;
  return fast_sum3(T(S(1)), -z, -z * poly(fma(T(S(2)) * z, z, T(S(-1))), P::erf_small));
}

// |x| < 1: x P(x^2); beyond, 1 - erfc(|x|) with the sign of x. ±inf gives ±1.
template <class P, class T>
T erf(T x) {
  using S = typename P::S;
  const T a = fabs(x);
  const T big = T(S(1)) - erfc_pos<P>(a);
  const T res = select(a < T(S(1)), erf_small<P>(select(a < T(S(1)), x, T(S(0)))),
                       select(x < T(S(0)), -big, big));
  return select(x != x, x, res);
}

// erfc(|x|) from erfc_small below P::erfc_small, erfc_pos above, and 2 - erfc(|x|) for
// negative x. +inf gives 0, -inf 2.
template <class P, class T>
T erfc(T x) {
  using S = typename P::S;
  const T a = fabs(x);
  const T e = select(a < T(P::erfc_small), erfc_small<P>(select(a < T(P::erfc_small), a, T(S(0)))),
                     erfc_pos<P>(a));
  return select(x != x, x, select(x < T(S(0)), T(S(2)) - e, e));
}

}  // namespace numr::math::inline NUMR_MATH_ISA::libm_core

NUMR_MATH_EXACT_END
