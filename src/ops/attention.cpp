// Front end of scaled_dot_product_attention: checks, then the backend's fused kernel where
// it has one (Backend::attention: the scores never stored whole), else the composition
// (the scores materialised).
#include "ops/attention.h"

#include <cmath>
#include <limits>

#include "core/dim_merge.h"
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
                             bool causal, std::optional<double> scale, bool resolve) {
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
  }
  plan.batch = batch;
  plan.mask = mask;
  plan.causal = causal;
  if (resolve) resolve_masks(plan, q, k);
  return plan;
}

void resolve_masks(AttentionPlan& plan, const Tensor& q, const Tensor& k) {
  plan.keep = plan.bias = Tensor();
  plan.may_mask_rows = false;
  if (plan.mask.defined()) {
    if (plan.mask.dtype() == DType::Bool)
      plan.keep = plan.mask;
    else
      plan.bias = plan.mask.cast(compute_dtype(q.dtype()));
    plan.may_mask_rows = true;
  }
  if (plan.causal) {
    const Tensor tri = triangle_mask(
        kName, full(Shape{q.size(-2), k.size(-2)}, 0.0, DType::Bool, q.device()), 0, true);
    plan.keep = plan.keep.defined() ? logical_and(plan.keep, tri) : tri;
  }
}

bool attention_uses_kernel(const AttentionPlan& plan, const Tensor& q, const Tensor& k,
                           const Tensor& v) {
  // Empty results and empty key sequences have nothing for a kernel to do; E = 0 runs it.
  const bool fits = shape_numel(plan.batch) > 0 && q.size(-2) > 0 && k.size(-2) > 0 &&
                    v.size(-1) > 0 && q.size(-1) <= kAttentionMaxDim &&
                    v.size(-1) <= kAttentionMaxDim;
  // A call the kernels cannot take is counted as the composition it runs.
  const ForceComposition outside(!fits, {OpId::scaled_dot_product_attention});
  return use_kernel(backend_for(q.device()), OpId::scaled_dot_product_attention, q.dtype());
}

namespace {

// The operands as 4-D views [n0, n1, L, D] of the broadcast batch (merged into two dims),
// the last dim unit-stride.
struct Views {
  std::vector<TensorRef> refs;
  std::vector<Tensor> keep_alive;
  int64_t n0 = 1, n1 = 1;
};

Views batch_views(const Shape& batch, std::vector<Tensor> ts, size_t unit_last) {
  for (size_t i = 0; i < ts.size(); ++i) {
    Shape full = batch;
    full.push_back(ts[i].size(-2));
    full.push_back(ts[i].size(-1));
    Tensor t = ts[i];
    if (i < unit_last && t.size(-1) > 1 && t.strides().back() != 1) t = t.contiguous();
    ts[i] = t.broadcast_to(full);
  }
  const size_t nb = batch.size();
  auto merged = [&] {
    std::vector<Strides> st;
    for (const Tensor& t : ts)
      st.emplace_back(t.strides().begin(), t.strides().begin() + ptrdiff_t(nb));
    std::vector<const Strides*> ptrs;
    for (const Strides& x : st) ptrs.push_back(&x);
    return merge_dims(batch, ptrs);
  };
  MergedDims m = merged();
  if (m.extents.size() > 2) {
    // Batch dims that do not merge into two: the operands copied in batch order.
    for (Tensor& t : ts) t = t.contiguous();
    m = merged();
  }
  Views out;
  while (m.extents.size() < 2) {
    m.extents.insert(m.extents.begin(), 1);
    for (auto& s : m.strides) s.insert(s.begin(), 0);
  }
  out.n0 = m.extents[0];
  out.n1 = m.extents[1];
  for (size_t i = 0; i < ts.size(); ++i) {
    TensorRef r = ref_of(ts[i]);
    r.shape = {out.n0, out.n1, ts[i].size(-2), ts[i].size(-1)};
    r.strides = {m.strides[i][0], m.strides[i][1], ts[i].strides()[nb], ts[i].strides()[nb + 1]};
    out.refs.push_back(r);
  }
  out.keep_alive = std::move(ts);
  return out;
}

Shape with_last2(Shape s, int64_t a, int64_t b) {
  s.push_back(a);
  s.push_back(b);
  return s;
}

// The mask as a view of the scores' shape [batch.., Lq, Lk].
Tensor full_mask(const AttentionPlan& plan, const Tensor& q, const Tensor& k) {
  return plan.mask.broadcast_to(with_last2(plan.batch, q.size(-2), k.size(-2)));
}

// g summed over the dims where `shape` was broadcast, then shaped like it.
Tensor sum_to(const Tensor& g, const Shape& shape) {
  if (g.shape() == shape) return g;
  const int64_t lead = g.dim() - int64_t(shape.size());
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < g.dim(); ++d)
    if (d < lead || (shape[size_t(d - lead)] == 1 && g.shape()[size_t(d)] != 1)) dims.push_back(d);
  return (dims.empty() ? g : g.sum(dims, true)).reshape(shape);
}

}  // namespace

