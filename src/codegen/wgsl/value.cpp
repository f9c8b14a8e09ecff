// Shader text is assembled with chains of std::string +, on which GCC 12 reports
// -Wrestrict falsely (GCC bug 105329).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wrestrict"
#endif
#include "codegen/wgsl/value.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string_view>

#include "numr/error.h"

namespace numr::wgsl {

const char* type_name(Type t) {
  switch (t) {
    case Type::f32: return "f32";
    case Type::i32: return "i32";
    case Type::u32: return "u32";
    case Type::i64: return "vec2<u32>";
  }
  return "?";
}

// WGSL's x / y is only promised to 2.5 ulp, and only for |y| in [2^-126, 2^126]; a device
// that flushes subnormals loses x / y outright where 1 / y is one. So the operands are
// scaled by powers of two until x, y, the quotient q and their halves stay normal, and q is
// corrected by the residual x - q y, which Dekker's product over 12-bit halves gives
// exactly without relying on a fused fma. The correction divides approximately too, which
// can leave the last bit wrong near a half-way point; a final step compares the exact
// residual with the half-way point's and moves one ulp where it lies beyond. Where q is 0 or
// a step is not finite, q stands.
const char* f32_functions() {
  return R"(fn numr_f32_hi(x: f32) -> f32 { return bitcast<f32>(bitcast<u32>(x) & 0xfffff000u); }
fn numr_f32_sub(x: f32, y: f32) -> f32 { return x - bitcast<f32>(bitcast<u32>(y) + numr_zero); }
fn numr_f32_prod_err(q: f32, b: f32, bh: f32, bl: f32, p: f32) -> f32 {
  let qh = numr_f32_hi(q);
  let ql = numr_f32_sub(q, qh);
  return ((numr_f32_sub(qh * bh, p) + qh * bl) + ql * bh) + ql * bl;
}
fn numr_f32_div(x: f32, y: f32) -> f32 {
  let ax = bitcast<u32>(x) & 0x7fffffffu;
  let ay = bitcast<u32>(y) & 0x7fffffffu;
  let tiny_x = ax < 0x21800000u;
  let tiny_y = ay < 0x21800000u;
  let big_y = ay > 0x7e800000u;
  var a = select(x, x * 0x1p64f, tiny_x);
  var b = select(y, y * 0x1p64f, tiny_y);
  b = select(b, b * 0x1p-64f, big_y);
  let small_q = (bitcast<u32>(a / b) & 0x7fffffffu) < 0x0d800000u;
  a = select(a, a * 0x1p64f, small_q);
  let q = a / b;
  let bh = numr_f32_hi(b);
  let bl = numr_f32_sub(b, bh);
  let p = q * b;
  let c = q + numr_f32_sub(numr_f32_sub(a, p), numr_f32_prod_err(q, b, bh, bl, p)) / b;
  // The exact residual of c against that of the half-way point to its neighbour n toward
  // the quotient: (a - c b) - ec beyond t = (n - c) / 2 * b, decided as (a - c b) - t vs ec.
  let pc = c * b;
  let ec = numr_f32_prod_err(c, b, bh, bl, pc);
  let rest = numr_f32_sub(a, pc);
  let up = (numr_f32_sub(rest, ec) > 0.0) == (b > 0.0);
  let n = bitcast<f32>(select(bitcast<u32>(c) - 1u, bitcast<u32>(c) + 1u, (c > 0.0) == up));
  let t = numr_f32_sub(n, c) * 0.5 * b;
  let beyond = numr_f32_sub(rest, t);
  let step = select((beyond < ec), (beyond > ec), (t > 0.0)) && numr_f32_sub(rest, ec) != 0.0;
  let c2 = select(c, n, step);
  let inf = 0x7f800000u;
  let fix = q != 0.0 && (bitcast<u32>(q) & inf) != inf && (bitcast<u32>(c2) & inf) != inf &&
            (bitcast<u32>(c) & inf) != inf;
  // Back by the scales: 2^64 up or up to three 2^-64 down, never both.
  var r = select(q, c2, fix) * select(1.0, 0x1p64f, tiny_y && !tiny_x);
  r = r * select(1.0, 0x1p-64f, tiny_x && !tiny_y);
  r = r * select(1.0, 0x1p-64f, big_y);
  return r * select(1.0, 0x1p-64f, small_q);
}
)";
}

