// Argument checks of scaled_dot_product_attention, shared by its Tensor and Var forms, and
// the fused kernel's forward and backward (where the backend has one).
#pragma once

#include <optional>

#include "numr/tensor.h"

namespace numr::ops {

struct AttentionPlan {
  double scale = 1.0;
  Shape batch;  // the broadcast leading dims
  Tensor mask;  // the mask as given (undefined: none)
  bool causal = false;
  // Resolved for the composition (resolve_masks):
  Tensor keep;  // Bool, broadcastable to the scores: the mask and the causal triangle
  Tensor bias;  // a float mask, added to the scores
  bool may_mask_rows = false;  // whether some query may have every key masked out
};

// Checks q, k, v, mask and scale (errors name the op first); with resolve_masks, also the
// composition's keep and bias.
AttentionPlan plan_attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask,
                             bool causal, std::optional<double> scale, bool resolve_masks = true);
// Builds plan.keep, plan.bias and plan.may_mask_rows from plan.mask and plan.causal.
void resolve_masks(AttentionPlan& plan, const Tensor& q, const Tensor& k);

// Whether this call runs the backend's kernel (counted as use_kernel counts): the backend
// has one for q's dtype, the result and the key sequence are not empty and the head dims
// are at most kAttentionMaxDim.
bool attention_uses_kernel(const AttentionPlan& plan, const Tensor& q, const Tensor& k,
                           const Tensor& v);

struct AttentionForward {
  Tensor out;   // q's dtype, [batch.., Lq, Ev]
  Tensor lse;   // F32 [batch.., Lq]: log Σ exp of the kept scores, +inf where none is kept
  Tensor wide;  // F32 out before its rounding (for_backward, when q is F16 or BF16)
};
// for_backward: also what attention_kernel_backward needs (wide).
AttentionForward attention_kernel_forward(const Tensor& q, const Tensor& k, const Tensor& v,
                                          const AttentionPlan& plan, bool for_backward = false);

struct AttentionGrads {
  Tensor d_q, d_k, d_v;  // shaped like q, k and v
};
// From grad (shaped like out), the forward's output in F32 (its wide one, or out itself
// for F32) and lse.
AttentionGrads attention_kernel_backward(const Tensor& grad, const Tensor& q, const Tensor& k,
                                         const Tensor& v, const Tensor& wide, const Tensor& lse,
                                         const AttentionPlan& plan);

}  // namespace numr::ops
