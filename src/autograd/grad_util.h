// Small helpers for writing gradient rules.
#pragma once

#include "autograd/node.h"
#include "math/elementwise.h"
#include "ops/compose/expr.h"

namespace numr::autograd {

// A Var without history.
inline Var constant(Tensor t) { return Var(std::move(t), false); }
inline Var zeros_like(const Var& x) { return constant(zeros(x.shape(), x.dtype(), x.device())); }
inline Var scalar_like(const Var& x, double v) {
  return constant(full({}, v, x.dtype(), x.device()));
}
// A Bool tensor as 1/0 in x's dtype, without history.
inline Var mask_like(const Tensor& cond, const Var& x) { return constant(cond.cast(x.dtype())); }

// An activation's derivative as a Var expression, from its formula in src/math evaluated
// over Vars (so it is differentiable again), a non-finite value counting as 0 as in the
// fused backward kernels.
template <class Derivative>
Var activation_derivative(const Var& x, Derivative derivative) {
  using E = compose::Expr<Var>;
  return math::finite_or_zero(derivative(E(x))).to_x(x.tensor());
}
inline Var silu_derivative(const Var& x) {
  return activation_derivative(x, [](const auto& v) { return math::silu_grad(v); });
}
inline Var gelu_derivative(const Var& x) {
  return activation_derivative(x, [](const auto& v) { return math::gelu_grad(v); });
}

}  // namespace numr::autograd
