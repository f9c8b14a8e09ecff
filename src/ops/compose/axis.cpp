// Scans and softmax along one dim from elementwise ops, reductions and shifted views.
#include <vector>

#include "ops/compose/compose.h"

namespace numr::compose {
namespace {

// y shifted by k along d, the first k places filled with `fill`.
Tensor shifted(const Tensor& y, int64_t d, int64_t k, double fill) {
  const int64_t n = y.shape()[size_t(d)];
  std::vector<int64_t> pads(size_t(2 * (y.dim() - d)), 0);
  pads[pads.size() - 2] = k;  // (before, after) pairs start from the last dim
  return pad(narrow(y, d, 0, n - k), pads, fill);
}

// Inclusive scan in log2(n) steps (each adds the partial results k places back).
Tensor scan(const Tensor& x, int64_t d, bool product) {
  const int64_t n = x.shape()[size_t(d)];
  Tensor y = x;
  for (int64_t k = 1; k < n; k *= 2) {
    const Tensor s = shifted(y, d, k, product ? 1.0 : 0.0);
    y = product ? y * s : y + s;
  }
  return y;
}

}  // namespace

Tensor along_axis(OpId op, const Tensor& x, int64_t d) {
  const DType t = x.dtype();
  const Tensor xw = x.cast(compute_dtype(t));
  Tensor r;
  switch (op) {
    case OpId::cumsum: r = scan(xw, d, false); break;
    case OpId::cumprod: r = scan(xw, d, true); break;
    case OpId::softmax: {
      const Tensor e = exp(xw - max(xw, {d}, true));
      r = e / sum(e, {d}, true);
      break;
    }
    case OpId::log_softmax: {
      const Tensor z = xw - max(xw, {d}, true);
      r = z - log(sum(exp(z), {d}, true));
      break;
    }
    default: fail<InvalidArgument>(op_name(op), "no composition along an axis for this op");
  }
  return r.cast(t);
}

}  // namespace numr::compose
