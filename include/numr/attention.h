// Attention (DESIGN §10), for Tensor and Var. Contracts in docs/semantics.md.
//
//   Tensor o = scaled_dot_product_attention(q, k, v, {}, /*causal=*/true);
//   Var ov = scaled_dot_product_attention(qv, kv, vv, pad_mask);
#pragma once

#include <optional>

#include "numr/autograd.h"
#include "numr/tensor.h"

namespace numr {

// softmax(q @ k^T * scale + mask) @ v over the last two dims:
//   q [.., Lq, E], k [.., Lk, E], v [.., Lk, Ev] -> [.., Lq, Ev],
// the leading dims broadcast together. scale defaults to 1 / sqrt(E).
// mask (optional; an undefined Tensor means none), broadcastable to [.., Lq, Lk]: Bool
// (true: the key takes part) or q's dtype (added to the scores). causal keeps key j for
// query i only where j <= i (the top-left triangle, as PyTorch); it may be combined with a
// mask. A query whose every key is masked out gets zeros. F16 and BF16 compute in F32 and
// round once.
Tensor scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                                    const Tensor& mask = Tensor(), bool causal = false,
                                    std::optional<double> scale = std::nullopt);
// Differentiable in q, k and v to any order; the mask is a constant.
Var scaled_dot_product_attention(const Var& q, const Var& k, const Var& v,
                                 const Tensor& mask = Tensor(), bool causal = false,
                                 std::optional<double> scale = std::nullopt);

}  // namespace numr
