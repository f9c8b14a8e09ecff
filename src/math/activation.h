// The epilogue activations by enum, written once over T: the activation itself and its
// derivative from the pre-activation x or, where the backward saved only the output, from y.
#pragma once

#include "math/elementwise.h"
#include "numr/ops.h"

namespace numr::math::inline NUMR_MATH_ISA {

template <class T> T activate(Activation act, T x) {
  switch (act) {
    case Activation::None: return x;
#define NUMR_EPILOGUE_ACTIVATION(Name, op) \
  case Activation::Name: return op(x);
#include "numr/op_table.def"
  }
  return x;
}

// act'(x) when from_pre, else act' computed from y = act(x) (None, Relu, Sigmoid, Tanh);
// before finite_or_zero.
template <class T> T activation_grad(Activation act, T v, bool from_pre) {
  switch (act) {
    case Activation::None: return T(1);
    case Activation::Relu: return from_pre ? relu_grad(v) : relu_grad_from_out(v);
    case Activation::Gelu: return gelu_grad(v);
    case Activation::Silu: return silu_grad(v);
    case Activation::Sigmoid: return from_pre ? sigmoid_grad(v) : sigmoid_grad_from_out(v);
    case Activation::Tanh: return from_pre ? tanh_grad(v) : tanh_grad_from_out(v);
  }
  return T(1);
}

}  // namespace numr::math::inline NUMR_MATH_ISA
