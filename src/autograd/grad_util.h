// Small helpers for writing gradient rules.
#pragma once

#include "autograd/node.h"
#include "math/elementwise.h"
#include "ops/compose/expr.h"

namespace numr::autograd {

// One-input op: value from the Tensor op, rule(g, x, node) gives the gradient of x.
template <class Rule>
Var unary(std::string_view name, const Var& x, Tensor value, Rule rule) {
  return record(
      name, std::move(value), {x},
      [rule](const Var& g, const Node& n) -> std::vector<Var> { return {rule(g, n.input(0), n)}; });
}

// Two-input op: rule(g, x, y, node) gives both gradients at the broadcast shape; each is
// summed back to its input's shape.
template <class Rule>
Var binary(std::string_view name, const Var& a, const Var& b, Tensor value, Rule rule) {
  return record(name, std::move(value), {a, b},
                [rule](const Var& g, const Node& n) -> std::vector<Var> {
                  const Var& x = n.input(0);
                  const Var& y = n.input(1);
                  auto [ga, gb] = rule(g, x, y, n);
                  return {x.requires_grad() ? sum_to(ga, x.shape()) : Var(),
                          y.requires_grad() ? sum_to(gb, y.shape()) : Var()};
                });
}

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
