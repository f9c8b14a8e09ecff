// Cube root and power over a number-like T (see device_libm.h).
#pragma once

#include "math/libm/common.h"
#include "math/namespace.h"

NUMR_MATH_EXACT_BEGIN

namespace numr::math::inline NUMR_MATH_ISA::libm {

// cbrt x: |x| = 2^(3q) m, m in [1, 8); a degree-4 first guess (error 5e-3), two Newton steps
// and a last one with the residual y^3 - m taken in extended precision. Under 1 ulp.
template <class T>
T cbrt(T x) {
  using namespace detail;
  // Chebyshev fit of m^(1/3) on [1, 8], degree 4.
  static constexpr double kC[] = {0.6538962985569791, 0.4121814779629245, -0.06797280035500547,
                                  0.0069891694835587225, -0.0002882199346276574};
  const T a = fabs(x);
  const auto ok = (a > T(0)) & (a < T(kInf));
  T as = select(ok, a, T(1));
  const auto sub = as < T(0x1p-1020);
  as = select(sub, as * T(0x1p54), as);
  const T e = ilogb_normal(as);
  const T q = floor(e / T(3));  // exact: e / 3 is either an integer or a third away from one
  const T m = (as * T(0.5)) * pow2i(T(1) - T(3) * q);
  T y = poly(m, kC);
  for (int i = 0; i < 2; ++i) y = y + (m / (y * y) - y) * T(1.0 / 3.0);
  const T y2 = y * y;
  const T d = fma(y2, y, -m) + fma(y, y, -y2) * y;  // y^3 - m
  y = y - d / (T(3) * y2);
  const T res = y * pow2i(q - select(sub, T(18), T(0)));
  return select(ok, select(x < T(0), -res, res), x);
}

// pow(x, y) = e^(y log|x|) with log|x| carried as a double-double (2s + 2s^3/3 + s^5 R2 in
// s = f/(2+f), the first two terms in extended precision, k ln2 added exactly), the product
// with y split by fma, and the exponential taking the low part as a correction. About 1 ulp.
// Special cases as C99 Annex F.
template <class T>
T pow(T x, T y) {
  using namespace detail;
  const T ax = fabs(x);
  const T axs = select((ax > T(0)) & (ax < T(kInf)), ax, T(1));
  const T ys = select(fabs(y) < T(kInf), y, T(0));

  const auto dd = decompose(axs);
  const T f = dd.f, m = f + T(1);
  // s = f / (m + 1) as s + sl.
  const T den = m + T(1);
  const T bb = den - m;
  const T denl = (m - (den - bb)) + (T(1) - bb);
  const T s = f / den;
  const T sl = fma(-s, denl, fma(-s, den, f)) / den;
  // s^2, s^3 and (2/3) s^3 as double-doubles.
  const T s2 = s * s;
  const T s2l = fma(s, s, -s2) + T(2) * s * sl;
  const T s3 = s2 * s;
  const T s3l = fma(s2, s, -s3) + fma(s2l, s, s2 * sl);
  const T b = T(kTwoThirdsHi) * s3;
  const T bl = fma(T(kTwoThirdsHi), s3, -b) + fma(T(kTwoThirdsHi), s3l, T(kTwoThirdsLo) * s3);
  const T tail = s3 * s2 * poly(s2, kLogR2);
  // log(1 + f) = h + hl.
  const T s_2 = T(2) * s;
  const T h = s_2 + b;
  const T hl = ((b - (h - s_2)) + T(2) * sl) + (bl + tail);
  // log|x| = L + Ll.
  const T K = dd.k * T(kLn2Hi42);
  const T H = K + h;
  const T Hl = (h - (H - K)) + fma(dd.k, T(kLn2Lo42), hl);
  const T L = H + Hl;
  const T Ll = Hl - (L - H);
  // y log|x| = zh + zl, clamped to the range where the exponential is finite and nonzero.
  const T zh = ys * L;
  const T zl = fma(ys, L, -zh) + ys * Ll;
  const T zc = select(zh > T(710), T(710), select(zh < T(-746), T(-746), zh));
  T res = exp_core(zc, select(zc == zh, zl, T(0)));

  // Special cases, later rules overriding earlier ones.
  const auto y_int = trunc(y) == y;
  const auto y_odd = y_int & (trunc(T(0.5) * y) != T(0.5) * y);
  res = select((x < T(0)) & y_odd, -res, res);
  res = select((x < T(0)) & !y_int, T(kNaN), res);
  const auto xzero = ax == T(0), xinf = ax == T(kInf);
  const auto xsign = (x < T(0)) | (T(1) / x < T(0));        // sign bit, -0 included
  const T mag = select(xzero ^ (y < T(0)), T(0), T(kInf));  // 0^-y, inf^y: inf
  res = select(xzero | xinf, select(xsign & y_odd, -mag, mag), res);
  const T ymag = select(!((ax < T(1)) ^ (y < T(0))), T(kInf), T(0));
  res = select(fabs(y) == T(kInf), select(ax == T(1), T(1), ymag), res);
  res = select((x != x) | (y != y), x + y, res);
  return select((y == T(0)) | (x == T(1)), T(1), res);
}

}  // namespace numr::math::inline NUMR_MATH_ISA::libm

NUMR_MATH_EXACT_END
