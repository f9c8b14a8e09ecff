// mean, var, std and logsumexp from sums and maxima.
#include <limits>

#include "ops/compose/compose.h"

namespace numr::compose {
namespace {

// shape without the reduced dims (all of them when dims is empty).
Shape dropped(const Shape& shape, const std::vector<int64_t>& dims) {
  Shape out;
  if (dims.empty()) return out;
  for (size_t d = 0; d < shape.size(); ++d) {
    bool reduced = false;
    for (int64_t r : dims) reduced = reduced || r == int64_t(d);
    if (!reduced) out.push_back(shape[d]);
  }
  return out;
}

}  // namespace

Tensor reduce(OpId op, const Tensor& x, const std::vector<int64_t>& dims, bool keepdim,
              int64_t correction, int64_t count) {
  const DType t = x.dtype();
  const Tensor xw = x.cast(compute_dtype(t));
  Tensor r;
  switch (op) {
    case OpId::mean: r = sum(xw, dims, keepdim) / double(count); break;
    case OpId::var:
    case OpId::std: {
      const Tensor d = xw - mean(xw, dims, true);
      const int64_t denom = count - correction;
      r = sum(d * d, dims, keepdim);
      r = denom > 0 ? r / double(denom) : full_like(r, std::numeric_limits<double>::quiet_NaN());
      if (op == OpId::std) r = sqrt(r);
      break;
    }
    case OpId::logsumexp: {
      // Shifted by the maximum where it is finite; ±inf maxima pass through the sum.
      const Tensor m = max(xw, dims, true);
      const Tensor shift = where_cond(isinf(m), 0.0, m);
      const Tensor kept = log(sum(exp(xw - shift), dims, true)) + shift;
      r = keepdim ? kept : reshape(kept, dropped(kept.shape(), dims));
      break;
    }
    default: fail<InvalidArgument>(op_name(op), "no composition for this reduction");
  }
  return r.cast(t);
}

}  // namespace numr::compose
