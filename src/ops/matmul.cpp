// Front end of matmul: a [.., M, K] @ b [.., K, N] -> [.., M, N], batch dims broadcast.
// A 1-D operand is promoted as in NumPy: a [K] is [1, K], b [K] is [K, 1], and the
// added dim is dropped from the result. The promotion is done here with views, so every
// backend only sees operands of 2 or more dims.
#include "ops/matmul.h"

#include "numr/ops.h"
#include "ops/common.h"
#include "ops/complex_ops.h"
#include "ops/compose/compose.h"

namespace numr {
namespace ops {

namespace {

Tensor promote_a(const Tensor& a) { return a.dim() == 1 ? a.unsqueeze(0) : a; }
Tensor promote_b(const Tensor& b) { return b.dim() == 1 ? b.unsqueeze(1) : b; }

// The result's shape with the promoted dims kept: [batch.., M, N].
Shape promoted_shape(const Tensor& a, const Tensor& b) {
  const Shape& as = a.shape();
  const Shape& bs = b.shape();
  const int64_t m = as[as.size() - 2], n = bs.back();
  Shape out = broadcast_shapes("matmul", Shape(as.begin(), as.end() - 2),
                               Shape(bs.begin(), bs.end() - 2));
  out.push_back(m);
  out.push_back(n);
  return out;
}

}  // namespace

Shape matmul_shape(const Tensor& a, const Tensor& b) {
  ops::check_same("matmul", {&a, &b});
  ops::check_dtype(OpId::matmul, a.dtype());
  if (a.dim() == 0 || b.dim() == 0)
    fail<InvalidArgument>("matmul", "operands need at least 1 dim, got ", shape_str(a.shape()),
                          " @ ", shape_str(b.shape()));
  // Checked before promotion, so the message shows the shapes as given.
  const int64_t k = a.shape().back();
  const int64_t kb = b.dim() == 1 ? b.shape()[0] : b.shape()[b.shape().size() - 2];
  if (k != kb)
    fail<ShapeMismatch>("matmul", "inner dims differ: ", shape_str(a.shape()), " @ ",
                        shape_str(b.shape()), " (", k, " vs ", kb, ")");
  Shape out = promoted_shape(promote_a(a), promote_b(b));
  if (b.dim() == 1) out.pop_back();
  if (a.dim() == 1) out.erase(out.end() - (b.dim() == 1 ? 1 : 2));
  return out;
}

void matmul_into(const Tensor& a_in, const Tensor& b_in, const Tensor& out_in) {
  if (out_in.numel() == 0) return;
  const Tensor a = promote_a(a_in), b = promote_b(b_in);
  const Shape full = promoted_shape(a, b);
  const Tensor out = out_in.view(full);  // out is contiguous: only size-1 dims come back
  const int64_t m = full[full.size() - 2], n = full.back(), k = a.shape().back();
  Backend& be = backend_for(a.device());
  if (k == 0) {  // an empty sum: every element is 0
    be.fill(FillCall{ref_of(out), 0.0});
    return;
  }
  const Shape batch(full.begin(), full.end() - 2);
  Shape a_full = batch, b_full = batch;
  a_full.push_back(m);
  a_full.push_back(k);
  b_full.push_back(k);
  b_full.push_back(n);
  if (!use_kernel(be, OpId::matmul, a.dtype())) {
    const Tensor r = compose::matmul(broadcast_to(a, a_full), broadcast_to(b, b_full));
    be.copy(CopyCall{ref_of(r), ref_of(out)});
    return;
  }
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
  if (is_complex(a.dtype())) return complex_ops::matmul(a, b);
  Tensor out = Tensor::empty(shape, a.dtype(), a.device());
  ops::matmul_into(a, b, out);
  return out;
}

}  // namespace numr
