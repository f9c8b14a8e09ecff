// Single-precision sin, cos and tan over a number-like T (see libm32.h).
#pragma once

#include "math/libm32/common.h"
#include "math/namespace.h"

NUMR_MATH_EXACT_BEGIN

namespace numr::math::inline NUMR_MATH_ISA::libm32 {

namespace detail {

inline constexpr float kTwoOverPiHi = 0.6366197466850281f, kTwoOverPiLo = 2.5682552973194106e-08f;
// pi/2 = kPio2_1 + kPio2_2 + kPio2_3 to about 2^-72.
inline constexpr float kPio2_1 = 1.5707963705062866f, kPio2_2 = -4.371138828673793e-08f,
                       kPio2_3 = -1.7151245100058819e-15f;
inline constexpr float kPio4 = 0.7853981852531433f;
// Accurate below this (see libm32.h); above it results stay in range.
inline constexpr float kTrigLimit32 = 0x1p17f;

// (sin r - r) / r^3 and (cos r - 1 + r^2/2) / r^4 in z = r^2 for |r| <= 0.79: Taylor terms
// through r^11 and r^12, truncation below 2^-28.
inline constexpr float kSinS[] = {-1.0f / 6, 1.0f / 120, -1.0f / 5040, 1.0f / 362880,
                                  -1.0f / 39916800};
inline constexpr float kCosC[] = {1.0f / 24, -1.0f / 720, 1.0f / 40320, -1.0f / 3628800,
                                  1.0f / 479001600};

// x = n pi/2 + (r + rlo), |r| <= pi/4 (+ rounding), q = n mod 4. Finite x only.
template <class T>
struct Reduced {
  T q, r, rlo;
};
template <class T>
Reduced<T> reduce_pio2(T x) {
  const T t = x * T(kTwoOverPiHi);
  const T tl = fma(x, T(kTwoOverPiHi), -t) + x * T(kTwoOverPiLo);
  const T n0 = rint(t);
  const T n = n0 + rint((t - n0) + tl);
  // Cody-Waite with fma: the first step is exact, the second kept as a two-sum.
  const T r1 = fma(-n, T(kPio2_1), x);
  const T p = n * T(kPio2_2);
  const T pe = fma(n, T(kPio2_2), -p);
  const T r2 = r1 - p;
  const T bb = r2 - r1;
  const T e = (r1 - (r2 - bb)) - (p + bb);
  const T lo = fma(-n, T(kPio2_3), e - pe);
  T r = r2 + lo;
  T rlo = (r2 - r) + lo;
  const auto big = fabs(x) > T(kTrigLimit32);
  r = select(big, select(r > T(kPio4), T(kPio4), select(r < T(-kPio4), T(-kPio4), r)), r);
  rlo = select(big, T(0.0f), rlo);
  return {n - T(4.0f) * floor(n * T(0.25f)), r, rlo};
}

template <class T>
TwoPart<T> sin_reduced(T r, T rlo) {
  const T z = r * r;
  const T q = fma(r * z, poly(z, kSinS), rlo * fma(T(-0.5f), z, T(1.0f)));
  const T hi = r + q;
  return {hi, (r - hi) + q};
}
template <class T>
TwoPart<T> cos_reduced(T r, T rlo) {
  const T z = r * r;
  const T zl = fma(r, r, -z);
  const T hz = T(0.5f) * z;
  const T w = T(1.0f) - hz;
  const T tail = (((T(1.0f) - w) - hz) - T(0.5f) * zl) + fma(z * z, poly(z, kCosC), -(r * rlo));
  const T hi = w + tail;
  return {hi, (w - hi) + tail};
}
template <class T>
T div2(TwoPart<T> a, TwoPart<T> b) {
  const T q = a.hi / b.hi;
  return q + (fma(-q, b.hi, a.hi) + fma(-q, b.lo, a.lo)) / b.hi;
}

}  // namespace detail

template <class T>
T sin(T x) {
  using namespace detail;
  const auto bad = !(fabs(x) < T(kInf));
  const auto d = reduce_pio2(select(bad, T(0.0f), x));
  const auto s = sin_reduced(d.r, d.rlo), c = cos_reduced(d.r, d.rlo);
  const auto odd = (d.q == T(1.0f)) | (d.q == T(3.0f));
  T res = select(odd, c.hi, s.hi);
  res = select(d.q >= T(2.0f), -res, res);
  return select(bad, T(kNaN), select(x == T(0.0f), x, res));
}

template <class T>
T cos(T x) {
  using namespace detail;
  const auto bad = !(fabs(x) < T(kInf));
  const auto d = reduce_pio2(select(bad, T(0.0f), x));
  const auto s = sin_reduced(d.r, d.rlo), c = cos_reduced(d.r, d.rlo);
  const auto odd = (d.q == T(1.0f)) | (d.q == T(3.0f));
  T res = select(odd, s.hi, c.hi);
  res = select((d.q == T(1.0f)) | (d.q == T(2.0f)), -res, res);
  return select(bad, T(kNaN), res);
}

// sin r / cos r, or -cos r / sin r in odd quadrants, both carried in two parts.
template <class T>
T tan(T x) {
  using namespace detail;
  const auto bad = !(fabs(x) < T(kInf));
  const auto d = reduce_pio2(select(bad, T(0.0f), x));
  const auto s = sin_reduced(d.r, d.rlo), c = cos_reduced(d.r, d.rlo);
  const auto odd = (d.q == T(1.0f)) | (d.q == T(3.0f));
  const T res = select(odd, -div2(c, s), div2(s, c));
  return select(bad, T(kNaN), select(x == T(0.0f), x, res));
}

}  // namespace numr::math::inline NUMR_MATH_ISA::libm32

NUMR_MATH_EXACT_END
