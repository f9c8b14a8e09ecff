// Shader text is assembled with chains of std::string +, on which GCC 12 reports
// -Wrestrict falsely (GCC bug 105329).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wrestrict"
#endif
#include "codegen/wgsl/value_math.h"

#include "math/libm/trig.h"
#include "math/libm32/libm32.h"
#include "numr/error.h"

namespace numr::wgsl {

namespace {
const Value& need_f32(const Value& x, const char* fn) {
  if (x.type() != Type::f32)
    fail<BackendError>("webgpu", "WGSL ", fn, " of a ", type_name(x.type()), " Value");
  return x;
}
Value c(double v) { return Value::constant(Type::f32, v); }
}  // namespace

// Each a helper function of the shader (Value::call_function), defined once however many
// times a formula calls it; `lib` is the library whose formula it holds.
#define NUMR_WGSL_HELPER(fn, lib)                                                          \
  Value fn(const Value& x) {                                                               \
    return Value::call_function(#fn, {need_f32(x, #fn)}, [](const std::vector<Value>& p) { \
      return ::numr::math::lib::fn(p[0]);                                                  \
    });                                                                                    \
  }
NUMR_WGSL_HELPER(exp, libm32)
NUMR_WGSL_HELPER(exp2, libm32)
NUMR_WGSL_HELPER(expm1, libm32)
NUMR_WGSL_HELPER(log, libm32)
NUMR_WGSL_HELPER(log2, libm32)
NUMR_WGSL_HELPER(log1p, libm32)
NUMR_WGSL_HELPER(sin, libm32)
NUMR_WGSL_HELPER(cos, libm32)
NUMR_WGSL_HELPER(tan, libm32)
NUMR_WGSL_HELPER(sinh, libm32)
NUMR_WGSL_HELPER(cosh, libm32)
NUMR_WGSL_HELPER(tanh, libm32)
NUMR_WGSL_HELPER(erf, libm32)
NUMR_WGSL_HELPER(erfc, libm32)
NUMR_WGSL_HELPER(erfinv, libm32)

Value log10(const Value& x) { return log(x) * c(0.43429448190325182765); }
// The inverse trigonometric functions of the double library (math/libm/trig.h) carry
// their reductions' rounding errors in a second term; run in f32 they give f32 accuracy.
NUMR_WGSL_HELPER(asin, libm)
NUMR_WGSL_HELPER(acos, libm)
NUMR_WGSL_HELPER(atan, libm)
Value atan2(const Value& y, const Value& x) {
  return Value::call_function(
      "atan2", {need_f32(y, "atan2"), need_f32(x, "atan2")},
      [](const std::vector<Value>& p) { return ::numr::math::libm::atan2(p[0], p[1]); });
}
#undef NUMR_WGSL_HELPER

// asinh(x) = sign(x) log1p(|x| + x^2 / (1 + sqrt(1 + x^2))); for |x| > 2^12 the square is
// dropped: log(2|x|) = log(|x|) + ln 2.
Value asinh(const Value& x) {
  const Value a = fabs(need_f32(x, "asinh"));
  const Value a2 = a * a;
  const Value small = log1p(a + a2 / (c(1) + sqrt(c(1) + a2)));
  const Value big = log(a) + c(0.69314718055994530942);
  const Value r = select(a > c(4096), big, small);
  return select(x < c(0), -r, r);
}
// acosh(x) = log1p(t + sqrt(2t + t^2)), t = x - 1; log(x) + ln 2 for x > 2^12.
Value acosh(const Value& x) {
  const Value t = need_f32(x, "acosh") - c(1);
  const Value small = log1p(t + sqrt(c(2) * t + t * t));
  const Value big = log(x) + c(0.69314718055994530942);
  return select(x > c(4096), big, small);
}
// atanh(x) = sign(x) 0.5 log1p(2|x| / (1 - |x|)).
Value atanh(const Value& x) {
  const Value a = fabs(need_f32(x, "atanh"));
  const Value r = c(0.5) * log1p(c(2) * a / (c(1) - a));
  return select(x < c(0), -r, r);
}
// cbrt: 2^(log2|x| / 3) polished by one Newton step; zeros, infinities and NaN as they are.
Value cbrt(const Value& x) {
  const Value a = fabs(need_f32(x, "cbrt"));
  Value y = exp2(log2(a) * c(1.0 / 3.0));
  y = y - (y * y * y - a) / (c(3) * y * y);
  const Value r = select((a == c(0)) | (a == c(__builtin_inf())) | (x != x), a, y);
  return select(x < c(0), -r, r);
}
// pow(x, y) = 2^(y log2|x|), negative for a negative x (-0 included) and odd integral y,
// with C99's special cases: NaN for a finite negative x and non-integral y; 1 for y = 0,
// x = 1, and x = -1 with infinite y.
Value pow(const Value& x, const Value& y) {
  need_f32(x, "pow");
  need_f32(y, "pow");
  const Value a = fabs(x), inf = c(__builtin_inf());
  const Value mag = exp2(y * log2(a));
  const Mask y_int = floor(y) == y;
  const Mask y_odd = y_int & (fabs(y) < c(16777216)) & (floor(y * c(0.5)) * c(2) != y);
  const Mask x_neg =
      (as_bits(x) >> Value::constant(Type::u32, 31)) != Value::constant(Type::u32, 0);
  Value r = select(x_neg & y_odd, -mag, mag);
  r = select((x < c(0)) & !y_int & (a < inf), c(__builtin_nan("")), r);
  r = select((x == c(-1)) & (fabs(y) == inf), c(1), r);
  r = select(y == c(0), c(1), r);
  return select(x == c(1), c(1), r);
}

}  // namespace numr::wgsl
