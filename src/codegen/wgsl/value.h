// Value: the number type that lets the single-source formulas of src/math emit WGSL, as
// ptx::Value emits PTX.
//
//   Body body;
//   FormulaScope scope(body, Type::f32);       // Value(1.0) now means an f32 constant
//   Value x = Value::let(Type::f32, "a[i]");
//   Value y = math::silu(x);                    // appends `let v3 = ...;` lines to body
//   body.line("o[i] = " + y.str() + ";");
//
// Every operation appends one `let` to the body of the innermost FormulaScope of this
// thread and returns a Value naming it, so the text grows with the operations, never with
// the nesting of the formula. Types: f32, i32 (32-bit integer dtypes compute in i32 and
// wrap), u32 (raw bits) and i64: WGSL has no 64-bit integers, so an i64 is a vec2<u32> of
// its low and high words (the bytes of a little-endian int64), whose arithmetic, signed
// comparisons and conversions are calls to the functions of i64_functions(); it wraps like
// two's complement. Comparisons give a Mask (WGSL bool) with C++'s NaN rules. WGSL compilers may
// assume that no value is NaN or infinite, so float comparisons carry tests of the bits
// (`x != x`, the formulas' NaN test, is one), `x - x` subtracts a value the compiler cannot
// see is x, and infinities and NaN constants are made at run time (a constant expression
// may not hold them). The module must define `numr_zero`, a u32 zero the compiler cannot
// know (Shader reads it from the parameters), i64_functions() where an i64 Value is used
// and f32_functions() where an f32 is divided.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

namespace numr::wgsl {

enum class Type { f32, i32, u32, i64 };
const char* type_name(Type t);
// The WGSL functions an i64 Value's operations call (all named numr_i64_*).
const char* i64_functions();
// The WGSL function an f32 Value's division calls (numr_f32_div).
const char* f32_functions();

// The statements of a shader function under construction, and the helper functions they
// call (module-scope WGSL, each defined once: see call_function).
class Body {
 public:
  Body() = default;
  // The statements of a helper function of `module`'s shader: the functions they call go
  // to the module's body.
  explicit Body(Body& module) : module_(&module) {}
  // Appends `let vN: type = expr;` and returns vN.
  std::string let(Type t, const std::string& expr);
  // Appends `var vN: type = expr;` and returns vN (a value a loop or branch updates).
  std::string var(Type t, const std::string& expr);
  void line(const std::string& s) { text_ += "  " + s + "\n"; }
  const std::string& text() const { return text_; }
  // The helper functions, to be placed at module scope.
  const std::string& functions() const { return functions_; }
  // The body that holds the module's helper functions.
  Body& module() { return module_ ? module_->module() : *this; }

 private:
  friend class Value;
  std::string text_;
  std::string functions_;
  std::vector<std::string> defined_;
  Body* module_ = nullptr;
  int next_ = 0;
};

class FormulaScope {
 public:
  FormulaScope(Body& body, Type compute);
  ~FormulaScope();
  FormulaScope(const FormulaScope&) = delete;
  FormulaScope& operator=(const FormulaScope&) = delete;
  static Body& body();  // throws BackendError outside any scope
  static Type compute_type();

 private:
  Body* body_;
  Type type_;
  const FormulaScope* outer_;
};

class Mask {
 public:
  explicit Mask(std::string name) : name_(std::move(name)) {}
  const std::string& str() const { return name_; }

 private:
  std::string name_;
};

class Value {
 public:
  // A constant of the current scope's compute type.
  template <class N>
  requires std::is_arithmetic_v<N>
  explicit Value(N c) : Value(constant(FormulaScope::compute_type(), double(c))) {}
  // A constant of type t (floats rounded to f32; integers truncated, saturating, NaN to 0).
  static Value constant(Type t, double c);
  // An i64 constant, exactly.
  static Value constant_i64(int64_t c);
  // A new let of type t holding expr.
  static Value let(Type t, const std::string& expr);
  // Names an existing expression without a let (a parameter or a variable).
  static Value named(Type t, std::string name) { return Value(t, std::move(name)); }
  // A call of the f32 helper function `numr_<name>`, whose statements impl emits (from
  // Values naming its parameters) the first time a module calls it: a formula used many
  // times in one shader is then compiled once instead of once per use.
  static Value call_function(const std::string& name, const std::vector<Value>& args,
                             Value (*impl)(const std::vector<Value>& params));

  const std::string& str() const { return name_; }
  Type type() const { return type_; }

