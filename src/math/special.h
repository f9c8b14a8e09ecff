// The special functions (torch.special / scipy.special), written once over a number-like T
// as the formulas of elementwise.h are: the same text is the float64 reference, the CPU's
// SIMD kernels, the CUDA PTX and the WebGPU WGSL. Only + - * /, comparisons, select and
// the primitives of scalar_double.h are used; every branch is a select and every loop has
// a fixed trip count, so all lanes run the same instructions. The series and their
// constants are derived in scripts/special_coefficients.py (special_coefficients.h).
// Edge values follow PyTorch, else SciPy; docs/semantics.md lists the differences.
#pragma once

#include "math/namespace.h"
#include "math/scalar_double.h"
#include "math/special_coefficients.h"

namespace numr::math::inline NUMR_MATH_ISA {

namespace special {

inline constexpr double kPi = 3.141592653589793;
inline constexpr double kLogPi = 1.1447298858494002;
inline constexpr double kInf = __builtin_inf();

// sum c[i] x^i.
template <class T, int N>
T horner(const T& x, const double (&c)[N]) {
  T p = T(c[N - 1]);
  for (int i = N - 2; i >= 0; --i) p = p * x + T(c[i]);
  return p;
}

// 1 where v is an odd integer, from the fraction of v / 2 (exact for integral v).
template <class T>
auto is_odd(const T& v) {
  const T h = v * T(0.5);
  return h != floor(h);
}

// sin(pi x) and cos(pi x), reduced exactly to r = x - rint(x) in [-1/2, 1/2] first, so
// they are exact zeros at the integers (and half-integers) and accurate for any |x|.
template <class T>
struct SinCosPi {
  T sin, cos;
};
template <class T>
SinCosPi<T> sincospi(const T& x) {
  const T n = rint(x);
  const T r = x - n;
  const T t = T(kPi) * r;
  const auto odd = is_odd(n);
  // cos(pi r) = sin(pi (1/2 - |r|)): exactly 0 at the half-integers, where cos(t) is not.
  const T s = sin(t), c = sin(T(kPi) * (T(0.5) - fabs(r)));
  return {select(odd, -s, s), select(odd, -c, c)};
}

// gamma and lgamma for y >= 1/2 (other lanes give values the callers discard). Below 10,
// y = 2 + e + m (|e| <= 1/2, m = 0..8) or y = 1 + e: the Taylor series of lgamma(2 + e)
// and the product (y - 1) ... (y - m), or the factor 1 / y; shifting down adds no cancellation
// where lgamma vanishes (at 1 and 2). From 10 on, Stirling's series.
template <class T>
struct GammaParts {
  T log_g2e;   // lgamma(2 + e)
  T prod;      // (y - 1) ... (y - m)
  T near1;     // 1 where y < 3/2: lgamma(y) = lgamma(2 + e) - log(y)
  T big;       // 1 where y >= 10
  T stirling;  // the series sum B_2k / (2k (2k - 1) y^(2k - 1))
};
template <class T>
GammaParts<T> gamma_parts(const T& y) {
  const auto near1 = y < T(1.5);
  const auto big = y >= T(10);
  const T m = select(near1 | big, T(0), floor(y - T(1.5)));
  const T e = y - select(near1, T(1), m + T(2));
  T p = T(1);
  for (int k = 1; k <= 8; ++k) p = p * select(T(k) <= m, y - T(k), T(1));
  const T yi = T(1) / y;
  return {e * horner(e, special_coef::kLgammaAt2), p, select(near1, T(1), T(0)),
          select(big, T(1), T(0)), yi * horner(yi * yi, special_coef::kStirling)};
}
template <class T>
T lgamma_from_half(const T& y) {
  const GammaParts<T> g = gamma_parts(y);
  const T stirling = (y - T(0.5)) * log(y) - y + T(special_coef::kHalfLog2Pi) + g.stirling;
  const T shifted = g.log_g2e + select(g.near1 != T(0), -log(y), log(g.prod));
  return select(g.big != T(0), stirling, shifted);
}
// gamma(y) from 10 on as sqrt(2 pi) y^(y - 1/2) e^-y e^series, the power split in two
// halves around e^-y so no factor overflows before the result does.
template <class T>
T gamma_from_half(const T& y) {
  const GammaParts<T> g = gamma_parts(y);
  const T h = pow(y, y * T(0.5) - T(0.25));
  const T stirling = h * exp(-y) * h * (T(2.5066282746310002) * exp(g.stirling));
  const T shifted = g.prod * exp(g.log_g2e) / select(g.near1 != T(0), y, T(1));
  // inf * 0 past the overflow (y^(y/2) is inf where e^-y is 0) is the overflow's inf.
  const T large = select((stirling != stirling) & (y == y), T(kInf), stirling);
  return select(g.big != T(0), large, shifted);
}

// digamma(y) for y >= 1/2. Near its root x0 (|y - x0| < 0.3) the Taylor series about x0,
// with y - x0 formed from a float-exact high part so it keeps its relative accuracy in
// float; elsewhere the asymptotic series at z = y + 10 >= 10 less 1/y + ... + 1/(y + 9).
template <class T>
T digamma_from_half(const T& y) {
  const auto shift = y < T(10);
  T acc = T(0);
  for (int k = 0; k < 10; ++k) acc = acc + select(shift, T(1) / (y + T(k)), T(0));
  const T z = select(shift, y + T(10), y);
  const T zi = T(1) / z;
  const T zi2 = zi * zi;
  const T asym = log(z) - T(0.5) * zi - zi2 * horner(zi2, special_coef::kDigammaAsym);
  const T e = (y - T(special_coef::kDigammaRootHi)) - T(special_coef::kDigammaRootLo);
  const T taylor = T(special_coef::kDigammaAtRoot) + e * horner(e, special_coef::kDigammaNearRoot);
  return select(fabs(e) < T(0.3), taylor, asym - acc);
}

}  // namespace special

// ---- logistic family ----
// expit(x) = 1 / (1 + e^-x), the logistic sigmoid.
// With e = e^-|x|, as e / (1 + e) for x < 0, so it underflows gradually, never to 0 early.
template <class T>
T expit(T x) {
  const T e = exp(-fabs(x));
  return select(x < T(0), e, T(1)) / (T(1) + e);
}
// logit(x) = log(x / (1 - x)); 0 -> -inf, 1 -> inf, outside [0, 1] NaN. Near 1/2 as
// log1p((2x - 1) / (1 - x)) (2x - 1 exact), which keeps the relative accuracy near 0.
template <class T>
T logit(T x) {
  const T mid = log1p((T(2) * x - T(1)) / (T(1) - x));
  const T tails = log(x) - log1p(-x);
  return select((x >= T(0.25)) & (x <= T(0.75)), mid, tails);
}
// x log(y), 0 where x is 0 and y is not NaN (whatever y is, as PyTorch and SciPy).
template <class T>
T xlogy(T x, T y) {
  return select((x == T(0)) & (y == y), T(0), x * log(y));
}
// sin(pi x) / (pi x), 1 at 0.
template <class T>
T sinc(T x) {
  const T s = special::sincospi(x).sin;
  return select(x == T(0), T(1), s / (T(special::kPi) * x));
}

// ---- gamma family ----
// log|gamma(x)|. Below 1/2 by reflection, log(pi / |sin(pi x)|) - lgamma(1 - x); the poles
// (non-positive integers) and ±inf give inf.
template <class T>
T lgamma(T x) {
  const auto refl = x < T(0.5);
  const T y = select(refl, T(1) - x, x);
  const T core = special::lgamma_from_half(y);
  const T s = fabs(special::sincospi(x).sin);
  const T r = select(refl, T(special::kLogPi) - log(s) - core, core);
  return select(fabs(x) == T(special::kInf), T(special::kInf), r);
}
// gamma(x); below 1/2 by reflection, pi / (sin(pi x) gamma(1 - x)). Poles give inf (as
// SciPy), -inf gives NaN.
template <class T>
T gamma(T x) {
  const auto refl = x < T(0.5);
  const T core = special::gamma_from_half(select(refl, T(1) - x, x));
  const T r = select(refl, T(special::kPi) / (special::sincospi(x).sin * core), core);
  const T at_pole = select(x == T(-special::kInf), T(__builtin_nan("")), T(special::kInf));
  const T g = select(x == T(special::kInf), x, r);
  return select((x <= T(0)) & (x == floor(x)), at_pole, g);
}
// digamma(x). Below 1/2 by reflection, digamma(1 - x) - pi cot(pi x); 0 -> -inf,
// -0 -> inf, negative integers and -inf NaN (as PyTorch).
template <class T>
T digamma(T x) {
  const auto refl = x < T(0.5);
  const T y = select(refl, T(1) - x, x);
  const T core = special::digamma_from_half(y);
  const auto sc = special::sincospi(x);
  const T r = select(refl, core - T(special::kPi) * sc.cos / sc.sin, core);
  const auto neg_int = (x < T(0)) & (x == floor(x));
  // ±0: -1/x, the sign of the pole's side (the reduction above loses the zero's sign).
  return select(neg_int, T(__builtin_nan("")), select(x == T(0), -T(1) / x, r));
}
// The Hurwitz zeta function sum_{k>=0} (q + k)^-s: the first 12 terms, then the
// Euler-Maclaurin tail at z = q + 12. s = 1 -> inf, s < 1 NaN, q a non-positive integer
// -> inf, q < 0 with s not an integer NaN (as PyTorch and SciPy); q <= -12 (not an
// integer) NaN, where the fixed number of terms cannot reach the tail's range.
template <class T>
T zeta(T s, T q) {
  constexpr int kTerms = 12;
  const auto s_odd = special::is_odd(s);
  T sum = T(0);
  for (int k = 0; k < kTerms; ++k) {
    const T base = q + T(k);
    const T t = pow(fabs(base), -s);  // q < 0 only with integral s: the sign by hand
    sum = sum + select((base < T(0)) & s_odd, -t, t);
  }
  const T z = q + T(kTerms);
  const T zs = pow(z, -s);
  const T zi2 = T(1) / (z * z);
  T term = s * zs / z;  // B_2j/(2j)! s (s + 1) ... (s + 2j - 2) z^(-s - 2j + 1), j = 1
  T tail = z * zs / (s - T(1)) + T(0.5) * zs;
  int j = 0;
  for (const double b : special_coef::kZetaEulerMaclaurin) {
    tail = tail + T(b) * term;
    term = term * (s + T(2 * j + 1)) * (s + T(2 * j + 2)) * zi2;
    ++j;
  }
  const T nan = T(__builtin_nan(""));
  T r = sum + tail;
  r = select(z <= T(0), nan, r);
  r = select((q < T(0)) & (s != floor(s)), nan, r);
  r = select((q <= T(0)) & (q == floor(q)), T(special::kInf), r);
  r = select(q == T(special::kInf), T(0), r);
  r = select(s < T(1), nan, r);
  r = select(s == T(1), T(special::kInf), r);
  return select((s != s) | (q != q), s + q, r);
}
// polygamma(n, x) = (-1)^(n+1) n! zeta(n + 1, x) for n >= 1, digamma for n = 0; n is a
// non-negative integer (the front end checks). n! is an exact product up to 20.
template <class T>
T polygamma(T x, T n) {
  T fact = T(1);
  for (int k = 2; k <= 20; ++k) fact = fact * select(T(k) <= n, T(k), T(1));
  fact = select(n > T(20), exp(lgamma(n + T(1))), fact);
  const T v = fact * zeta(n + T(1), x);
  return select(n == T(0), digamma(x), select(special::is_odd(n), v, -v));
}
// beta(a, b) = gamma(a) gamma(b) / gamma(a + b): the gammas themselves while all three
// are finite (and gamma(a + b) nonzero), else from the logs and the signs. a or
// b a non-positive integer gives inf, NaN when a + b is one too (SciPy takes a limit there).
template <class T>
T beta(T a, T b) {
  const T c = a + b;
  const T ga = gamma(a), gb = gamma(b), gc = gamma(c);
  const T direct = ga * (gb / gc);
  const T m = exp(lgamma(a) + lgamma(b) - lgamma(c));
  const auto neg_a = (a < T(0)) & special::is_odd(floor(a));
  const auto neg_b = (b < T(0)) & special::is_odd(floor(b));
  const auto neg_c = (c < T(0)) & special::is_odd(floor(c));
  const T via_logs = select(neg_a ^ neg_b ^ neg_c, -m, m);
  const auto small = (ga - ga == T(0)) & (gb - gb == T(0)) & (gc - gc == T(0)) & (gc != T(0));
  const T r = select(small, direct, via_logs);
  const auto pole_a = (a <= T(0)) & (a == floor(a));
  const auto pole_b = (b <= T(0)) & (b == floor(b));
  const auto pole_c = (c <= T(0)) & (c == floor(c));
  const T at_pole = select(pole_c, T(__builtin_nan("")), T(special::kInf));
  return select(pole_a | pole_b, at_pole, r);
}

}  // namespace numr::math::inline NUMR_MATH_ISA
