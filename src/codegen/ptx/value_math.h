// Transcendental functions of Value, found by argument-dependent lookup, so that the
// formulas of src/math (sigmoid, gelu, softplus, softmax, ...) and the device math library
// instantiate with Value and emit PTX.
//
// f64 Values run the double-precision library of math/device_libm.h (about 1 ulp). f32
// Values are widened to f64, run the same library and are rounded back, which is
// accurate to within about half an f32 ulp; exp alone, the function of the activations and
// of softmax, has its own f32 path: a Cody-Waite reduction x = n ln2 + r in f32 with fma,
// ex2.approx on r / ln2 and an exact scaling by 2^n, within 3 ulp of the true value over
// the whole f32 range (gradual underflow, overflow to +inf, NaN kept). Integer Values are
// an error (BackendError).
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
Value pow(const Value& x, const Value& y);
Value atan2(const Value& y, const Value& x);

// The f32 exp described above, for callers that want it by name (x must be f32).
Value exp_f32_fast(const Value& x);

}  // namespace numr::ptx