AttentionForward attention_kernel_forward(const Tensor& q, const Tensor& k, const Tensor& v,
                                          const AttentionPlan& plan, bool for_backward) {
  std::vector<Tensor> ts{q, k, v};
  if (plan.mask.defined()) ts.push_back(full_mask(plan, q, k));
  const Views views = batch_views(plan.batch, ts, 3);
  AttentionForward f;
  f.out = Tensor::empty(with_last2(plan.batch, q.size(-2), v.size(-1)), q.dtype(), q.device());
  Shape rows = plan.batch;
  rows.push_back(q.size(-2));
  f.lse = Tensor::empty(rows, DType::F32, q.device());
  AttentionCall call;
  call.q = views.refs[0];
  call.k = views.refs[1];
  call.v = views.refs[2];
  if (plan.mask.defined()) call.mask = views.refs[3];
  call.out = ref_of(f.out);
  call.out.shape = {views.n0, views.n1, q.size(-2), v.size(-1)};
  call.lse = ref_of(f.lse);
  call.scale = plan.scale;
  call.causal = plan.causal;
  call.has_mask = plan.mask.defined();
  if (for_backward && q.dtype() != DType::F32) {
    f.wide = Tensor::empty(f.out.shape(), DType::F32, q.device());
    call.out_wide = ref_of(f.wide);
    call.out_wide.shape = call.out.shape;
    call.has_out_wide = true;
  }
  backend_for(q.device()).attention(call);
  return f;
}

AttentionGrads attention_kernel_backward(const Tensor& grad, const Tensor& q, const Tensor& k,
                                         const Tensor& v, const Tensor& wide, const Tensor& lse,
                                         const AttentionPlan& plan) {
  // delta = Σ_c dO * out per query, in F32 from the output before its rounding (0 for a
  // query with nothing kept: out is 0).
  const Tensor delta = (grad.cast(DType::F32) * wide).sum({-1}).contiguous();
  std::vector<Tensor> ts{q, k, v, grad};
  if (plan.mask.defined()) ts.push_back(full_mask(plan, q, k));
  const Views views = batch_views(plan.batch, ts, 4);
  const DType t = q.dtype();
  const Shape dq_shape = with_last2(plan.batch, q.size(-2), q.size(-1)),
              dk_shape = with_last2(plan.batch, k.size(-2), k.size(-1)),
              dv_shape = with_last2(plan.batch, v.size(-2), v.size(-1));
  const Tensor dq = Tensor::empty(dq_shape, t, q.device()),
               dk = Tensor::empty(dk_shape, t, q.device()),
               dv = Tensor::empty(dv_shape, t, q.device());
  auto as4 = [&](const Tensor& x) {
    TensorRef r = ref_of(x);
    r.shape = {views.n0, views.n1, x.size(-2), x.size(-1)};
    r.strides = {views.n1 * x.size(-2) * x.size(-1), x.size(-2) * x.size(-1), x.size(-1), 1};
    return r;
  };
  AttentionBwdCall call;
  call.q = views.refs[0];
  call.k = views.refs[1];
  call.v = views.refs[2];
  call.grad = views.refs[3];
  if (plan.mask.defined()) call.mask = views.refs[4];
  call.lse = ref_of(lse);
  call.delta = ref_of(delta);
  call.d_q = as4(dq);
  call.d_k = as4(dk);
  call.d_v = as4(dv);
  call.scale = plan.scale;
  call.causal = plan.causal;
  call.has_mask = plan.mask.defined();
  backend_for(q.device()).attention_bwd(call);
  return {sum_to(dq, q.shape()), sum_to(dk, k.shape()), sum_to(dv, v.shape())};
}

}  // namespace ops

Tensor scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                                    const Tensor& mask, bool causal, std::optional<double> scale) {
  const OpScope scope("scaled_dot_product_attention");
  ops::AttentionPlan plan = ops::plan_attention(q, k, v, mask, causal, scale, false);
  Shape out_shape = plan.batch;
  out_shape.push_back(q.size(-2));
  out_shape.push_back(v.size(-1));
  // No keys: every query attends to nothing and gets zeros (what the composition gives).
  if (shape_numel(out_shape) == 0 || k.size(-2) == 0)
    return zeros(out_shape, q.dtype(), q.device());
  if (ops::attention_uses_kernel(plan, q, k, v))
    return ops::attention_kernel_forward(q, k, v, plan).out;
  ops::resolve_masks(plan, q, k);
  const DType t = q.dtype(), wide = compute_dtype(t);
  return compose::attention_parts<Tensor>(q.cast(wide), k.cast(wide), v.cast(wide), plan).cast(t);
}

}  // namespace numr
