// Trigonometric functions and their inverses over a number-like T (see device_libm.h); sin,
// cos and tan are libm_core's, shared with libm32.
#pragma once

#include "math/libm/common.h"
#include "math/libm_core/trig.h"
#include "math/namespace.h"

NUMR_MATH_EXACT_BEGIN

namespace numr::math::inline NUMR_MATH_ISA::libm {

namespace detail {

// The constants of sin, cos and tan are Prec64's (libm_core/precision.h).
inline constexpr double kTwoOverPiHi = Prec64::two_over_pi_hi,
                        kTwoOverPiLo = Prec64::two_over_pi_lo;
inline constexpr double kPio2_1 = Prec64::pio2_1, kPio2_2 = Prec64::pio2_2,
                        kPio2_3 = Prec64::pio2_3;
inline constexpr double kPio4Hi = Prec64::pio4, kPio4Lo = 3.061616997868383e-17;
inline constexpr double kPio2Hi = 1.5707963267948966, kPio2Lo = 6.123233995736766e-17;
inline constexpr double kPiHi = 3.141592653589793, kPiLo = 1.2246467991473532e-16;
inline constexpr double kTanPi8 = 0.41421356237309503;
// sin, cos and tan are accurate for |x| below this; above it they stay in range.
inline constexpr double kTrigLimit = Prec64::trig_limit;
inline constexpr const auto& kSinS = Prec64::sin_s;
inline constexpr const auto& kCosC = Prec64::cos_c;
// (atan u - u) / u^3 in z = u^2 on [0, 0.1717] (|u| <= tan(pi/8)), degree 10, rel. err 1.4e-16.
inline constexpr double kAtanA[] = {
    -0.3333333333333333,  0.1999999999999549,  -0.1428571428466014,  0.11111111014741562,
    -0.09090904557214267, 0.0769218270524632,  -0.06664504610032648, 0.05858089538610203,
    -0.05085139148706638, 0.03922268882347632, -0.0191659065063043};
// (asin s - s) / s^3 in z = s^2 on [0, 0.25] (|s| <= 1/2), degree 12, rel. err 1.2e-16.
inline constexpr double kAsinP[] = {
    0.16666666666666669, 0.07499999999998433,  0.04464285714635543,  0.030381944138531247,
    0.02237217294214989, 0.017352392720869973, 0.013971212973552933, 0.011479177415184906,
    0.01032281435018578, 0.005457506718640358, 0.01740087944269402,  -0.014851887071247204,
    0.028757851367421566};

// x = n pi/2 + (r + rlo), |r| <= pi/4 (+ rounding), q = n mod 4. Finite x only.
using libm_core::Reduced;
template <class T>
Reduced<T> reduce_pio2(T x) {
  return libm_core::reduce_pio2<Prec64>(x);
}
// sin(r + rlo) and cos(r + rlo) for |r| <= pi/4, rlo tiny next to r, each as hi + lo.
template <class T>
TwoPart<T> sin_reduced(T r, T rlo) {
  return libm_core::sin_reduced<Prec64>(r, rlo);
}
template <class T>
TwoPart<T> cos_reduced(T r, T rlo) {
  return libm_core::cos_reduced<Prec64>(r, rlo);
}
// (a.hi + a.lo) / (b.hi + b.lo) with one correction step.
template <class T>
T div2(TwoPart<T> a, TwoPart<T> b) {
  return libm_core::div2(a, b);
}

// atan(num/den) for 0 <= num <= den as k pi/4 + (p + q): k in {0, 1}, p + q = atan(u) with
// u = num/den, or u = (num - den)/(num + den) when num/den > tan(pi/8); the rounding errors
// of the quotient (and of num -/+ den) are carried into q.
template <class T>
struct AtanParts {
  T k, p, q;
};
template <class T>
AtanParts<T> atan_ratio(T num, T den) {
  // inf/inf counts as 1, finite/inf and 0/0 as 0.
  const auto both_inf = num == T(kInf), den_inf = den == T(kInf);
  num = select(both_inf, T(1), select(den_inf, T(0), num));
  den = select(den_inf | (den == T(0)), T(1), den);
  const T sc = select(den > T(0x1p1000), T(0x1p-4), T(1));  // keep num + den finite
  num = num * sc;
  den = den * sc;
  const auto mid = num > T(kTanPi8) * den;
  const T dm = num - den, dp = num + den;  // den >= num: both errors by fast two-sum
  const T a = select(mid, dm, num), al = select(mid, num - (dm + den), T(0));
  const T b = select(mid, dp, den), bl = select(mid, num - (dp - den), T(0));
  const T u = a / b;
  const T ul = (fma(-u, b, a) + (al - u * bl)) / b;  // a/b - u, to first order
  const T z = u * u;
  return {select(mid, T(1), T(0)), u, fma(u * z, poly(z, kAtanA), ul * (T(1) - z))};
}
template <class T>
T angle(T k, T sg, const AtanParts<T>& at) {  // k pi/4 + sg (p + q), k a small integer
  const T K = k * T(kPio4Hi);
  const T Kl = fma(k, T(kPio4Hi), -K);
  return fast_sum3(K, sg * at.p, Kl + fma(k, T(kPio4Lo), sg * at.q));
}

}  // namespace detail

// sin x: reduction modulo pi/2 (see reduce_pio2), then degree-6 (in r^2) polynomials for sin
// and cos on |r| <= pi/4. About 1 ulp for |x| < 2^52.
template <class T>
T sin(T x) {
  return libm_core::sin<libm_core::Prec64>(x);
}

// cos x: as sin. About 1 ulp for |x| < 2^52.
template <class T>
T cos(T x) {
  return libm_core::cos<libm_core::Prec64>(x);
}

// tan x = sin r / cos r, or -cos r / sin r in odd quadrants, both carried in two parts.
// About 1 ulp for |x| < 2^52.
template <class T>
T tan(T x) {
  return libm_core::tan<libm_core::Prec64>(x);
}

// asin x: |x| <= 1/2: x + x^3 P(x^2), P of degree 12. Else pi/2 - 2 asin(s), s = sqrt((1-|x|)/2),
// with the rounding error of the square root carried along. About 1 ulp.
template <class T>
T asin(T x) {
  using namespace detail;
  const T a = fabs(x);
  const T small = fma(x * (x * x), poly(x * x, kAsinP), x);
  const T w = (T(1) - a) * T(0.5);
  const auto wpos = w > T(0);
  const T ws = select(wpos, w, T(0.25));
  const T s = sqrt(ws);
  const T c = fma(-s, s, ws) / (s + s);  // sqrt(ws) = s + c to second order
  const T sh = select(wpos, s, T(0));
  const T st = select(wpos, fma(s * ws, poly(ws, kAsinP), c), T(0));  // asin(s) = sh + st
  const T big = fast_sum3(T(kPio2Hi), T(-2) * sh, T(kPio2Lo) - T(2) * st);
  T res = select(a <= T(0.5), small, select(x < T(0), -big, big));
  res = select(a > T(1), T(kNaN), res);
  return select(x != x, x, res);
}

// acos x: pi/2 - asin x for |x| <= 1/2; 2 asin(s) or pi - 2 asin(s), s = sqrt((1-|x|)/2),
// otherwise. About 1 ulp.
template <class T>
T acos(T x) {
  using namespace detail;
  const T a = fabs(x);
  const T z = x * x;
  const T small = fast_sum3(T(kPio2Hi), -x, -fma(x * z, poly(z, kAsinP), T(-kPio2Lo)));
  const T w = (T(1) - a) * T(0.5);
  const auto wpos = w > T(0);
  const T ws = select(wpos, w, T(0.25));
  const T s = sqrt(ws);
  const T c = fma(-s, s, ws) / (s + s);
  const T sh = select(wpos, s, T(0));
  const T st = select(wpos, fma(s * ws, poly(ws, kAsinP), c), T(0));
  const T pos = T(2) * sh + T(2) * st;
  const T neg = fast_sum3(T(kPiHi), T(-2) * sh, T(kPiLo) - T(2) * st);
  T res = select(a <= T(0.5), small, select(x < T(0), neg, pos));
  res = select(a > T(1), T(kNaN), res);
  return select(x != x, x, res);
}

// atan x: |x| > 1 through pi/2 - atan(1/|x|); |u| > tan(pi/8) through pi/4 + atan((u-1)/(u+1));
// then u + u^3 A(u^2), A of degree 10. About 1 ulp.
template <class T>
T atan(T x) {
  using namespace detail;
  const T a = fabs(x);
  const auto swap = a > T(1);
  const auto at = atan_ratio(select(swap, T(1), a), select(swap, a, T(1)));
  const T res = angle(select(swap, T(2) - at.k, at.k), select(swap, T(-1), T(1)), at);
  return select((x == T(0)) | (x != x), x, select(x < T(0), -res, res));
}

// atan2(y, x): the angle of (|x|, |y|) from atan of the smaller over the larger coordinate,
// reflected to the quadrant of (x, y) (signed zeros included) with pi/4 multiples added in
// extended precision. About 1 ulp.
template <class T>
T atan2(T y, T x) {
  using namespace detail;
  const T ax = fabs(x), ay = fabs(y);
  const auto xneg = (x < T(0)) | (T(1) / x < T(0));  // 1/x < 0 catches -0
  const auto yneg = (y < T(0)) | (T(1) / y < T(0));
  const auto swap = ay > ax;
  const auto at = atan_ratio(select(swap, ax, ay), select(swap, ay, ax));
  T k = select(swap, T(2) - at.k, at.k);
  T sg = select(swap, T(-1), T(1));
  k = select(xneg, T(4) - k, k);
  sg = select(xneg, -sg, sg);
  const T res = angle(k, sg, at);
  return select((x != x) | (y != y), x + y, select(yneg, -res, res));
}

}  // namespace numr::math::inline NUMR_MATH_ISA::libm

NUMR_MATH_EXACT_END
