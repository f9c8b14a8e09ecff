// The complex elementwise kernels' formulas on the parts of each element, written once
// over a number type T (float or double on the CPU, ptx::Value on CUDA). They are the
// compositions of src/ops/complex_ops.h and complex.cpp, operation for operation, so a
// kernel gives the bits that the composition of real ops gives on the same backend.
#pragma once

#include <cmath>

#include "math/namespace.h"

namespace numr::math::inline NUMR_MATH_ISA::cx {

// The primitives for scalar T; other number types bring theirs (found by argument-dependent
// lookup). Declared here so that float stays float.
inline float select(bool c, float a, float b) { return c ? a : b; }
inline double select(bool c, double a, double b) { return c ? a : b; }
inline float fabs(float x) { return std::fabs(x); }
inline double fabs(double x) { return std::fabs(x); }
inline float sqrt(float x) { return std::sqrt(x); }
inline double sqrt(double x) { return std::sqrt(x); }

NUMR_MATH_EXACT_BEGIN

// max(a, b) that is NaN when either is (the maximum op).
template <class T>
T nan_max(const T& a, const T& b) {
  return select((a > b) | (a != a), a, b);
}

// (ar + i ai)(br + i bi).
template <class T>
void mul(const T& ar, const T& ai, const T& br, const T& bi, T& re, T& im) {
  re = ar * br - ai * bi;
  im = ar * bi + ai * br;
}

// a / b with b scaled by max(|re b|, |im b|) first, so |b|^2 neither overflows nor
// underflows where the quotient itself is representable.
template <class T>
void div(const T& ar, const T& ai, const T& br, const T& bi, T& re, T& im) {
  const T s = nan_max(fabs(br), fabs(bi));
  const T cr = br / s, ci = bi / s;
  const T den = (cr * cr + ci * ci) * s;
  re = (ar * cr + ai * ci) / den;
  im = (ai * cr - ar * ci) / den;
}

// |z| with both parts scaled by the larger: no overflow of re^2 + im^2. An infinite part
// makes |z| infinite even beside a NaN, as C's hypot.
template <class T>
T abs(const T& re, const T& im) {
  const T s = nan_max(fabs(re), fabs(im));
  const T safe = select(s == T(0), T(1), s);
  const T a = re / safe, b = im / safe;
  const T r = safe * sqrt(a * a + b * b);
  const T inf(__builtin_inf());
  return select((fabs(re) == inf) | (fabs(im) == inf), inf, r);
}

NUMR_MATH_EXACT_END

}  // namespace numr::math::inline NUMR_MATH_ISA::cx
