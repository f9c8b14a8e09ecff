// Var ops of the fused gates act(a) * b. The plain backward pass calls the fused backward
// kernel (one pass: read g, a, b; write d_a, d_b); with create_graph the same derivative is
// composed from Var ops, so it can be differentiated again.
#include "autograd/grad_util.h"
#include "core/op_scope.h"

namespace numr {

using autograd::constant;
using autograd::mask_like;
using autograd::record;
using autograd::sum_to;

namespace {

using Grads = std::vector<Var>;

// act'(x) composed from Var ops (differentiable).
Var silu_grad_var(const Var& x) { return autograd::silu_derivative(x); }
Var sigmoid_grad_var(const Var& x) {
  const Var s = sigmoid(x);
  return s * (1.0 - s);
}
Var relu_grad_var(const Var& x) {
  return mask_like(gt(x.tensor(), zeros({}, x.dtype(), x.device())), x);
}
Var gelu_grad_var(const Var& x) { return autograd::gelu_derivative(x); }

template <class Fwd, class Bwd, class ActVar, class GradVar>
Var gate(std::string_view name, const Var& a, const Var& b, Fwd fwd, Bwd bwd, ActVar act,
         GradVar act_grad) {
  return record(name, fwd(a.tensor(), b.tensor()), {a, b},
                [bwd, act, act_grad](const Var& g, const Node& n) -> Grads {
                  const Var& x = n.input(0);
                  const Var& y = n.input(1);
                  if (!grad_enabled()) {
                    auto [da, db] = bwd(g.tensor(), x.tensor(), y.tensor());
                    return {constant(da), constant(db)};
                  }
                  return {x.requires_grad() ? sum_to(g * y * act_grad(x), x.shape()) : Var(),
                          y.requires_grad() ? sum_to(g * act(x), y.shape()) : Var()};
                });
}

}  // namespace

Var silu_mul(const Var& a, const Var& b) {
  const OpScope scope("silu_mul");
  return gate(
      "silu_mul", a, b, [](const Tensor& x, const Tensor& y) { return silu_mul(x, y); },
      [](const Tensor& g, const Tensor& x, const Tensor& y) { return silu_mul_bwd(g, x, y); },
      [](const Var& x) { return silu(x); }, silu_grad_var);
}
Var gelu_mul(const Var& a, const Var& b) {
  const OpScope scope("gelu_mul");
  return gate(
      "gelu_mul", a, b, [](const Tensor& x, const Tensor& y) { return gelu_mul(x, y); },
      [](const Tensor& g, const Tensor& x, const Tensor& y) { return gelu_mul_bwd(g, x, y); },
      [](const Var& x) { return gelu(x); }, gelu_grad_var);
}
Var relu_mul(const Var& a, const Var& b) {
  const OpScope scope("relu_mul");
  return gate(
      "relu_mul", a, b, [](const Tensor& x, const Tensor& y) { return relu_mul(x, y); },
      [](const Tensor& g, const Tensor& x, const Tensor& y) { return relu_mul_bwd(g, x, y); },
      [](const Var& x) { return relu(x); }, relu_grad_var);
}
Var sigmoid_mul(const Var& a, const Var& b) {
  const OpScope scope("sigmoid_mul");
  return gate(
      "sigmoid_mul", a, b, [](const Tensor& x, const Tensor& y) { return sigmoid_mul(x, y); },
      [](const Tensor& g, const Tensor& x, const Tensor& y) { return sigmoid_mul_bwd(g, x, y); },
      [](const Var& x) { return sigmoid(x); }, sigmoid_grad_var);
}

}  // namespace numr
