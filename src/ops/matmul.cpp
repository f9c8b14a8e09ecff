// Front end of matmul: a [.., M, K] @ b [.., K, N] -> [.., M, N], batch dims broadcast.
// A 1-D operand is promoted as in NumPy: a [K] is [1, K], b [K] is [K, 1], and the
// added dim is dropped from the result. The promotion is done here with views, so every
// backend only sees operands of 2 or more dims.
#include "numr/ops.h"
#include "ops/common.h"

namespace numr {

namespace {

Tensor matmul_2d(const Tensor& a, const Tensor& b) {
  const Shape& as = a.shape();
  const Shape& bs = b.shape();
  const int64_t m = as[as.size() - 2], k = as.back();
  const int64_t kb = bs[bs.size() - 2], n = bs.back();
  if (k != kb)
    fail<ShapeMismatch>("matmul", "inner dims differ: ", shape_str(as), " @ ", shape_str(bs),
                        " (", k, " vs ", kb, ")");

  const Shape batch = broadcast_shapes("matmul", Shape(as.begin(), as.end() - 2),
                                       Shape(bs.begin(), bs.end() - 2));
  Shape out_shape = batch;
  out_shape.push_back(m);
  out_shape.push_back(n);
  Tensor out = Tensor::empty(out_shape, a.dtype(), a.device());
  if (out.numel() == 0) return out;

  Backend& be = backend_for(a.device());
  if (k == 0) {  // an empty sum: every element is 0
    be.fill(FillCall{ref_of(out), 0.0});
    return out;
  }

  Shape a_full = batch, b_full = batch;
  a_full.push_back(m);
  a_full.push_back(k);
  b_full.push_back(k);
  b_full.push_back(n);
  MatmulCall call;
  call.a = ops::broadcast_ref(a, a_full);
  call.b = ops::broadcast_ref(b, b_full);
  call.out = ref_of(out);
  be.matmul(call);
  return out;
}

}  // namespace

Tensor matmul(const Tensor& a, const Tensor& b) {
  ops::check_same("matmul", {&a, &b});
  ops::check_dtype(OpId::matmul, a.dtype());
  if (a.dim() == 0 || b.dim() == 0)
    fail<InvalidArgument>("matmul", "operands need at least 1 dim, got ", shape_str(a.shape()),
                          " @ ", shape_str(b.shape()));
  if (a.dim() >= 2 && b.dim() >= 2) return matmul_2d(a, b);
  // Checked here, so the message shows the shapes as given rather than as promoted.
  const int64_t k = a.shape().back();
  const int64_t kb = b.dim() == 1 ? b.shape()[0] : b.shape()[b.shape().size() - 2];
  if (k != kb)
    fail<ShapeMismatch>("matmul", "inner dims differ: ", shape_str(a.shape()), " @ ",
                        shape_str(b.shape()), " (", k, " vs ", kb, ")");
  Tensor out = matmul_2d(a.dim() == 1 ? a.unsqueeze(0) : a, b.dim() == 1 ? b.unsqueeze(1) : b);
  if (b.dim() == 1) out = out.squeeze(-1);
  if (a.dim() == 1) out = out.squeeze(b.dim() == 1 ? -1 : -2);
  return out;
}

}  // namespace numr
