// Exponentials and logarithms written once for both precisions: each template takes the
// precision's traits P (libm_core/precision.h) and a number-like T that computes in P::S
// (see device_libm.h and libm32/libm32.h for the operations T must offer). libm::exp and
// libm32::exp (and the rest) are the entry points; callers do not name this namespace.
// No branches on T values, loops have compile-time trip counts.
#pragma once

#include "math/libm32/scalar_float.h"
#include "math/libm_core/precision.h"
#include "math/namespace.h"
#include "math/scalar_double.h"

NUMR_MATH_EXACT_BEGIN

namespace numr::math::inline NUMR_MATH_ISA::libm_core {

// The scalar primitives of both precisions, so that T = double finds the double ones and
// T = float the float ones (vector and expression types bring theirs by argument-dependent
// lookup). Without the float ones a float would silently run the double fma.
using ::numr::math::NUMR_MATH_ISA::fabs;
using ::numr::math::NUMR_MATH_ISA::floor;
using ::numr::math::NUMR_MATH_ISA::fma;
using ::numr::math::NUMR_MATH_ISA::ilogb_normal;
using ::numr::math::NUMR_MATH_ISA::pow2i;
using ::numr::math::NUMR_MATH_ISA::rint;
using ::numr::math::NUMR_MATH_ISA::select;
using ::numr::math::NUMR_MATH_ISA::libm32::fabs;
using ::numr::math::NUMR_MATH_ISA::libm32::floor;
using ::numr::math::NUMR_MATH_ISA::libm32::fma;
using ::numr::math::NUMR_MATH_ISA::libm32::ilogb_normal;
using ::numr::math::NUMR_MATH_ISA::libm32::pow2i;
using ::numr::math::NUMR_MATH_ISA::libm32::rint;
using ::numr::math::NUMR_MATH_ISA::libm32::select;

// Horner evaluation of c[0] + c[1] x + ... + c[N-1] x^(N-1) with fused multiply-adds.
template <class T, class S, int N>
T poly(T x, const S (&c)[N]) {
  T p(c[N - 1]);
  for (int i = N - 2; i >= 0; --i) p = fma(p, x, T(c[i]));
  return p;
}

// x * 2^n for integral n from below the subnormals to past the largest finite value
// (double: [-1080, 1030], float: [-151, 129]) with one rounding (gradual underflow and
// overflow to infinity come out right): two factors keep each power of two in pow2i's range.
template <class P, class T>
T scale2(T x, T n) {
  using S = typename P::S;
  const T n1 = floor(n * T(S(0.5)));
  return x * pow2i(n1) * pow2i(n - n1);
}

// e^(x + xl), x within exp's clamp (not NaN), |xl| tiny next to 1. Reduction x = n ln2 + r
// with the first fma exact (P::exp_ln2_hi), |r| <= 0.35; e^r = 1 + r + r^2 P(r).
template <class P, class T>
T exp_core(T x, T xl) {
  using S = typename P::S;
  const T n = rint(x * T(P::log2e));
  T r = fma(-n, T(P::exp_ln2_hi), x);
  r = fma(-n, T(P::exp_ln2_lo), r) + xl;
  const T p = T(S(1)) + fma(r * r, poly(r, P::exp_p), r);
  return scale2<P>(p, n);
}

// x = 2^k * (1 + f) with 1 + f in [sqrt(1/2), sqrt(2)), for finite x > 0 (subnormals too).
template <class T>
struct Decomposed {
  T k, f;
};
template <class P, class T>
Decomposed<T> decompose(T x) {
  using S = typename P::S;
  const auto sub = x < T(P::sub_min);
  const T xs = select(sub, x * T(P::sub_scale), x);
  T e = ilogb_normal(xs);
  // xs * 2^-e in [1, 2); halving first keeps the power of two in pow2i's range.
  T m = (xs * T(S(0.5))) * pow2i(T(S(1)) - e);
  const auto big = m > T(P::sqrt2);
  m = select(big, m * T(S(0.5)), m);
  e = e + select(big, T(S(1)), T(S(0))) - select(sub, T(P::sub_shift), T(S(0)));
  return {e, m - T(S(1))};
}

// log(1 + f) = hi + lo for f in [sqrt(1/2) - 1, sqrt(2) - 1]: with s = f / (2 + f),
// log(1 + f) = 2 atanh(s) = f - f^2/2 + s (f^2/2 + R), R = z (2/3 + z R2(z)), z = s^2.
template <class T>
struct TwoPart {
  T hi, lo;
};
template <class P, class T>
TwoPart<T> log1p_reduced(T f) {
  using S = typename P::S;
  const T s = f / (T(S(2)) + f);
  const T z = s * s;
  const T R = z * fma(z, poly(z, P::log_r2), T(P::two_thirds));
  const T hf = T(S(0.5)) * f;
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

// e^x: x = n ln2 + r, |r| <= ln2/2, e^r from exp_core's polynomial, scaled by 2^n in two
// exact steps (gradual underflow, overflow to +inf).
template <class P, class T>
T exp(T x) {
  using S = typename P::S;
  const auto nan = x != x;
  T xc = select(x > T(P::exp_hi), T(P::exp_hi), select(x < T(P::exp_lo), T(P::exp_lo), x));
  xc = select(nan, T(S(0)), xc);
  return select(nan, x, exp_core<P>(xc, T(S(0))));
}

// 2^x: x = n + r exactly, |r| <= 1/2, 2^r = 1 + r Q(r).
template <class P, class T>
T exp2(T x) {
  using S = typename P::S;
  const auto nan = x != x;
  T xc = select(x > T(P::exp2_hi), T(P::exp2_hi), select(x < T(P::exp2_lo), T(P::exp2_lo), x));
  xc = select(nan, T(S(0)), xc);
  const T n = rint(xc);
  const T r = xc - n;
  return select(nan, x, scale2<P>(fma(r, poly(r, P::exp2_q), T(S(1))), n));
}

// e^x - 1: x = n ln2 + r as for exp, e^r - 1 = r + r^2 P(r) (relative-accurate for small r)
// kept as two parts, then (2^n - 1) + 2^n (e^r - 1) summed with one final rounding.
template <class P, class T>
T expm1(T x) {
  using S = typename P::S;
  const auto nan = x != x;
  T xc = select(x > T(P::exp_hi), T(P::exp_hi), select(x < T(P::expm1_lo), T(P::expm1_lo), x));
  xc = select(nan, T(S(0)), xc);
  const T n = rint(xc * T(P::log2e));
  const T r1 = fma(-n, T(P::exp_ln2_hi), xc);  // exact
  const T p = n * T(P::exp_ln2_lo);
  const T r = r1 - p;
  const T rl = (r1 - r) - p;  // r + rl = r1 - p
  const T q = r * r * poly(r, P::exp_p);
  const T eh = r + q;  // e^r - 1 = eh + el
  const T el = ((r - eh) + q) + rl * (T(S(1)) + r);
  // 2^(max_exp + 1) is not representable: scale by 2^max_exp, then by 2.
  const auto top = n > T(P::max_exp);
  const T s = pow2i(select(top, n - T(S(1)), n));
  // |s - 1| >= |s eh| for every n (or s - 1 = 0), and s eh, s el are exact.
  T y = fast_sum3(s - T(S(1)), s * eh, s * el);
  y = select(top, y * T(S(2)), y);
  return select(nan | (x == T(S(0))), x, y);
}

// Special values shared by the logarithms: log(±0) = -inf, log(x < 0) = NaN, log(inf) = inf,
// NaN stays NaN.
template <class P, class T>
T log_specials(T x, T r) {
  using S = typename P::S;
  r = select(x == T(P::inf), x, r);
  r = select(x == T(S(0)), T(-P::inf), r);
  r = select((x < T(S(0))) | (x != x), T(P::nan), r);
  return r;
}
template <class P, class T>
T log_sanitize(T x) {
  using S = typename P::S;
  return select((x > T(S(0))) & (x < T(P::inf)), x, T(S(1)));
}

// log(1 + x + xl) for |xl| tiny next to x: u = 1 + x rounded, log u as for log, plus the
// rounding error of 1 + x (and xl) divided by u.
template <class P, class T>
T log1p_dd(T x, T xl) {
  using S = typename P::S;
  const T u = T(S(1)) + x;
  const T us = log_sanitize<P>(u);
  // Exact rounding error of 1 + x (the larger operand first), first-order correction c / u.
  const T c = (select(x < T(S(1)), x - (u - T(S(1))), T(S(1)) - (u - x)) + xl) / us;
  const auto d = decompose<P>(us);
  const auto l = log1p_reduced<P>(d.f);
  const T r = fast_sum3(d.k * T(P::ln2_hi_k), l.hi, fma(d.k, T(P::ln2_lo_k), l.lo + c));
  return select(x == T(S(0)), x, log_specials<P>(u, r));
}

// log x: x = 2^k (1 + f), 1 + f in [sqrt(1/2), sqrt(2)), log(1 + f) via s = f / (2 + f) and
// a polynomial in s^2, then k ln2 added in two parts.
template <class P, class T>
T log(T x) {
  const auto d = decompose<P>(log_sanitize<P>(x));
  const auto l = log1p_reduced<P>(d.f);
  return log_specials<P>(x, fast_sum3(d.k * T(P::ln2_hi_k), l.hi, fma(d.k, T(P::ln2_lo_k), l.lo)));
}

// log2 x = k + log(1 + f) / ln2, the product taken in extended precision.
template <class P, class T>
T log2(T x) {
  const auto d = decompose<P>(log_sanitize<P>(x));
  const auto l = log1p_reduced<P>(d.f);
  const T p = l.hi * T(P::inv_ln2_hi);
  const T pe = fma(l.hi, T(P::inv_ln2_hi), -p);
  const T tail = pe + fma(l.lo, T(P::inv_ln2_hi), l.hi * T(P::inv_ln2_lo));
  return log_specials<P>(x, fast_sum3(d.k, p, tail));
}

// log(1 + x): log1p_dd with no tail.
template <class P, class T>
T log1p(T x) {
  using S = typename P::S;
  return libm_core::log1p_dd<P>(x, T(S(0)));
}

}  // namespace numr::math::inline NUMR_MATH_ISA::libm_core

NUMR_MATH_EXACT_END
