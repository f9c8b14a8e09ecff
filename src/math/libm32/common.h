// Shared pieces of the single-precision library (see libm32.h): constants, polynomial
// evaluation, the decomposition x = 2^k * m of the logarithms and the scaled exponential
// core, all in float arithmetic. The algorithms are libm_core's, written once for both
// precisions and taken here with Prec32. No branches on T values, compile-time loop counts.
#pragma once

#include "math/libm32/scalar_float.h"
#include "math/libm_core/exp_log.h"
#include "math/libm_core/precision.h"
#include "math/namespace.h"

NUMR_MATH_EXACT_BEGIN

namespace numr::math::inline NUMR_MATH_ISA::libm32::detail {

using libm_core::Decomposed;
using libm_core::Prec32;
using libm_core::TwoPart;

inline constexpr float kInf = Prec32::inf;
inline constexpr float kNaN = Prec32::nan;

// ln 2 as a 24-bit head plus tail (exp reduction through fma), and as a 16-bit head plus
// tail (k * head is exact for |k| < 2^8, for the logarithms).
inline constexpr float kLn2Hi = Prec32::ln2_hi, kLn2Lo = Prec32::ln2_lo;
inline constexpr float kLn2Hi16 = Prec32::ln2_hi_k, kLn2Lo16 = Prec32::ln2_lo_k;
inline constexpr float kLog2e = Prec32::log2e;
inline constexpr float kInvLn2Hi = Prec32::inv_ln2_hi, kInvLn2Lo = Prec32::inv_ln2_lo;
inline constexpr float kTwoThirds = Prec32::two_thirds;
inline constexpr float kSqrt2 = Prec32::sqrt2;

// (e^r - 1 - r) / r^2 and the log1p kernel's polynomial (see libm_core/precision.h).
inline constexpr const auto& kExpP = Prec32::exp_p;
inline constexpr const auto& kLogR2 = Prec32::log_r2;

// Horner evaluation of c[0] + c[1] x + ... + c[N-1] x^(N-1) with fused multiply-adds.
template <class T, int N>
T poly(T x, const float (&c)[N]) {
  return libm_core::poly(x, c);
}

// x * 2^n for integral n in [-151, 129] with one rounding.
template <class T>
T scale2(T x, T n) {
  return libm_core::scale2<Prec32>(x, n);
}

// e^(x + xl), x in [-104, 89] (not NaN), |xl| tiny next to 1.
template <class T>
T exp_core(T x, T xl) {
  return libm_core::exp_core<Prec32>(x, xl);
}

// x = 2^k (1 + f), 1 + f in [sqrt(1/2), sqrt(2)), for finite x > 0 (subnormals too).
template <class T>
Decomposed<T> decompose(T x) {
  return libm_core::decompose<Prec32>(x);
}

// log(1 + f) = hi + lo for f in [sqrt(1/2) - 1, sqrt(2) - 1].
template <class T>
TwoPart<T> log1p_reduced(T f) {
  return libm_core::log1p_reduced<Prec32>(f);
}

// a + b + c, |a| >= |b| or a = 0, with the error of a + b carried into the last rounding.
template <class T>
T fast_sum3(T a, T b, T c) {
  return libm_core::fast_sum3(a, b, c);
}

}  // namespace numr::math::inline NUMR_MATH_ISA::libm32::detail

NUMR_MATH_EXACT_END
