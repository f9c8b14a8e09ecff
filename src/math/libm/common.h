// Shared pieces of the device math library: constants, polynomial evaluation, the
// decomposition x = 2^k * m used by the logarithms, and the scaled exponential core.
// Everything is a template over a number-like type T (see device_libm.h for the exact list
// of operations T must offer); no branches on T values, loops have compile-time trip counts.
#pragma once

#include "math/namespace.h"
#include "math/scalar_double.h"

NUMR_MATH_EXACT_BEGIN

namespace numr::math::inline NUMR_MATH_ISA::libm::detail {

inline constexpr double kInf = __builtin_inf();
inline constexpr double kNaN = __builtin_nan("");

// ln 2 as a 53-bit head plus tail (for exp argument reduction through fma) and as a 42-bit
// head plus tail (k * head is exact for |k| < 2^11, for the logarithms).
inline constexpr double kLn2Hi = 0.6931471805599453, kLn2Lo = 2.3190468138462996e-17;
inline constexpr double kLn2Hi42 = 0.6931471805598903, kLn2Lo42 = 5.497923018708371e-14;
inline constexpr double kLog2e = 1.4426950408889634;
inline constexpr double kInvLn2Hi = 1.4426950408889634, kInvLn2Lo = 2.0355273740931033e-17;
inline constexpr double kInvLn10Hi = 0.4342944819032518, kInvLn10Lo = 1.098319650216765e-17;
inline constexpr double kLog10of2Hi42 = 0.30102999566395283, kLog10of2Lo42 = 2.8363394551044964e-14;
inline constexpr double kTwoThirdsHi = 0.6666666666666666, kTwoThirdsLo = 3.700743415417188e-17;
inline constexpr double kSqrt2 = 1.4142135623730951;

// Horner evaluation of c[0] + c[1] x + ... + c[N-1] x^(N-1) with fused multiply-adds.
template <class T, int N>
T poly(T x, const double (&c)[N]) {
  T p(c[N - 1]);
  for (int i = N - 2; i >= 0; --i) p = fma(p, x, T(c[i]));
  return p;
}

// (e^r - 1 - r) / r^2 on |r| <= 0.36, degree 10, relative error 1.3e-17 (Chebyshev fit).
inline constexpr double kExpP[] = {0.5,
                                   0.16666666666666674,
                                   0.04166666666666667,
                                   0.008333333333323584,
                                   0.0013888888888881927,
                                   0.0001984126988339433,
                                   2.4801587331670256e-05,
                                   2.7557244942221745e-06,
                                   2.7557266175047446e-07,
                                   2.5109404672957823e-08,
                                   2.091767738180507e-09};

// (2 atanh(s) - 2 s - 2 s^3 / 3) / s^5 as a function of z = s^2 on [0, 0.0296] (|s| <= 0.1716,
// i.e. 1 + f in [sqrt(1/2), sqrt(2)]), degree 7, relative error 6.5e-17.
inline constexpr double kLogR2[] = {0.4,
                                    0.28571428571429397,
                                    0.22222222221636845,
                                    0.18181818339697634,
                                    0.1538459450380989,
                                    0.13334829573906534,
                                    0.1170557189567721,
                                    0.1173010786189303};

// x * 2^n for integral n in [-1080, 1030], with one rounding (gradual underflow and overflow
// to infinity come out right): two factors keep each power of two in pow2i's range.
template <class T>
T scale2(T x, T n) {
  const T n1 = floor(n * T(0.5));
  return x * pow2i(n1) * pow2i(n - n1);
}

// e^(x + xl), x in [-746, 710] (not NaN), |xl| tiny next to 1. Reduction x = n ln2 + r with
// the first fma exact, |r| <= 0.35; e^r = 1 + r + r^2 P(r); about 1 ulp.
template <class T>
T exp_core(T x, T xl) {
  const T n = rint(x * T(kLog2e));
  T r = fma(-n, T(kLn2Hi), x);
  r = fma(-n, T(kLn2Lo), r) + xl;
  const T p = T(1) + fma(r * r, poly(r, kExpP), r);
  return scale2(p, n);
}

// x = 2^k * (1 + f) with 1 + f in [sqrt(1/2), sqrt(2)), for finite x > 0 (subnormals too).
template <class T>
struct Decomposed {
  T k, f;
};
template <class T>
Decomposed<T> decompose(T x) {
  const auto sub = x < T(0x1p-1020);
  const T xs = select(sub, x * T(0x1p54), x);
  T e = ilogb_normal(xs);
  // xs * 2^-e in [1, 2); halving first keeps the power of two in pow2i's range.
  T m = (xs * T(0.5)) * pow2i(T(1) - e);
  const auto big = m > T(kSqrt2);
  m = select(big, m * T(0.5), m);
  e = e + select(big, T(1), T(0)) - select(sub, T(54), T(0));
  return {e, m - T(1)};
}

// log(1 + f) = hi + lo for f in [sqrt(1/2) - 1, sqrt(2) - 1]: with s = f / (2 + f),
// log(1 + f) = 2 atanh(s) = f - f^2/2 + s (f^2/2 + R), R = z (2/3 + z R2(z)), z = s^2.
template <class T>
struct TwoPart {
  T hi, lo;
};
template <class T>
TwoPart<T> log1p_reduced(T f) {
  const T s = f / (T(2) + f);
  const T z = s * s;
  const T R = z * fma(z, poly(z, kLogR2), T(kTwoThirdsHi));
  const T hf = T(0.5) * f;
  const T hfsq = hf * f;
  const T hfsq_err = fma(hf, f, -hfsq);  // f^2/2 = hfsq + hfsq_err exactly
  const T hi = f - hfsq;
  const T lo = (((f - hi) - hfsq) - hfsq_err) + s * (hfsq + R);
  return {hi, lo};
}

// a + b + c, |a| >= |b| or a = 0, as hi + (error of a + b) + c, rounded once more at the end.
template <class T>
T fast_sum3(T a, T b, T c) {
  const T s = a + b;
  const T e = b - (s - a);
  return s + (e + c);
}

}  // namespace numr::math::inline NUMR_MATH_ISA::libm::detail

NUMR_MATH_EXACT_END
