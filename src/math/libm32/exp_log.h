// Single-precision exponentials and logarithms over a number-like T (see libm32.h).
#pragma once

#include "math/libm32/common.h"
#include "math/namespace.h"

NUMR_MATH_EXACT_BEGIN

namespace numr::math::inline NUMR_MATH_ISA::libm32 {

// e^x: x = n ln2 + r, |r| <= ln2/2, e^r from a degree-7 polynomial, scaled by 2^n in two
// exact steps (gradual underflow, overflow to +inf).
template <class T>
T exp(T x) {
  using namespace detail;
  const auto nan = x != x;
  T xc = select(x > T(89.0f), T(89.0f), select(x < T(-104.0f), T(-104.0f), x));
  xc = select(nan, T(0.0f), xc);
  return select(nan, x, exp_core(xc, T(0.0f)));
}

// 2^x: x = n + r exactly, |r| <= 1/2, 2^r = 1 + r Q(r), Q the Taylor series of degree 7
// (ln2^(k+1) / (k+1)!).
template <class T>
T exp2(T x) {
  using namespace detail;
  static constexpr float kQ[] = {0.6931471824645996f,     0.24022650718688965f,
                                 0.05550410971045494f,    0.009618128649890423f,
                                 0.0013333557872101665f,  0.0001540352968731895f,
                                 1.5252733646775596e-05f, 1.3215486660556053e-06f};
  const auto nan = x != x;
  T xc = select(x > T(129.0f), T(129.0f), select(x < T(-151.0f), T(-151.0f), x));
  xc = select(nan, T(0.0f), xc);
  const T n = rint(xc);
  const T r = xc - n;
  return select(nan, x, scale2(fma(r, poly(r, kQ), T(1.0f)), n));
}

// e^x - 1: x = n ln2 + r, e^r - 1 = r + r^2 P(r) kept in two parts, then
// (2^n - 1) + 2^n (e^r - 1) with one final rounding.
template <class T>
T expm1(T x) {
  using namespace detail;
  const auto nan = x != x;
  // Below -18 the result rounds to -1; above 89 it overflows.
  T xc = select(x > T(89.0f), T(89.0f), select(x < T(-18.0f), T(-18.0f), x));
  xc = select(nan, T(0.0f), xc);
  const T n = rint(xc * T(kLog2e));
  const T r1 = fma(-n, T(kLn2Hi), xc);  // exact
  const T p = n * T(kLn2Lo);
  const T r = r1 - p;
  const T rl = (r1 - r) - p;
  const T q = r * r * poly(r, kExpP);
  const T eh = r + q;
  const T el = ((r - eh) + q) + rl * (T(1.0f) + r);
  const auto top = n > T(127.0f);  // 2^128 is not a float: scale by 2^127, then by 2
  const T s = pow2i(select(top, n - T(1.0f), n));
  T y = fast_sum3(s - T(1.0f), s * eh, s * el);
  y = select(top, y * T(2.0f), y);
  return select(nan | (x == T(0.0f)), x, y);
}

namespace detail {
// log(±0) = -inf, log(x < 0) = NaN, log(inf) = inf, NaN stays NaN.
template <class T>
T log_specials(T x, T r) {
  r = select(x == T(kInf), x, r);
  r = select(x == T(0.0f), T(-kInf), r);
  r = select((x < T(0.0f)) | (x != x), T(kNaN), r);
  return r;
}
template <class T>
T log_sanitize(T x) {
  return select((x > T(0.0f)) & (x < T(kInf)), x, T(1.0f));
}
// log(1 + x + xl), |xl| tiny next to x: u = 1 + x rounded, log u, plus the rounding error
// of 1 + x (and xl) divided by u.
template <class T>
T log1p_dd(T x, T xl) {
  const T u = T(1.0f) + x;
  const T us = log_sanitize(u);
  const T c = (select(x < T(1.0f), x - (u - T(1.0f)), T(1.0f) - (u - x)) + xl) / us;
  const auto d = decompose(us);
  const auto l = log1p_reduced(d.f);
  const T r = fast_sum3(d.k * T(kLn2Hi16), l.hi, fma(d.k, T(kLn2Lo16), l.lo + c));
  return select(x == T(0.0f), x, log_specials(u, r));
}
}  // namespace detail

// log x: x = 2^k (1 + f), log(1 + f) via s = f / (2 + f), then k ln2 in two parts.
template <class T>
T log(T x) {
  using namespace detail;
  const auto d = decompose(log_sanitize(x));
  const auto l = log1p_reduced(d.f);
  return log_specials(x, fast_sum3(d.k * T(kLn2Hi16), l.hi, fma(d.k, T(kLn2Lo16), l.lo)));
}

// log2 x = k + log(1 + f) / ln2, the product in extended precision.
template <class T>
T log2(T x) {
  using namespace detail;
  const auto d = decompose(log_sanitize(x));
  const auto l = log1p_reduced(d.f);
  const T p = l.hi * T(kInvLn2Hi);
  const T pe = fma(l.hi, T(kInvLn2Hi), -p);
  const T tail = pe + fma(l.lo, T(kInvLn2Hi), l.hi * T(kInvLn2Lo));
  return log_specials(x, fast_sum3(d.k, p, tail));
}

// log(1 + x), the rounding error of 1 + x corrected.
template <class T>
T log1p(T x) {
  return detail::log1p_dd(x, T(0.0f));
}

}  // namespace numr::math::inline NUMR_MATH_ISA::libm32

NUMR_MATH_EXACT_END
