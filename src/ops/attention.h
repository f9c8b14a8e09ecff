// Argument checks of scaled_dot_product_attention, shared by its Tensor and Var forms.
#pragma once

#include <optional>

#include "numr/tensor.h"

namespace numr::ops {

struct AttentionPlan {
  double scale = 1.0;
  Tensor keep;  // Bool, broadcastable to the scores: the mask and the causal triangle
  Tensor bias;  // a float mask, added to the scores
  bool may_mask_rows = false;  // whether some query may have every key masked out
};

// Checks q, k, v, mask and scale (errors name the op first) and resolves the masks.
AttentionPlan plan_attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask,
                             bool causal, std::optional<double> scale);

}  // namespace numr::ops
