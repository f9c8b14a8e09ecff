// Single-precision erf, erfc and erfinv over a number-like T (see libm32.h). The
// polynomials come from scripts/fit_erf_coefficients.py (Chebyshev interpolation in
// mpmath); each comment gives the fitted variable v, the polynomial's argument s and the
// fit's maximum error with the coefficients rounded to float.
#pragma once

#include "math/libm32/common.h"
#include "math/libm32/exp_log.h"
#include "math/namespace.h"

NUMR_MATH_EXACT_BEGIN

namespace numr::math::inline NUMR_MATH_ISA::libm32 {

namespace detail {

// erf(x) / x - 1, v = x^2 in [0, 1], s = (v - 0.5) / 0.5, relative error 3.64e-08.
inline constexpr float kErfSmall[] = {0.9654687643051147f - 1, -0.1405360847711563f,
                                      0.019852498546242714f,   -0.0022854856215417385f,
                                      0.00021751198801212013f, -1.7536915038363077e-05f,
                                      1.231639544130303e-06f,  -7.552378633590706e-08f};
// erfc exponent P, v = t = 2 / (2 + z) in [0.125, 1.125], s = (v - 0.625) / 0.5, absolute
// error 3.37e-08.
inline constexpr float kErfcExp[] = {
    -0.501436710357666f,     0.6870836019515991f,      0.009903634898364544f,
    -0.051019057631492615f,  0.0015588749665766954f,   0.008550039492547512f,
    -0.0018498771823942661f, -0.001465623383410275f,   0.0007983713294379413f,
    0.00013555240002460778f, -0.00022009009262546897f, 2.6040232114610262e-05f,
    3.133490827167407e-05f,  -9.330637112725526e-06f};
// erfinv(x) / x, v = w in [0, 4], s = (v - 2.0) / 2.0, relative error 4.65e-08.
inline constexpr float kErfinvCentral[] = {
    1.3772152662277222f,     0.4995361566543579f,     -0.007872574962675571f,
    -0.01353729609400034f,   0.00345501652918756f,    0.00024322803074028343f,
    -0.0003120340988971293f, 3.9131289668148383e-05f, 1.7843070963863283e-05f,
    -5.113031875225715e-06f, -4.4322260350782017e-07f};
// erfinv(x) / x, v = sqrt(w) in [2, 4], s = (v - 3.0) / 1.0, relative error 6.12e-08.
inline constexpr float kErfinvTail[] = {
    2.832976818084717f,     1.0016748905181885f,     0.00944568682461977f,
    -0.007637245114892721f, 0.005681849084794521f,   -0.003595334477722645f,
    0.0015028138877823949f, -6.650841532973573e-05f, -0.0003285836719442159f,
    0.0001265121391043067f, 2.877266297218739e-06f};

// erfc underflows to 0 past kErfcZero; below kErfcSmall it is 1 - erf.
inline constexpr float kErfcZero = 10.1f, kErfcSmall = 1.0f;

// erfc(z) for z >= 0 (NaN allowed: the result is then meaningless but every step sane).
// erfc(z) = t exp(-z^2 + P(t)), t = 2 / (2 + z): P is smooth on t in (0, 1]; -z^2 is
// carried as z^2 = h + l (exact) and -h + P as a two-sum into the exponential's tail.
template <class T>
T erfc_pos(T z) {
  const T zc = select(z < T(kErfcZero), z, T(kErfcZero));
  // t + tl = 2 / (2 + z) to about twice the precision, for the factor t (P(t) takes t).
  const T d = T(2.0f) + zc;
  const T db = d - zc;
  const T dl = (T(2.0f) - db) + (zc - (d - db));
  const T t = T(2.0f) / d;
  const T tl = (fma(-t, d, T(2.0f)) - t * dl) / d;
  const T p = poly((t - T(0.625f)) * T(2.0f), kErfcExp);
  const T h = zc * zc;
  const T l = fma(zc, zc, -h);
  const T s = p - h;
  const T bb = s - p;
  const T e = (p - (s - bb)) + (-h - bb);
  const T ex = exp_core(s, e - l);
  return select(z > T(kErfcZero), T(0.0f), fma(tl, ex, t * ex));
}
// erf(x) for |x| <= 1 as x + x Q(2 x^2 - 1), Q = erf(x) / x - 1 small: its rounding errors
// count little next to x.
template <class T>
T erf_small(T x) {
  return fma(x, poly(fma(T(2.0f) * x, x, T(-1.0f)), kErfSmall), x);
}
// erfc(z) for 0 <= z <= 1 as 1 - z - z Q, with the rounding of 1 - z carried.
template <class T>
T erfc_small(T z) {
  return fast_sum3(T(1.0f), -z, -z * poly(fma(T(2.0f) * z, z, T(-1.0f)), kErfSmall));
}

}  // namespace detail

// |x| < 1: x P(x^2); beyond, 1 - erfc(|x|) with the sign of x. ±inf gives ±1.
template <class T>
T erf(T x) {
  using namespace detail;
  const T a = fabs(x);
  const T big = T(1.0f) - erfc_pos(a);
  const T res = select(a < T(1.0f), erf_small(select(a < T(1.0f), x, T(0.0f))),
                       select(x < T(0.0f), -big, big));
  return select(x != x, x, res);
}

// erfc(|x|) from erfc_small below kErfcSmall, erfc_pos above, and 2 - erfc(|x|) for negative x.
// +inf gives 0, -inf 2.
template <class T>
T erfc(T x) {
  using namespace detail;
  const T a = fabs(x);
  const T e =
      select(a < T(kErfcSmall), erfc_small(select(a < T(kErfcSmall), a, T(0.0f))), erfc_pos(a));
  return select(x != x, x, select(x < T(0.0f), T(2.0f) - e, e));
}

// erfinv x = x P(w), w = -log(1 - x^2) (taken as log1p of -(h + l), h + l = x^2 exactly,
// so that 1 - x^2 keeps its precision near |x| = 1); P in w below w = 4, in sqrt(w)
// above. ±1 gives ±inf, |x| > 1 NaN.
template <class T>
T erfinv(T x) {
  using namespace detail;
  const T a = fabs(x);
  const T as = select(a < T(1.0f), a, T(0.0f));
  const T h = as * as;
  const T w = -log1p_dd(-h, -fma(as, as, -h));
  const T pc = poly((w - T(2.0f)) * T(0.5f), kErfinvCentral);
  const T pt = poly(sqrt(w) - T(3.0f), kErfinvTail);
  const T res = select(w < T(4.0f), pc, pt) * select(a < T(1.0f), x, T(0.0f));
  const T inf = select(x < T(0.0f), T(-kInf), T(kInf));
  return select(x != x, x, select(a == T(1.0f), inf, select(a > T(1.0f), T(kNaN), res)));
}

}  // namespace numr::math::inline NUMR_MATH_ISA::libm32

NUMR_MATH_EXACT_END
