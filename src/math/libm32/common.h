// Shared pieces of the single-precision library (see libm32.h): constants, polynomial
// evaluation, the decomposition x = 2^k * m of the logarithms and the scaled exponential
// core, all in float arithmetic. No branches on T values, compile-time loop counts.
#pragma once

#include "math/libm32/scalar_float.h"
#include "math/namespace.h"

NUMR_MATH_EXACT_BEGIN

namespace numr::math::inline NUMR_MATH_ISA::libm32::detail {

inline constexpr float kInf = __builtin_inff();
inline constexpr float kNaN = __builtin_nanf("");

// ln 2 as a 24-bit head plus tail (exp reduction through fma), and as a 16-bit head plus
// tail (k * head is exact for |k| < 2^8, for the logarithms).
inline constexpr float kLn2Hi = 0.6931471824645996f, kLn2Lo = -1.9046542121259336e-09f;
inline constexpr float kLn2Hi16 = 0.693145751953125f, kLn2Lo16 = 1.428606765330187e-06f;
inline constexpr float kLog2e = 1.4426950216293335f;
inline constexpr float kInvLn2Hi = 1.4426950216293335f, kInvLn2Lo = 1.925963033500011e-08f;
inline constexpr float kTwoThirds = 0.6666666865348816f;
inline constexpr float kSqrt2 = 1.4142135381698608f;

// Horner evaluation of c[0] + c[1] x + ... + c[N-1] x^(N-1) with fused multiply-adds.
template <class T, int N>
T poly(T x, const float (&c)[N]) {
  T p(c[N - 1]);
  for (int i = N - 2; i >= 0; --i) p = fma(p, x, T(c[i]));
  return p;
}

// (e^r - 1 - r) / r^2 on |r| <= 0.35: Taylor terms through r^7, truncation below 2^-27.
inline constexpr float kExpP[] = {0.5f, 1.0f / 6, 1.0f / 24, 1.0f / 120, 1.0f / 720, 1.0f / 5040};
// (2 atanh(s) - 2 s - 2 s^3 / 3) / s^5 in z = s^2 on [0, 0.0295]: Taylor terms through s^11.
inline constexpr float kLogR2[] = {2.0f / 5, 2.0f / 7, 2.0f / 9, 2.0f / 11};

// x * 2^n for integral n in [-151, 129] with one rounding: two factors keep each power of
// two in pow2i's range.
template <class T>
T scale2(T x, T n) {
  const T n1 = floor(n * T(0.5f));
  return x * pow2i(n1) * pow2i(n - n1);
}

// e^(x + xl), x in [-104, 89] (not NaN), |xl| tiny next to 1: x = n ln2 + r with the first
// fma exact, e^r = 1 + r + r^2 P(r).
template <class T>
T exp_core(T x, T xl) {
  const T n = rint(x * T(kLog2e));
  T r = fma(-n, T(kLn2Hi), x);
  r = fma(-n, T(kLn2Lo), r) + xl;
  const T p = T(1.0f) + fma(r * r, poly(r, kExpP), r);
  return scale2(p, n);
}

// x = 2^k (1 + f), 1 + f in [sqrt(1/2), sqrt(2)), for finite x > 0 (subnormals too).
template <class T>
struct Decomposed {
  T k, f;
};
template <class T>
Decomposed<T> decompose(T x) {
  const auto sub = x < T(0x1p-120f);
  const T xs = select(sub, x * T(0x1p24f), x);
  T e = ilogb_normal(xs);
  T m = (xs * T(0.5f)) * pow2i(T(1.0f) - e);
  const auto big = m > T(kSqrt2);
  m = select(big, m * T(0.5f), m);
  e = e + select(big, T(1.0f), T(0.0f)) - select(sub, T(24.0f), T(0.0f));
  return {e, m - T(1.0f)};
}

template <class T>
struct TwoPart {
  T hi, lo;
};
// log(1 + f) = hi + lo for f in [sqrt(1/2) - 1, sqrt(2) - 1], s = f / (2 + f):
// log(1 + f) = f - f^2/2 + s (f^2/2 + R), R = z (2/3 + z R2(z)), z = s^2.
template <class T>
TwoPart<T> log1p_reduced(T f) {
  const T s = f / (T(2.0f) + f);
  const T z = s * s;
  const T R = z * fma(z, poly(z, kLogR2), T(kTwoThirds));
  const T hf = T(0.5f) * f;
  const T hfsq = hf * f;
  const T hfsq_err = fma(hf, f, -hfsq);
  const T hi = f - hfsq;
  const T lo = (((f - hi) - hfsq) - hfsq_err) + s * (hfsq + R);
  return {hi, lo};
}

// a + b + c, |a| >= |b| or a = 0, with the error of a + b carried into the last rounding.
template <class T>
T fast_sum3(T a, T b, T c) {
  const T s = a + b;
  const T e = b - (s - a);
  return s + (e + c);
}

}  // namespace numr::math::inline NUMR_MATH_ISA::libm32::detail

NUMR_MATH_EXACT_END
