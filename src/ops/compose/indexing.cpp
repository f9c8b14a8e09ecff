// gather and scatter from a one-hot compare: mask[.., j, k, ..] = (index[.., j, ..] == k)
// for every target k of dim d, then a select and a reduction over j (scatter) or k (gather).
#include "ops/compose/indexing.h"

#include <cstdint>
#include <limits>

#include "numr/ops.h"

namespace numr::compose {
namespace {

// [.., m, n, ..]: whether index[.., j, ..] (dim d) equals k, for k < n at dim d + 1.
Tensor one_hot_mask(const Tensor& index, int64_t d, int64_t n) {
  Shape ks(size_t(index.dim() + 1), 1);
  ks[size_t(d + 1)] = n;
  const Tensor k = arange(0, double(n), 1, DType::I64, index.device()).reshape(ks);
  return eq(index.unsqueeze(d + 1), k);
}

Tensor scalar(double v, DType t, Device dev) { return full(Shape{}, v, t, dev); }

}  // namespace

Tensor scatter_identity(ScatterOp op, DType t, Device dev) {
  const bool is_float = t == DType::F64 || t == DType::F32 || t == DType::F16 || t == DType::BF16;
  switch (op) {
    case ScatterOp::Sum: return scalar(is_float ? -0.0 : 0.0, t, dev);
    case ScatterOp::Prod: return scalar(1.0, t, dev);
    case ScatterOp::Amax:
    case ScatterOp::Amin: {
      const bool lowest = op == ScatterOp::Amax;
      if (is_float) {
        const double inf = std::numeric_limits<double>::infinity();
        return scalar(lowest ? -inf : inf, t, dev);
      }
      // INT64_MAX is not a double: integer extremes come from host integers.
      switch (t) {
        case DType::I64:
          return Tensor::from_vector<int64_t>(
              {lowest ? std::numeric_limits<int64_t>::min() : std::numeric_limits<int64_t>::max()},
              Shape{}, dev);
        case DType::I32:
          return Tensor::from_vector<int32_t>(
              {lowest ? std::numeric_limits<int32_t>::min() : std::numeric_limits<int32_t>::max()},
              Shape{}, dev);
        default: return scalar(lowest ? 0.0 : 255.0, t, dev);  // U8
      }
    }
    default: return scalar(0.0, t, dev);  // Assign has none; callers never ask
  }
}

Tensor gather(const Tensor& x, int64_t d, const Tensor& index) {
  const Tensor mask = one_hot_mask(index, d, x.shape()[size_t(d)]);  // [.., m, n, ..]
  const Tensor xv = x.unsqueeze(d);                                  // [.., 1, n, ..]
  if (x.dtype() == DType::Bool) return any(logical_and(mask, xv), {d + 1});
  // -0.0 is the identity of addition (v + -0.0 == v, also for v = -0.0): the sum over k is
  // the selected element, bit for bit, in every dtype.
  return sum(where_cond(mask, xv, -0.0), {d + 1});
}

Tensor scatter(ScatterOp op, const Tensor& init, int64_t d, const Tensor& index,
               const Tensor& src) {
  const DType t = init.dtype();
  const Device dev = init.device();
  const int64_t n = init.shape()[size_t(d)], m = index.shape()[size_t(d)];
  const Tensor mask = one_hot_mask(index, d, n);  // [.., m, n, ..]
  if (op == ScatterOp::Assign) {
    // The last j that targets each k (1-based, 0 for none), then src at that j.
    Shape js(size_t(index.dim() + 1), 1);
    js[size_t(d)] = m;
    const Tensor j1 = arange(1, double(m + 1), 1, DType::I64, dev).reshape(js);
    const Tensor last = max(where_cond(mask, j1, 0.0), {d});  // init's box shape
    const Tensor picked = gather(src, d, clamp(last - 1.0, 0.0, std::nullopt));
    return where_cond(gt(last, scalar(0, DType::I64, dev)), picked, init);
  }
  // F16 and BF16 reduce in F32 and round once, as the kernels do.
  const DType c = compute_dtype(t);
  const Tensor sv = src.unsqueeze(d + 1).cast(c);  // [.., m, 1, ..]
  const Tensor ic = init.cast(c);
  const Tensor picked = where_cond(mask, sv, scatter_identity(op, c, dev));
  switch (op) {
    case ScatterOp::Sum: return (ic + sum(picked, {d})).cast(t);
    case ScatterOp::Prod: return (ic * prod(picked, {d})).cast(t);
    default: {
      // max and min propagate NaN, as Amax and Amin do.
      const Tensor both =
          stack({ic, op == ScatterOp::Amax ? max(picked, {d}) : min(picked, {d})}, 0);
      return (op == ScatterOp::Amax ? max(both, {0}) : min(both, {0})).cast(t);
    }
  }
}

}  // namespace numr::compose
