// Transcendental functions of wgsl::Value, found by argument-dependent lookup, so that the
// formulas of src/math instantiate with Value and emit WGSL. WGSL has no f64: f32 Values
// run the single-precision library (math/libm32) in f32 arithmetic; the functions it does
// not have are built from its functions here (log10, the inverse hyperbolics, cbrt, pow)
// or come from the double library's algorithms run in f32 (asin, acos, atan, atan2). Integer
// Values are an error (BackendError).
#pragma once

#include "codegen/wgsl/value.h"

namespace numr::wgsl {

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
Value erf(const Value& x);
Value erfc(const Value& x);
Value erfinv(const Value& x);
Value pow(const Value& x, const Value& y);
Value atan2(const Value& y, const Value& x);

}  // namespace numr::wgsl
