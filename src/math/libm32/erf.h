// Single-precision erf, erfc and erfinv over a number-like T (see libm32.h). The
// polynomials come from scripts/fit_erf_coefficients.py (Chebyshev interpolation in
// mpmath); each comment gives the fitted variable v, the polynomial's argument s and the
// fit's maximum error with the coefficients rounded to float.
#pragma once

#include "math/libm32/common.h"
#include "math/libm32/exp_log.h"
#include "math/libm_core/erf.h"
#include "math/namespace.h"

NUMR_MATH_EXACT_BEGIN

namespace numr::math::inline NUMR_MATH_ISA::libm32 {

namespace detail {

// The polynomials of erf and erfc (kErfSmall, kErfcExp) and their constants are Prec32's
// (libm_core/precision.h), shared with the double-precision algorithm.
inline constexpr const auto& kErfSmall = Prec32::erf_small;
inline constexpr const auto& kErfcExp = Prec32::erfc_exp;
// erfinv(x) / x, v = w in [0, 4], s = (v - 2.0) / 2.0, relative error 4.65e-08.
inline constexpr float kErfinvCentral[] = {
    1.3772152662277222f,     0.4995361566543579f,     -0.007872574962675571f,
    -0.01353729609400034f,   0.00345501652918756f,    0.00024322803074028343f,
    -0.0003120340988971293f, 3.9131289668148383e-05f, 1.7843070963863283e-05f,
    -5.113031875225715e-06f, -4.4322260350782017e-07f};
// erfinv(x) / x, v = sqrt(w) in [2, 4], s = (v - 3.0) / 1.0, relative error 6.12e-08.
inline constexpr float kErfinvTail[] = {
    2.832976818084717f,     1.0016748905181885f,     0.00944568682461977f,
    -0.007637245114892721f, 0.005681849084794521f,   -0.003595334477722645f,
    0.0015028138877823949f, -6.650841532973573e-05f, -0.0003285836719442159f,
    0.0001265121391043067f, 2.877266297218739e-06f};

// erfc underflows to 0 past kErfcZero; below kErfcSmall it is 1 - erf.
inline constexpr float kErfcZero = Prec32::erfc_zero, kErfcSmall = Prec32::erfc_small;

// erfc(z) for z >= 0, erf(x) for |x| <= 1 and erfc(z) for 0 <= z <= 1: libm_core/erf.h.
template <class T>
T erfc_pos(T z) {
  return libm_core::erfc_pos<Prec32>(z);
}
template <class T>
T erf_small(T x) {
  return libm_core::erf_small<Prec32>(x);
}
template <class T>
T erfc_small(T z) {
  return libm_core::erfc_small<Prec32>(z);
}

}  // namespace detail

// |x| < 1: x P(x^2); beyond, 1 - erfc(|x|) with the sign of x. ±inf gives ±1.
template <class T>
T erf(T x) {
  return libm_core::erf<libm_core::Prec32>(x);
}

// erfc(|x|) from erfc_small below kErfcSmall, erfc_pos above, and 2 - erfc(|x|) for negative x.
// +inf gives 0, -inf 2.
template <class T>
T erfc(T x) {
  return libm_core::erfc<libm_core::Prec32>(x);
}

// erfinv x = x P(w), w = -log(1 - x^2) (taken as log1p of -(h + l), h + l = x^2 exactly,
// so that 1 - x^2 keeps its precision near |x| = 1); P in w below w = 4, in sqrt(w)
// above. ±1 gives ±inf, |x| > 1 NaN.
template <class T>
T erfinv(T x) {
  using namespace detail;
  const T a = fabs(x);
  const T as = select(a < T(1.0f), a, T(0.0f));
  const T h = as * as;
  const T w = -log1p_dd(-h, -fma(as, as, -h));
  const T pc = poly((w - T(2.0f)) * T(0.5f), kErfinvCentral);
  const T pt = poly(sqrt(w) - T(3.0f), kErfinvTail);
  const T res = select(w < T(4.0f), pc, pt) * select(a < T(1.0f), x, T(0.0f));
  const T inf = select(x < T(0.0f), T(-kInf), T(kInf));
  return select(x != x, x, select(a == T(1.0f), inf, select(a > T(1.0f), T(kNaN), res)));
}

}  // namespace numr::math::inline NUMR_MATH_ISA::libm32

NUMR_MATH_EXACT_END
