// Exponentials and logarithms over a number-like T (see device_libm.h): libm_core's
// algorithms with the double-precision constants (Prec64), plus log10.
#pragma once

#include "math/libm/common.h"
#include "math/libm_core/exp_log.h"
#include "math/namespace.h"

NUMR_MATH_EXACT_BEGIN

namespace numr::math::inline NUMR_MATH_ISA::libm {

// e^x: x = n ln2 + r, |r| <= ln2/2, degree-10 polynomial for e^r - 1 - r, result scaled by
// 2^n in two exact steps (correct gradual underflow). About 1 ulp.
template <class T>
T exp(T x) {
  return libm_core::exp<libm_core::Prec64>(x);
}

// 2^x: x = n + r exactly, |r| <= 1/2, 2^r = 1 + r Q(r) with Q of degree 11. About 1 ulp.
template <class T>
T exp2(T x) {
  return libm_core::exp2<libm_core::Prec64>(x);
}

// e^x - 1: x = n ln2 + r as for exp, e^r - 1 = r + r^2 P(r) (relative-accurate for small r)
// kept as two parts, then (2^n - 1) + 2^n (e^r - 1) summed with one final rounding. Below
// -40 the result rounds to -1; above 710 it overflows. About 1 ulp.
template <class T>
T expm1(T x) {
  return libm_core::expm1<libm_core::Prec64>(x);
}

namespace detail {
// Special values shared by the logarithms: log(±0) = -inf, log(x < 0) = NaN, log(inf) = inf,
// NaN stays NaN.
template <class T>
T log_specials(T x, T r) {
  return libm_core::log_specials<Prec64>(x, r);
}
template <class T>
T log_sanitize(T x) {
  return libm_core::log_sanitize<Prec64>(x);
}
// log(1 + x + xl) for |xl| tiny next to x: u = 1 + x rounded, log u as for log, plus the
// rounding error of 1 + x (and xl) divided by u.
template <class T>
T log1p_dd(T x, T xl) {
  return libm_core::log1p_dd<Prec64>(x, xl);
}
}  // namespace detail

// log x: x = 2^k (1 + f), 1 + f in [sqrt(1/2), sqrt(2)), log(1 + f) via s = f / (2 + f) and a
// degree-7 polynomial in s^2, then k ln2 added in two parts. Under 1 ulp.
template <class T>
T log(T x) {
  return libm_core::log<libm_core::Prec64>(x);
}

// log2 x = k + log(1 + f) / ln2, the product taken in extended precision. About 1 ulp.
template <class T>
T log2(T x) {
  return libm_core::log2<libm_core::Prec64>(x);
}

// log10 x = k log10(2) + log(1 + f) / ln10, both in extended precision. About 1 ulp.
template <class T>
T log10(T x) {
  using namespace detail;
  const auto d = decompose(log_sanitize(x));
  const auto l = log1p_reduced(d.f);
  const T p = l.hi * T(kInvLn10Hi);
  const T pe = fma(l.hi, T(kInvLn10Hi), -p);
  const T tail = pe + fma(l.lo, T(kInvLn10Hi), fma(l.hi, T(kInvLn10Lo), d.k * T(kLog10of2Lo42)));
  return log_specials(x, fast_sum3(d.k * T(kLog10of2Hi42), p, tail));
}

// log(1 + x): u = 1 + x rounded, log u as for log, plus the rounding error of 1 + x divided
// by u. About 1 ulp.
template <class T>
T log1p(T x) {
  return libm_core::log1p<libm_core::Prec64>(x);
}

}  // namespace numr::math::inline NUMR_MATH_ISA::libm

NUMR_MATH_EXACT_END
