// The composition of scaled_dot_product_attention over Tensors or Vars: the scores are
// materialised, masked, normalised with softmax and applied to v.
#pragma once

#include <limits>

#include "numr/autograd_ops.h"
#include "numr/ops.h"
#include "ops/attention.h"

namespace numr::compose {

inline const Tensor& value_of(const Tensor& t) { return t; }
inline const Tensor& value_of(const Var& v) { return v.tensor(); }

// softmax(q k^T * scale + masks) over the keys, 0 for a query with every key masked out;
// q and k in the compute dtype, plan.bias likewise (plan's masks resolved).
template <class X>
X attention_probs(const X& q, const X& k, const ops::AttentionPlan& plan) {
  X s = matmul(q, k.transpose(-2, -1)) * plan.scale;
  if (plan.bias.defined()) s = s + plan.bias;
  if (plan.keep.defined()) s = where_cond(plan.keep, s, -std::numeric_limits<double>::infinity());
  Tensor dead;
  if (plan.may_mask_rows && value_of(s).size(-1) > 0) {
    // A query with every key masked out attends to nothing and gets zeros. Its scores are
    // replaced before the softmax, whose backward would otherwise meet the NaN of a -inf row.
    const Tensor& sv = value_of(s);
    const Tensor ninf =
        full(Shape{}, -std::numeric_limits<double>::infinity(), sv.dtype(), sv.device());
    dead = eq(max(sv, {-1}, true), ninf);
    s = where_cond(dead, 0.0, s);
  }
  X p = softmax(s, -1);
  if (dead.defined()) p = where_cond(dead, 0.0, p);
  return p;
}

// q, k, v in the compute dtype; plan.bias likewise.
template <class X>
X attention_parts(const X& q, const X& k, const X& v, const ops::AttentionPlan& plan) {
  return matmul(attention_probs(q, k, plan), v);
}

}  // namespace numr::compose
