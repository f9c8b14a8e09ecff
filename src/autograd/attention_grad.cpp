// The Var form of scaled_dot_product_attention. Where the backend has the fused kernel, the
// forward saves the per-query logsumexp and the plain backward runs the fused backward on
// it; with create_graph the gradients are composed of Var ops (the probabilities
// recomputed), so they can be differentiated again. Elsewhere the result is the
// composition over Var ops and autograd differentiates that.
#include "autograd/grad_util.h"
#include "numr/attention.h"
#include "numr/autograd_ops.h"
#include "ops/attention.h"
#include "ops/common.h"
#include "ops/compose/attention.h"

namespace numr {

using autograd::constant;
using autograd::record;
using autograd::sum_to;

namespace {

constexpr std::string_view kName = "scaled_dot_product_attention";

// The gradients in q, k and v as Var ops of the node's inputs (create_graph), in the
// compute dtype: p recomputed, ds = p (dp - Σ_j dp p), each summed to its input's shape.
std::vector<Var> composed_grads(const Var& g, const Node& n, ops::AttentionPlan plan) {
  const Var &q = n.input(0), &k = n.input(1), &v = n.input(2);
  ops::resolve_masks(plan, q.tensor(), k.tensor());
  const DType t = q.dtype(), wide = compute_dtype(t);
  const Var qw = cast(q, wide), kw = cast(k, wide), vw = cast(v, wide), gw = cast(g, wide);
  const Var p = compose::attention_probs<Var>(qw, kw, plan);
  const Var dp = matmul(gw, vw.transpose(-2, -1));
  const Var ds = p * (dp - sum(dp * p, {-1}, true));
  auto grad_of = [&](const Var& x, const Var& d) {
    return x.requires_grad() ? cast(sum_to(d, x.shape()), t) : Var();
  };
  return {grad_of(q, matmul(ds, kw) * plan.scale),
          grad_of(k, matmul(ds.transpose(-2, -1), qw) * plan.scale),
          grad_of(v, matmul(p.transpose(-2, -1), gw))};
}

// Whether an F16/BF16 gradient is summed over broadcast batch dims: the kernel rounds each
// batch's part to the dtype before that sum, where the composition sums in F32 and rounds
// once (the parts can nearly cancel).
bool sums_rounded_parts(const ops::AttentionPlan& plan, const Node& n) {
  if (n.input(0).dtype() == DType::F32) return false;
  for (size_t i = 0; i < 3; ++i) {
    const Shape& s = n.input(i).shape();
    if (n.input(i).requires_grad() && Shape(s.begin(), s.end() - 2) != plan.batch) return true;
  }
  return false;
}

}  // namespace

Var scaled_dot_product_attention(const Var& q, const Var& k, const Var& v, const Tensor& mask,
                                 bool causal, std::optional<double> scale) {
  const OpScope scope("scaled_dot_product_attention");
  for (const Var* x : {&q, &k, &v})
    if (!x->defined()) fail<InvalidArgument>(kName, "q, k and v must be defined");
  ops::AttentionPlan plan =
      ops::plan_attention(q.tensor(), k.tensor(), v.tensor(), mask, causal, scale, false);
  if (!ops::attention_uses_kernel(plan, q.tensor(), k.tensor(), v.tensor())) {
    ops::resolve_masks(plan, q.tensor(), k.tensor());
    const DType t = q.dtype(), wide = compute_dtype(t);
    return cast(compose::attention_parts<Var>(cast(q, wide), cast(k, wide), cast(v, wide), plan),
                t);
  }
  ops::AttentionForward f = ops::attention_kernel_forward(
      q.tensor(), k.tensor(), v.tensor(), plan,
      grad_enabled() && (q.requires_grad() || k.requires_grad() || v.requires_grad()));
  return record(
      kName, std::move(f.out), {q, k, v},
      [plan, lse = f.lse, wide = f.wide](const Var& g, const Node& n) -> std::vector<Var> {
        if (grad_enabled() || sums_rounded_parts(plan, n)) return composed_grads(g, n, plan);
        const ops::AttentionGrads r = ops::attention_kernel_backward(
            g.tensor(), n.input(0).tensor(), n.input(1).tensor(), n.input(2).tensor(),
            wide.defined() ? wide : n.output().tensor(), lse, plan);
        auto keep = [&](size_t i, const Tensor& d) {
          return n.input(i).requires_grad() ? constant(d) : Var();
        };
        return {keep(0, r.d_q), keep(1, r.d_k), keep(2, r.d_v)};
      });
}

}  // namespace numr
