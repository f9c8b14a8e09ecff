#include "codegen/ptx/value_math.h"

#include <cstdint>

#include "math/device_libm.h"
#include "math/libm32/libm32.h"
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

namespace {

// Adding 1.5 * 2^23 to an f32 of magnitude below 2^22 rounds it to an integer n (nearest,
// ties to even) held in the low mantissa bits: the sum's bits are kMagicBits + n.
constexpr double kMagic = 12582912.0;
constexpr uint32_t kOneBits = 0x3f800000;  // 1.0f

// x limited to [lo, hi], NaN kept (it must reach the result: the integer steps below would
// turn it into a number).
Value clamp_keep_nan(const Value& x, double lo, double hi) {
  KernelBuilder& b = FormulaScope::builder();
  if (b.target().sm >= 80) return Value(b.min_nan(b.max_nan(x.reg(), lo), hi));
  return select(x < f32c(lo), f32c(lo), select(x > f32c(hi), f32c(hi), x));
}

Value ex2_ftz(const Value& x) { return Value(FormulaScope::builder().ex2_approx_ftz(x.reg())); }

// p * 2^n for p within [2^-0.6, 2^0.6] and n in [-151, 129], where j = kMagic + n (an f32).
// Two exact scalings by 2^m and 2^(n - m), m = floor(n / 2), each a normal power of two,
// so only the last product rounds: gradual underflow and overflow to +inf come out right,
// and a NaN p stays NaN. The powers are built in the integer unit from j's bits,
// 0x4b400000 + n: that constant is even and has no bit below 22, so (bits >> 1) << 23 is
// m << 23 and bits << 23 is n << 23 (mod 2^32).
Value scale_pow2(const Value& p, const Value& j) {
  KernelBuilder& b = FormulaScope::builder();
  const Reg bits = b.bitcast(j.reg(), PtxType::u32);
  const Reg m = b.shl(b.shr(bits, 1), 23);
  const Reg first = b.add(m, kOneBits);
  const Reg second = b.sub(b.mad(bits, 1u << 23, kOneBits), m);
  return (p * Value(b.bitcast(first, PtxType::f32))) * Value(b.bitcast(second, PtxType::f32));
}

}  // namespace

Value exp_f32_fast(const Value& x) {
  if (x.type() != PtxType::f32)
    fail<BackendError>("ptx", "exp_f32_fast needs f32, not ", type_name(x.type()));
  // e^89 overflows and e^-104 rounds to 0 in f32, so the clamp changes no result; it keeps
  // n = round(x log2 e) in [-150, 129] for scale_pow2.
  const Value xc = clamp_keep_nan(x, -104.0, 89.0);
  const double kLog2e = 1.4426950408889634;
  const Value j = fma(xc, f32c(kLog2e), f32c(kMagic));
  const Value minus_n = f32c(kMagic) - j;  // exact
  // r = x log2 e - n in [-0.51, 0.51], with log2 e = kHi + kLo (kHi the nearest f32): the
  // first fma is exact but for its one rounding, the second adds the small term, so r is
  // off by at most 2^-24 (0.7 ulp of the result).
  const double kHi = 1.44269502162933349609375;  // 0x3fb8aa3b
  const double kLo = 1.925963033500011e-08;
  const Value r = fma(xc, f32c(kLo), fma(xc, f32c(kHi), minus_n));
  // 2^r by the special-function unit (2 ulp); ftz is harmless: a subnormal r gives 1 anyway.
  return scale_pow2(ex2_ftz(r), j);
}

Value exp(const Value& x) {
  if (x.type() == PtxType::f32) {
    // t = x log2 e, with log2 e and the product rounded to f32, is off by up to 6e-6
    // absolute where |x| nears 88; 2^t is then off by 3.9e-6 relative, 4.1e-6 with
    // ex2's own 2 ulp (measured over every f32).
    if (FormulaScope::fast_math().exp) return ex2_ftz(x * f32c(1.4426950408889634));
    return exp_f32_fast(x);
  }
  return via_f64("exp", x, [](const Value& v) { return libm::exp(v); });
}

Value exp2(const Value& x) {
  if (x.type() == PtxType::f32) {
    if (FormulaScope::fast_math().exp) return ex2_ftz(x);
    // 2^-151 rounds to 0 and 2^129 overflows; r = x - n is exact.
    const Value xc = clamp_keep_nan(x, -151.0, 129.0);
    const Value j = xc + f32c(kMagic);
    return scale_pow2(ex2_ftz(xc - (j - f32c(kMagic))), j);
  }
  return via_f64("exp2", x, [](const Value& v) { return libm::exp2(v); });
}

#define NUMR_VALUE_MATH1(fn)                                            \
  Value fn(const Value& x) {                                            \
    return via_f64(#fn, x, [](const Value& v) { return libm::fn(v); }); \
  }
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

// Both libraries, each in a scope of its own precision (the f32 one keeps the caller's
// approximations).
#define NUMR_VALUE_MATH1_F32(fn)                                                       \
  Value fn(const Value& x) {                                                           \
    need_float(#fn, x);                                                                \
    if (x.type() == PtxType::f64) return in_f64([&] { return libm::fn(x); });          \
    FormulaScope scope(FormulaScope::builder(), PtxType::f32, FormulaScope::fast_math()); \
    return ::numr::math::libm32::fn(x);                                                \
  }
NUMR_VALUE_MATH1_F32(erf)
NUMR_VALUE_MATH1_F32(erfc)
NUMR_VALUE_MATH1_F32(erfinv)
#undef NUMR_VALUE_MATH1_F32

Value pow(const Value& x, const Value& y) {
  return via_f64("pow", x, y, [](const Value& a, const Value& c) { return libm::pow(a, c); });
}

Value atan2(const Value& y, const Value& x) {
  return via_f64("atan2", y, x, [](const Value& a, const Value& c) { return libm::atan2(a, c); });
}

}  // namespace numr::ptx
