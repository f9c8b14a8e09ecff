// Small helpers for writing gradient rules.
#pragma once

#include "autograd/node.h"

namespace numr::autograd {

// A Var without history.
inline Var constant(Tensor t) { return Var(std::move(t), false); }
inline Var zeros_like(const Var& x) { return constant(zeros(x.shape(), x.dtype(), x.device())); }
inline Var scalar_like(const Var& x, double v) {
  return constant(full({}, v, x.dtype(), x.device()));
}
// A Bool tensor as 1/0 in x's dtype, without history.
inline Var mask_like(const Tensor& cond, const Var& x) { return constant(cond.cast(x.dtype())); }

// d where it is finite and 0 elsewhere, differentiably: the fused backward kernels' rule
// for an activation's derivative, which the composed forms below follow (at x = ±inf
// they meet 0 * inf).
inline Var finite_or_zero(const Var& d) {
  const Tensor finite = logical_not(logical_or(isnan(d.tensor()), isinf(d.tensor())));
  return where_cond(constant(finite), d, scalar_like(d, 0.0));
}
// silu'(x) = s (1 + x (1 - s)), s = sigmoid(x).
inline Var silu_derivative(const Var& x) {
  const Var s = sigmoid(x);
  return finite_or_zero(s * (1.0 + x * (1.0 - s)));
}
// gelu(x) = x s, s = sigmoid(k (x + c x^3)) (the tanh form): gelu'(x) = s + x s (1 - s)
// k (1 + 3 c x^2).
inline Var gelu_derivative(const Var& x) {
  constexpr double k = 2 * 0.7978845608028654, c = 0.044715;
  const Var s = sigmoid(k * (x + c * x * square(x)));
  return finite_or_zero(s + x * s * (1.0 - s) * (k * (1.0 + 3.0 * c * square(x))));
}

}  // namespace numr::autograd
