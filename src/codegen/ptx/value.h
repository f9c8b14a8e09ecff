// Value: the number type that lets the single-source formulas of src/math emit PTX.
//
//   KernelBuilder b("relu_f32", target);
//   ...
//   FormulaScope scope(b, PtxType::f32);        // T(1.0) now means an f32 constant in b
//   Value x(b.ld_global(PtxType::f32, addr));
//   Value y = math::relu(x);                    // emits setp + selp into b
//   b.st_global(out_addr, y.reg());
//
// A Value is an immutable register of a compute type (f32, f64, s32, s64); every operation
// emits instructions into the builder of the innermost FormulaScope of this thread and
// returns a new Value. Assigning one Value variable to another rebinds it (SSA style);
// to update a register in place inside a builder loop, use KernelBuilder::assign.
//
// Semantics follow C++ on double: + - * / round to nearest even (no contraction: fma is
// explicit), / and sqrt are IEEE, == < <= > >= are false when either side is NaN and != is
// true. Integer types wrap on overflow. Transcendental functions (exp, log, sin, ...) are
// not here: they come from the device math library, written over these primitives.
//
// A scope may relax f32 (never f64) arithmetic with FastMath, for kernels whose results
// cannot see the difference:
// - FastMath::div makes f32 `/` div.full.f32: at most 2 ulp from the IEEE quotient over the
//   whole range (zeros, infinities and NaN as IEEE), with no slow-path branch. The
//   elementwise kernels enable it for F32 activations and their gradients (sigmoid, silu,
//   gelu, softplus, act_mul, act_bwd, act_mul_bwd), where the quotient is one of a few
//   roundings in a formula held to 1e-5 relative; div, div_scalar, recip and the other F32
//   ops keep IEEE division.
// - FastMath::exp makes f32 exp and exp2 a single ex2.approx.ftz (value_math.h): relative
//   error below 4.1e-6, results below 2^-126 flushed to zero. For kernels whose values are
//   F16 or BF16, whose half ulp (2.4e-4, 2e-3) is 60 to 500 times larger; those kernels
//   (every op, div included) enable div too.
#pragma once

#include <array>
#include <cstddef>
#include <type_traits>

#include "codegen/ptx/builder.h"

namespace numr::ptx {

// The approximations a scope allows in f32 arithmetic (see above); all off by default.
struct FastMath {
  bool div = false;  // f32 `/` as div.full.f32 (2 ulp)
  bool exp = false;  // f32 exp, exp2 as ex2.approx.ftz (relative error < 4.1e-6)
};

// Makes `b` the builder that Values emit into, `compute` the type of constants made with
// Value(double) and `fast` the approximations f32 operations may use, until the scope ends.
// Scopes nest (the innermost wins, FastMath included: a nested scope without it gets no
// approximations).
class FormulaScope {
 public:
  FormulaScope(KernelBuilder& b, PtxType compute, FastMath fast = {});
  ~FormulaScope();
  FormulaScope(const FormulaScope&) = delete;
  FormulaScope& operator=(const FormulaScope&) = delete;

  // The innermost scope's builder, type and approximations; throw BackendError outside
  // any scope.
  static KernelBuilder& builder();
  static PtxType compute_type();
  static FastMath fast_math();

 private:
  KernelBuilder* builder_;
  PtxType type_;
  FastMath fast_;
  const FormulaScope* outer_;
};

// A predicate: the result of comparing Values.
class Mask {
 public:
  explicit Mask(Reg p);
  Reg reg() const { return p_; }

 private:
  Reg p_;
};

class Value {
 public:
  // Wraps a register of type f32, f64, s32 or s64.
  explicit Value(Reg r);
  // A constant of the current scope's compute type (integers: C++'s conversion).
  template <class N>
  requires std::is_arithmetic_v<N>
  explicit Value(N c) : Value(constant(FormulaScope::compute_type(), double(c))) {}

  // A constant of type t.
  static Value constant(PtxType t, double c);

  Reg reg() const { return r_; }
  PtxType type() const { return r_.type; }

