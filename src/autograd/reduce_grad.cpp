// Var ops and gradient rules of the reduction, scan and softmax families.
#include "autograd/grad_util.h"
#include "ops/common.h"

namespace numr {

using autograd::constant;
using autograd::record;

namespace {

// g, shaped like a reduction's output, broadcast back over x's shape.
Var expand_reduced(const Var& g, const Shape& in_shape, const std::vector<int64_t>& dims,
                   bool keepdim) {
  Var e = g;
  if (!keepdim) {
    const std::vector<int64_t> ds = ops::reduce_dims("sum", dims, int64_t(in_shape.size()));
    for (int64_t d : ds) e = unsqueeze(e, d);
  }
  return broadcast_to(e, in_shape);
}

}  // namespace

Var sum(const Var& x, const std::vector<int64_t>& dims, bool keepdim) {
  return record("sum", sum(x.tensor(), dims, keepdim), {x},
                [dims, keepdim](const Var& g, const Node& n) -> std::vector<Var> {
                  return {expand_reduced(g, n.input(0).shape(), dims, keepdim)};
                });
}

Var mean(const Var& x, const std::vector<int64_t>& dims, bool keepdim) {
  const int64_t count = x.numel() / std::max<int64_t>(1, sum(x.tensor(), dims, keepdim).numel());
  return record("mean", mean(x.tensor(), dims, keepdim), {x},
                [dims, keepdim, count](const Var& g, const Node& n) -> std::vector<Var> {
                  return {expand_reduced(g, n.input(0).shape(), dims, keepdim) / double(count)};
                });
}

}  // namespace numr
