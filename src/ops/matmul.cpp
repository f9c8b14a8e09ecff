// Front end of matmul: a [.., M, K] @ b [.., K, N] -> [.., M, N], batch dims broadcast.
#include "ops/matmul.h"

#include "numr/ops.h"
#include "ops/common.h"

namespace numr {
namespace ops {

Shape matmul_shape(const Tensor& a, const Tensor& b) {
  ops::check_same("matmul", {&a, &b});
  ops::check_dtype(OpId::matmul, a.dtype());
  // No promotion of 1-D operands: a silent vector/matrix guess hides shape bugs.
  if (a.dim() < 2 || b.dim() < 2)
    fail<InvalidArgument>("matmul", "both operands need at least 2 dims, got ",
                          shape_str(a.shape()), " @ ", shape_str(b.shape()));
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
  return out_shape;
}

void matmul_into(const Tensor& a, const Tensor& b, const Tensor& out) {
  if (out.numel() == 0) return;
  const int64_t m = a.shape()[size_t(a.dim() - 2)], k = a.shape().back();
  const int64_t n = b.shape().back();
  Backend& be = backend_for(a.device());
  if (k == 0) {  // an empty sum: every element is 0
    be.fill(FillCall{ref_of(out), 0.0});
    return;
  }

  const Shape batch(out.shape().begin(), out.shape().end() - 2);
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
}

}  // namespace ops

Tensor matmul(const Tensor& a, const Tensor& b) {
  const OpScope scope("matmul");
  const Shape shape = ops::matmul_shape(a, b);  // checks a and b before they are used
  Tensor out = Tensor::empty(shape, a.dtype(), a.device());
  ops::matmul_into(a, b, out);
  return out;
}

}  // namespace numr