// An i64 is (low word, high word). Sums and products wrap; the low 64 bits of a product
// are the same for signed and unsigned operands, so one multiply serves both.
const char* i64_functions() {
  return R"(fn numr_i64_add(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
  let lo = a.x + b.x;
  return vec2<u32>(lo, a.y + b.y + select(0u, 1u, lo < a.x));
}
fn numr_i64_sub(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
  return vec2<u32>(a.x - b.x, a.y - b.y - select(0u, 1u, a.x < b.x));
}
fn numr_i64_neg(a: vec2<u32>) -> vec2<u32> { return numr_i64_sub(vec2<u32>(0u), a); }
fn numr_i64_abs(a: vec2<u32>) -> vec2<u32> {
  return select(a, numr_i64_neg(a), bitcast<i32>(a.y) < 0i);
}
// The high word of the 64-bit product of two u32, from 16-bit pieces.
fn numr_i64_mulhi(a: u32, b: u32) -> u32 {
  let al = a & 0xffffu; let ah = a >> 16u; let bl = b & 0xffffu; let bh = b >> 16u;
  let lh = al * bh; let hl = ah * bl;
  let mid = ((al * bl) >> 16u) + (lh & 0xffffu) + (hl & 0xffffu);
  return ah * bh + (lh >> 16u) + (hl >> 16u) + (mid >> 16u);
}
fn numr_i64_mul(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
  return vec2<u32>(a.x * b.x, numr_i64_mulhi(a.x, b.x) + a.x * b.y + a.y * b.x);
}
fn numr_i64_lt(a: vec2<u32>, b: vec2<u32>) -> bool {
  let ah = bitcast<i32>(a.y); let bh = bitcast<i32>(b.y);
  return ah < bh || (ah == bh && a.x < b.x);
}
fn numr_i64_from_i32(x: i32) -> vec2<u32> {
  return vec2<u32>(bitcast<u32>(x), select(0u, 0xffffffffu, x < 0i));
}
// Truncation toward zero, saturating at the int64 limits, NaN -> 0 (as the CPU converts).
fn numr_i64_from_f32(x: f32) -> vec2<u32> {
  let bits = bitcast<u32>(x);
  let e = i32((bits >> 23u) & 0xffu) - 127;
  if ((bits & 0x7fffffffu) > 0x7f800000u || e < 0) { return vec2<u32>(0u); }
  let neg = (bits >> 31u) != 0u;
  if (e >= 63) { return select(vec2<u32>(0xffffffffu, 0x7fffffffu), vec2<u32>(0u, 0x80000000u), neg); }
  // |x| = m 2^(e - 23), an integer when e >= 23.
  let m = (bits & 0x7fffffu) | 0x800000u;
  var mag = vec2<u32>(0u);
  if (e <= 23) {
    mag = vec2<u32>(m >> u32(23 - e), 0u);
  } else if (e < 55) {
    let s = u32(e - 23);
    mag = vec2<u32>(m << s, m >> (32u - s));
  } else {
    mag = vec2<u32>(0u, m << u32(e - 55));
  }
  return select(mag, numr_i64_neg(mag), neg);
}
// A non-zero magnitude shifted left until its leading one is bit 63: (lo, hi, the shift).
fn numr_i64_lead(m: vec2<u32>) -> vec3<u32> {
  var n = countLeadingZeros(m.y);
  if (m.y == 0u) { n = 32u + countLeadingZeros(m.x); }
  var v = m;
  if (n >= 32u) {
    v = vec2<u32>(0u, m.x << (n - 32u));
  } else if (n > 0u) {
    v = vec2<u32>(m.x << n, (m.y << n) | (m.x >> (32u - n)));
  }
  return vec3<u32>(v, n);
}
// Rounded to nearest, ties to even (as the CPU's float(int64)).
fn numr_i64_to_f32(a: vec2<u32>) -> f32 {
  let neg = bitcast<i32>(a.y) < 0i;
  let m = select(a, numr_i64_neg(a), neg);
  if (m.x == 0u && m.y == 0u) { return 0.0; }
  // The leading one moved to bit 63 of v; the value is 2^(63 - n) times v / 2^63.
  let l = numr_i64_lead(m);
  let v = l.xy;
  let n = l.z;
  let mant = v.y >> 8u;
  let rest = v.y & 0xffu;
  let up = rest > 0x80u || (rest == 0x80u && (v.x != 0u || (mant & 1u) != 0u));
  // The mantissa keeps its leading one, which adds one to the exponent field (so the field
  // is written one less); a mantissa rounded up to 2^24 carries into it.
  let bits = ((189u - n) << 23u) + mant + select(0u, 1u, up);
  return bitcast<f32>(bits | select(0u, 0x80000000u, neg));
}
// Rounded to odd (truncated, the lowest bit set when inexact): rounding that to a format of
// at most 22 significant bits once more is the single correct rounding (F16, BF16).
fn numr_i64_to_f32_odd(a: vec2<u32>) -> f32 {
  let neg = bitcast<i32>(a.y) < 0i;
  let m = select(a, numr_i64_neg(a), neg);
  if (m.x == 0u && m.y == 0u) { return 0.0; }
  let l = numr_i64_lead(m);
  let v = l.xy;
  let n = l.z;
  let sticky = select(0u, 1u, (v.y & 0xffu) != 0u || v.x != 0u);
  let bits = ((189u - n) << 23u) + ((v.y >> 8u) | sticky);
  return bitcast<f32>(bits | select(0u, 0x80000000u, neg));
}
)";
}

