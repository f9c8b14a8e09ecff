// Matmul and the GEMM epilogues from broadcast products, sums and the activations.
#include <vector>

#include "math/activation.h"
#include "ops/compose/compose.h"
#include "ops/compose/expr.h"

namespace numr::compose {

Tensor matmul(const Tensor& a, const Tensor& b) {
  const DType t = a.dtype(), wide = compute_dtype(t);
  // [.., M, K, 1] * [.., 1, K, N] summed over K.
  const Tensor prod = a.cast(wide).unsqueeze(-1) * b.cast(wide).unsqueeze(-3);
  return sum(prod, {prod.dim() - 2}, false).cast(t);
}

EpilogueForward epilogue(const Tensor& a, const Tensor& b, const Tensor& bias,
                         const Tensor* residual, Activation act, bool want_pre) {
  const DType t = a.dtype(), wide = compute_dtype(t);
  // A shared b [K, N] broadcasts against a batched a [B, M, K] as matmul's does.
  const Tensor pre = numr::matmul(a.cast(wide), b.cast(wide)) + bias.cast(wide);
  Tensor out = math::activate(act, Expr<Tensor>(pre)).to_x(pre);
  if (residual) out = out + residual->cast(wide);
  EpilogueForward r;
  r.out = out.cast(t);
  r.saved = want_pre && needs_preactivation(act) ? pre.cast(t) : r.out;
  return r;
}

std::pair<Tensor, Tensor> bias_activation_bwd(const Tensor& grad, const Tensor& saved,
                                              Activation act, bool saved_is_pre) {
  const DType t = grad.dtype(), wide = compute_dtype(t);
  using E = Expr<Tensor>;
  const Tensor s = saved.cast(wide);
  const E d = math::finite_or_zero(math::activation_grad(act, E(s), saved_is_pre));
  const Tensor grad_pre = (E(grad.cast(wide)) * d).to_x(s);
  std::vector<int64_t> lead;
  for (int64_t i = 0; i + 1 < grad.dim(); ++i) lead.push_back(i);
  const Tensor d_bias = lead.empty() ? grad_pre : sum(grad_pre, lead, false);
  return {grad_pre.cast(t), d_bias.cast(t)};
}

}  // namespace numr::compose
