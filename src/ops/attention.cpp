// Front end of scaled_dot_product_attention: checks, then the composition (no backend has
// a kernel yet, so the scores are materialised everywhere).
#include "ops/attention.h"

#include <cmath>

#include "numr/attention.h"
#include "numr/ops.h"
#include "ops/common.h"
#include "ops/compose/attention.h"
#include "ops/triangle.h"

namespace numr {
namespace ops {
namespace {

constexpr std::string_view kName = "scaled_dot_product_attention";

Shape leading(const Tensor& t) { return Shape(t.shape().begin(), t.shape().end() - 2); }

}  // namespace

AttentionPlan plan_attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask,
                             bool causal, std::optional<double> scale) {
  for (const Tensor* t : {&q, &k, &v}) check_defined(kName, *t);
  check_dtype(OpId::scaled_dot_product_attention, q.dtype());
  check_same(kName, {&q, &k, &v});
  for (const Tensor* t : {&q, &k, &v})
    if (t->dim() < 2)
      fail<InvalidDimension>(kName, "q, k and v need at least 2 dims [.., seq, dim], got ",
                             shape_str(t->shape()));
  if (k.size(-1) != q.size(-1))
    fail<ShapeMismatch>(kName, "k's last dim must equal q's (", q.size(-1), "), got k ",
                        shape_str(k.shape()));
  if (v.size(-2) != k.size(-2))
    fail<ShapeMismatch>(kName, "v must have k's sequence length ", k.size(-2), ", got v ",
                        shape_str(v.shape()));
  Shape batch =
      broadcast_shapes(kName, broadcast_shapes(kName, leading(q), leading(k)), leading(v));
  Shape scores = batch;
  scores.push_back(q.size(-2));
  scores.push_back(k.size(-2));

  AttentionPlan plan;
  if (scale && !std::isfinite(*scale))
    fail<InvalidArgument>(kName, "scale must be finite, got ", *scale);
  // E = 0 leaves every score 0; 1 then avoids 0 * inf.
  plan.scale = scale ? *scale : 1.0 / std::sqrt(double(std::max<int64_t>(q.size(-1), 1)));
  if (mask.defined()) {
    if (mask.device() != q.device())
      fail<DeviceMismatch>(kName, "mask is on ", mask.device().str(), ", q on ", q.device().str());
    if (mask.dtype() != DType::Bool && mask.dtype() != q.dtype())
      fail<DTypeMismatch>(kName, "mask must be Bool or q's dtype ", dtype_name(q.dtype()), ", got ",
                          dtype_name(mask.dtype()));
    if (broadcast_shapes(kName, mask.shape(), scores) != scores)
      fail<ShapeMismatch>(kName, "mask ", shape_str(mask.shape()),
                          " does not broadcast to the scores' shape ", shape_str(scores));
    if (mask.dtype() == DType::Bool)
      plan.keep = mask;
    else
      plan.bias = mask.cast(compute_dtype(q.dtype()));
    plan.may_mask_rows = true;
  }
  if (causal) {
    const Tensor tri = triangle_mask(
        kName, full(Shape{q.size(-2), k.size(-2)}, 0.0, DType::Bool, q.device()), 0, true);
    plan.keep = plan.keep.defined() ? logical_and(plan.keep, tri) : tri;
  }
  return plan;
}

}  // namespace ops

Tensor scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                                    const Tensor& mask, bool causal, std::optional<double> scale) {
  const OpScope scope("scaled_dot_product_attention");
  const ops::AttentionPlan plan = ops::plan_attention(q, k, v, mask, causal, scale);
  ops::composition_only(OpId::scaled_dot_product_attention, q);
  const DType t = q.dtype(), wide = compute_dtype(t);
  return compose::attention_parts<Tensor>(q.cast(wide), k.cast(wide), v.cast(wide), plan).cast(t);
}

}  // namespace numr
