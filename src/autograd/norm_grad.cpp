// Var ops of rms_norm and layer_norm. Where the backend has the fused kernel, the forward
// saves the per-row statistics and the plain backward calls the fused backward on them;
// with create_graph the gradient is composed of Var ops (statistics recomputed from x, so
// it can be differentiated again). Where the backend has no kernel, the result is built
// from Var ops (the composition) and autograd differentiates that.
#include <optional>

#include "autograd/grad_util.h"
#include "core/op_scope.h"
#include "numr/norm.h"
#include "ops/common.h"
#include "ops/compose/norm.h"
#include "ops/norm.h"

namespace numr {

using autograd::constant;
using autograd::record;

namespace {

using Grads = std::vector<Var>;

// The composition over Vars, in the statistics dtype, rounded once.
Var composed_forward(const Var& x, const Var& w, const Var* b, double eps, bool centred) {
  const DType t = x.dtype(), wide = compute_dtype(t);
  const Var bw = b ? cast(*b, wide) : Var();
  const compose::NormParts<Var> p =
      compose::norm_parts<Var>(cast(x, wide), cast(w, wide), b ? &bw : nullptr, eps, centred);
  return cast(p.out, t);
}

// The gradients as Var ops of the node's inputs (create_graph).
Grads composed_grads(const Var& g, const Node& n, double eps, bool centred) {
  const Var &x = n.input(0), &w = n.input(1);
  const DType t = x.dtype(), wide = compute_dtype(t);
  const Var xw = cast(x, wide), ww = cast(w, wide), gw = cast(g, wide);
  const compose::NormParts<Var> p = compose::norm_parts<Var>(xw, ww, nullptr, eps, centred);
  const Var xhat = (centred ? xw - p.mean : xw) * p.rstd;
  Grads out;
  out.push_back(x.requires_grad() ? cast(compose::norm_input_grad(gw, xhat, ww, p.rstd, centred), t)
                                  : Var());
  out.push_back(w.requires_grad() ? cast(compose::sum_rows(gw * xhat), t) : Var());
  if (centred) out.push_back(n.input(2).requires_grad() ? cast(compose::sum_rows(gw), t) : Var());
  return out;
}

// The plain backward: the fused backward's results (or its composition's), as constants.
Grads saved_grads(const Tensor& g, const Node& n, const Tensor& mean, const Tensor& rstd,
                  bool centred) {
  const Tensor &x = n.input(0).tensor(), &w = n.input(1).tensor();
  NormGrads r = centred ? layer_norm_bwd(g, x, w, mean, rstd) : rms_norm_bwd(g, x, w, rstd);
  Grads out{constant(std::move(r.d_x)), constant(std::move(r.d_weight))};
  if (centred) out.push_back(constant(std::move(r.d_bias)));
  return out;
}

Var norm_var(OpId op, const Var& x, const Var& w, const Var* b, std::optional<double> eps_in) {
  const OpScope scope(op_name(op));
  const double eps =
      ops::check_norm(op, x.tensor(), w.tensor(), b ? &b->tensor() : nullptr, eps_in);
  const bool centred = op == OpId::layer_norm;
  if (x.numel() > 0 && !use_kernel(backend_for(x.device()), op, x.dtype()))
    return composed_forward(x, w, b, eps, centred);
  NormForward f = centred ? layer_norm_fwd(x.tensor(), w.tensor(), b->tensor(), eps)
                          : rms_norm_fwd(x.tensor(), w.tensor(), eps);
  std::vector<Var> inputs{x, w};
  if (b) inputs.push_back(*b);
  return record(op_name(op), std::move(f.out), std::move(inputs),
                [eps, centred, mean = f.mean, rstd = f.rstd](const Var& g, const Node& n) {
                  // Rows of no elements: the saved path gives the (zero or empty) gradients.
                  if (!grad_enabled() || n.input(0).numel() == 0)
                    return saved_grads(g.tensor(), n, mean, rstd, centred);
                  return composed_grads(g, n, eps, centred);
                });
}

}  // namespace

Var rms_norm(const Var& x, const Var& weight, std::optional<double> eps) {
  return norm_var(OpId::rms_norm, x, weight, nullptr, eps);
}
Var layer_norm(const Var& x, const Var& weight, const Var& bias, double eps) {
  return norm_var(OpId::layer_norm, x, weight, &bias, eps);
}

// The composed ops over Vars: differentiable through their parts.
AddNormVar fused_add_rms_norm(const Var& x, const Var& residual, const Var& weight,
                              std::optional<double> eps) {
  const OpScope scope("fused_add_rms_norm");
  const double e = ops::check_add_norm(OpId::fused_add_rms_norm, x.tensor(), residual.tensor(),
                                       weight.tensor(), nullptr, eps);
  // With gradients: the add, then rms_norm's own kernel, which saves the statistics the
  // backward needs (the fused add-norm kernel is the Tensor form's).
  AddNormVar r;
  r.residual = x + residual;
  r.out = rms_norm(r.residual, weight, e);
  return r;
}

AddNormVar fused_add_layer_norm(const Var& x, const Var& residual, const Var& weight,
                                const Var& bias, double eps) {
  const OpScope scope("fused_add_layer_norm");
  ops::check_add_norm(OpId::fused_add_layer_norm, x.tensor(), residual.tensor(), weight.tensor(),
                      &bias.tensor(), eps);
  AddNormVar r;  // as fused_add_rms_norm's
  r.residual = x + residual;
  r.out = layer_norm(r.residual, weight, bias, eps);
  return r;
}

Var group_norm(const Var& x, int64_t groups, const Var& weight, const Var& bias, double eps) {
  const OpScope scope("group_norm");
  ops::check_group_norm(x.tensor(), groups, weight.tensor(), bias.tensor(), eps);
  ops::composition_only(OpId::group_norm, x.tensor());
  const DType t = x.dtype(), wide = compute_dtype(t);
  return cast(compose::group_norm_parts<Var>(cast(x, wide), groups, cast(weight, wide),
                                             cast(bias, wide), eps),
              t);
}

}  // namespace numr
