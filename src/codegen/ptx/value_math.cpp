#include "codegen/ptx/value_math.h"

#include "math/device_libm.h"
#include "numr/error.h"

namespace numr::ptx {
namespace {

namespace libm = ::numr::math::libm;

void need_float(const char* fn, const Value& x) {
  if (x.type() != PtxType::f32 && x.type() != PtxType::f64)
    fail<BackendError>("ptx", "Value ", fn, " needs f32 or f64, not ", type_name(x.type()));
}

// Runs f on f64 Values inside a scope whose constants are f64 (the library writes T(0.5)
// and the like, which take the innermost scope's type).
template <class F>
Value in_f64(F&& f) {
  FormulaScope scope(FormulaScope::builder(), PtxType::f64);
  return f();
}

// f(x) through the double-precision library: f32 is widened exactly and the result
// rounded once back to f32.
template <class F>
Value via_f64(const char* fn, const Value& x, F&& f) {
  need_float(fn, x);
  if (x.type() == PtxType::f64) return in_f64([&] { return f(x); });
  const Value xd = convert(x, PtxType::f64);
  return convert(in_f64([&] { return f(xd); }), PtxType::f32);
}

template <class F>
Value via_f64(const char* fn, const Value& x, const Value& y, F&& f) {
  need_float(fn, x);
  need_float(fn, y);
  if (x.type() == PtxType::f64 && y.type() == PtxType::f64) return in_f64([&] { return f(x, y); });
  const Value xd = x.type() == PtxType::f64 ? x : convert(x, PtxType::f64);
  const Value yd = y.type() == PtxType::f64 ? y : convert(y, PtxType::f64);
  return convert(in_f64([&] { return f(xd, yd); }), PtxType::f32);
}

Value f32c(double c) { return Value::constant(PtxType::f32, c); }

}  // namespace

Value exp_f32_fast(const Value& x) {
  if (x.type() != PtxType::f32)
    fail<BackendError>("ptx", "exp_f32_fast needs f32, not ", type_name(x.type()));
  KernelBuilder& b = FormulaScope::builder();
  // e^89 overflows and e^-104 rounds to 0 in f32, so clamping there changes no result and
  // keeps n in [-150, 128]; NaN passes the clamps and is put back at the end.
  const Value xc = select(x > f32c(89.0), f32c(89.0), select(x < f32c(-104.0), f32c(-104.0), x));
  const Value n = rint(xc * f32c(1.4426950408889634));
  // ln2 = kLn2Hi + kLn2Lo with kLn2Hi the nearest f32; each fma rounds once, so r carries an
  // error of about one ulp of r (|r| <= 0.35), far below the f32 result's ulp.
  const double kLn2Hi = 0.693147182464599609375;  // 0x3f317218
  const double kLn2Lo = -1.904654299957768e-09;
  Value r = fma(-n, f32c(kLn2Hi), xc);
  r = fma(-n, f32c(kLn2Lo), r);
  // 2^(r / ln2) by the special-function unit: 2 ulp on [-0.5, 0.5]; ftz is harmless since
  // subnormal arguments give 1 either way and the result is near 1.
  const Reg t = (r * f32c(1.4426950408889634)).reg();
  const Reg p = b.reg(PtxType::f32);
  b.raw("ex2.approx.ftz.f32 " + reg_name(p) + ", " + reg_name(t), {p}, {t}, false);
  // Two exact scalings keep each power of two normal; the last product rounds once, so
  // gradual underflow and overflow to +inf come out right.
  const Value n1 = floor(n * f32c(0.5));
  const Value y = (Value(p) * pow2i(n1)) * pow2i(n - n1);
  return select(x != x, x, y);
}

Value exp(const Value& x) {
  if (x.type() == PtxType::f32) return exp_f32_fast(x);
  return via_f64("exp", x, [](const Value& v) { return libm::exp(v); });
}

#define NUMR_VALUE_MATH1(fn)                                            \
  Value fn(const Value& x) {                                            \
    return via_f64(#fn, x, [](const Value& v) { return libm::fn(v); }); \
  }
NUMR_VALUE_MATH1(exp2)
NUMR_VALUE_MATH1(expm1)
NUMR_VALUE_MATH1(log)
NUMR_VALUE_MATH1(log2)
NUMR_VALUE_MATH1(log10)
NUMR_VALUE_MATH1(log1p)
NUMR_VALUE_MATH1(sin)
NUMR_VALUE_MATH1(cos)
NUMR_VALUE_MATH1(tan)
NUMR_VALUE_MATH1(asin)
NUMR_VALUE_MATH1(acos)
NUMR_VALUE_MATH1(atan)
NUMR_VALUE_MATH1(sinh)
NUMR_VALUE_MATH1(cosh)
NUMR_VALUE_MATH1(tanh)
NUMR_VALUE_MATH1(asinh)
NUMR_VALUE_MATH1(acosh)
NUMR_VALUE_MATH1(atanh)
NUMR_VALUE_MATH1(cbrt)
#undef NUMR_VALUE_MATH1

Value pow(const Value& x, const Value& y) {
  return via_f64("pow", x, y, [](const Value& a, const Value& c) { return libm::pow(a, c); });
}

Value atan2(const Value& y, const Value& x) {
  return via_f64("atan2", y, x, [](const Value& a, const Value& c) { return libm::atan2(a, c); });
}

}  // namespace numr::ptx