std::string Body::let(Type t, const std::string& expr) {
  std::string name = "v" + std::to_string(next_++);
  text_ += "  let " + name + ": " + type_name(t) + " = " + expr + ";\n";
  return name;
}

std::string Body::var(Type t, const std::string& expr) {
  std::string name = "v" + std::to_string(next_++);
  text_ += "  var " + name + ": " + type_name(t) + " = " + expr + ";\n";
  return name;
}

namespace {
thread_local const FormulaScope* g_scope = nullptr;
thread_local Body* g_body = nullptr;
thread_local Type g_type = Type::f32;

std::string mask_let(const std::string& expr) {
  Body& b = FormulaScope::body();
  // Masks are WGSL bools; Body::let only names numbers, so they get their own line.
  static thread_local int n = 0;
  std::string name = "m" + std::to_string(n++);
  b.line("let " + name + ": bool = " + expr + ";");
  return name;
}

void same_type(const Value& a, const Value& b, const char* op) {
  if (a.type() != b.type())
    fail<BackendError>("webgpu", "WGSL ", op, " of ", type_name(a.type()), " and ",
                       type_name(b.type()));
}

Value binary(const Value& a, const Value& b, const char* op) {
  same_type(a, b, op);
  return Value::let(a.type(), "(" + a.str() + " " + op + " " + b.str() + ")");
}

Value call_i64(const char* fn, const Value& a, const Value& b) {
  same_type(a, b, fn);
  return Value::let(Type::i64,
                    std::string("numr_i64_") + fn + "(" + a.str() + ", " + b.str() + ")");
}

[[noreturn]] void no_i64(const char* op) {
  fail<BackendError>("webgpu", "WGSL ", op, " of an i64 Value (it has no such function)");
}

// NaN as a test of the bits: the compiler may not fold it away.
std::string is_nan(const Value& x) {
  return "((bitcast<u32>(" + x.str() + ") & 0x7fffffffu) > 0x7f800000u)";
}

// Float comparisons with C++'s NaN rules spelled out with bit tests, as a compiler that
// assumes no NaN may otherwise answer either way: != is true and the others false when
// either side is NaN.
Mask compare(const Value& a, const Value& b, const char* op) {
  same_type(a, b, op);
  if (a.type() == Type::i64) {
    const std::string o = op, lt = "numr_i64_lt(" + a.str() + ", " + b.str() + ")",
                      gt = "numr_i64_lt(" + b.str() + ", " + a.str() + ")";
    if (o == "==") return Mask(mask_let("all(" + a.str() + " == " + b.str() + ")"));
    if (o == "!=") return Mask(mask_let("any(" + a.str() + " != " + b.str() + ")"));
    if (o == "<") return Mask(mask_let(lt));
    if (o == ">") return Mask(mask_let(gt));
    return Mask(mask_let("!" + (o == "<=" ? gt : lt)));
  }
  const std::string c = a.str() + " " + op + " " + b.str();
  if (a.type() != Type::f32) return Mask(mask_let(c));
  const std::string unordered = is_nan(a) + " || " + is_nan(b);
  if (std::string_view(op) == "!=") return Mask(mask_let("(" + c + ") || " + unordered));
  return Mask(mask_let("(" + c + ") && !(" + unordered + ")"));
}
}  // namespace

