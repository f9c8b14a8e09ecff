// The op-to-formula dispatch, generated from the op table once for every T: the float64
// reference instantiates it with double, the compositions with tensor expressions
// (src/ops/compose/expr.h). x holds the op's inputs in order; output picks d_a (0) or
// d_b (1) of the two-output ActMulBwd ops.
#pragma once

#include <stdexcept>

#include "math/elementwise.h"
#include "numr/op_info.h"

namespace numr::math::inline NUMR_MATH_ISA {

template <class T>
T formula(OpId op, const T* x, const T& s0, const T& s1, bool has_lo, bool has_hi, int output) {
  switch (op) {
#define NUMR_ACT_MUL(name, d, g) \
  case OpId::name: return name(x[0], x[1]);
#define NUMR_ACT_BWD(name, d, g) NUMR_ACT_MUL(name, d, g)
#define NUMR_ACT_MUL_BWD(name, d, g) \
  case OpId::name: return output == 0 ? name##_a(x[0], x[1], x[2]) : name##_b(x[0], x[1], x[2]);
#define NUMR_UNARY(name, d, g) \
  case OpId::name: return name(x[0]);
#define NUMR_UNARY_PRED(name, d, g) NUMR_UNARY(name, d, g)
#define NUMR_BINARY(name, d, g) \
  case OpId::name: return name(x[0], x[1]);
#define NUMR_COMPARE(name, d, g) NUMR_BINARY(name, d, g)
#define NUMR_LOGICAL(name, d, g) NUMR_BINARY(name, d, g)
#define NUMR_TERNARY(name, d, g) \
  case OpId::name: return name(x[0], x[1], x[2]);
#define NUMR_SCALAR(name, d, g) \
  case OpId::name: return name(x[0], s0);
#define NUMR_ACTIVATION(name, d, g) \
  case OpId::name: return name(x[0]);
#define NUMR_ACTIVATION_P(name, p, v, d, g) \
  case OpId::name: return name(x[0], s0);
#include "numr/op_table.def"
    case OpId::where_cond: return where_cond(x[0], x[1], x[2]);
    case OpId::clamp: return clamp(x[0], s0, s1, has_lo, has_hi);
    default: throw std::invalid_argument("formula: not an elementwise op");
  }
}

}  // namespace numr::math::inline NUMR_MATH_ISA
