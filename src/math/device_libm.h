// Double-precision math library written once over a number-like type T, for backends without
// transcendental instructions (PTX has none in double precision). Called explicitly, e.g.
// numr::math::libm::exp(x); the same text instantiated with double is tested against std::.
// Where the single-precision library (libm32/libm32.h) runs the same algorithm (exp and log
// families, sinh, cosh, tanh, sin, cos, tan, erf, erfc), it is written once in libm_core/
// over a precision traits type (libm_core/precision.h); libm:: names are its entry points.
//
// The templates use only these operations of T (and of its mask type M):
//   T: + - * / (binary), unary -, T(double constant), comparisons < <= > >= == != giving M;
//   M: & | ^ and !;
//   free functions: select(M, T, T), fabs, sqrt (correctly rounded), floor, ceil, trunc,
//   rint, fma(a, b, c) (fused), pow2i(n) (exactly 2^n for integral n in [-1022, 1023]) and
//   ilogb_normal(x) (floor(log2 |x|) as an integral T, normal finite nonzero x only).
// No branches on T values and no loops except with compile-time trip counts. Every input is
// sanitized before it reaches pow2i or ilogb_normal, so any input (NaN, inf, subnormal) is
// allowed and special values follow C99 Annex F.
//
// Accuracy (measured against long double references, see tests/test_device_libm.cpp and, for
// erf, erfc and erfinv, tests/test_erf_family.cpp): a few ulp everywhere. sin, cos and tan
// reduce their argument with a 3-part Cody-Waite pi/2 and are accurate for |x| < 2^52
// (about 4.5e15), near zeros included; beyond, the results are in range (|sin|, |cos| <= 1,
// tan finite) but not meaningful.
#pragma once

#include "math/libm/common.h"
#include "math/libm/erf.h"
#include "math/libm/exp_log.h"
#include "math/libm/hyperbolic.h"
#include "math/libm/pow.h"
#include "math/libm/trig.h"