FormulaScope::FormulaScope(Body& body, Type compute)
    : body_(g_body), type_(g_type), outer_(g_scope) {
  g_body = &body;
  g_type = compute;
  g_scope = this;
}
FormulaScope::~FormulaScope() {
  g_body = body_;
  g_type = type_;
  g_scope = outer_;
}
Body& FormulaScope::body() {
  if (!g_scope) fail<BackendError>("webgpu", "a WGSL Value used outside a FormulaScope");
  return *g_body;
}
Type FormulaScope::compute_type() { return g_type; }

Value Value::call_function(const std::string& name, const std::vector<Value>& args,
                           Value (*impl)(const std::vector<Value>& params)) {
  for (const Value& a : args)
    if (a.type() != Type::f32)
      fail<BackendError>("webgpu", "WGSL numr_", name, " of a ", type_name(a.type()), " Value");
  const std::string fn = "numr_" + name;
  Body& module = FormulaScope::body().module();
  if (std::find(module.defined_.begin(), module.defined_.end(), fn) == module.defined_.end()) {
    module.defined_.push_back(fn);
    Body f(module);
    std::string head = "fn " + fn + "(";
    std::vector<Value> params;
    for (size_t i = 0; i < args.size(); ++i) {
      params.push_back(Value::named(Type::f32, "p" + std::to_string(i)));
      head += (i ? ", p" : "p") + std::to_string(i) + ": f32";
    }
    FormulaScope scope(f, Type::f32);
    const Value r = impl(params);
    module.functions_ += head + ") -> f32 {\n" + f.text_ + "  return " + r.str() + ";\n}\n";
  }
  std::string call = fn + "(";
  for (size_t i = 0; i < args.size(); ++i) call += (i ? ", " : "") + args[i].str();
  return Value::let(Type::f32, call + ")");
}

Value Value::let(Type t, const std::string& expr) {
  return Value(t, FormulaScope::body().let(t, expr));
}

Value Value::constant(Type t, double c) {
  char buf[64];
  switch (t) {
    case Type::f32: {
      const float f = float(c);
      const uint32_t bits = std::bit_cast<uint32_t>(f);
      if (!std::isfinite(f)) {
        // A constant expression may not be infinite or NaN: add a run-time zero.
        std::snprintf(buf, sizeof buf, "bitcast<f32>(0x%08xu + numr_zero)", bits);
      } else if (std::fpclassify(f) == FP_NORMAL || bits == 0) {
        std::snprintf(buf, sizeof buf, "f32(%.9g)", double(f));
      } else {
        std::snprintf(buf, sizeof buf, "bitcast<f32>(0x%08xu)", bits);
      }
      break;
    }
    case Type::i32: {
      const double lo = double(std::numeric_limits<int32_t>::min());
      const double hi = double(std::numeric_limits<int32_t>::max());
      const long long v =
          std::isnan(c) ? 0 : (long long)std::fmax(lo, std::fmin(hi, std::trunc(c)));
      std::snprintf(buf, sizeof buf, "i32(%lld)", v);
      break;
    }
    case Type::u32: {
      const double v = std::isnan(c) ? 0 : std::fmax(0.0, std::fmin(4294967295.0, std::trunc(c)));
      std::snprintf(buf, sizeof buf, "%lluu", (unsigned long long)v);
      break;
    }
    case Type::i64: {
      // As the CPU converts a double to int64 (2^63 is the first value out of range).
      if (std::isnan(c)) return constant_i64(0);
      if (c <= -9223372036854775808.0) return constant_i64(std::numeric_limits<int64_t>::min());
      if (c >= 9223372036854775808.0) return constant_i64(std::numeric_limits<int64_t>::max());
      return constant_i64(int64_t(c));
    }
  }
  return Value(t, buf);
}

