// Single-precision exponentials and logarithms over a number-like T (see libm32.h):
// libm_core's algorithms with the single-precision constants (Prec32).
#pragma once

#include "math/libm32/common.h"
#include "math/libm_core/exp_log.h"
#include "math/namespace.h"

NUMR_MATH_EXACT_BEGIN

namespace numr::math::inline NUMR_MATH_ISA::libm32 {

// e^x: x = n ln2 + r, |r| <= ln2/2, e^r from a degree-7 polynomial, scaled by 2^n in two
// exact steps (gradual underflow, overflow to +inf).
template <class T>
T exp(T x) {
  return libm_core::exp<libm_core::Prec32>(x);
}

// 2^x: x = n + r exactly, |r| <= 1/2, 2^r = 1 + r Q(r), Q the Taylor series of degree 7
// (ln2^(k+1) / (k+1)!).
template <class T>
T exp2(T x) {
  return libm_core::exp2<libm_core::Prec32>(x);
}

// e^x - 1: x = n ln2 + r, e^r - 1 = r + r^2 P(r) kept in two parts, then
// (2^n - 1) + 2^n (e^r - 1) with one final rounding. Below -18 the result rounds to -1;
// above 89 it overflows.
template <class T>
T expm1(T x) {
  return libm_core::expm1<libm_core::Prec32>(x);
}

namespace detail {
// log(±0) = -inf, log(x < 0) = NaN, log(inf) = inf, NaN stays NaN.
template <class T>
T log_specials(T x, T r) {
  return libm_core::log_specials<Prec32>(x, r);
}
template <class T>
T log_sanitize(T x) {
  return libm_core::log_sanitize<Prec32>(x);
}
// log(1 + x + xl), |xl| tiny next to x: u = 1 + x rounded, log u, plus the rounding error
// of 1 + x (and xl) divided by u.
template <class T>
T log1p_dd(T x, T xl) {
  return libm_core::log1p_dd<Prec32>(x, xl);
}
}  // namespace detail

// log x: x = 2^k (1 + f), log(1 + f) via s = f / (2 + f), then k ln2 in two parts.
template <class T>
T log(T x) {
  return libm_core::log<libm_core::Prec32>(x);
}

// log2 x = k + log(1 + f) / ln2, the product in extended precision.
template <class T>
T log2(T x) {
  return libm_core::log2<libm_core::Prec32>(x);
}

// log(1 + x), the rounding error of 1 + x corrected.
template <class T>
T log1p(T x) {
  return libm_core::log1p<libm_core::Prec32>(x);
}

}  // namespace numr::math::inline NUMR_MATH_ISA::libm32

NUMR_MATH_EXACT_END
