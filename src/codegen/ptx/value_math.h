// Transcendental functions of Value, found by argument-dependent lookup, so that the
// formulas of src/math (sigmoid, gelu, softplus, softmax, ...) and the device math library
// instantiate with Value and emit PTX.
//
// f64 Values run the double-precision library of math/device_libm.h (about 1 ulp). f32
// Values are widened to f64, run the same library and are rounded back, which is
// accurate to within about half an f32 ulp; exp and exp2, the functions of the activations
// and of softmax, have their own f32 path: n = round(x log2 e) by the 1.5 * 2^23 trick,
// r = x log2 e - n by two fmas, ex2.approx.ftz(r) and an exact scaling by 2^n in the
// integer unit: 0.9 ulp from the true value over the whole f32 range with a correctly
// rounded ex2, 4.5 ulp (3e-7 relative) if ex2 is 2 ulp off (gradual underflow, overflow to
// +inf, NaN kept); under FastMath::exp (value.h) they are one ex2.approx.ftz of x log2 e
// (relative error below 4.1e-6, for 16-bit results). Integer
// Values are an error (BackendError).
//
// Each function emits into the builder of the innermost FormulaScope and works whatever
// that scope's compute type is (the library's constants are made in the Value's type).
#pragma once

#include "codegen/ptx/value.h"

namespace numr::ptx {

Value exp(const Value& x);
Value exp2(const Value& x);
Value expm1(const Value& x);
Value log(const Value& x);
Value log2(const Value& x);
Value log10(const Value& x);
Value log1p(const Value& x);
Value sin(const Value& x);
Value cos(const Value& x);
Value tan(const Value& x);
Value asin(const Value& x);
Value acos(const Value& x);
Value atan(const Value& x);
Value sinh(const Value& x);
Value cosh(const Value& x);
Value tanh(const Value& x);
Value asinh(const Value& x);
Value acosh(const Value& x);
Value atanh(const Value& x);
Value cbrt(const Value& x);
// f64 through math/libm/erf.h; f32 through the single-precision library (math/libm32),
// in f32 arithmetic.
Value erf(const Value& x);
Value erfc(const Value& x);
Value erfinv(const Value& x);
Value pow(const Value& x, const Value& y);
Value atan2(const Value& y, const Value& x);

// The accurate f32 exp described above whatever the scope's FastMath, for callers that
// want it by name (x must be f32).
Value exp_f32_fast(const Value& x);

}  // namespace numr::ptx