 private:
  Reg r_;
};

// ---- arithmetic ----
Value operator+(const Value& a, const Value& b);
Value operator-(const Value& a, const Value& b);
Value operator*(const Value& a, const Value& b);
Value operator/(const Value& a,
                const Value& b);  // floats: IEEE (FastMath::div: f32 2 ulp); ints: truncating
Value operator-(const Value& a);
// Mixed with a plain number: the number becomes a constant of the Value's type.
#define NUMR_PTX_MIXED(op)                                                  \
  template <class N>                                                        \
  requires std::is_arithmetic_v<N> Value operator op(const Value& a, N b) { \
    return a op Value::constant(a.type(), double(b));                       \
  }                                                                         \
  template <class N>                                                        \
  requires std::is_arithmetic_v<N> Value operator op(N a, const Value& b) { \
    return Value::constant(b.type(), double(a)) op b;                       \
  }
NUMR_PTX_MIXED(+)
NUMR_PTX_MIXED(-)
NUMR_PTX_MIXED(*)
NUMR_PTX_MIXED(/)
#undef NUMR_PTX_MIXED

// ---- comparisons (C++ semantics on NaN) ----
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

// ---- functions found by argument-dependent lookup ----
Value select(const Mask& m, const Value& a, const Value& b);  // m ? a : b
// Whether x computes in float, for the float approximations of math/special.h.
inline bool computes_in_float(const Value& x) { return x.type() == PtxType::f32; }
// Whether x's type can hold NaN (floats), for the rules of math/reduce_rules.h.
inline bool can_be_nan(const Value& x) { return is_float(x.type()); }
Value fabs(const Value& x);  // ints: abs
Value abs(const Value& x);
Value sqrt(const Value& x);   // IEEE (sqrt.rn)
Value floor(const Value& x);  // ints: unchanged
Value ceil(const Value& x);
Value trunc(const Value& x);
Value rint(const Value& x);                                 // nearest, ties to even
Value fma(const Value& a, const Value& b, const Value& c);  // one rounding; ints: a*b+c
// Hardware min/max: if one operand is NaN the other is returned (as C's fmin/fmax).
Value fmin(const Value& a, const Value& b);
Value fmax(const Value& a, const Value& b);
// 2^n for integral-valued n in [-1022, 1023] (f64) or [-126, 127] (f32), built from the
// exponent bits (outside that range the result is meaningless).
Value pow2i(const Value& n);
// The unbiased exponent field of x as an integral-valued Value of x's type:
// floor(log2|x|) for normal x (zero and subnormals give -1023 / -127; Inf and NaN 1024 / 128).
Value ilogb_normal(const Value& x);
// Converts to another compute type: floats -> ints truncate and saturate (NaN -> 0),
// others round to nearest even.
Value convert(const Value& x, PtxType to);

}  // namespace numr::ptx

namespace numr::ptx {

// The loops and lazy paths of math/control.h as PTX control flow. The carried values move
// into fresh registers that the body updates in place (assign); each thread runs the loop
// until its own lanes are done, so a warp runs until all its threads are.
template <std::size_t N, class Step, class Done>
void emit_iterate_until(int max_n, std::array<Value, N>& v, Step& step, Done& done) {
  KernelBuilder& b = FormulaScope::builder();
  for (Value& x : v) x = Value(b.mov(x.type(), x.reg()));
  const Value n(b.mov(FormulaScope::compute_type(), 1.0));
  b.while_loop([&] { return ((n <= Value(max_n)) & !done(v)).reg(); },
               [&] {
                 std::array<Value, N> next = v;
                 step(n, next);
                 for (std::size_t i = 0; i < N; ++i) b.assign(v[i].reg(), next[i].reg());
                 b.assign(n.reg(), (n + Value(1)).reg());
               });
}
template <std::size_t N, class Path>
void emit_compute_where(const Mask& need, std::array<Value, N>& v, Path& path) {
  KernelBuilder& b = FormulaScope::builder();
  for (Value& x : v) x = Value(b.mov(x.type(), x.reg()));
  b.if_then(need.reg(), [&] {
    std::array<Value, N> next = v;
    path(next);
    for (std::size_t i = 0; i < N; ++i) b.assign(v[i].reg(), next[i].reg());
  });
}

}  // namespace numr::ptx
