// sin, cos and tan written once for both precisions (see libm_core/exp_log.h for P and T):
// a Cody-Waite reduction modulo pi/2 in three parts, then polynomials for sin and cos on
// |r| <= pi/4, each result carried in two parts. The inverse functions exist in double
// precision only (libm/trig.h).
#pragma once

#include "math/libm_core/exp_log.h"
#include "math/namespace.h"

NUMR_MATH_EXACT_BEGIN

namespace numr::math::inline NUMR_MATH_ISA::libm_core {

// x = n pi/2 + (r + rlo), |r| <= pi/4 (+ rounding), q = n mod 4. Finite x only.
template <class T>
struct Reduced {
  T q, r, rlo;
};
template <class P, class T>
Reduced<T> reduce_pio2(T x) {
  using S = typename P::S;
  // n = round(x 2/pi) exactly: 2/pi in two parts, the rounding of the head corrected.
  const T t = x * T(P::two_over_pi_hi);
  const T tl = fma(x, T(P::two_over_pi_hi), -t) + x * T(P::two_over_pi_lo);
  const T n0 = rint(t);
  const T n = n0 + rint((t - n0) + tl);
  // Cody-Waite with fma: the first step is exact, the second kept as a two-sum.
  const T r1 = fma(-n, T(P::pio2_1), x);
  const T p = n * T(P::pio2_2);
  const T pe = fma(n, T(P::pio2_2), -p);
  const T r2 = r1 - p;
  const T bb = r2 - r1;
  const T e = (r1 - (r2 - bb)) - (p + bb);
  const T lo = fma(-n, T(P::pio2_3), e - pe);
  T r = r2 + lo;
  T rlo = (r2 - r) + lo;
  // Past the limit, keep r in range so results stay sane.
  const auto big = fabs(x) > T(P::trig_limit);
  r = select(big, select(r > T(P::pio4), T(P::pio4), select(r < T(-P::pio4), T(-P::pio4), r)), r);
  rlo = select(big, T(S(0)), rlo);
  return {n - T(S(4)) * floor(n * T(S(0.25))), r, rlo};
}

// sin(r + rlo) and cos(r + rlo) for |r| <= pi/4, rlo tiny next to r, each as hi + lo.
template <class P, class T>
TwoPart<T> sin_reduced(T r, T rlo) {
  using S = typename P::S;
  const T z = r * r;
  const T q = fma(r * z, poly(z, P::sin_s), rlo * fma(T(S(-0.5)), z, T(S(1))));
  const T hi = r + q;
  return {hi, (r - hi) + q};
}
template <class P, class T>
TwoPart<T> cos_reduced(T r, T rlo) {
  using S = typename P::S;
  const T z = r * r;
  const T zl = fma(r, r, -z);
  const T hz = T(S(0.5)) * z;
  const T w = T(S(1)) - hz;
  const T tail =
      (((T(S(1)) - w) - hz) - T(S(0.5)) * zl) + fma(z * z, poly(z, P::cos_c), -(r * rlo));
  const T hi = w + tail;
  return {hi, (w - hi) + tail};
}
// (a.hi + a.lo) / (b.hi + b.lo) with one correction step.
template <class T>
T div2(TwoPart<T> a, TwoPart<T> b) {
  const T q = a.hi / b.hi;
  return q + (fma(-q, b.hi, a.hi) + fma(-q, b.lo, a.lo)) / b.hi;
}

template <class P, class T>
T sin(T x) {
  using S = typename P::S;
  const auto bad = !(fabs(x) < T(P::inf));
  const auto d = reduce_pio2<P>(select(bad, T(S(0)), x));
  const auto s = sin_reduced<P>(d.r, d.rlo), c = cos_reduced<P>(d.r, d.rlo);
  const auto odd = (d.q == T(S(1))) | (d.q == T(S(3)));
  T res = select(odd, c.hi, s.hi);
  res = select(d.q >= T(S(2)), -res, res);
  return select(bad, T(P::nan), select(x == T(S(0)), x, res));
}

template <class P, class T>
T cos(T x) {
  using S = typename P::S;
  const auto bad = !(fabs(x) < T(P::inf));
  const auto d = reduce_pio2<P>(select(bad, T(S(0)), x));
  const auto s = sin_reduced<P>(d.r, d.rlo), c = cos_reduced<P>(d.r, d.rlo);
  const auto odd = (d.q == T(S(1))) | (d.q == T(S(3)));
  T res = select(odd, s.hi, c.hi);
  res = select((d.q == T(S(1))) | (d.q == T(S(2))), -res, res);
  return select(bad, T(P::nan), res);
}

// tan x = sin r / cos r, or -cos r / sin r in odd quadrants, both carried in two parts.
template <class P, class T>
T tan(T x) {
  using S = typename P::S;
  const auto bad = !(fabs(x) < T(P::inf));
  const auto d = reduce_pio2<P>(select(bad, T(S(0)), x));
  const auto s = sin_reduced<P>(d.r, d.rlo), c = cos_reduced<P>(d.r, d.rlo);
  const auto odd = (d.q == T(S(1))) | (d.q == T(S(3)));
  const T res = select(odd, -libm_core::div2(c, s), libm_core::div2(s, c));
  return select(bad, T(P::nan), select(x == T(S(0)), x, res));
}

}  // namespace numr::math::inline NUMR_MATH_ISA::libm_core

NUMR_MATH_EXACT_END
