// Front ends of the Scan (cumsum, cumprod) and Softmax (softmax, log_softmax) families:
// the input is made contiguous and described to the backend as [outer, n, inner].
#include "numr/ops.h"
#include "ops/common.h"
#include "ops/compose/compose.h"

namespace numr {
namespace {

Tensor axis_op(OpId op, const Tensor& x, int64_t dim) {
  const OpScope scope(op_name(op));
  const std::string_view name = op_name(op);
  ops::check_defined(name, x);
  ops::check_dtype(op, x.dtype());
  // A 0-d tensor is one element along its (only) dim 0 / -1, as in PyTorch.
  int64_t d = 0;
  if (x.dim() == 0) {
    if (dim != 0 && dim != -1)
      fail<InvalidDimension>(name, "dim ", dim, " out of range for a tensor of 0 dims");
  } else {
    d = wrap_dim(name, dim, x.dim());
  }
  if (x.numel() > 0 && !use_kernel(backend_for(x.device()), op, x.dtype())) {
    const Tensor r = compose::along_axis(op, x.dim() == 0 ? x.reshape({1}) : x, d);
    return r.reshape(x.shape());
  }
  Tensor out = Tensor::empty(x.shape(), x.dtype(), x.device());
  if (out.numel() == 0) return out;
  const Tensor xc = x.contiguous();
  AxisCall call;
  call.op = op;
  call.in = ref_of(xc);
  call.out = ref_of(out);
  for (int64_t i = 0; i < x.dim(); ++i) {
    const int64_t extent = x.shape()[size_t(i)];
    if (i < d) call.outer *= extent;
    else if (i == d) call.n = extent;
    else call.inner *= extent;
  }
  backend_for(x.device()).along_axis(call);
  return out;
}

}  // namespace

Tensor cumsum(const Tensor& x, int64_t dim) { return axis_op(OpId::cumsum, x, dim); }
Tensor cumprod(const Tensor& x, int64_t dim) { return axis_op(OpId::cumprod, x, dim); }
Tensor softmax(const Tensor& x, int64_t dim) { return axis_op(OpId::softmax, x, dim); }
Tensor log_softmax(const Tensor& x, int64_t dim) { return axis_op(OpId::log_softmax, x, dim); }

}  // namespace numr
