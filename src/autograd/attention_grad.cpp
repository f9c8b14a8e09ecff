// The Var form of scaled_dot_product_attention: the composition over Var ops, so its
// gradient (and the gradient's gradient) follows from theirs.
#include "numr/attention.h"
#include "numr/autograd_ops.h"
#include "ops/attention.h"
#include "ops/common.h"
#include "ops/compose/attention.h"

namespace numr {

Var scaled_dot_product_attention(const Var& q, const Var& k, const Var& v, const Tensor& mask,
                                 bool causal, std::optional<double> scale) {
  const OpScope scope("scaled_dot_product_attention");
  for (const Var* x : {&q, &k, &v})
    if (!x->defined())
      fail<InvalidArgument>("scaled_dot_product_attention", "q, k and v must be defined");
  const ops::AttentionPlan plan =
      ops::plan_attention(q.tensor(), k.tensor(), v.tensor(), mask, causal, scale);
  ops::composition_only(OpId::scaled_dot_product_attention, q.tensor());
  const DType t = q.dtype(), wide = compute_dtype(t);
  return cast(compose::attention_parts<Var>(cast(q, wide), cast(k, wide), cast(v, wide), plan), t);
}

}  // namespace numr