Value Value::constant_i64(int64_t c) {
  const uint64_t u = uint64_t(c);
  char buf[64];
  std::snprintf(buf, sizeof buf, "vec2<u32>(0x%08xu, 0x%08xu)", unsigned(u & 0xffffffffu),
                unsigned(u >> 32));
  return Value(Type::i64, buf);
}

Value operator+(const Value& a, const Value& b) {
  return a.type() == Type::i64 ? call_i64("add", a, b) : binary(a, b, "+");
}
Value operator-(const Value& a, const Value& b) {
  if (a.type() == Type::i64) return call_i64("sub", a, b);
  // x - x is NaN for infinite x (finite_or_zero relies on it), and the error-free steps of
  // the math library ((1 + x) - 1, (a + b) - a) must be computed as written; a compiler
  // that reassociates floats (Mesa's NIR treats them as inexact) folds them, so the right
  // side passes through a run-time zero it cannot see through.
  if (a.type() == Type::f32)
    return Value::let(
        a.type(), "(" + a.str() + " - bitcast<f32>(bitcast<u32>(" + b.str() + ") + numr_zero))");
  return binary(a, b, "-");
}
Value operator*(const Value& a, const Value& b) {
  return a.type() == Type::i64 ? call_i64("mul", a, b) : binary(a, b, "*");
}
Value operator/(const Value& a, const Value& b) {
  if (a.type() == Type::i64) no_i64("/");
  if (a.type() == Type::f32)
    return Value::let(a.type(), "numr_f32_div(" + a.str() + ", " + b.str() + ")");
  return binary(a, b, "/");
}
Value operator-(const Value& a) {
  if (a.type() == Type::i64) return Value::let(a.type(), "numr_i64_neg(" + a.str() + ")");
  return Value::let(a.type(), "(-" + a.str() + ")");
}
Value operator&(const Value& a, const Value& b) { return binary(a, b, "&"); }
Value operator|(const Value& a, const Value& b) { return binary(a, b, "|"); }
Value operator^(const Value& a, const Value& b) { return binary(a, b, "^"); }
Value operator<<(const Value& a, const Value& b) {
  if (a.type() == Type::i64) no_i64("<<");
  return Value::let(a.type(), "(" + a.str() + " << u32(" + b.str() + "))");
}
Value operator>>(const Value& a, const Value& b) {
  if (a.type() == Type::i64) no_i64(">>");
  return Value::let(a.type(), "(" + a.str() + " >> u32(" + b.str() + "))");
}

Mask operator==(const Value& a, const Value& b) {
  if (a.type() == Type::f32 && a.str() == b.str()) return Mask(mask_let("!" + is_nan(a)));
  return compare(a, b, "==");
}
Mask operator!=(const Value& a, const Value& b) {
  if (a.type() == Type::f32 && a.str() == b.str()) return Mask(mask_let(is_nan(a)));
  return compare(a, b, "!=");
}
Mask operator<(const Value& a, const Value& b) { return compare(a, b, "<"); }
Mask operator<=(const Value& a, const Value& b) { return compare(a, b, "<="); }
Mask operator>(const Value& a, const Value& b) { return compare(a, b, ">"); }
Mask operator>=(const Value& a, const Value& b) { return compare(a, b, ">="); }
Mask operator&(const Mask& a, const Mask& b) { return Mask(mask_let(a.str() + " && " + b.str())); }
Mask operator|(const Mask& a, const Mask& b) { return Mask(mask_let(a.str() + " || " + b.str())); }
Mask operator^(const Mask& a, const Mask& b) { return Mask(mask_let(a.str() + " != " + b.str())); }
Mask operator!(const Mask& a) { return Mask(mask_let("!" + a.str())); }

