// The special functions (torch.special / scipy.special), written once over a number-like T
// as the formulas of elementwise.h are: the same text is the float64 reference, the CPU's
// SIMD kernels, the CUDA PTX and the WebGPU WGSL. Only + - * /, comparisons, select and
// the primitives of scalar_double.h are used; short branches are selects, and the long
// series, continued fractions and alternative paths go through math/control.h, which runs
// them only in the lanes that need them and only until they have converged. The series and their
// constants are derived in scripts/special_coefficients.py (special_coefficients.h).
// Edge values follow PyTorch, else SciPy; docs/semantics.md lists the differences.
#pragma once

#include <array>
#include <type_traits>

#include "math/bessel_coefficients.h"
#include "math/control.h"
#include "math/namespace.h"
#include "math/scalar_double.h"
#include "math/special_coefficients.h"

namespace numr::math::inline NUMR_MATH_ISA {

namespace special {

inline constexpr double kPi = 3.141592653589793;
inline constexpr double kLogPi = 1.1447298858494002;
inline constexpr double kInf = __builtin_inf();

// sum c[i] x^i, over the first n of c where given (a row of a zero-padded table).
template <class T, int N>
T horner(const T& x, const double (&c)[N], int n = N) {
  T p = T(c[n - 1]);
  for (int i = n - 2; i >= 0; --i) p = p * x + T(c[i]);
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
  const auto big = y >= T(10);
  std::array<T, 1> r{T(0)};
  compute_where(big, r, [&](std::array<T, 1>& v) {
    const T yi = T(1) / y;
    const T series = yi * horner(yi * yi, special_coef::kStirling);
    v[0] = (y - T(0.5)) * log(y) - y + T(special_coef::kHalfLog2Pi) + series;
  });
  compute_where(!big, r, [&](std::array<T, 1>& v) {
    const GammaParts<T> g = gamma_parts(y);
    v[0] = g.log_g2e + select(g.near1 != T(0), -log(y), log(g.prod));
  });
  return r[0];
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
  const T e = (y - T(special_coef::kDigammaRootHi)) - T(special_coef::kDigammaRootLo);
  const auto near_root = fabs(e) < T(0.3);
  std::array<T, 1> r{T(0)};
  compute_where(near_root, r, [&](std::array<T, 1>& v) {
    v[0] = T(special_coef::kDigammaAtRoot) + e * horner(e, special_coef::kDigammaNearRoot);
  });
  compute_where(!near_root, r, [&](std::array<T, 1>& v) {
    const auto shift = y < T(10);
    T acc = T(0);
    for (int k = 0; k < 10; ++k) acc = acc + select(shift, T(1) / (y + T(k)), T(0));
    const T z = select(shift, y + T(10), y);
    const T zi = T(1) / z;
    const T zi2 = zi * zi;
    v[0] = log(z) - T(0.5) * zi - zi2 * horner(zi2, special_coef::kDigammaAsym) - acc;
  });
  return r[0];
}

// ---- Bessel functions ----
inline constexpr double kEulerGamma = 0.5772156649015329;
inline constexpr double kFracSqrt1_2 = 0.7071067811865476;

// The Hankel asymptotic series of order nu (mu = 4 nu^2) at x: P - i Q with
// J = sqrt(2 / (pi x)) (P cos chi - Q sin chi), Y = sqrt(2 / (pi x)) (P sin chi + Q cos chi).
// Used from 20 on, where 24 terms lie below the double epsilon.
template <class T>
struct HankelPQ {
  T p, q;
};
template <class T>
HankelPQ<T> hankel_pq(const T& x, double mu) {
  T t = T(1), p = T(1), q = T(0);
  const T r = T(1) / (T(8) * x);
  for (int k = 1; k <= 24; ++k) {
    t = t * r * T((mu - double((2 * k - 1) * (2 * k - 1))) / k);
    const T signed_t = (k / 2) % 2 == 0 ? t : -t;  // (-1)^floor(k/2)
    if (k % 2 == 1)
      q = q + signed_t;
    else
      p = p + signed_t;
  }
  return {p, q};
}

// J0, J1, Y0 and Y1 of x >= 0. Below 20 from the midpoint rule over the integrals
// J_n(x) = (1/pi) int_0^pi cos(n t - x sin t) dt (a periodic integrand, so the error is the
// aliased J_128(x)), with Y0 and Y1 from their Neumann series over the same cosines and
// sines; from 20 on Hankel's asymptotic series, with cos(x - pi/4) = (cos x + sin x) / sqrt 2
// so the phase keeps the accuracy of x itself.
template <class T>
struct BesselJY {
  T j0, j1, y0, y1;
};
template <class T>
BesselJY<T> bessel_jy(const T& x) {
  using V4 = std::array<T, 4>;
  const auto big = x > T(20);
  V4 r{T(0), T(0), T(0), T(0)};
  compute_where(!big, r, [&](V4& v) {
    const T xs = select(big, T(1), x);
    T c0 = T(0), s1 = T(0), cy = T(0), sy = T(0);
    constexpr int kNodes = sizeof(special_coef::kBesselSin) / sizeof(double);
    for (int j = 0; j < kNodes; ++j) {
      const T a = xs * T(special_coef::kBesselSin[j]);
      const T c = cos(a), s = sin(a);
      c0 = c0 + c;
      s1 = s1 + T(special_coef::kBesselSin[j]) * s;
      cy = cy + T(special_coef::kBesselY0Weight[j]) * c;
      sy = sy + T(special_coef::kBesselY1Weight[j]) * s;
    }
    const T inv_n = T(1.0 / kNodes);
    const T j0s = c0 * inv_n, j1s = s1 * inv_n;
    const T l = log(xs * T(0.5)) + T(kEulerGamma);
    v = {j0s, j1s, T(2 / kPi) * l * j0s + cy * inv_n,
         T(2 / kPi) * (l * j1s - j0s / xs) + sy * inv_n};
  });
  compute_where(big, r, [&](V4& v) {
    const T xb = select(big, x, T(20));
    const HankelPQ<T> h0 = hankel_pq(xb, 0.0), h1 = hankel_pq(xb, 4.0);
    const T amp = sqrt(T(2 / kPi) / xb) * T(kFracSqrt1_2);
    const T c = cos(xb), s = sin(xb);
    const T cps = c + s, smc = s - c;  // sqrt 2 cos(x - pi/4), sqrt 2 sin(x - pi/4)
    v = {amp * (h0.p * cps - h0.q * smc), amp * (h1.p * smc + h1.q * cps),  // j1: x - 3 pi/4
         amp * (h0.p * smc + h0.q * cps), amp * (h1.q * smc - h1.p * cps)};
  });
  return {r[0], r[1], r[2], r[3]};
}

// Whether T computes in float, decided where the formula is built (not per lane): float
// and the float SIMD vectors by type, the code generators' values by their type (found by
// argument-dependent lookup); any other T (the tensor compositions) takes the double path.
template <class T>
bool in_float(const T& x) {
  if constexpr (std::is_floating_point_v<T>)
    return sizeof(T) == 4;
  else if constexpr (requires { typename T::scalar; })
    return sizeof(typename T::scalar) == 4;
  else if constexpr (requires { computes_in_float(x); })
    return computes_in_float(x);
  else
    return false;
}

// J_nu (nu = 0, 1) of x in [0, 6.5] in float (scripts/bessel_coefficients.py): near 0 a
// polynomial in x^2 (times x for J1), then about the zero j of each interval
// d J'(j) + d p(d), d = (x - hi) - lo (exact near j), J'(j) a float high part and the
// table's first entry its low part, so the error stays a few ulp of the amplitude.
template <int Nu, class T>
T bessel_j_small_float(const T& x) {
  namespace bc = bessel_coef;
  const T z = x * x;
  const T near0 = Nu == 0 ? horner(z, bc::kJ0Small) : x * horner(z, bc::kJ1Small);
  const double split = Nu == 0 ? 3.8 : 5.0;
  const auto second = x > T(split);
  const auto& c1 = Nu == 0 ? bc::kJ0Zero1 : bc::kJ1Zero1;
  const auto& c2 = Nu == 0 ? bc::kJ0Zero2 : bc::kJ1Zero2;
  static_assert(sizeof(c1) == sizeof(c2));
  const T hi = select(second, T(Nu == 0 ? bc::kJ0Zero2Hi : bc::kJ1Zero2Hi),
                      T(Nu == 0 ? bc::kJ0Zero1Hi : bc::kJ1Zero1Hi));
  const T lo = select(second, T(Nu == 0 ? bc::kJ0Zero2Lo : bc::kJ1Zero2Lo),
                      T(Nu == 0 ? bc::kJ0Zero1Lo : bc::kJ1Zero1Lo));
  const T slope = select(second, T(Nu == 0 ? bc::kJ0Slope2 : bc::kJ1Slope2),
                         T(Nu == 0 ? bc::kJ0Slope1 : bc::kJ1Slope1));
  const T d = (x - hi) - lo;
  constexpr int n = sizeof(c1) / sizeof(double);
  T p = select(second, T(c2[n - 1]), T(c1[n - 1]));
  for (int i = n - 2; i >= 0; --i) p = p * d + select(second, T(c2[i]), T(c1[i]));
  const T about_zero = d * slope + d * p;
  return select(x <= T(Nu == 0 ? 1.5 : 2.0), near0, about_zero);
}
// J_nu and Y_nu of x >= 6.5 in float: Hankel's form with P and Q fitted in t = 1 / x^2
// (scripts/bessel_coefficients.py) and the phase from cos x and sin x as in bessel_jy.
template <class T>
struct BesselPair {
  T j, y;
};
template <int Nu, class T>
BesselPair<T> bessel_hankel_float(const T& x) {
  namespace bc = bessel_coef;
  const T xi = T(1) / x;
  const T t = xi * xi;
  const T p = horner(t, Nu == 0 ? bc::kHankelP0 : bc::kHankelP1);
  const T q = horner(t, Nu == 0 ? bc::kHankelQ0 : bc::kHankelQ1) * xi;
  const T amp = sqrt(T(2 / kPi) * xi) * T(kFracSqrt1_2);
  const T c = cos(x), s = sin(x);
  // sqrt 2 cos(chi), sqrt 2 sin(chi), chi = x - pi/4 (order 0) or x - 3 pi/4 (order 1)
  const T cc = Nu == 0 ? c + s : s - c;
  const T sc = Nu == 0 ? s - c : -(c + s);
  return {amp * (p * cc - q * sc), amp * (p * sc + q * cc)};
}
inline constexpr double kBesselFloatSplit = 6.5;
// J_nu of x >= 0: in float from the fits above, in double bessel_jy.
template <int Nu, class T>
T bessel_j(const T& x) {
  if (!in_float(x)) {
    const BesselJY<T> b = bessel_jy(x);
    return Nu == 0 ? b.j0 : b.j1;
  }
  const auto big = x > T(kBesselFloatSplit);
  std::array<T, 1> r{bessel_j_small_float<Nu>(select(big, T(0), x))};
  compute_where(big, r, [&](std::array<T, 1>& v) {
    v[0] = bessel_hankel_float<Nu>(select(big, x, T(kBesselFloatSplit))).j;
  });
  return r[0];
}
// Y_nu of x > 0: in float bessel_jy's midpoint rule below 6.5 (only in the lanes there) and
// the fitted Hankel form above; in double bessel_jy.
template <int Nu, class T>
T bessel_y(const T& x) {
  if (!in_float(x)) {
    const BesselJY<T> b = bessel_jy(x);
    return Nu == 0 ? b.y0 : b.y1;
  }
  const auto big = x > T(kBesselFloatSplit);
  std::array<T, 1> r{T(0)};
  compute_where(!big, r, [&](std::array<T, 1>& v) {
    const BesselJY<T> b = bessel_jy(select(big, T(1), x));
    v[0] = Nu == 0 ? b.y0 : b.y1;
  });
  compute_where(big, r, [&](std::array<T, 1>& v) {
    v[0] = bessel_hankel_float<Nu>(select(big, x, T(kBesselFloatSplit))).y;
  });
  return r[0];
}

// I0 and I1 of x >= 0 as parts, where T computes in double (bessel_i_float below in float):
// their power series below 20 (all terms positive), and e^-x I0, e^-x I1 from the asymptotic
// series from 20 on.
template <class T>
struct BesselI {
  T i0s, i1s;  // series, unscaled, valid below 20
  T i0a, i1a;  // e^-x I_nu(x) from the asymptotic series, valid from 20 on
  T small;     // 1 where x <= 20
};
template <class T>
BesselI<T> bessel_i(const T& x) {
  using V4 = std::array<T, 4>;
  const auto small = x <= T(20);
  const T xs = select(small, x, T(20));
  const T q = xs * xs * T(0.25);
  const T eps = convergence_eps<T>();
  V4 sr{T(1), T(1), T(1), T(1)};  // the terms and sums of I0 and I1, to at most 48 terms
  iterate_until(
      48, sr,
      [&](const T& k, V4& v) {
        v[0] = v[0] * q * (T(1) / (k * k));
        v[1] = v[1] * q * (T(1) / (k * (k + T(1))));
        v[2] = v[2] + v[0];
        v[3] = v[3] + v[1];
      },
      [&](const V4& v) {
        const auto skip = !small;
        return skip | ((v[0] <= eps * v[2]) & (v[1] <= eps * v[3]));
      });
  std::array<T, 2> as{T(0), T(0)};
  compute_where(!small, as, [&](std::array<T, 2>& v) {
    const T xb = select(small, T(20), x);
    const T r = T(1) / (T(8) * xb);
    T a0 = T(1), a1 = T(1), u0 = T(1), u1 = T(1);
    for (int k = 1; k <= 24; ++k) {
      const double odd2 = double((2 * k - 1) * (2 * k - 1));
      u0 = u0 * r * T(odd2 / k);
      u1 = u1 * r * T((odd2 - 4.0) / k);
      a0 = a0 + u0;
      a1 = a1 + u1;
    }
    const T amp = T(1) / sqrt(T(2 * kPi) * xb);
    v = {amp * a0, amp * a1};
  });
  return {sr[2], T(0.5) * xs * sr[3], as[0], as[1], select(small, T(1), T(0))};
}

// I_nu (nu = 0, 1) of x >= 0 in float, or e^-x I_nu where Scaled, from fixed polynomials
// (scripts/bessel_coefficients.py), each interval only in the lanes there. Unscaled up to 2
// c0 + w, w = z r(z) (and x c0 + x w for I1), z = x^2. Up to 8 e^-x I_nu about the centre c
// of [0, 1], (1, 3] or (3, 8], x - c exact in float (I1's first row is e^-x I1 / x); I_nu is
// that times e^x. Beyond e^-x I_nu sqrt(x) in 1/x, over sqrt(x) (not times sqrt(1/x), which
// flushes to 0 for x past 1e38), times e^x whole below 88 and in two halves above, so the
// product overflows only where I_nu does. The constant terms are float hi + lo.
template <int Nu, bool Scaled, class T>
T bessel_i_float(const T& x) {
  namespace bc = bessel_coef;
  using V1 = std::array<T, 1>;
  V1 r{T(0)};
  const auto near = x <= T(8);
  if constexpr (!Scaled) {
    const auto low = x <= T(2);
    compute_where(low, r, [&](V1& v) {
      const T xs = select(low, x, T(1));
      const T z = xs * xs;
      const auto& c = Nu == 0 ? bc::kI0Low : bc::kI1Low;
      constexpr int n = sizeof(c) / sizeof(double);
      T p = T(c[n - 1]);
      for (int i = n - 2; i >= 1; --i) p = p * z + T(c[i]);
      const T w = z * p;
      v[0] = Nu == 0 ? T(1) + w : xs * T(0.5) + xs * w;
    });
  }
  const auto mid = Scaled ? near : (near & (x > T(2)));
  compute_where(mid, r, [&](V1& v) {
    const T xm = select(mid, x, T(2));
    const auto first = xm <= T(1), third = xm > T(3);
    auto row = [&](const double(&c)[3]) {
      return select(third, T(c[2]), select(first, T(c[0]), T(c[1])));
    };
    const auto& c = Nu == 0 ? bc::kI0Near : bc::kI1Near;
    constexpr int n = sizeof(c[0]) / sizeof(double);
    const T d = xm - row(bc::kINearCentre);
    T p = select(third, T(c[2][n - 1]), select(first, T(c[0][n - 1]), T(c[1][n - 1])));
    for (int i = n - 2; i >= 0; --i)
      p = p * d + select(third, T(c[2][i]), select(first, T(c[0][i]), T(c[1][i])));
    T g = row(Nu == 0 ? bc::kI0NearHi : bc::kI1NearHi) + p;
    if constexpr (Nu == 1) g = g * select(first, xm, T(1));
    v[0] = Scaled ? g : g * exp(xm);
  });
  // NaN takes this path.
  compute_where(!near, r, [&](V1& v) {
    const T xb = select(near, T(9), x);
    const T g = T(Nu == 0 ? bc::kI0LargeHi : bc::kI1LargeHi) +
                horner(T(1) / xb, Nu == 0 ? bc::kI0Large : bc::kI1Large);
    const T ie = g / sqrt(xb);
    if constexpr (Scaled) {
      v[0] = ie;
    } else {
      const auto whole = xb < T(88);
      const T e = exp(select(whole, xb, xb * T(0.5)));
      const T once = ie * e;
      v[0] = select(whole, once, once * e);  // NaN at inf (0 inf): the callers give inf there
    }
  });
  return r[0];
}

// K0 and K1 of x > 0: below 1 their series about 0 (with I0 and I1's), from 1 to 20 the
// trapezoid rule of int_0^inf e^(-x cosh t) cosh(nu t) dt (the integrand decays doubly
// exponentially, so the rule converges geometrically), from 20 on the asymptotic series.
template <class T>
struct BesselK {
  T k0, k1;
};
template <class T>
BesselK<T> bessel_k(const T& x) {
  using V2 = std::array<T, 2>;
  const auto small = x < T(1);
  const auto big = x > T(20);
  V2 r{T(0), T(0)};
  // Series: K0 = -(log(x/2) + gamma) I0 + sum_k H_k q^k / k!^2, q = x^2 / 4, and
  // K1 = 1/x + log(x/2) I1 - (x/4) sum_k (H_k + H_(k+1) - 2 gamma) q^k / (k! (k+1)!).
  compute_where(small, r, [&](V2& v) {
    const T xs = select(small, x, T(1));
    const T q = xs * xs * T(0.25);
    T t0 = T(1), t1 = T(1), i0 = T(1), i1 = T(1), h0 = T(0), h1 = T(1 - 2 * kEulerGamma);
    double hk = 0;
    for (int k = 1; k <= 20; ++k) {
      hk += 1.0 / k;
      t0 = t0 * q * T(1.0 / (double(k) * k));
      t1 = t1 * q * T(1.0 / (double(k) * (k + 1)));
      i0 = i0 + t0;
      i1 = i1 + t1;
      h0 = h0 + T(hk) * t0;
      h1 = h1 + T(2 * hk + 1.0 / (k + 1) - 2 * kEulerGamma) * t1;
    }
    const T lx = log(xs * T(0.5));
    v = {h0 - (lx + T(kEulerGamma)) * i0, T(1) / xs + lx * T(0.5) * xs * i1 - T(0.25) * xs * h1};
  });
  // Trapezoid, step 3/20.
  const auto mid = !(small | big);
  compute_where(mid, r, [&](V2& v) {
    const T xm = select(mid, x, T(2));
    T m0 = T(0.5), m1 = T(0.5);
    for (const double c : special_coef::kBesselKNode) {
      const T e = exp(-xm * T(c));
      m0 = m0 + e;
      m1 = m1 + e * T(1 + c);
    }
    const T em = exp(-xm) * T(0.15);
    v = {em * m0, em * m1};
  });
  // Asymptotic: sqrt(pi / (2x)) e^-x sum_k a_k(nu) / x^k.
  compute_where(big, r, [&](V2& v) {
    const T xb = select(big, x, T(20));
    const T rb = T(1) / (T(8) * xb);
    T a0 = T(1), a1 = T(1), u0 = T(1), u1 = T(1);
    for (int k = 1; k <= 24; ++k) {
      const double odd2 = double((2 * k - 1) * (2 * k - 1));
      u0 = u0 * rb * T(-odd2 / k);
      u1 = u1 * rb * T((4.0 - odd2) / k);
      a0 = a0 + u0;
      a1 = a1 + u1;
    }
    const T ea = sqrt(T(kPi * 0.5) / xb) * exp(-xb);
    v = {ea * a0, ea * a1};
  });
  return {r[0], r[1]};
}

// K_nu (nu = 0, 1) of x > 0 in float (scripts/bessel_coefficients.py): up to 1 the series'
// form, -log(x/2) I0 + a0(x^2) and 1/x + x (log(x/2) i1(x^2) + a1(x^2)); beyond e^-x / sqrt(x)
// times a polynomial in 1/x - 1/2, only in the lanes there. In double bessel_k.
template <int Nu, class T>
T bessel_k_nu(const T& x) {
  namespace bc = bessel_coef;
  if (!in_float(x)) {
    const BesselK<T> b = bessel_k(x);
    return Nu == 0 ? b.k0 : b.k1;
  }
  const auto big = x > T(1);
  const T xs = select(big, T(1), x);
  const T z = xs * xs;
  const T l = log(xs * T(0.5));
  std::array<T, 1> r{Nu == 0 ? horner(z, bc::kK0Small) - l * horner(z, bc::kI0Small)
                             : T(1) / xs +
                                   xs * (l * horner(z, bc::kI1Small) + horner(z, bc::kK1Small))};
  compute_where(big, r, [&](std::array<T, 1>& v) {
    const T xi = T(1) / select(big, x, T(2));
    const T c = horner(xi - T(0.5), Nu == 0 ? bc::kK0Large : bc::kK1Large);
    v[0] = exp(-select(big, x, T(2))) * sqrt(xi) * c;
  });
  return r[0];
}

// ---- complete elliptic integrals ----
// The arithmetic-geometric mean of 1 and sqrt(m1), m1 = 1 - m given apart so it keeps its
// accuracy near m = 1: K = pi / (2 AGM) and sum_n 2^(n-1) c_n^2, with c_0^2 = m and
// c_(n+1) = c_n^2 / (4 a_(n+1)) (no cancellation of a_n - b_n), so E = K (1 - sum). It
// converges quadratically; 18 steps reach m1 = 1e-308.
template <class T>
struct Agm {
  T k, sum;
};
template <class T>
Agm<T> ellip_agm(const T& m, const T& m1) {
  T a = T(1), b = sqrt(m1), c2 = m, sum = m * T(0.5), w = T(1);
  for (int n = 0; n < 18; ++n) {
    const T a1 = (a + b) * T(0.5);
    b = sqrt(a * b);
    const T c = c2 / (T(4) * a1);
    c2 = c * c;
    sum = sum + w * c2;
    w = w * T(2);
    a = a1;
  }
  return {T(kPi * 0.5) / a, sum};
}
// K(m) and E(m) for m < 1. Negative m through K(m) = K(m') / sqrt(1 - m),
// E(m) = E(m') sqrt(1 - m), m' = -m / (1 - m) in [0, 1). Above 1/2, where 1 - sum cancels,
// E from Legendre's relation: E(m) = (pi/2 + K(m) K(m1) sum(m1)) / K(m1).
template <class T>
struct Elliptic {
  T k, e;
};
template <class T>
Elliptic<T> ellip_ke(const T& m) {
  const auto neg = m < T(0);
  const T d = T(1) - m;
  const T mp = select(neg, -m / d, m), m1 = select(neg, T(1) / d, d);
  const Agm<T> p = ellip_agm(mp, m1), q = ellip_agm(m1, mp);
  const T direct = p.k * (T(1) - p.sum);
  const T legendre = (T(kPi * 0.5) + p.k * q.k * q.sum) / q.k;
  const T e = select(mp > T(0.5), legendre, direct);
  const T s = sqrt(d);
  return {select(neg, p.k / s, p.k), select(neg, e * s, e)};
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
  std::array<T, 1> r{core};
  compute_where(refl, r, [&](std::array<T, 1>& v) {
    const T s = fabs(special::sincospi(x).sin);
    v[0] = T(special::kLogPi) - log(s) - core;
  });
  return select(fabs(x) == T(special::kInf), T(special::kInf), r[0]);
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
  std::array<T, 1> rr{core};
  compute_where(refl, rr, [&](std::array<T, 1>& v) {
    const auto sc = special::sincospi(x);
    v[0] = core - T(special::kPi) * sc.cos / sc.sin;
  });
  const T r = rr[0];
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

// ---- Bessel functions (as SciPy's j0 ... k1e and torch.special) ----
// J0 is even and J1 odd; both vanish at ±inf.
template <class T>
T bessel_j0(T x) {
  const T ax = fabs(x);
  return select(ax == T(special::kInf), T(0), special::bessel_j<0>(ax));
}
template <class T>
T bessel_j1(T x) {
  const T ax = fabs(x);
  const T r = special::bessel_j<1>(ax);
  return select(ax == T(special::kInf), T(0), select(x < T(0), -r, r));
}
// Y0 and Y1: -inf at 0, NaN for x < 0, 0 at inf.
template <class T>
T bessel_y0(T x) {
  const T r = select(x == T(0), -T(special::kInf), special::bessel_y<0>(x));
  return select(x < T(0), T(__builtin_nan("")), select(x == T(special::kInf), T(0), r));
}
template <class T>
T bessel_y1(T x) {
  const T r = select(x == T(0), -T(special::kInf), special::bessel_y<1>(x));
  return select(x < T(0), T(__builtin_nan("")), select(x == T(special::kInf), T(0), r));
}
// I0 (even) and I1 (odd), and e^-|x| times each; e^|x| is applied in two halves so the
// product overflows only where the result does.
template <class T>
T bessel_i0(T x) {
  const T ax = fabs(x);
  if (special::in_float(ax))
    return select(ax == T(special::kInf), ax, special::bessel_i_float<0, false>(ax));
  const special::BesselI<T> b = special::bessel_i(ax);
  const T h = exp(ax * T(0.5));
  const T large = select(ax == T(special::kInf), ax, b.i0a * h * h);
  return select(b.small != T(0), b.i0s, large);
}
template <class T>
T bessel_i0e(T x) {
  const T ax = fabs(x);
  if (special::in_float(ax))
    return select(ax == T(special::kInf), T(0), special::bessel_i_float<0, true>(ax));
  const special::BesselI<T> b = special::bessel_i(ax);
  return select(b.small != T(0), b.i0s * exp(-ax), select(ax == T(special::kInf), T(0), b.i0a));
}
template <class T>
T bessel_i1(T x) {
  const T ax = fabs(x);
  if (special::in_float(ax)) {
    const T r = select(ax == T(special::kInf), ax, special::bessel_i_float<1, false>(ax));
    return select(x < T(0), -r, r);
  }
  const special::BesselI<T> b = special::bessel_i(ax);
  const T h = exp(ax * T(0.5));
  const T large = select(ax == T(special::kInf), ax, b.i1a * h * h);
  const T r = select(b.small != T(0), b.i1s, large);
  return select(x < T(0), -r, r);
}
template <class T>
T bessel_i1e(T x) {
  const T ax = fabs(x);
  if (special::in_float(ax)) {
    const T r = select(ax == T(special::kInf), T(0), special::bessel_i_float<1, true>(ax));
    return select(x < T(0), -r, r);
  }
  const special::BesselI<T> b = special::bessel_i(ax);
  const T r =
      select(b.small != T(0), b.i1s * exp(-ax), select(ax == T(special::kInf), T(0), b.i1a));
  return select(x < T(0), -r, r);
}
// K0 and K1: inf at 0, NaN for x < 0, 0 at inf.
template <class T>
T bessel_k0(T x) {
  const T r = select(x == T(0), T(special::kInf), special::bessel_k_nu<0>(x));
  return select(x < T(0), T(__builtin_nan("")), select(x == T(special::kInf), T(0), r));
}
template <class T>
T bessel_k1(T x) {
  const T r = select(x == T(0), T(special::kInf), special::bessel_k_nu<1>(x));
  return select(x < T(0), T(__builtin_nan("")), select(x == T(special::kInf), T(0), r));
}

// ---- incomplete gamma and beta (regularized) ----
namespace special {

// The most steps of a series or continued fraction: enough for a (and b) up to a few
// hundred near the mean (docs/semantics.md); larger a there takes Temme's expansion.
inline constexpr int kIncompleteTerms = 256;

// log(1 + t) - t, for |t| < 0.3 from its series (the difference cancels there).
template <class T>
T log1pmx_series(const T& t) {
  T p = T(0);
  for (int k = 32; k >= 2; --k) p = p * t + T(((k % 2 == 0) ? -1.0 : 1.0) / k);
  return p * t * t;
}
template <class T>
T log1pmx(const T& t) {
  return select(fabs(t) < T(0.3), log1pmx_series(t), log1p(t) - t);
}
// x^a e^-x / gamma(a) for a > 0, x > 0: the factors themselves while they are finite and
// not zero; else from 10 on as sqrt(a / 2 pi) e^(a log1pmx((x - a) / a) - stirling(a))
// (gamma(a) by Stirling, and x - a exact near a; log(x / a) farther off), below 10 from the
// logs.
template <class T>
T gammainc_prefactor(const T& a, const T& x) {
  const T direct = pow(x, a) * exp(-x) / gamma(a);
  const T ab = select(a >= T(10), a, T(10));
  const T ai = T(1) / ab;
  const T stirling = ai * horner(ai * ai, special_coef::kStirling);
  const T t = (x - ab) * ai;
  const T lt = select(fabs(t) < T(0.5), ab * log1pmx(t), ab * log(x * ai) + (ab - x));
  const T large = sqrt(ab * T(0.5 / kPi)) * exp(lt - stirling);
  const T via_logs = select(a >= T(10), large, exp(a * log(x) - x - lgamma(a)));
  return select((direct - direct == T(0)) & (direct != T(0)), direct, via_logs);
}
template <class T>
struct GammaInc {
  T p, q;
};
// Temme's uniform expansion for large a, given l = eta^2 / 2 = lambda - 1 - log(lambda),
// lambda = x / a: Q = erfc(z) / 2 + r, P = erfc(-z) / 2 - r with z = sign(x - a) sqrt(w),
// w = a l, r = e^-w / sqrt(2 pi a) sum_k C_k(eta) a^-k
// (scripts/gammainc_temme_coefficients.py).
template <class T>
GammaInc<T> gammainc_temme(const T& a, const T& x, const T& l) {
  const T ai = T(1) / a;
  const T w = a * l;
  const T eta = select(x < a, -sqrt(T(2) * l), sqrt(T(2) * l));
  const int k_terms = int(sizeof(special_coef::kGammaincTemmeTerms) / sizeof(int));
  T s = T(0);
  for (int k = k_terms - 1; k >= 0; --k)
    s = s * ai + horner(eta, special_coef::kGammaincTemme[k], special_coef::kGammaincTemmeTerms[k]);
  const T r = exp(-w) * sqrt(ai * T(0.5 / kPi)) * s;
  // erfc(|z|) once; erfc(-|z|) = 2 - erfc(|z|) loses nothing (it lies in [1, 2]).
  const T e = erfc(sqrt(w));
  const T e_neg = T(2) - e;
  return {T(0.5) * select(x < a, e, e_neg) - r, T(0.5) * select(x < a, e_neg, e) + r};
}
// P(a, x) and Q(a, x) for a > 0, x > 0: for large a near x = a, Temme's expansion; else
// below x = a + 1 the series P = x^a e^-x / gamma(a + 1) sum_n x^n / ((a + 1) ... (a + n)),
// above Legendre's continued fraction for Q; the other one as the complement. Each series
// and the fraction runs only in the lanes that take it, until it has converged
// (math/control.h), at most kIncompleteTerms steps.
template <class T>
GammaInc<T> gammainc_pq(const T& a, const T& x) {
  using V2 = std::array<T, 2>;
  const T pre = gammainc_prefactor(a, x);
  const T eps = convergence_eps<T>();
  const auto series = x < a + T(1);
  const auto small_a = (a <= T(1)) & series;
  // Temme's expansion where its table holds, |eta| <= kGammaincTemmeMaxEta (within
  // |lambda - 1| < 0.3, where log1pmx is its series).
  const T u = (x - a) / a;
  const T l = -log1pmx_series(u);
  const double max_eta = special_coef::kGammaincTemmeMaxEta;
  const auto temme = (a >= T(special_coef::kGammaincTemmeMinA)) & (fabs(u) < T(0.3)) &
                     (l <= T(0.5 * max_eta * max_eta));
  const auto skip_series = temme | !series, skip_cf = temme | !(x >= a + T(1));
  const auto skip_tail = temme | !small_a;

  V2 s{T(1), T(1)};  // the series' term and sum
  iterate_until(
      kIncompleteTerms, s,
      [&](const T& n, V2& v) {
        v[0] = v[0] * x / (a + n);
        v[1] = v[1] + v[0];
      },
      [&](const V2& v) { return skip_series | (v[0] <= eps * v[1]); });
  const T ps = pre / a * s[1];
  // Q = pre / (x + 1 - a - 1 (1 - a) / (x + 3 - a - 2 (2 - a) / (x + 5 - a - ...))) =
  // pre / (b_0 + a_1 / (b_1 + a_2 / ...)). Its depth per lane from the modified Lentz
  // recurrence (f = b_0, then C = b_n + a_n / C, D = 1 / (b_n + a_n D), f = f C D, until C D
  // is 1 to within a few ulp; tiny stands in for a zero C or D), then the fraction summed
  // from a quarter deeper than that up (steadier than the forward recurrence's product).
  const T tiny = T(1e-30);
  const T b0 = x + T(1) - a;
  std::array<T, 4> cf{select(b0 == T(0), tiny, b0), T(0), T(0), T(0)};  // C, D, C D, n
  iterate_until(
      kIncompleteTerms, cf,
      [&](const T& n, std::array<T, 4>& v) {
        const T an = -n * (n - a), bn = x + (T(2) * n + T(1)) - a;
        const T d = bn + an * v[1];
        const T c = bn + an / v[0];
        v[0] = select(c == T(0), tiny, c);
        v[1] = T(1) / select(d == T(0), tiny, d);
        v[2] = v[0] * v[1];
        v[3] = n;
      },
      [&](const std::array<T, 4>& v) { return skip_cf | (fabs(v[2] - T(1)) <= T(8) * eps); });
  const T deeper = floor(cf[3] * T(1.25)) + T(4);
  const T depth = select(deeper < T(kIncompleteTerms), deeper, T(kIncompleteTerms));
  V2 back{x + (T(2) * depth + T(1)) - a, depth};  // the fraction's tail from depth i, and i
  iterate_until(
      kIncompleteTerms, back,
      [&](const T&, V2& v) {
        const T i = v[1];
        v[0] = x + (T(2) * i - T(1)) - a - i * (i - a) / v[0];
        v[1] = i - T(1);
      },
      [&](const V2& v) { return skip_cf | (v[1] < T(1)); });
  const T qc = pre * (T(1) / back[0]);
  // Q for a <= 1 in the series' range, where 1 - P cancels: with g = x^a / gamma(a + 1),
  // Q = -expm1(log g) + g a sum_(n>=1) (-1)^(n+1) x^n / (n! (a + n)).
  const auto low = a <= T(0.5);
  const T e = select(low, a, a - T(1));  // lgamma(1 + a) = lgamma(2 + e) [- log1p(a)]
  const T lg1p = e * horner(e, special_coef::kLgammaAt2) - select(low, log1p(a), T(0));
  const T lg = a * log(x) - lg1p;
  std::array<T, 3> tl{-T(1), T(0), T(1)};  // (-1)^(n+1) x^n / n!, the sum, its last term
  iterate_until(
      kIncompleteTerms, tl,
      [&](const T& n, std::array<T, 3>& v) {
        v[0] = -(v[0] * x * (T(1) / n));
        v[2] = v[0] / (a + n);
        v[1] = v[1] + v[2];
      },
      [&](const std::array<T, 3>& v) { return skip_tail | (fabs(v[2]) <= eps * fabs(v[1])); });
  const T qs = -expm1(lg) + exp(lg) * a * tl[1];
  V2 tm{T(0), T(0)};
  compute_where(temme, tm, [&](V2& v) {
    const GammaInc<T> g = gammainc_temme(a, x, l);
    v = {g.p, g.q};
  });
  return {select(temme, tm[0], select(series, ps, T(1) - qc)),
          select(temme, tm[1], select(small_a, qs, select(series, T(1) - ps, qc)))};
}
// The domain's edges: NaN outside a > 0, x >= 0 (and for NaN), 0 at x = 0, 1 at x = inf
// and at a = 0 (lower; the upper mirrored).
template <class T>
T gammainc_edges(const T& a, const T& x, const T& r, bool upper) {
  const T lo = T(upper ? 1 : 0), hi = T(upper ? 0 : 1);
  T v = select(x == T(0), lo, select(x == T(kInf), hi, r));
  v = select(a == T(kInf), select(x == T(kInf), T(__builtin_nan("")), lo), v);
  v = select(a == T(0), hi, v);  // the limit a -> 0 for x > 0, as SciPy
  const auto valid = ((a > T(0)) | ((a == T(0)) & (x > T(0)))) & (x >= T(0));
  return select(valid, v, T(__builtin_nan("")));
}

// I_x(a, b) for a, b > 0 and 0 < x < 1 below the mean-like split x < (a + 1) / (a + b + 2),
// where its continued fraction converges fast; the callers mirror the other side.
template <class T>
T betainc_cf(const T& a, const T& b, const T& x, const T& y) {
  // x^a y^b / (a B(a, b)), y = 1 - x. With a, b >= 10, B by Stirling's series and
  // x^a y^b (a + b)^(a + b) / (a^a b^b) = e^(a log1pmx(l / a) + b log1pmx(-l / b)),
  // l = (a + b) x - a (the linear terms cancel), so nothing large is exponentiated near
  // the peak. Else the factors while finite and not zero, else from the logs.
  const auto big = (a >= T(10)) & (b >= T(10));
  const T ab = select(big, a, T(10)), bb = select(big, b, T(10)), cb = ab + bb;
  const T l = cb * x - ab;
  const T ai = T(1) / ab, bi = T(1) / bb, ci = T(1) / cb;
  const T stirling = ai * horner(ai * ai, special_coef::kStirling) +
                     bi * horner(bi * bi, special_coef::kStirling) -
                     ci * horner(ci * ci, special_coef::kStirling);
  const T power = ab * log1pmx(l * ai) + bb * log1pmx(-l * bi);
  const T large = exp(power - stirling) * sqrt(ab * bb * ci * T(0.5 / kPi)) * ai;
  const T direct = pow(x, a) * pow(y, b) / (a * beta(a, b));
  const T lbeta = lgamma(a) + lgamma(b) - lgamma(a + b);
  const T via_logs = exp(a * log(x) + b * log(y) - log(a) - lbeta);
  const T fallback = select((direct - direct == T(0)) & (direct != T(0)), direct, via_logs);
  const T pre = select(big, large, fallback);
  // 1 / (1 + d_1 / (1 + d_2 / (1 + ...))), d_2m = m (b - m) x / ((a + 2m - 1)(a + 2m)),
  // d_(2m+1) = -(a + m)(a + b + m) x / ((a + 2m)(a + 2m + 1)). Its depth per lane from the
  // modified Lentz recurrence over pairs of terms (as in gammainc_pq), then summed from a
  // quarter deeper than that up.
  const auto d_odd = [&](const T& m) {  // d_(2m+1)
    return -(a + m) * (a + b + m) * x / ((a + T(2) * m) * (a + T(2) * m + T(1)));
  };
  const auto d_even = [&](const T& m) {  // d_2m
    return m * (b - m) * x / ((a + T(2) * m - T(1)) * (a + T(2) * m));
  };
  const T tiny = T(1e-30), eps = convergence_eps<T>();
  const auto skip = !((x > T(0)) & (x < T(1)) & (a > T(0)) & (b > T(0)));
  std::array<T, 4> cf{T(1), T(0), T(0), T(0)};  // C, D, the pair's C D, m
  iterate_until(
      kIncompleteTerms, cf,
      [&](const T& m, std::array<T, 4>& v) {
        T prod = T(1);
        for (int k = 0; k < 2; ++k) {
          const T dn = k == 0 ? d_odd(m - T(1)) : d_even(m);
          const T d = T(1) + dn * v[1];
          const T c = T(1) + dn / v[0];
          v[0] = select(c == T(0), tiny, c);
          v[1] = T(1) / select(d == T(0), tiny, d);
          prod = prod * (v[0] * v[1]);
        }
        v[2] = prod;
        v[3] = m;
      },
      [&](const std::array<T, 4>& v) { return skip | (fabs(v[2] - T(1)) <= T(8) * eps); });
  const T deeper = floor(cf[3] * T(1.25)) + T(4);
  const T depth = select(deeper < T(kIncompleteTerms), deeper, T(kIncompleteTerms));
  std::array<T, 2> back{T(1), depth};  // the fraction's tail from depth m, and m
  iterate_until(
      kIncompleteTerms, back,
      [&](const T&, std::array<T, 2>& v) {
        const T tm = v[1], m2 = T(2) * tm;
        const T odd = -(a + tm) * (a + b + tm) * x / ((a + m2) * (a + m2 + T(1)));
        const T t = T(1) + odd / v[0];
        const T even = tm * (b - tm) * x / ((a + m2 - T(1)) * (a + m2));
        v[0] = T(1) + even / t;
        v[1] = tm - T(1);
      },
      [&](const std::array<T, 2>& v) { return skip | (v[1] < T(1)); });
  const T d1 = -(a + b) * x / (a + T(1));
  const T h = T(1) / (T(1) + d1 / back[0]);
  return pre * h;
}

}  // namespace special

// gammainc(a, x) = P(a, x) = gamma(a, x)_lower / gamma(a); gammaincc = Q = 1 - P. NaN
// outside a >= 0, x >= 0 and at a = x = 0; P(0, x) = 1, P(inf, x) = 0 for finite x.
template <class T>
T gammainc(T a, T x) {
  return special::gammainc_edges(a, x, special::gammainc_pq(a, x).p, false);
}
template <class T>
T gammaincc(T a, T x) {
  return special::gammainc_edges(a, x, special::gammainc_pq(a, x).q, true);
}
// betainc(a, b, x) = I_x(a, b) = int_0^x t^(a-1) (1-t)^(b-1) dt / B(a, b). Above the split
// as 1 - I_(1-x)(b, a). NaN outside a > 0, b > 0, 0 <= x <= 1.
template <class T>
T betainc(T a, T b, T x) {
  const auto swap = x > (a + T(1)) / (a + b + T(2));
  const T y = T(1) - x;
  const T i = special::betainc_cf(select(swap, b, a), select(swap, a, b), select(swap, y, x),
                                  select(swap, x, y));
  T r = select(swap, T(1) - i, i);
  r = select(x == T(0), T(0), select(x == T(1), T(1), r));
  return select((a > T(0)) & (b > T(0)) & (x >= T(0)) & (x <= T(1)), r, T(__builtin_nan("")));
}

// ---- complete elliptic integrals, parameter m (as SciPy's ellipk, ellipe) ----
// K(m) = int_0^(pi/2) (1 - m sin^2 t)^(-1/2) dt: inf at m = 1, 0 at -inf, NaN above 1.
template <class T>
T ellipk(T m) {
  const T r = select(m == T(1), T(special::kInf), special::ellip_ke(m).k);
  return select(m > T(1), T(__builtin_nan("")), select(m == -T(special::kInf), T(0), r));
}
// E(m) = int_0^(pi/2) (1 - m sin^2 t)^(1/2) dt: 1 at m = 1, inf at -inf, NaN above 1.
template <class T>
T ellipe(T m) {
  const T r = select(m == T(1), T(1), special::ellip_ke(m).e);
  return select(m > T(1), T(__builtin_nan("")),
                select(m == -T(special::kInf), T(special::kInf), r));
}

}  // namespace numr::math::inline NUMR_MATH_ISA
