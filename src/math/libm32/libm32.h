// Single-precision math library written once over a number-like T, for backends without
// f64 (WGSL) and for the f32 paths of backends without transcendental instructions. Called
// explicitly, e.g. numr::math::libm32::exp(x); the same text instantiated with float is
// tested against std:: in tests/test_f32_libm.cpp. It is math/device_libm.h sized for
// float: single-precision constants, polynomials and Cody-Waite splits, so the templates are
// correct when T computes in f32. The algorithms both libraries share are written once in
// math/libm_core/ and taken here with the single-precision traits (Prec32).
//
// The templates use only these operations of T (and of its mask type M):
//   T: + - * / (binary), unary -, T(float constant), comparisons < <= > >= == != giving M;
//   M: & | ^ and !;
//   free functions: select(M, T, T), fabs, sqrt (correctly rounded), floor, rint,
//   fma(a, b, c) (fused), pow2i(n) (exactly 2^n for integral n in [-126, 127]) and
//   ilogb_normal(x) (floor(log2 |x|) as an integral T, normal finite nonzero x only).
// No branches on T values and no loops except with compile-time trip counts. Every input is
// sanitized before it reaches pow2i or ilogb_normal, so any input (NaN, inf, subnormal) is
// allowed and special values follow C99 Annex F. NaN is detected as x != x; bits.h has
// bit tests for targets that cannot rely on that (they need as_bits, see there).
//
// Accuracy, the maximum error over the dense sweeps of tests/test_f32_libm.cpp against a
// long double reference (with a correctly rounded f32 fma): see the table there. sin, cos
// and tan are accurate for |x| < 2^17; beyond, their results stay in range.
#pragma once

#include "math/libm32/bits.h"
#include "math/libm32/common.h"
#include "math/libm32/erf.h"
#include "math/libm32/exp_log.h"
#include "math/libm32/hyperbolic.h"
#include "math/libm32/trig.h"
