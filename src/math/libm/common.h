// Shared pieces of the double-precision device math library: constants, polynomial
// evaluation, the decomposition x = 2^k * m used by the logarithms, and the scaled
// exponential core. The algorithms are libm_core's, written once for both precisions and
// taken here with Prec64; the names below are what the rest of libm/ calls.
// Everything is a template over a number-like type T (see device_libm.h for the exact list
// of operations T must offer); no branches on T values, loops have compile-time trip counts.
#pragma once

#include "math/libm_core/exp_log.h"
#include "math/libm_core/precision.h"
#include "math/namespace.h"
#include "math/scalar_double.h"

NUMR_MATH_EXACT_BEGIN

namespace numr::math::inline NUMR_MATH_ISA::libm::detail {

using libm_core::Decomposed;
using libm_core::Prec64;
using libm_core::TwoPart;

inline constexpr double kInf = Prec64::inf;
inline constexpr double kNaN = Prec64::nan;

// ln 2 as a 53-bit head plus tail (for exp argument reduction through fma) and as a 42-bit
// head plus tail (k * head is exact for |k| < 2^11, for the logarithms).
inline constexpr double kLn2Hi = Prec64::ln2_hi, kLn2Lo = Prec64::ln2_lo;
inline constexpr double kLn2Hi42 = Prec64::ln2_hi_k, kLn2Lo42 = Prec64::ln2_lo_k;
inline constexpr double kLog2e = Prec64::log2e;
inline constexpr double kInvLn2Hi = Prec64::inv_ln2_hi, kInvLn2Lo = Prec64::inv_ln2_lo;
inline constexpr double kInvLn10Hi = 0.4342944819032518, kInvLn10Lo = 1.098319650216765e-17;
inline constexpr double kLog10of2Hi42 = 0.30102999566395283, kLog10of2Lo42 = 2.8363394551044964e-14;
inline constexpr double kTwoThirdsHi = Prec64::two_thirds, kTwoThirdsLo = 3.700743415417188e-17;
inline constexpr double kSqrt2 = Prec64::sqrt2;

// (e^r - 1 - r) / r^2 and the log1p kernel's polynomial (see libm_core/precision.h).
inline constexpr const auto& kExpP = Prec64::exp_p;
inline constexpr const auto& kLogR2 = Prec64::log_r2;

// Horner evaluation of c[0] + c[1] x + ... + c[N-1] x^(N-1) with fused multiply-adds.
template <class T, int N>
T poly(T x, const double (&c)[N]) {
  return libm_core::poly(x, c);
}

// x * 2^n for integral n in [-1080, 1030], with one rounding.
template <class T>
T scale2(T x, T n) {
  return libm_core::scale2<Prec64>(x, n);
}

// e^(x + xl), x in [-746, 710] (not NaN), |xl| tiny next to 1; about 1 ulp.
template <class T>
T exp_core(T x, T xl) {
  return libm_core::exp_core<Prec64>(x, xl);
}

// x = 2^k * (1 + f) with 1 + f in [sqrt(1/2), sqrt(2)), for finite x > 0 (subnormals too).
template <class T>
Decomposed<T> decompose(T x) {
  return libm_core::decompose<Prec64>(x);
}

// log(1 + f) = hi + lo for f in [sqrt(1/2) - 1, sqrt(2) - 1].
template <class T>
TwoPart<T> log1p_reduced(T f) {
  return libm_core::log1p_reduced<Prec64>(f);
}

// a + b + c, |a| >= |b| or a = 0, as hi + (error of a + b) + c, rounded once more at the end.
template <class T>
T fast_sum3(T a, T b, T c) {
  return libm_core::fast_sum3(a, b, c);
}

}  // namespace numr::math::inline NUMR_MATH_ISA::libm::detail

NUMR_MATH_EXACT_END
