// A number type for the math libraries' tests (math/device_libm.h in double,
// math/libm32/libm32.h in float) that offers exactly the operations the libraries may use,
// so an instantiation with it compiles only if the library keeps to its contract. pow2i and
// ilogb_normal also check their arguments at run time and count violations.
#pragma once

#include <cmath>
#include <concepts>

#include "math/libm32/scalar_float.h"
#include "math/scalar_double.h"

namespace numr::test {

// The contract of pow2i per precision: exactly 2^n for integral n in [min_exp, max_exp].
template <class S>
struct LaneLimits;
template <>
struct LaneLimits<double> {
  static constexpr double min_exp = -1022, max_exp = 1023;
  static double pow2i(double n) { return math::pow2i(n); }
  static double ilogb_normal(double x) { return math::ilogb_normal(x); }
  // What a violating pow2i returns (the test fails on the count; the value keeps it going).
  static double pow2i_violated(double n) {
    return std::ldexp(1.0, std::isfinite(n) ? static_cast<int>(n) : 0);
  }
};
template <>
struct LaneLimits<float> {
  static constexpr float min_exp = -126, max_exp = 127;
  static float pow2i(float n) { return math::libm32::pow2i(n); }
  static float ilogb_normal(float x) { return math::libm32::ilogb_normal(x); }
  static float pow2i_violated(float) { return 1.0f; }
};

struct LaneMask {
  bool b;
};

template <class S>
struct Lane {
  S v;
  explicit Lane(S s) : v(s) {}
  static inline int violations = 0;  // pow2i / ilogb_normal called outside their contract
};

template <class S>
Lane<S> operator+(Lane<S> a, Lane<S> b) {
  return Lane<S>(a.v + b.v);
}
template <class S>
Lane<S> operator-(Lane<S> a, Lane<S> b) {
  return Lane<S>(a.v - b.v);
}
template <class S>
Lane<S> operator*(Lane<S> a, Lane<S> b) {
  return Lane<S>(a.v * b.v);
}
template <class S>
Lane<S> operator/(Lane<S> a, Lane<S> b) {
  return Lane<S>(a.v / b.v);
}
template <class S>
Lane<S> operator-(Lane<S> a) {
  return Lane<S>(-a.v);
}
template <class S>
LaneMask operator<(Lane<S> a, Lane<S> b) {
  return {a.v < b.v};
}
template <class S>
LaneMask operator<=(Lane<S> a, Lane<S> b) {
  return {a.v <= b.v};
}
template <class S>
LaneMask operator>(Lane<S> a, Lane<S> b) {
  return {a.v > b.v};
}
template <class S>
LaneMask operator>=(Lane<S> a, Lane<S> b) {
  return {a.v >= b.v};
}
template <class S>
LaneMask operator==(Lane<S> a, Lane<S> b) {
  return {a.v == b.v};
}
template <class S>
LaneMask operator!=(Lane<S> a, Lane<S> b) {
  return {a.v != b.v};
}
inline LaneMask operator&(LaneMask a, LaneMask b) { return {a.b && b.b}; }
inline LaneMask operator|(LaneMask a, LaneMask b) { return {a.b || b.b}; }
inline LaneMask operator^(LaneMask a, LaneMask b) { return {a.b != b.b}; }
inline LaneMask operator!(LaneMask a) { return {!a.b}; }
template <class S>
Lane<S> select(LaneMask m, Lane<S> a, Lane<S> b) {
  return m.b ? a : b;
}
template <class S>
Lane<S> fabs(Lane<S> a) {
  return Lane<S>(std::fabs(a.v));
}
template <class S>
Lane<S> sqrt(Lane<S> a) {
  return Lane<S>(std::sqrt(a.v));
}
template <class S>
Lane<S> floor(Lane<S> a) {
  return Lane<S>(std::floor(a.v));
}
template <class S>
Lane<S> rint(Lane<S> a) {
  return Lane<S>(std::rint(a.v));
}
template <class S>
Lane<S> fma(Lane<S> a, Lane<S> b, Lane<S> c) {
  return Lane<S>(std::fma(a.v, b.v, c.v));
}
// ceil and trunc are in the double library's contract only.
template <std::same_as<double> S>
Lane<S> ceil(Lane<S> a) {
  return Lane<S>(std::ceil(a.v));
}
template <std::same_as<double> S>
Lane<S> trunc(Lane<S> a) {
  return Lane<S>(std::trunc(a.v));
}
template <class S>
Lane<S> pow2i(Lane<S> n) {
  using Lim = LaneLimits<S>;
  if (!(n.v == std::trunc(n.v) && n.v >= Lim::min_exp && n.v <= Lim::max_exp)) {
    ++Lane<S>::violations;
    return Lane<S>(Lim::pow2i_violated(n.v));
  }
  return Lane<S>(Lim::pow2i(n.v));
}
template <class S>
Lane<S> ilogb_normal(Lane<S> x) {
  if (!std::isnormal(x.v)) {
    ++Lane<S>::violations;
    return Lane<S>(S(0));
  }
  return Lane<S>(LaneLimits<S>::ilogb_normal(x.v));
}

// The same value: both NaN, or equal with the same sign (so -0 is not +0).
template <class S>
bool same_value(S got, S want) {
  return std::isnan(want) ? std::isnan(got)
                          : got == want && std::signbit(got) == std::signbit(want);
}

}  // namespace numr::test
