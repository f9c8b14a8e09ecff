// The compositions of rms_norm and layer_norm and of their backward, from reductions and
// elementwise ops in the statistics dtype, rounded to x's dtype once at the end.
#include "ops/compose/norm.h"

namespace numr::compose {
namespace {

Shape row_shape(const Shape& x) { return Shape(x.begin(), x.end() - 1); }

}  // namespace

NormForward norm_forward(const Tensor& x, const Tensor& w, const Tensor* b, double eps,
                         bool centred) {
  const DType t = x.dtype(), wide = compute_dtype(t);
  const Tensor bw = b ? b->cast(wide) : Tensor();
  const NormParts<Tensor> p =
      norm_parts<Tensor>(x.cast(wide), w.cast(wide), b ? &bw : nullptr, eps, centred);
  const Shape rows = row_shape(x.shape());
  NormForward f;
  f.out = p.out.cast(t);
  if (centred) f.mean = p.mean.reshape(rows);
  f.rstd = p.rstd.reshape(rows);
  return f;
}

NormGrads norm_backward(const Tensor& grad, const Tensor& x, const Tensor& w, const Tensor& mean,
                        const Tensor& rstd, bool centred) {
  const DType t = x.dtype(), wide = compute_dtype(t);
  Shape kept = x.shape();
  kept.back() = 1;
  const Tensor g = grad.cast(wide), r = rstd.cast(wide).reshape(kept);
  Tensor xc = x.cast(wide);
  if (centred) xc = xc - mean.cast(wide).reshape(kept);
  const Tensor xhat = xc * r;
  NormGrads out;
  out.d_x = norm_input_grad(g, xhat, w.cast(wide), r, centred).cast(t);
  out.d_weight = sum_rows(g * xhat).cast(t);
  if (centred) out.d_bias = sum_rows(g).cast(t);
  return out;
}

}  // namespace numr::compose