Value select(const Mask& m, const Value& a, const Value& b) {
  same_type(a, b, "select");
  return Value::let(a.type(), "select(" + b.str() + ", " + a.str() + ", " + m.str() + ")");
}

namespace {
Value call(const char* fn, const Value& x) {
  if (x.type() == Type::i64) no_i64(fn);
  return Value::let(x.type(), std::string(fn) + "(" + x.str() + ")");
}
}  // namespace

Value fabs(const Value& x) { return abs(x); }
Value abs(const Value& x) {
  if (x.type() == Type::i64) return Value::let(x.type(), "numr_i64_abs(" + x.str() + ")");
  return call("abs", x);
}
Value sqrt(const Value& x) { return call("sqrt", x); }
Value floor(const Value& x) { return x.type() == Type::f32 ? call("floor", x) : x; }
Value ceil(const Value& x) { return x.type() == Type::f32 ? call("ceil", x) : x; }
Value trunc(const Value& x) { return x.type() == Type::f32 ? call("trunc", x) : x; }
Value rint(const Value& x) { return x.type() == Type::f32 ? call("round", x) : x; }
Value fma(const Value& a, const Value& b, const Value& c) {
  if (a.type() != Type::f32) return a * b + c;
  return Value::let(a.type(), "fma(" + a.str() + ", " + b.str() + ", " + c.str() + ")");
}
Value fmin(const Value& a, const Value& b) {
  if (a.type() == Type::i64) return select(b < a, b, a);
  if (a.type() != Type::f32) return Value::let(a.type(), "min(" + a.str() + ", " + b.str() + ")");
  const Value m = Value::let(a.type(), "min(" + a.str() + ", " + b.str() + ")");
  return select(a != a, b, select(b != b, a, m));
}
Value fmax(const Value& a, const Value& b) {
  if (a.type() == Type::i64) return select(a < b, b, a);
  if (a.type() != Type::f32) return Value::let(a.type(), "max(" + a.str() + ", " + b.str() + ")");
  const Value m = Value::let(a.type(), "max(" + a.str() + ", " + b.str() + ")");
  return select(a != a, b, select(b != b, a, m));
}
Value pow2i(const Value& n) {
  return Value::let(Type::f32, "bitcast<f32>(u32(i32(" + n.str() + ") + 127) << 23u)");
}
Value ilogb_normal(const Value& x) {
  return Value::let(Type::f32, "f32(i32((bitcast<u32>(" + x.str() + ") >> 23u) & 0xffu) - 127)");
}
Value as_bits(const Value& x) { return bitcast(x, Type::u32); }

Value convert(const Value& x, Type to) {
  if (x.type() == to) return x;
  if (x.type() == Type::i64) {
    if (to == Type::f32) return Value::let(to, "numr_i64_to_f32(" + x.str() + ")");
    if (to == Type::i32) return Value::let(to, "bitcast<i32>(" + x.str() + ".x)");
    return Value::let(to, x.str() + ".x");  // u32
  }
  if (to == Type::i64) {
    if (x.type() == Type::f32) return Value::let(to, "numr_i64_from_f32(" + x.str() + ")");
    if (x.type() == Type::i32) return Value::let(to, "numr_i64_from_i32(" + x.str() + ")");
    return Value::let(to, "vec2<u32>(" + x.str() + ", 0u)");  // u32
  }
  if (x.type() == Type::f32 && to == Type::i32) {
    // WGSL's conversion saturates; NaN becomes 0 as on the CPU.
    return Value::let(to, "select(i32(" + x.str() + "), 0i, " + is_nan(x) + ")");
  }
  return Value::let(to, std::string(type_name(to)) + "(" + x.str() + ")");
}
Value bitcast(const Value& x, Type to) {
  if (x.type() == to) return x;
  if (x.type() == Type::i64 || to == Type::i64) no_i64("bitcast");
  return Value::let(to, std::string("bitcast<") + type_name(to) + ">(" + x.str() + ")");
}

}  // namespace numr::wgsl
