// Front ends of the Norm family (rms_norm, layer_norm) and of their backward: the fused
// kernel where the backend has one, else the composition (src/ops/compose/norm.cpp).
#include "ops/norm.h"

#include <cmath>
#include <limits>

#include "numr/norm.h"
#include "numr/ops.h"
#include "ops/common.h"
#include "ops/compose/norm.h"

namespace numr {
namespace ops {

double check_norm(OpId op, const Tensor& x, const Tensor& weight, const Tensor* bias,
                  std::optional<double> eps) {
  const std::string_view name = op_name(op);
  check_defined(name, x);
  check_defined(name, weight);
  if (bias) check_defined(name, *bias);
  check_dtype(op, x.dtype());
  if (bias)
    check_same(name, {&x, &weight, bias});
  else
    check_same(name, {&x, &weight});
  if (x.dim() < 1) fail<InvalidDimension>(name, "x must have at least 1 dim, got a 0-d tensor");
  const Shape want{x.shape().back()};
  if (weight.shape() != want)
    fail<ShapeMismatch>(name, "weight must have shape ", shape_str(want), " (x's last dim), got ",
                        shape_str(weight.shape()));
  if (bias && bias->shape() != want)
    fail<ShapeMismatch>(name, "bias must have shape ", shape_str(want), " (x's last dim), got ",
                        shape_str(bias->shape()));
  if (!eps) {
    switch (x.dtype()) {
      case DType::F64: return std::numeric_limits<double>::epsilon();
      case DType::F32: return double(std::numeric_limits<float>::epsilon());
      case DType::F16: return std::ldexp(1.0, -10);
      default: return std::ldexp(1.0, -7);  // BF16
    }
  }
  if (!std::isfinite(*eps) || *eps < 0)
    fail<InvalidArgument>(name, "eps must be finite and >= 0, got ", *eps);
  return *eps;
}

double check_add_norm(OpId op, const Tensor& x, const Tensor& residual, const Tensor& weight,
                      const Tensor* bias, std::optional<double> eps) {
  const double e = check_norm(op, x, weight, bias, eps);
  const std::string_view name = op_name(op);
  check_defined(name, residual);
  check_same(name, {&x, &residual});
  if (residual.shape() != x.shape())
    fail<ShapeMismatch>(name, "residual must have x's shape ", shape_str(x.shape()), ", got ",
                        shape_str(residual.shape()));
  return e;
}

void check_group_norm(const Tensor& x, int64_t groups, const Tensor& weight, const Tensor& bias,
                      double eps) {
  constexpr std::string_view name = "group_norm";
  check_defined(name, x);
  check_defined(name, weight);
  check_defined(name, bias);
  check_dtype(OpId::group_norm, x.dtype());
  check_same(name, {&x, &weight, &bias});
  if (x.dim() < 2)
    fail<InvalidDimension>(name, "x must be [N, C, *] (at least 2 dims), got ",
                           shape_str(x.shape()));
  const int64_t c = x.shape()[1];
  if (groups < 1 || c % groups != 0)
    fail<InvalidArgument>(name, "groups must be >= 1 and divide the ", c, " channels, got ",
                          groups);
  const Shape want{c};
  if (weight.shape() != want)
    fail<ShapeMismatch>(name, "weight must have shape ", shape_str(want), " (x's channels), got ",
                        shape_str(weight.shape()));
  if (bias.shape() != want)
    fail<ShapeMismatch>(name, "bias must have shape ", shape_str(want), " (x's channels), got ",
                        shape_str(bias.shape()));
  if (!std::isfinite(eps) || eps < 0)
    fail<InvalidArgument>(name, "eps must be finite and >= 0, got ", eps);
}

}  // namespace ops

namespace {

Shape row_shape(const Shape& x) { return Shape(x.begin(), x.end() - 1); }

// The backend's row_norm of x (or, given residual, of x + residual, whose sum comes back in
// *sum), once the arguments are checked and x is not empty.
NormForward run_kernel(Backend& be, OpId op, const Tensor& x, const Tensor& w, const Tensor* b,
                       double eps, bool want_stats, const Tensor* residual = nullptr,
                       Tensor* sum = nullptr) {
  const bool centred = op == OpId::layer_norm;
  const Tensor xc = x.contiguous(), wc = w.contiguous(), bc = b ? b->contiguous() : Tensor();
  const Tensor rc = residual ? residual->contiguous() : Tensor();
  const Shape rows = row_shape(x.shape());
  const DType wide = compute_dtype(x.dtype());
  NormForward f;
  f.out = Tensor::empty(x.shape(), x.dtype(), x.device());
  RowNormCall call;
  call.op = op;
  call.x = ref_of(xc);
  call.weight = ref_of(wc);
  if (b) call.bias = ref_of(bc);
  call.out = ref_of(f.out);
  if (want_stats) {
    f.rstd = Tensor::empty(rows, wide, x.device());
    call.rstd = ref_of(f.rstd);
    if (centred) {
      f.mean = Tensor::empty(rows, wide, x.device());
      call.mean = ref_of(f.mean);
    }
  }
  if (residual) {
    *sum = Tensor::empty(x.shape(), x.dtype(), x.device());
    call.residual = ref_of(rc);
    call.sum = ref_of(*sum);
    call.has_residual = true;
  }
  call.d = x.shape().back();
  call.rows = x.numel() / call.d;
  call.eps = eps;
  call.has_stats = want_stats;
  be.row_norm(call);
  return f;
}

// want_stats: also the per-row statistics (for the backward).
NormForward forward(OpId op, const Tensor& x, const Tensor& w, const Tensor* b,
                    std::optional<double> eps_in, bool want_stats) {
  const OpScope scope(op_name(op));
  const double eps = ops::check_norm(op, x, w, b, eps_in);
  const bool centred = op == OpId::layer_norm;
  if (x.numel() == 0) {
    // No elements to normalise; rows of zero elements have NaN statistics (mean of nothing).
    const Shape rows = row_shape(x.shape());
    const DType wide = compute_dtype(x.dtype());
    const double nan = std::numeric_limits<double>::quiet_NaN();
    NormForward f;
    f.out = Tensor::empty(x.shape(), x.dtype(), x.device());
    if (!want_stats) return f;
    if (centred) f.mean = full(rows, nan, wide, x.device());
    f.rstd = full(rows, nan, wide, x.device());
    return f;
  }
  Backend& be = backend_for(x.device());
  if (!use_kernel(be, op, x.dtype())) {
    NormForward f = compose::norm_forward(x, w, b, eps, centred);
    if (!want_stats) f.mean = f.rstd = Tensor();
    return f;
  }
  return run_kernel(be, op, x, w, b, eps, want_stats);
}

// Checks grad and the saved statistics against x; returns whether the op is centred.
void check_backward(OpId op, const Tensor& grad, const Tensor& x, const Tensor& w,
                    const Tensor* mean, const Tensor& rstd) {
  const std::string_view name = op_name(op);
  ops::check_norm(op, x, w, nullptr, 0.0);
  ops::check_defined(name, grad);
  ops::check_same(name, {&x, &grad});
  if (grad.shape() != x.shape())
    fail<ShapeMismatch>(name, "grad must have x's shape ", shape_str(x.shape()), ", got ",
                        shape_str(grad.shape()));
  const Shape rows = row_shape(x.shape());
  const DType wide = compute_dtype(x.dtype());
  for (const Tensor* s : {mean, &rstd}) {
    if (!s) continue;
    ops::check_defined(name, *s);
    if (s->device() != x.device())
      fail<DeviceMismatch>(name, "saved statistics on ", s->device(), ", x on ", x.device());
    if (s->dtype() != wide)
      fail<DTypeMismatch>(name, "saved statistics must be ", wide, ", got ", s->dtype());
    if (s->shape() != rows)
      fail<ShapeMismatch>(name, "saved statistics must have shape ", shape_str(rows), ", got ",
                          shape_str(s->shape()));
  }
}

NormGrads backward(OpId op, const Tensor& grad, const Tensor& x, const Tensor& w,
                   const Tensor* mean, const Tensor& rstd) {
  const OpScope scope(op_name(op));
  check_backward(op, grad, x, w, mean, rstd);
  const bool centred = op == OpId::layer_norm;
  if (x.numel() == 0) {
    NormGrads r;
    r.d_x = zeros(x.shape(), x.dtype(), x.device());
    r.d_weight = zeros(w.shape(), x.dtype(), x.device());
    if (centred) r.d_bias = zeros(w.shape(), x.dtype(), x.device());
    return r;
  }
  Backend& be = backend_for(x.device());
  if (!use_kernel(be, op, x.dtype()))
    return compose::norm_backward(grad, x, w, mean ? *mean : Tensor(), rstd, centred);
  const Tensor gc = grad.contiguous(), xc = x.contiguous(), wc = w.contiguous(),
               mc = mean ? mean->contiguous() : Tensor(), rc = rstd.contiguous();
  NormGrads r;
  r.d_x = Tensor::empty(x.shape(), x.dtype(), x.device());
  r.d_weight = Tensor::empty(w.shape(), x.dtype(), x.device());
  RowNormBwdCall call;
  call.op = op;
  call.grad = ref_of(gc);
  call.x = ref_of(xc);
  call.weight = ref_of(wc);
  if (mean) call.mean = ref_of(mc);
  call.rstd = ref_of(rc);
  call.d_x = ref_of(r.d_x);
  call.d_weight = ref_of(r.d_weight);
  if (centred) {
    r.d_bias = Tensor::empty(w.shape(), x.dtype(), x.device());
    call.d_bias = ref_of(r.d_bias);
  }
  call.d = x.shape().back();
  call.rows = x.numel() / call.d;
  be.row_norm_bwd(call);
  return r;
}

}  // namespace

Tensor rms_norm(const Tensor& x, const Tensor& weight, std::optional<double> eps) {
  return forward(OpId::rms_norm, x, weight, nullptr, eps, false).out;
}
Tensor layer_norm(const Tensor& x, const Tensor& weight, const Tensor& bias, double eps) {
  return forward(OpId::layer_norm, x, weight, &bias, eps, false).out;
}
NormForward rms_norm_fwd(const Tensor& x, const Tensor& weight, std::optional<double> eps) {
  return forward(OpId::rms_norm, x, weight, nullptr, eps, true);
}
NormForward layer_norm_fwd(const Tensor& x, const Tensor& weight, const Tensor& bias, double eps) {
  return forward(OpId::layer_norm, x, weight, &bias, eps, true);
}
NormGrads rms_norm_bwd(const Tensor& grad, const Tensor& x, const Tensor& weight,
                       const Tensor& rstd) {
  return backward(OpId::rms_norm, grad, x, weight, nullptr, rstd);
}
NormGrads layer_norm_bwd(const Tensor& grad, const Tensor& x, const Tensor& weight,
                         const Tensor& mean, const Tensor& rstd) {
  return backward(OpId::layer_norm, grad, x, weight, &mean, rstd);
}

AddNorm fused_add_rms_norm(const Tensor& x, const Tensor& residual, const Tensor& weight,
                           std::optional<double> eps) {
  const OpScope scope("fused_add_rms_norm");
  const double e = ops::check_add_norm(OpId::fused_add_rms_norm, x, residual, weight, nullptr, eps);
  AddNorm r;
  Backend& be = backend_for(x.device());
  if (x.numel() > 0 && use_kernel(be, OpId::fused_add_rms_norm, x.dtype())) {
    r.out =
        run_kernel(be, OpId::rms_norm, x, weight, nullptr, e, false, &residual, &r.residual).out;
    return r;
  }
  r.residual = add(x, residual);
  r.out = rms_norm(r.residual, weight, e);
  return r;
}

AddNorm fused_add_layer_norm(const Tensor& x, const Tensor& residual, const Tensor& weight,
                             const Tensor& bias, double eps) {
  const OpScope scope("fused_add_layer_norm");
  ops::check_add_norm(OpId::fused_add_layer_norm, x, residual, weight, &bias, eps);
  AddNorm r;
  Backend& be = backend_for(x.device());
  if (x.numel() > 0 && use_kernel(be, OpId::fused_add_layer_norm, x.dtype())) {
    r.out =
        run_kernel(be, OpId::layer_norm, x, weight, &bias, eps, false, &residual, &r.residual).out;
    return r;
  }
  r.residual = add(x, residual);
  r.out = layer_norm(r.residual, weight, bias, eps);
  return r;
}

Tensor group_norm(const Tensor& x, int64_t groups, const Tensor& weight, const Tensor& bias,
                  double eps) {
  const OpScope scope("group_norm");
  ops::check_group_norm(x, groups, weight, bias, eps);
  ops::composition_only(OpId::group_norm, x);
  const DType t = x.dtype(), wide = compute_dtype(t);
  return compose::group_norm_parts<Tensor>(x.cast(wide), groups, weight.cast(wide), bias.cast(wide),
                                           eps)
      .cast(t);
}

}  // namespace numr
