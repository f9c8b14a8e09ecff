// Var ops of the GEMM epilogues act(a @ b + bias) and a @ b + bias + residual. The plain
// backward pass calls the fused backward on what the forward saved (one elementwise and
// column-sum pass, then two GEMMs; a @ b is not recomputed). With create_graph the same
// derivative is composed from Var ops, so it can be differentiated again.
#include "autograd/grad_util.h"
#include "core/op_scope.h"

namespace numr {

using autograd::constant;
using autograd::mask_like;
using autograd::record;
using autograd::sum_to;

namespace {

using Grads = std::vector<Var>;

// (d_a, d_b, d_bias) from grad_pre as Var ops. sum_to folds broadcast batch dims: a shared
// 2-D b gets the sum over batches, a per-batch b keeps one gradient per batch, and the
// bias gets the sum over every leading dim.
Grads linear_grads(const Var& grad_pre, const Var& a, const Var& b, const Var& bias) {
  return {a.requires_grad() ? sum_to(matmul(grad_pre, transpose(b, -1, -2)), a.shape()) : Var(),
          b.requires_grad() ? sum_to(matmul(transpose(a, -1, -2), grad_pre), b.shape()) : Var(),
          bias.requires_grad() ? sum_to(grad_pre, bias.shape()) : Var()};
}

// The plain backward: the fused kernel's results, as constants.
Grads fused_grads(const Tensor& grad, const Node& n, const Tensor& saved, Activation act) {
  EpilogueGrads r =
      matmul_bias_activation_bwd_saved(grad, n.input(0).tensor(), n.input(1).tensor(), saved, act);
  auto wrap = [](Tensor t) { return t.defined() ? constant(std::move(t)) : Var(); };
  return {wrap(std::move(r.d_a)), wrap(std::move(r.d_b)), wrap(std::move(r.d_bias))};
}

// act'(x) as Var ops, for the activations whose derivative needs the pre-activation.
Var preactivation_derivative(const Var& x, Activation act) {
  return act == Activation::Silu ? autograd::silu_derivative(x) : autograd::gelu_derivative(x);
}

// grad * act'(pre) written with the output y = act(pre), which has history, for the
// activations whose derivative the output determines.
Var output_grad_pre(const Var& grad, const Var& y, Activation act) {
  switch (act) {
    case Activation::Relu:
      return grad * mask_like(gt(y.tensor(), zeros({}, y.dtype(), y.device())), y);
    case Activation::Sigmoid: return grad * y * (1.0 - y);
    case Activation::Tanh: return grad * (1.0 - square(y));
    default: return grad;  // None
  }
}

// a @ b + bias as a Var with history whose value `pre` is already known (saved by the
// forward, or recomputed), so the create_graph pass needs no GEMM to obtain it.
Var preactivation_var(const Var& a, const Var& b, const Var& bias, Tensor pre) {
  return record("matmul_bias", std::move(pre), {a, b, bias},
                [](const Var& g, const Node& n) -> Grads {
                  if (!grad_enabled())
                    return fused_grads(g.tensor(), n, n.output().tensor(), Activation::None);
                  return linear_grads(g, n.input(0), n.input(1), n.input(2));
                });
}

bool will_record(std::initializer_list<const Var*> inputs) {
  if (!grad_enabled()) return false;
  for (const Var* v : inputs)
    if (v->requires_grad()) return true;
  return false;
}

}  // namespace

Var matmul_bias_activation(const Var& a, const Var& b, const Var& bias, Activation act,
                           EpilogueOptions options) {
  const OpScope scope("matmul_bias_activation");
  // Only Gelu and Silu need a buffer beyond the output, and only when a graph is recorded.
  const bool save_pre =
      needs_preactivation(act) && !options.recompute_preactivation && will_record({&a, &b, &bias});
  Tensor out, saved;
  if (save_pre) {
    EpilogueForward fwd = matmul_bias_activation_fwd(a.tensor(), b.tensor(), bias.tensor(), act);
    out = std::move(fwd.out);
    saved = std::move(fwd.saved);
  } else {
    out = matmul_bias_activation(a.tensor(), b.tensor(), bias.tensor(), act);
  }
  return record("matmul_bias_activation", std::move(out), {a, b, bias},
                [act, saved](const Var& g, const Node& n) -> Grads {
                  const Var &x = n.input(0), &w = n.input(1), &c = n.input(2);
                  if (!needs_preactivation(act)) {
                    // The output is alive whenever backward reaches this node: nothing to save.
                    const Var y = n.output();
                    if (!grad_enabled()) return fused_grads(g.tensor(), n, y.tensor(), act);
                    return linear_grads(output_grad_pre(g, y, act), x, w, c);
                  }
                  const Tensor pre = saved.defined()
                                         ? saved
                                         : matmul_bias_activation(x.tensor(), w.tensor(),
                                                                  c.tensor(), Activation::None);
                  if (!grad_enabled()) return fused_grads(g.tensor(), n, pre, act);
                  const Var p = preactivation_var(x, w, c, pre);
                  return linear_grads(g * preactivation_derivative(p, act), x, w, c);
                });
}

Var matmul_bias_residual(const Var& a, const Var& b, const Var& bias, const Var& residual) {
  const OpScope scope("matmul_bias_residual");
  return record("matmul_bias_residual",
                matmul_bias_residual(a.tensor(), b.tensor(), bias.tensor(), residual.tensor()),
                {a, b, bias, residual}, [](const Var& g, const Node& n) -> Grads {
                  // The linear part is the epilogue with no activation; the residual passes
                  // the gradient through.
                  Grads grads = grad_enabled() ? linear_grads(g, n.input(0), n.input(1), n.input(2))
                                               : fused_grads(g.tensor(), n, n.output().tensor(),
                                                             Activation::None);
                  const Var& r = n.input(3);
                  grads.push_back(r.requires_grad() ? sum_to(g, r.shape()) : Var());
                  return grads;
                });
}

}  // namespace numr
