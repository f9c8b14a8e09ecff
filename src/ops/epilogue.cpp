// Front ends of the GEMM epilogues: act(a @ b + bias) and a @ b + bias + residual, the
// forward that also keeps what its backward needs, and the backward: one fused pass for
// grad_pre and the bias gradient, then two GEMMs (never a recomputed a @ b when the
// forward's saved tensor is given).
#include <utility>

#include "numr/ops.h"
#include "ops/common.h"
#include "ops/compose/compose.h"

namespace numr {

std::string_view activation_name(Activation act) {
  switch (act) {
    case Activation::None: return "none";
#define NUMR_EPILOGUE_ACTIVATION(Name, op) \
  case Activation::Name: return #op;
#include "numr/op_table.def"
  }
  return "unknown";
}

bool needs_preactivation(Activation act) {
  return act == Activation::Gelu || act == Activation::Silu;
}

namespace {

void check_activation(std::string_view op, Activation act) {
  if (activation_name(act) == "unknown")
    fail<InvalidArgument>(op, "unknown activation ", int(act));
}

void check_float(std::string_view op, OpId id, DType t) {
  if (!op_accepts(id, t))
    fail<UnsupportedDType>(op, "unsupported dtype ", t, " (accepts F64 F32 F16 BF16)");
}

// The product's dims: a [M, K] or [B, M, K]; b [K, N] shared by every batch or [B, K, N].
struct Gemm {
  int64_t batch = 0;  // 0 when a is 2-D
  int64_t m = 0, k = 0, n = 0;
  Shape out_shape;
};

Gemm check_gemm(std::string_view op, OpId id, const Tensor& a, const Tensor& b,
                std::initializer_list<const Tensor*> others) {
  ops::check_same(op, {&a, &b});
  for (const Tensor* t : others) ops::check_same(op, {&a, t});
  check_float(op, id, a.dtype());
  if (a.dim() != 2 && a.dim() != 3)
    fail<InvalidArgument>(op, "a must be [M, K] or [B, M, K], got ", shape_str(a.shape()));
  if (b.dim() != 2 && b.dim() != 3)
    fail<InvalidArgument>(op, "b must be [K, N] or [B, K, N], got ", shape_str(b.shape()));
  if (b.dim() == 3 && a.dim() == 2)
    fail<InvalidArgument>(op, "a per-batch b ", shape_str(b.shape()),
                          " needs a batched a [B, M, K], got ", shape_str(a.shape()));
  Gemm g;
  const Shape& as = a.shape();
  const Shape& bs = b.shape();
  g.m = as[as.size() - 2];
  g.k = as.back();
  g.n = bs.back();
  if (bs[bs.size() - 2] != g.k)
    fail<ShapeMismatch>(op, "inner dims differ: ", shape_str(as), " @ ", shape_str(bs), " (",
                        g.k, " vs ", bs[bs.size() - 2], ")");
  if (a.dim() == 3) {
    g.batch = as[0];
    if (b.dim() == 3 && bs[0] != g.batch)
      fail<ShapeMismatch>(op, "a has ", g.batch, " batches but b has ", bs[0], ": ",
                          shape_str(as), " @ ", shape_str(bs));
    g.out_shape = {g.batch, g.m, g.n};
  } else {
    g.out_shape = {g.m, g.n};
  }
  return g;
}

void check_bias(std::string_view op, const Tensor& bias, int64_t n) {
  if (bias.dim() != 1 || bias.shape()[0] != n)
    fail<ShapeMismatch>(op, "bias must be [", n, "] (the output's columns), got ",
                        shape_str(bias.shape()));
}

void check_like_out(std::string_view op, const char* what, const Tensor& t, const Gemm& g) {
  if (t.shape() != g.out_shape)
    fail<ShapeMismatch>(op, what, " must have the output's shape ", shape_str(g.out_shape),
                        ", got ", shape_str(t.shape()));
}

// out = act(a @ b + bias) (+ residual), and pre = a @ b + bias when want_pre and act needs it.
// Arguments already checked.
EpilogueForward run_forward(OpId op, const Gemm& g, const Tensor& a, const Tensor& b,
                            const Tensor& bias, const Tensor* residual, Activation act,
                            bool want_pre) {
  if (!use_kernel(backend_for(a.device()), op, a.dtype()))
    return compose::epilogue(a, b, bias, residual, act, want_pre);
  const bool has_pre = want_pre && needs_preactivation(act);
  Tensor out = Tensor::empty(g.out_shape, a.dtype(), a.device());
  Tensor pre = has_pre ? Tensor::empty(g.out_shape, a.dtype(), a.device()) : out;
  if (out.numel() == 0) return {out, pre};
  // The backend takes a contiguous bias and residual; a and b in any layout.
  const Tensor bias_c = bias.contiguous();
  const Tensor res_c = residual ? residual->contiguous() : Tensor();
  GemmEpilogueCall call;
  call.a = ref_of(a);
  if (g.batch > 0)
    call.b = ops::broadcast_ref(b, {g.batch, g.k, g.n});  // stride 0 when shared
  else
    call.b = ref_of(b);
  call.bias = ref_of(bias_c);
  call.out = ref_of(out);
  call.act = act;
  call.has_residual = residual != nullptr;
  if (residual) call.residual = ref_of(res_c);
  call.has_pre = has_pre;
  if (has_pre) call.pre = ref_of(pre);
  backend_for(a.device()).matmul_epilogue(call);
  return {out, pre};
}

// grad_pre = grad * act'(saved) (from the pre-activation when saved_is_pre, else from the
// output) and d_bias = Σ over all leading dims of grad_pre, in one pass.
std::pair<Tensor, Tensor> fused_pass(OpId op, const Tensor& grad, const Tensor& saved,
                                     Activation act, bool saved_is_pre) {
  if (grad.numel() > 0 && !use_kernel(backend_for(grad.device()), op, grad.dtype()))
    return compose::bias_activation_bwd(grad, saved, act, saved_is_pre);
  const int64_t n = grad.shape().back();
  Tensor grad_pre = Tensor::empty(grad.shape(), grad.dtype(), grad.device());
  Tensor d_bias = Tensor::empty({n}, grad.dtype(), grad.device());
  Backend& be = backend_for(grad.device());
  if (grad.numel() == 0) {
    if (n > 0) be.fill(FillCall{ref_of(d_bias), 0.0});  // an empty sum
    return {grad_pre, d_bias};
  }
  const Tensor g = grad.contiguous();
  const Tensor s = saved.contiguous();
  BiasActBwdCall call;
  call.grad = ref_of(g);
  call.saved = ref_of(s);
  call.grad_pre = ref_of(grad_pre);
  call.d_bias = ref_of(d_bias);
  call.act = act;
  call.saved_is_pre = saved_is_pre;
  be.bias_activation_bwd(call);
  return {grad_pre, d_bias};
}

// d_a = grad_pre @ bᵀ; d_b = aᵀ @ grad_pre per batch for a per-batch b, summed over the
// batches for a shared b (as one GEMM over the stacked rows).
EpilogueGrads gemm_grads(const Gemm& g, const Tensor& a, const Tensor& b, Tensor grad_pre,
                         Tensor d_bias) {
  EpilogueGrads r;
  r.d_a = matmul(grad_pre, b.transpose(b.dim() - 2, b.dim() - 1));
  if (a.dim() == 3 && b.dim() == 2) {
    const Tensor a2 = a.reshape({g.batch * g.m, g.k});
    const Tensor g2 = grad_pre.reshape({g.batch * g.m, g.n});
    r.d_b = matmul(a2.transpose(0, 1), g2);
  } else {
    r.d_b = matmul(a.transpose(a.dim() - 2, a.dim() - 1), grad_pre);
  }
  r.d_bias = std::move(d_bias);
  return r;
}

}  // namespace

Tensor matmul_bias_activation(const Tensor& a, const Tensor& b, const Tensor& bias,
                              Activation act) {
  const OpScope scope("matmul_bias_activation");
  const std::string_view op = current_op("matmul_bias_activation");  // the public op when called from another
  const Gemm g = check_gemm(op, OpId::matmul_bias_activation, a, b, {&bias});
  check_bias(op, bias, g.n);
  check_activation(op, act);
  return run_forward(OpId::matmul_bias_activation, g, a, b, bias, nullptr, act, false).out;
}

Tensor matmul_bias_residual(const Tensor& a, const Tensor& b, const Tensor& bias,
                            const Tensor& residual) {
  const OpScope scope("matmul_bias_residual");
  const std::string_view op = current_op("matmul_bias_residual");  // the public op when called from another
  const Gemm g = check_gemm(op, OpId::matmul_bias_residual, a, b, {&bias, &residual});
  check_bias(op, bias, g.n);
  check_like_out(op, "residual", residual, g);
  return run_forward(OpId::matmul_bias_residual, g, a, b, bias, &residual, Activation::None,
                     false)
      .out;
}

EpilogueForward matmul_bias_activation_fwd(const Tensor& a, const Tensor& b, const Tensor& bias,
                                           Activation act) {
  const OpScope scope("matmul_bias_activation_fwd");
  const std::string_view op = current_op("matmul_bias_activation_fwd");  // the public op when called from another
  const Gemm g = check_gemm(op, OpId::matmul_bias_activation, a, b, {&bias});
  check_bias(op, bias, g.n);
  check_activation(op, act);
  return run_forward(OpId::matmul_bias_activation, g, a, b, bias, nullptr, act, true);
}

EpilogueGrads matmul_bias_activation_bwd_saved(const Tensor& grad, const Tensor& a,
                                               const Tensor& b, const Tensor& saved,
                                               Activation act) {
  const OpScope scope("matmul_bias_activation_bwd_saved");
  const std::string_view op = current_op("matmul_bias_activation_bwd_saved");  // the public op when called from another
  const Gemm g = check_gemm(op, OpId::matmul_bias_activation_bwd, a, b, {&grad, &saved});
  check_activation(op, act);
  check_like_out(op, "grad", grad, g);
  check_like_out(op, "saved", saved, g);
  auto [grad_pre, d_bias] =
      fused_pass(OpId::matmul_bias_activation_bwd, grad, saved, act, needs_preactivation(act));
  return gemm_grads(g, a, b, std::move(grad_pre), std::move(d_bias));
}

EpilogueGrads matmul_bias_activation_bwd(const Tensor& grad, const Tensor& a, const Tensor& b,
                                         const Tensor& bias, Activation act) {
  const OpScope scope("matmul_bias_activation_bwd");
  const std::string_view op = current_op("matmul_bias_activation_bwd");  // the public op when called from another
  const Gemm g = check_gemm(op, OpId::matmul_bias_activation_bwd, a, b, {&grad, &bias});
  check_bias(op, bias, g.n);
  check_activation(op, act);
  check_like_out(op, "grad", grad, g);
  // Nothing was saved: recompute pre = a @ b + bias and take every derivative from it.
  const Tensor pre = run_forward(OpId::matmul_bias_activation_bwd, g, a, b, bias, nullptr,
                                 Activation::None, false)
                         .out;
  auto [grad_pre, d_bias] = fused_pass(OpId::matmul_bias_activation_bwd, grad, pre, act, true);
  return gemm_grads(g, a, b, std::move(grad_pre), std::move(d_bias));
}

std::pair<Tensor, Tensor> bias_activation_bwd(const Tensor& grad, const Tensor& saved,
                                              Activation act) {
  const OpScope scope("bias_activation_bwd");
  const std::string_view op = current_op("bias_activation_bwd");  // the public op when called from another
  ops::check_same(op, {&grad, &saved});
  check_float(op, OpId::bias_activation_bwd, grad.dtype());
  check_activation(op, act);
  if (grad.dim() < 1)
    fail<InvalidArgument>(op, "grad needs at least 1 dim (the bias's), got a scalar");
  if (saved.shape() != grad.shape())
    fail<ShapeMismatch>(op, "saved ", shape_str(saved.shape()), " must have grad's shape ",
                        shape_str(grad.shape()));
  return fused_pass(OpId::bias_activation_bwd, grad, saved, act, needs_preactivation(act));
}

}  // namespace numr
