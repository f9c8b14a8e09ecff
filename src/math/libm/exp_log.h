// Exponentials and logarithms over a number-like T (see device_libm.h).
#pragma once

#include "math/libm/common.h"
#include "math/namespace.h"

NUMR_MATH_EXACT_BEGIN

namespace numr::math::inline NUMR_MATH_ISA::libm {

// e^x: x = n ln2 + r, |r| <= ln2/2, degree-10 polynomial for e^r - 1 - r, result scaled by
// 2^n in two exact steps (correct gradual underflow). About 1 ulp.
template <class T>
T exp(T x) {
  using namespace detail;
  const auto nan = x != x;
  T xc = select(x > T(710), T(710), select(x < T(-746), T(-746), x));
  xc = select(nan, T(0), xc);
  return select(nan, x, exp_core(xc, T(0)));
}

// 2^x: x = n + r exactly, |r| <= 1/2, 2^r = 1 + r Q(r) with Q of degree 11. About 1 ulp.
template <class T>
T exp2(T x) {
  using namespace detail;
  // (2^r - 1) / r on |r| <= 1/2, degree 11, relative error 4.9e-17.
  static constexpr double kQ[] = {
      0.6931471805599453,     0.24022650695910072,    0.055504108664821625,
      0.00961812910762848,    0.001333355814640647,   0.00015403530393370734,
      1.5252733841556773e-05, 1.3215486808705563e-06, 1.0178057087733941e-07,
      7.0548973041554995e-09, 4.4558179083360645e-10, 2.5729324177362305e-11};
  const auto nan = x != x;
  T xc = select(x > T(1030), T(1030), select(x < T(-1080), T(-1080), x));
  xc = select(nan, T(0), xc);
  const T n = rint(xc);
  const T r = xc - n;
  return select(nan, x, scale2(fma(r, poly(r, kQ), T(1)), n));
}

// e^x - 1: x = n ln2 + r as for exp, e^r - 1 = r + r^2 P(r) (relative-accurate for small r)
// kept as two parts, then (2^n - 1) + 2^n (e^r - 1) summed with one final rounding. About 1 ulp.
template <class T>
T expm1(T x) {
  using namespace detail;
  const auto nan = x != x;
  // Below -40 the result rounds to -1; above 710 it overflows.
  T xc = select(x > T(710), T(710), select(x < T(-40), T(-40), x));
  xc = select(nan, T(0), xc);
  const T n = rint(xc * T(kLog2e));
  const T r1 = fma(-n, T(kLn2Hi), xc);  // exact
  const T p = n * T(kLn2Lo);
  const T r = r1 - p;
  const T rl = (r1 - r) - p;  // r + rl = r1 - p
  const T q = r * r * poly(r, kExpP);
  const T eh = r + q;  // e^r - 1 = eh + el
  const T el = ((r - eh) + q) + rl * (T(1) + r);
  const auto top = n > T(1023);  // 2^1024 is not a double: scale by 2^1023, then by 2
  const T s = pow2i(select(top, n - T(1), n));
  // |s - 1| >= |s eh| for every n (or s - 1 = 0), and s eh, s el are exact.
  T y = fast_sum3(s - T(1), s * eh, s * el);
  y = select(top, y * T(2), y);
  return select(nan | (x == T(0)), x, y);
}

namespace detail {
// Special values shared by the logarithms: log(±0) = -inf, log(x < 0) = NaN, log(inf) = inf,
// NaN stays NaN.
template <class T>
T log_specials(T x, T r) {
  r = select(x == T(kInf), x, r);
  r = select(x == T(0), T(-kInf), r);
  r = select((x < T(0)) | (x != x), T(kNaN), r);
  return r;
}
template <class T>
T log_sanitize(T x) {
  return select((x > T(0)) & (x < T(kInf)), x, T(1));
}
}  // namespace detail

// log x: x = 2^k (1 + f), 1 + f in [sqrt(1/2), sqrt(2)), log(1 + f) via s = f / (2 + f) and a
// degree-7 polynomial in s^2, then k ln2 added in two parts. Under 1 ulp.
template <class T>
T log(T x) {
  using namespace detail;
  const auto d = decompose(log_sanitize(x));
  const auto l = log1p_reduced(d.f);
  return log_specials(x, fast_sum3(d.k * T(kLn2Hi42), l.hi, fma(d.k, T(kLn2Lo42), l.lo)));
}

// log2 x = k + log(1 + f) / ln2, the product taken in extended precision. About 1 ulp.
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

namespace detail {
// log(1 + x + xl) for |xl| tiny next to x: u = 1 + x rounded, log u as for log, plus the
// rounding error of 1 + x (and xl) divided by u.
template <class T>
T log1p_dd(T x, T xl) {
  const T u = T(1) + x;
  const T us = log_sanitize(u);
  // Exact rounding error of 1 + x (the larger operand first), first-order correction c / u.
  const T c = (select(x < T(1), x - (u - T(1)), T(1) - (u - x)) + xl) / us;
  const auto d = decompose(us);
  const auto l = log1p_reduced(d.f);
  const T r = fast_sum3(d.k * T(kLn2Hi42), l.hi, fma(d.k, T(kLn2Lo42), l.lo + c));
  return select(x == T(0), x, log_specials(u, r));
}
}  // namespace detail

// log(1 + x): u = 1 + x rounded, log u as for log, plus the rounding error of 1 + x divided
// by u. About 1 ulp.
template <class T>
T log1p(T x) {
  return detail::log1p_dd(x, T(0));
}

}  // namespace numr::math::inline NUMR_MATH_ISA::libm

NUMR_MATH_EXACT_END
