// Double-precision erf, erfc and erfinv over a number-like T (see device_libm.h). The
// polynomials come from scripts/fit_erf_coefficients.py (Chebyshev interpolation in
// mpmath); each comment gives the fitted variable v, the polynomial's argument s and the
// fit's maximum error with the coefficients rounded to double.
#pragma once

#include "math/libm/common.h"
#include "math/libm/exp_log.h"
#include "math/libm32/erf.h"
#include "math/namespace.h"

NUMR_MATH_EXACT_BEGIN

namespace numr::math::inline NUMR_MATH_ISA::libm {

namespace detail {

// erf(x) / x - 1, v = x^2 in [0, 1], s = (v - 0.5) / 0.5, relative error 4.81e-17.
inline constexpr double kErfSmall[] = {
    0.9654687386698673 - 1, -0.1405360890227171,    0.019852496688983708,
    -0.0022854855611440673, 0.00021751715604160108, -1.7537169441492004e-05,
    1.2233827383524026e-06, -7.511569160710623e-08, 4.115800597661665e-09,
    -2.03524938661036e-10,  9.167606748998164e-12,  -3.7910973708931526e-13,
    1.4548169783352384e-14, -5.16472878942302e-16};
// erfc exponent P, v = t = 2 / (2 + z) in [0.0625, 1.0625], s = (v - 0.5625) / 0.5, absolute
// error 4.44e-17.
inline constexpr double kErfcExp[] = {
    -0.5870676703001894,    0.6822147204281854,      0.0290091841319468,
    -0.05040443572447137,   -0.00410522015816634,    0.0093781476673201,
    -0.0002541009120035999, -0.0021472422632747594,  0.0004990986525725297,
    0.00044114029474029345, -0.0002491693444743133,  -4.8939231004298386e-05,
    8.337009267901265e-05,  -1.3418606640318255e-05, -1.8325670261426695e-05,
    1.00390670779052e-05,   1.292876856109458e-06,   -3.1035831810605418e-06,
    8.351992708600038e-07,  4.505520454360666e-07,   -3.790054283415213e-07,
    4.203092617597454e-08,  7.323099217831555e-08,   -3.499774047745637e-08,
    -4.877969912504366e-09, 6.836776290502662e-09,   -3.2632079840490705e-10,
    -4.771591408916171e-10};
// erfinv(x) / x (a starting value), v = sqrt(w) in [2, 6.25], s = (v - 4.125) / 2.125,
// relative error 6.72e-07.
inline constexpr double kErfinvTail[] = {
    3.9659900620867883,    2.1457602257444583,    0.0042324802388143635,  -0.006905006858084669,
    0.0065707877121923015, -0.004319055007177677, -0.0024128743619067946, -0.0006011816886279354,
    0.014856118461732779,  -0.011358306288665205, -0.0037038841063519175, 0.004175879292323709};

// erfc underflows to 0 past kErfcZero; below kErfcSmall it is 1 - erf.
inline constexpr double kErfcZero = 27.25, kErfcSmall = 1.0;
inline constexpr double kSqrtPiOver2 = 0.886226925452758;

// Horner evaluation with float coefficients (the single-precision fits, as a starting value).
template <class T, int N>
T poly(T x, const float (&c)[N]) {
  T p = T(static_cast<double>(c[N - 1]));
  for (int i = N - 2; i >= 0; --i) p = fma(p, x, T(static_cast<double>(c[i])));
  return p;
}

// erfc(z) for z >= 0 (NaN allowed: the result is then meaningless but every step sane), as
// in the single-precision library: erfc(z) = t exp(-z^2 + P(t)), t = 2 / (2 + z), -z^2
// carried exactly as h + l and -h + P as a two-sum into the exponential's tail.
template <class T>
T erfc_pos(T z) {
  const T zc = select(z < T(kErfcZero), z, T(kErfcZero));
  // t + tl = 2 / (2 + z) to about twice the precision, for the factor t (P(t) takes t).
  const T d = T(2) + zc;
  const T db = d - zc;
  const T dl = (T(2) - db) + (zc - (d - db));
  const T t = T(2) / d;
  const T tl = (fma(-t, d, T(2)) - t * dl) / d;
  const T p = poly((t - T(0.5625)) * T(2), kErfcExp);
  const T h = zc * zc;
  const T l = fma(zc, zc, -h);
  const T s = p - h;
  const T bb = s - p;
  const T e = (p - (s - bb)) + (-h - bb);
  const T ex = exp_core(s, e - l);
  return select(z > T(kErfcZero), T(0), fma(tl, ex, t * ex));
}
// erf(x) for |x| <= 1 as x + x Q(2 x^2 - 1), Q = erf(x) / x - 1 small: its rounding errors
// count little next to x.
template <class T>
T erf_small(T x) {
  return fma(x, poly(fma(T(2) * x, x, T(-1)), kErfSmall), x);
}
// erfc(z) for 0 <= z <= 1 as 1 - z - z Q, with the rounding of 1 - z carried.
template <class T>
T erfc_small(T z) {
  return fast_sum3(T(1), -z, -z * poly(fma(T(2) * z, z, T(-1)), kErfSmall));
}

}  // namespace detail

// |x| < 1: x P(x^2); beyond, 1 - erfc(|x|) with the sign of x. ±inf gives ±1.
template <class T>
T erf(T x) {
  using namespace detail;
  const T a = fabs(x);
  const T big = T(1) - erfc_pos(a);
  const T res = select(a < T(1), erf_small(select(a < T(1), x, T(0))), select(x < T(0), -big, big));
  return select(x != x, x, res);
}

// erfc(|x|) from erfc_small below kErfcSmall, erfc_pos above, and 2 - erfc(|x|) for negative x.
// +inf gives 0, -inf 2.
template <class T>
T erfc(T x) {
  using namespace detail;
  const T a = fabs(x);
  const T e =
      select(a < T(kErfcSmall), erfc_small(select(a < T(kErfcSmall), a, T(0))), erfc_pos(a));
  return select(x != x, x, select(x < T(0), T(2) - e, e));
}

// erfinv x: a starting value y0 = |x| P(w), w = -log(1 - x^2) (the single-precision
// central polynomial below w = 4, a double one in sqrt(w) above, good to 1e-6), then one
// Halley step on f(y) = erf(y) - |x|, taken as (1 - |x|) - erfc(y) from y0 = 1 on so that
// it keeps its precision near 1: y1 = y0 - u / (1 + y0 u), u = f / f'. ±1 gives
// ±inf, |x| > 1 NaN.
template <class T>
T erfinv(T x) {
  using namespace detail;
  const T a = fabs(x);
  const T as = select(a < T(1), a, T(0));
  const T h = as * as;
  const T w = -log1p_dd(-h, -fma(as, as, -h));
  const T pc = poly((w - T(2)) * T(0.5), libm32::detail::kErfinvCentral);
  const T pt = poly((sqrt(w) - T(4.125)) * T(1 / 2.125), kErfinvTail);
  const T y0 = select(w < T(4), pc, pt) * as;
  const auto near1 = !(y0 < T(1));
  const T f = select(near1, (T(1) - as) - erfc_pos(y0), erf_small(select(near1, T(0), y0)) - as);
  const T u = f * libm::exp(y0 * y0) * T(kSqrtPiOver2);
  const T y1 = y0 - u / fma(y0, u, T(1));
  const T res = select(x < T(0), -y1, y1);
  const T inf = select(x < T(0), T(-kInf), T(kInf));
  return select((x != x) | (x == T(0)), x, select(a == T(1), inf, select(a > T(1), T(kNaN), res)));
}

}  // namespace numr::math::inline NUMR_MATH_ISA::libm

NUMR_MATH_EXACT_END
