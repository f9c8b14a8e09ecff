// The op-to-formula dispatch, generated from the op table once for every backend.
//
// visit_formula(op, v) calls v with Formula<op>{}, a type whose static members give the
// op's formula over any number type T: double in the reference, SIMD vectors in
// the CPU kernels, ptx::Value in the CUDA generator, tensor expressions in the
// compositions (src/ops/compose/expr.h). The visitor's body is instantiated per op, so a
// kernel's inner loop holds the formula itself, not a switch. x holds the op's inputs in
// order; output picks d_a (0) or d_b (1) of the two-output ActMulBwd ops.
#pragma once

#include <stdexcept>

#include "math/elementwise.h"
#include "numr/op_info.h"

namespace numr::math::inline NUMR_MATH_ISA {

// The scalar arguments of an elementwise op: s0 (and s1 for clamp), and which clamp
// bounds are present.
template <class T>
struct FormulaScalars {
  T s0, s1;
  bool has_lo = false, has_hi = false;
};

template <OpId Op>
struct Formula;

// A formula is inlined into the kernel's loop whatever the inliner's budget: a call left
// in the loop keeps the SIMD vectors in memory.
#if defined(__GNUC__)
#define NUMR_FORMULA_INLINE [[gnu::always_inline]] inline
#else
#define NUMR_FORMULA_INLINE inline
#endif

// Each Formula<op> has fn(a, b, c, s): the formula of the op's inputs a, b, c (those past
// its arity are ignored); eval(x, s, output) takes them from an array. The two-output
// ops have fn for each output and fn2 for both from one expression (sharing their terms).
// clang-format off
#define NUMR_FORMULA_(name, n_in, ...)                                                      \
  template <>                                                                              \
  struct Formula<OpId::name> {                                                             \
    static constexpr int inputs = n_in, outputs = 1;                                       \
    template <class T>                                                                     \
    NUMR_FORMULA_INLINE static T fn([[maybe_unused]] const T& a, [[maybe_unused]] const T& b, \
                                    [[maybe_unused]] const T& c,                           \
                                    [[maybe_unused]] const FormulaScalars<T>& s) {         \
      return __VA_ARGS__;                                                                  \
    }                                                                                      \
    template <class T>                                                                     \
    static T eval(const T* x, const FormulaScalars<T>& s, int) {                           \
      return fn(x[0], x[n_in > 1 ? 1 : 0], x[n_in > 2 ? 2 : 0], s);                        \
    }                                                                                      \
  };
#define NUMR_UNARY(name, d, g) NUMR_FORMULA_(name, 1, name(a))
#define NUMR_UNARY_PRED(name, d, g) NUMR_UNARY(name, d, g)
#define NUMR_ACTIVATION(name, d, g) NUMR_UNARY(name, d, g)
#define NUMR_BINARY(name, d, g) NUMR_FORMULA_(name, 2, name(a, b))
#define NUMR_COMPARE(name, d, g) NUMR_BINARY(name, d, g)
#define NUMR_LOGICAL(name, d, g) NUMR_BINARY(name, d, g)
#define NUMR_ACT_MUL(name, d, g) NUMR_BINARY(name, d, g)
#define NUMR_ACT_BWD(name, d, g) NUMR_BINARY(name, d, g)
#define NUMR_TERNARY(name, d, g) NUMR_FORMULA_(name, 3, name(a, b, c))
#define NUMR_SCALAR(name, d, g) NUMR_FORMULA_(name, 1, name(a, s.s0))
#define NUMR_ACTIVATION_P(name, p, v, d, g) NUMR_SCALAR(name, d, g)
#define NUMR_ACT_MUL_BWD(name, d, g)                                                       \
  template <>                                                                              \
  struct Formula<OpId::name> {                                                             \
    static constexpr int inputs = 3, outputs = 2;                                          \
    template <class T>                                                                     \
    NUMR_FORMULA_INLINE static void fn2(const T& a, const T& b, const T& c,                \
                                        const FormulaScalars<T>&, T& out0, T& out1) {      \
      out0 = name##_a(a, b, c);                                                            \
      out1 = name##_b(a, b, c);                                                            \
    }                                                                                      \
    template <class T>                                                                     \
    static T eval(const T* x, const FormulaScalars<T>&, int output) {                      \
      return output == 0 ? name##_a(x[0], x[1], x[2]) : name##_b(x[0], x[1], x[2]);       \
    }                                                                                      \
  };
#include "numr/op_table.def"
NUMR_FORMULA_(where_cond, 3, where_cond(a, b, c))
NUMR_FORMULA_(clamp, 1, clamp(a, s.s0, s.s1, s.has_lo, s.has_hi))
#undef NUMR_FORMULA_
// clang-format on

// Calls v(Formula<op>{}) and returns what it returns; throws std::invalid_argument for an
// op that is not elementwise.
template <class Visit>
decltype(auto) visit_formula(OpId op, Visit&& v) {
  switch (op) {
#define NUMR_CASE_(name) \
  case OpId::name: return v(Formula<OpId::name>{});
#define NUMR_UNARY(name, d, g) NUMR_CASE_(name)
#define NUMR_UNARY_PRED(name, d, g) NUMR_CASE_(name)
#define NUMR_ACTIVATION(name, d, g) NUMR_CASE_(name)
#define NUMR_BINARY(name, d, g) NUMR_CASE_(name)
#define NUMR_COMPARE(name, d, g) NUMR_CASE_(name)
#define NUMR_LOGICAL(name, d, g) NUMR_CASE_(name)
#define NUMR_ACT_MUL(name, d, g) NUMR_CASE_(name)
#define NUMR_ACT_BWD(name, d, g) NUMR_CASE_(name)
#define NUMR_TERNARY(name, d, g) NUMR_CASE_(name)
#define NUMR_SCALAR(name, d, g) NUMR_CASE_(name)
#define NUMR_ACTIVATION_P(name, p, v, d, g) NUMR_CASE_(name)
#define NUMR_ACT_MUL_BWD(name, d, g) NUMR_CASE_(name)
#include "numr/op_table.def"
    NUMR_CASE_(where_cond)
    NUMR_CASE_(clamp)
#undef NUMR_CASE_
    default: throw std::invalid_argument("formula: not an elementwise op");
  }
}

// The formula of op at one point.
template <class T>
T formula(OpId op, const T* x, const T& s0, const T& s1, bool has_lo, bool has_hi, int output) {
  const FormulaScalars<T> s{s0, s1, has_lo, has_hi};
  return visit_formula(op, [&](auto f) { return f.template eval<T>(x, s, output); });
}

}  // namespace numr::math::inline NUMR_MATH_ISA
