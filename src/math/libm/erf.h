// Double-precision erf, erfc and erfinv over a number-like T (see device_libm.h). The
// polynomials come from scripts/fit_erf_coefficients.py (Chebyshev interpolation in
// mpmath); each comment gives the fitted variable v, the polynomial's argument s and the
// fit's maximum error with the coefficients rounded to double.
#pragma once

#include "math/libm/common.h"
#include "math/libm/exp_log.h"
#include "math/libm32/erf.h"
#include "math/libm_core/erf.h"
#include "math/namespace.h"

NUMR_MATH_EXACT_BEGIN

namespace numr::math::inline NUMR_MATH_ISA::libm {

namespace detail {

// The polynomials of erf and erfc (kErfSmall, kErfcExp) and their constants are Prec64's
// (libm_core/precision.h), shared with the single-precision algorithm.
inline constexpr const auto& kErfSmall = Prec64::erf_small;
inline constexpr const auto& kErfcExp = Prec64::erfc_exp;
// erfinv(x) / x (a starting value), v = sqrt(w) in [2, 6.25], s = (v - 4.125) / 2.125,
// relative error 6.72e-07.
inline constexpr double kErfinvTail[] = {
    3.9659900620867883,    2.1457602257444583,    0.0042324802388143635,  -0.006905006858084669,
    0.0065707877121923015, -0.004319055007177677, -0.0024128743619067946, -0.0006011816886279354,
    0.014856118461732779,  -0.011358306288665205, -0.0037038841063519175, 0.004175879292323709};

// erfc underflows to 0 past kErfcZero; below kErfcSmall it is 1 - erf.
inline constexpr double kErfcZero = Prec64::erfc_zero, kErfcSmall = Prec64::erfc_small;
inline constexpr double kSqrtPiOver2 = 0.886226925452758;

// Horner evaluation with float coefficients (the single-precision fits, as a starting value).
template <class T, int N>
T poly(T x, const float (&c)[N]) {
  T p = T(static_cast<double>(c[N - 1]));
  for (int i = N - 2; i >= 0; --i) p = fma(p, x, T(static_cast<double>(c[i])));
  return p;
}

// erfc(z) for z >= 0, erf(x) for |x| <= 1 and erfc(z) for 0 <= z <= 1: libm_core/erf.h.
template <class T>
T erfc_pos(T z) {
  return libm_core::erfc_pos<Prec64>(z);
}
template <class T>
T erf_small(T x) {
  return libm_core::erf_small<Prec64>(x);
}
template <class T>
T erfc_small(T z) {
  return libm_core::erfc_small<Prec64>(z);
}

}  // namespace detail

// |x| < 1: x P(x^2); beyond, 1 - erfc(|x|) with the sign of x. ±inf gives ±1.
template <class T>
T erf(T x) {
  return libm_core::erf<libm_core::Prec64>(x);
}

// erfc(|x|) from erfc_small below kErfcSmall, erfc_pos above, and 2 - erfc(|x|) for negative x.
// +inf gives 0, -inf 2.
template <class T>
T erfc(T x) {
  return libm_core::erfc<libm_core::Prec64>(x);
}

// erfinv x: a starting value y0 = |x| P(w), w = -log(1 - x^2) (the single-precision
// central polynomial below w = 4, a double one in sqrt(w) above, good to 1e-6), then one
// Halley step on f(y) = erf(y) - |x|, taken as (1 - |x|) - erfc(y) from y0 = 1 on so that
// it keeps its precision near 1: y1 = y0 - u / (1 + y0 u), u = f / f'. ±1 gives
// ±inf, |x| > 1 NaN.
template <class T>
T erfinv(T x) {
  using namespace detail;
  const T a = fabs(x);
  const T as = select(a < T(1), a, T(0));
  const T h = as * as;
  const T w = -log1p_dd(-h, -fma(as, as, -h));
  const T pc = poly((w - T(2)) * T(0.5), libm32::detail::kErfinvCentral);
  const T pt = poly((sqrt(w) - T(4.125)) * T(1 / 2.125), kErfinvTail);
  const T y0 = select(w < T(4), pc, pt) * as;
  const auto near1 = !(y0 < T(1));
  const T f = select(near1, (T(1) - as) - erfc_pos(y0), erf_small(select(near1, T(0), y0)) - as);
  const T u = f * libm::exp(y0 * y0) * T(kSqrtPiOver2);
  const T y1 = y0 - u / fma(y0, u, T(1));
  const T res = select(x < T(0), -y1, y1);
  const T inf = select(x < T(0), T(-kInf), T(kInf));
  return select((x != x) | (x == T(0)), x, select(a == T(1), inf, select(a > T(1), T(kNaN), res)));
}

}  // namespace numr::math::inline NUMR_MATH_ISA::libm

NUMR_MATH_EXACT_END
