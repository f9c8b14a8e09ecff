// Single-precision sin, cos and tan over a number-like T (see libm32.h): libm_core's,
// shared with the double-precision library.
#pragma once

#include "math/libm32/common.h"
#include "math/libm_core/trig.h"
#include "math/namespace.h"

NUMR_MATH_EXACT_BEGIN

namespace numr::math::inline NUMR_MATH_ISA::libm32 {

namespace detail {

// The constants of sin, cos and tan are Prec32's (libm_core/precision.h).
inline constexpr float kTwoOverPiHi = Prec32::two_over_pi_hi, kTwoOverPiLo = Prec32::two_over_pi_lo;
inline constexpr float kPio2_1 = Prec32::pio2_1, kPio2_2 = Prec32::pio2_2, kPio2_3 = Prec32::pio2_3;
inline constexpr float kPio4 = Prec32::pio4;
// Accurate below this (see libm32.h); above it results stay in range.
inline constexpr float kTrigLimit32 = Prec32::trig_limit;
inline constexpr const auto& kSinS = Prec32::sin_s;
inline constexpr const auto& kCosC = Prec32::cos_c;

// x = n pi/2 + (r + rlo), |r| <= pi/4 (+ rounding), q = n mod 4. Finite x only.
using libm_core::Reduced;
template <class T>
Reduced<T> reduce_pio2(T x) {
  return libm_core::reduce_pio2<Prec32>(x);
}
template <class T>
TwoPart<T> sin_reduced(T r, T rlo) {
  return libm_core::sin_reduced<Prec32>(r, rlo);
}
template <class T>
TwoPart<T> cos_reduced(T r, T rlo) {
  return libm_core::cos_reduced<Prec32>(r, rlo);
}
template <class T>
T div2(TwoPart<T> a, TwoPart<T> b) {
  return libm_core::div2(a, b);
}

}  // namespace detail

template <class T>
T sin(T x) {
  return libm_core::sin<libm_core::Prec32>(x);
}

template <class T>
T cos(T x) {
  return libm_core::cos<libm_core::Prec32>(x);
}

// sin r / cos r, or -cos r / sin r in odd quadrants, both carried in two parts.
template <class T>
T tan(T x) {
  return libm_core::tan<libm_core::Prec32>(x);
}

}  // namespace numr::math::inline NUMR_MATH_ISA::libm32

NUMR_MATH_EXACT_END