 private:
  Value(Type t, std::string name) : type_(t), name_(std::move(name)) {}
  Type type_;
  std::string name_;
};

Value operator+(const Value& a, const Value& b);
Value operator-(const Value& a, const Value& b);
Value operator*(const Value& a, const Value& b);
Value operator/(const Value& a, const Value& b);
Value operator-(const Value& a);
#define NUMR_WGSL_MIXED(op)                                                 \
  template <class N>                                                        \
  requires std::is_arithmetic_v<N> Value operator op(const Value& a, N b) { \
    return a op Value::constant(a.type(), double(b));                       \
  }                                                                         \
  template <class N>                                                        \
  requires std::is_arithmetic_v<N> Value operator op(N a, const Value& b) { \
    return Value::constant(b.type(), double(a)) op b;                       \
  }
NUMR_WGSL_MIXED(+)
NUMR_WGSL_MIXED(-)
NUMR_WGSL_MIXED(*)
NUMR_WGSL_MIXED(/)
#undef NUMR_WGSL_MIXED
// Bitwise operations and shifts, for u32 and i32 Values (random bits, packed storage);
// & | ^ of i64 too, not its shifts.
Value operator&(const Value& a, const Value& b);
Value operator|(const Value& a, const Value& b);
Value operator^(const Value& a, const Value& b);
Value operator<<(const Value& a, const Value& b);
Value operator>>(const Value& a, const Value& b);

Mask operator==(const Value& a, const Value& b);
Mask operator!=(const Value& a, const Value& b);
Mask operator<(const Value& a, const Value& b);
Mask operator<=(const Value& a, const Value& b);
Mask operator>(const Value& a, const Value& b);
Mask operator>=(const Value& a, const Value& b);
Mask operator&(const Mask& a, const Mask& b);
Mask operator|(const Mask& a, const Mask& b);
Mask operator^(const Mask& a, const Mask& b);
Mask operator!(const Mask& a);

// ---- functions found by argument-dependent lookup (the names of scalar_double.h) ----
Value select(const Mask& m, const Value& a, const Value& b);  // m ? a : b
inline bool can_be_nan(const Value& x) { return x.type() == Type::f32; }
// Whether x computes in float, for the float approximations of math/special.h.
inline bool computes_in_float(const Value& x) { return x.type() == Type::f32; }
Value fabs(const Value& x);
Value abs(const Value& x);
Value sqrt(const Value& x);
Value floor(const Value& x);
Value ceil(const Value& x);
Value trunc(const Value& x);
Value rint(const Value& x);  // nearest, ties to even
Value fma(const Value& a, const Value& b, const Value& c);
Value fmin(const Value& a, const Value& b);  // the other operand when one is NaN
Value fmax(const Value& a, const Value& b);
Value pow2i(const Value& n);         // 2^n, integral n in [-126, 127]
Value ilogb_normal(const Value& x);  // floor(log2 |x|) for normal x
Value as_bits(const Value& x);       // the u32 bits of an f32
// Conversions: f32 -> i32 and f32 -> i64 truncate and saturate (NaN -> 0); i64 -> f32
// rounds to nearest even; i64 -> i32 and u32 keep the low word; others as WGSL's.
Value convert(const Value& x, Type to);
Value bitcast(const Value& x, Type to);

}  // namespace numr::wgsl

namespace numr::wgsl {

// The loops and lazy paths of math/control.h as WGSL control flow: the carried values
// become `var`s that the body assigns; `loop { if (!go) { break; } ... }` and `if`.
template <std::size_t N, class Step, class Done>
void emit_iterate_until(int max_n, std::array<Value, N>& v, Step& step, Done& done) {
  Body& b = FormulaScope::body();
  for (Value& x : v) x = Value::named(x.type(), b.var(x.type(), x.str()));
  const Value n = Value::named(FormulaScope::compute_type(),
                               b.var(FormulaScope::compute_type(), Value(1).str()));
  b.line("loop {");
  const Mask go = (n <= Value(max_n)) & !done(v);
  b.line("if (!" + go.str() + ") { break; }");
  std::array<Value, N> next = v;
  step(n, next);
  for (std::size_t i = 0; i < N; ++i) b.line(v[i].str() + " = " + next[i].str() + ";");
  b.line(n.str() + " = " + (n + Value(1)).str() + ";");
  b.line("}");
}
template <std::size_t N, class Path>
void emit_compute_where(const Mask& need, std::array<Value, N>& v, Path& path) {
  Body& b = FormulaScope::body();
  for (Value& x : v) x = Value::named(x.type(), b.var(x.type(), x.str()));
  b.line("if (" + need.str() + ") {");
  std::array<Value, N> next = v;
  path(next);
  for (std::size_t i = 0; i < N; ++i) b.line(v[i].str() + " = " + next[i].str() + ";");
  b.line("}");
}

}  // namespace numr::wgsl
