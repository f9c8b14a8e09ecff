// The WGSL renderer without a device: the shared formulas instantiate with wgsl::Value, and
// the idioms a WGSL compiler may fold under a no-NaN assumption are rendered as bit tests
// or through a run-time zero.
#include <gtest/gtest.h>

#include <string>

#include "codegen/wgsl/value.h"
#include "codegen/wgsl/value_math.h"
#include "math/elementwise.h"
#include "numr/error.h"

namespace numr {
namespace {

using wgsl::Type;
using wgsl::Value;

bool has(const std::string& text, const std::string& piece) {
  return text.find(piece) != std::string::npos;
}

TEST(WgslValue, NanTestIsABitTest) {
  wgsl::Body body;
  wgsl::FormulaScope scope(body, Type::f32);
  const Value x = Value::named(Type::f32, "x");
  const Value r = math::isnan(x);
  EXPECT_TRUE(has(body.text(), "(bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u")) << body.text();
  EXPECT_FALSE(has(body.text(), "x != x")) << body.text();
  EXPECT_EQ(r.type(), Type::f32);
}

TEST(WgslValue, FloatComparisonsSpellOutNan) {
  wgsl::Body body;
  wgsl::FormulaScope scope(body, Type::f32);
  const Value a = Value::named(Type::f32, "a"), b = Value::named(Type::f32, "b");
  (void)(a < b);
  (void)(a != b);
  const std::string& t = body.text();
  EXPECT_TRUE(has(t, "(a < b) && !(")) << t;  // false when either is NaN
  EXPECT_TRUE(has(t, "(a != b) || ")) << t;   // true when either is NaN
  wgsl::Body ints;
  wgsl::FormulaScope iscope(ints, Type::i32);
  (void)(Value::named(Type::i32, "i") < Value::named(Type::i32, "j"));
  EXPECT_FALSE(has(ints.text(), "bitcast")) << ints.text();  // integers compare plainly
}

TEST(WgslValue, SelfSubtractionGoesThroughARunTimeZero) {
  wgsl::Body body;
  wgsl::FormulaScope scope(body, Type::f32);
  const Value d = Value::named(Type::f32, "d");
  (void)math::finite_or_zero(d);  // d - d == 0 is its finiteness test
  EXPECT_TRUE(has(body.text(), "numr_zero")) << body.text();
}

TEST(WgslValue, NonFiniteConstantsAreMadeAtRunTime) {
  wgsl::Body body;
  wgsl::FormulaScope scope(body, Type::f32);
  EXPECT_TRUE(has(Value(__builtin_inf()).str(), "numr_zero"));
  EXPECT_TRUE(has(Value(-__builtin_nan("")).str(), "numr_zero"));
  EXPECT_EQ(Value(0.5).str(), "f32(0.5)");
  EXPECT_EQ(Value::constant(Type::i32, -2147483648.0).str(), "i32(-2147483648)");
}

// Each operation is one `let`: the text grows with the operations, not with the nesting.
TEST(WgslValue, TranscendentalsInstantiateTheSharedLibrary) {
  wgsl::Body body;
  wgsl::FormulaScope scope(body, Type::f32);
  const Value y = math::gelu(Value::named(Type::f32, "x"));
  EXPECT_TRUE(has(body.text(), "let " + y.str() + ": f32 = ")) << body.text();
  // libm32's polynomials, in a helper function defined once however often it is called
  EXPECT_TRUE(has(body.functions(), "fma(")) << body.functions();
  EXPECT_THROW(wgsl::exp(Value::named(Type::i32, "i")), BackendError);
}

// The library's functions are helper functions of the module, defined once however many
// times (and from however deep inside another helper) a formula calls them.
TEST(WgslValue, LibraryFunctionsAreDefinedOnce) {
  const auto count = [](const std::string& text, const std::string& what) {
    size_t n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
  };
  wgsl::Body body;
  wgsl::FormulaScope scope(body, Type::f32);
  const Value x = Value::named(Type::f32, "x");
  const Value y = wgsl::sin(x) + wgsl::sin(x * x);
  const Value z = Value::call_function("twice_sin", {y}, [](const std::vector<Value>& p) {
    return wgsl::sin(p[0]) * wgsl::cos(p[0]);
  });
  EXPECT_EQ(count(body.functions(), "fn numr_sin("), 1u) << body.functions();
  EXPECT_EQ(count(body.functions(), "fn numr_cos("), 1u) << body.functions();
  EXPECT_EQ(count(body.functions(), "fn numr_twice_sin(p0: f32) -> f32 {"), 1u);
  EXPECT_EQ(count(body.text(), "numr_sin("), 2u) << body.text();
  EXPECT_TRUE(has(body.text(), "let " + z.str() + ": f32 = numr_twice_sin(")) << body.text();
  EXPECT_THROW(Value::call_function("f", {Value::named(Type::i32, "i")},
                                    [](const std::vector<Value>& p) { return p[0]; }),
               BackendError);
}

// The special functions render with WGSL's primitives alone (a primitive WGSL lacks would
// throw), one `let` per operation; their loops and lazy paths (math/control.h) as `loop`s
// that break once converged and `if`s over `var`s.
TEST(WgslValue, SpecialFunctionsRender) {
  using F1 = Value (*)(Value);
  const F1 unary[] = {math::bessel_j0<Value>, math::bessel_j1<Value>,  math::bessel_y0<Value>,
                      math::bessel_y1<Value>, math::bessel_i0<Value>,  math::bessel_i0e<Value>,
                      math::bessel_i1<Value>, math::bessel_i1e<Value>, math::bessel_k0<Value>,
                      math::bessel_k1<Value>, math::ellipk<Value>,     math::ellipe<Value>};
  const Value a = Value::named(Type::f32, "a"), b = Value::named(Type::f32, "b");
  const Value x = Value::named(Type::f32, "x");
  for (const F1 f : unary) {
    wgsl::Body body;
    wgsl::FormulaScope scope(body, Type::f32);
    const Value y = f(x);
    EXPECT_TRUE(has(body.text(), "let " + y.str() + ": f32 = ")) << body.text();
  }
  wgsl::Body body;
  wgsl::FormulaScope scope(body, Type::f32);
  for (const Value& y : {math::gammainc(a, x), math::gammaincc(a, x), math::betainc(a, b, x)}) {
    EXPECT_TRUE(has(body.text(), "let " + y.str() + ": f32 = "));
  }
  EXPECT_TRUE(has(body.text(), "loop {"));
  EXPECT_TRUE(has(body.text(), ") { break; }"));
  EXPECT_TRUE(has(body.text(), "var v"));
}

// I64 Values are word pairs whose operations call the emulation's functions; the integer
// formulas of src/math render unchanged, and what no op asks of them (division, shifts,
// the float library) is an error rather than componentwise vector arithmetic.
TEST(WgslValue, I64RendersThroughTheEmulation) {
  wgsl::Body body;
  wgsl::FormulaScope scope(body, Type::i64);
  const Value a = Value::named(Type::i64, "a"), b = Value::named(Type::i64, "b");
  const Value s = math::fused_mul_add(a, b, Value(3));
  (void)math::maximum(a, b);
  (void)math::sign(a);
  const std::string& t = body.text();
  EXPECT_EQ(s.type(), Type::i64);
  EXPECT_TRUE(has(t, "numr_i64_mul(a, b)")) << t;
  EXPECT_TRUE(has(t, "numr_i64_add(")) << t;
  EXPECT_TRUE(has(t, "numr_i64_lt(b, a)")) << t;  // a > b
  EXPECT_TRUE(has(t, "vec2<u32>(0x00000003u, 0x00000000u)")) << t;
  EXPECT_FALSE(has(t, "(a * b)")) << t;
  EXPECT_EQ(Value::constant_i64(-2).str(), "vec2<u32>(0xfffffffeu, 0xffffffffu)");
  EXPECT_EQ(Value::constant(Type::i64, 1e30).str(), "vec2<u32>(0xffffffffu, 0x7fffffffu)");
  EXPECT_THROW(a / b, BackendError);
  EXPECT_THROW(a << b, BackendError);
  EXPECT_THROW(wgsl::exp(a), BackendError);
  EXPECT_THROW(wgsl::sqrt(a), BackendError);
}

TEST(WgslValue, OutsideAScopeIsAnError) {
  EXPECT_THROW(Value::let(Type::f32, "1.0"), BackendError);
}

}  // namespace
}  // namespace numr
