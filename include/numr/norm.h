// Normalisation (DESIGN §10), for Tensor and Var: over the last dim, and group_norm over
// groups of channels. Contracts in
// docs/semantics.md. F16 and BF16 compute their statistics in F32, F64 in F64; the output
// is rounded once.
//
//   Tensor y = rms_norm(x, weight);             // x [.., D], weight [D]
//   Var z = layer_norm(xv, wv, bv, 1e-5);
#pragma once

#include <cstdint>
#include <optional>

#include "numr/autograd.h"
#include "numr/tensor.h"

namespace numr {

// x * rsqrt(mean(x^2) + eps) * weight over the last dim. eps defaults, as in PyTorch, to the
// machine epsilon of x's dtype.
Tensor rms_norm(const Tensor& x, const Tensor& weight, std::optional<double> eps = std::nullopt);
// (x - mean) * rsqrt(var + eps) * weight + bias over the last dim, var the biased variance.
Tensor layer_norm(const Tensor& x, const Tensor& weight, const Tensor& bias, double eps = 1e-5);

// The norm of x + residual, and that sum (the next block's residual): {out, x + residual}.
// The sum is rounded to x's dtype before it is normalised, so out equals
// rms_norm(x + residual, weight, eps); x and residual have the same shape.
struct AddNorm {
  Tensor out, residual;
};
AddNorm fused_add_rms_norm(const Tensor& x, const Tensor& residual, const Tensor& weight,
                           std::optional<double> eps = std::nullopt);
AddNorm fused_add_layer_norm(const Tensor& x, const Tensor& residual, const Tensor& weight,
                             const Tensor& bias, double eps = 1e-5);

// x [N, C, *] normalised over each group of C / groups channels (and every position of *)
// with the biased variance, then scaled by weight [C] and shifted by bias [C] per channel.
Tensor group_norm(const Tensor& x, int64_t groups, const Tensor& weight, const Tensor& bias,
                  double eps = 1e-5);

// The forward that also returns what its backward needs: per-row mean (layer_norm only;
// undefined for rms_norm) and rstd = rsqrt(var + eps) (rsqrt(mean(x^2) + eps) for rms_norm),
// of shape x.shape()[:-1] in the statistics dtype (F64 for F64, else F32).
struct NormForward {
  Tensor out, mean, rstd;
};
NormForward rms_norm_fwd(const Tensor& x, const Tensor& weight,
                         std::optional<double> eps = std::nullopt);
NormForward layer_norm_fwd(const Tensor& x, const Tensor& weight, const Tensor& bias,
                           double eps = 1e-5);

// Gradients from grad (x's shape) and what the forward saved; d_bias is undefined for
// rms_norm. d_weight and d_bias sum over every leading dim.
struct NormGrads {
  Tensor d_x, d_weight, d_bias;
};
NormGrads rms_norm_bwd(const Tensor& grad, const Tensor& x, const Tensor& weight,
                       const Tensor& rstd);
NormGrads layer_norm_bwd(const Tensor& grad, const Tensor& x, const Tensor& weight,
                         const Tensor& mean, const Tensor& rstd);

// Differentiable to any order. The plain backward uses the backend's fused backward kernel
// where it has one; otherwise, and with create_graph, the gradient is composed of Var ops.
Var rms_norm(const Var& x, const Var& weight, std::optional<double> eps = std::nullopt);
Var layer_norm(const Var& x, const Var& weight, const Var& bias, double eps = 1e-5);
struct AddNormVar {
  Var out, residual;
};
AddNormVar fused_add_rms_norm(const Var& x, const Var& residual, const Var& weight,
                              std::optional<double> eps = std::nullopt);
AddNormVar fused_add_layer_norm(const Var& x, const Var& residual, const Var& weight,
                                const Var& bias, double eps = 1e-5);
Var group_norm(const Var& x, int64_t groups, const Var& weight, const Var& bias,
               double eps = 1e-5);

}  // namespace numr
