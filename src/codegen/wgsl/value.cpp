// Shader text is assembled with chains of std::string +, on which GCC 12 reports
// -Wrestrict falsely (GCC bug 105329).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wrestrict"
#endif
#include "codegen/wgsl/value.h"

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
  }
  return "?";
}

std::string Body::let(Type t, const std::string& expr) {
  std::string name = "v" + std::to_string(next_++);
  text_ += "  let " + name + ": " + type_name(t) + " = " + expr + ";\n";
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

// NaN as a test of the bits: the compiler may not fold it away.
std::string is_nan(const Value& x) {
  return "((bitcast<u32>(" + x.str() + ") & 0x7fffffffu) > 0x7f800000u)";
}

// Float comparisons with C++'s NaN rules spelled out with bit tests, as a compiler that
// assumes no NaN may otherwise answer either way: != is true and the others false when
// either side is NaN.
Mask compare(const Value& a, const Value& b, const char* op) {
  same_type(a, b, op);
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
  }
  return Value(t, buf);
}

Value operator+(const Value& a, const Value& b) { return binary(a, b, "+"); }
Value operator-(const Value& a, const Value& b) {
  // x - x is NaN for infinite x (finite_or_zero relies on it), and the error-free steps of
  // the math library ((1 + x) - 1, (a + b) - a) must be computed as written; a compiler
  // that reassociates floats (Mesa's NIR treats them as inexact) folds them, so the right
  // side passes through a run-time zero it cannot see through.
  if (a.type() == Type::f32)
    return Value::let(
        a.type(), "(" + a.str() + " - bitcast<f32>(bitcast<u32>(" + b.str() + ") + numr_zero))");
  return binary(a, b, "-");
}
Value operator*(const Value& a, const Value& b) { return binary(a, b, "*"); }
Value operator/(const Value& a, const Value& b) { return binary(a, b, "/"); }
Value operator-(const Value& a) { return Value::let(a.type(), "(-" + a.str() + ")"); }
Value operator&(const Value& a, const Value& b) { return binary(a, b, "&"); }
Value operator|(const Value& a, const Value& b) { return binary(a, b, "|"); }
Value operator^(const Value& a, const Value& b) { return binary(a, b, "^"); }
Value operator<<(const Value& a, const Value& b) {
  return Value::let(a.type(), "(" + a.str() + " << u32(" + b.str() + "))");
}
Value operator>>(const Value& a, const Value& b) {
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
  return Value::let(x.type(), std::string(fn) + "(" + x.str() + ")");
}
}  // namespace

Value fabs(const Value& x) { return call("abs", x); }
Value abs(const Value& x) { return call("abs", x); }
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
  if (a.type() != Type::f32) return Value::let(a.type(), "min(" + a.str() + ", " + b.str() + ")");
  const Value m = Value::let(a.type(), "min(" + a.str() + ", " + b.str() + ")");
  return select(a != a, b, select(b != b, a, m));
}
Value fmax(const Value& a, const Value& b) {
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
  if (x.type() == Type::f32 && to == Type::i32) {
    // WGSL's conversion saturates; NaN becomes 0 as on the CPU.
    return Value::let(to, "select(i32(" + x.str() + "), 0i, " + is_nan(x) + ")");
  }
  return Value::let(to, std::string(type_name(to)) + "(" + x.str() + ")");
}
Value bitcast(const Value& x, Type to) {
  if (x.type() == to) return x;
  return Value::let(to, std::string("bitcast<") + type_name(to) + ">(" + x.str() + ")");
}

}  // namespace numr::wgsl
