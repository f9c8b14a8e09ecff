// Var forms of sort and topk. The forward is the Tensor op (kernel or composition); values
// are a selection of x's elements, so the gradient sends each element of grad back to the
// position its value came from, zeros elsewhere. That scatter is a one-hot contraction over
// the indices, written with Var ops (where and sum) so it differentiates again.
#include "autograd/grad_util.h"
#include "core/op_scope.h"
#include "numr/sort.h"
#include "ops/common.h"
#include "ops/sort.h"

namespace numr {

using autograd::record;

namespace {

// grad [.., k at dim, ..] sent back to x's shape through indices (grad's shape).
Var scatter_back(const Var& grad, const Tensor& indices, int64_t dim, const Var& x) {
  const Shape& x_shape = x.shape();
  if (x_shape.empty())  // a 0-d x: values are x itself, or nothing (topk with k = 0)
    return grad.numel() == 1 ? grad : autograd::zeros_like(x);
  const int64_t last = int64_t(x_shape.size()) - 1, n = x_shape[size_t(dim)];
  const Var g = transpose(grad, dim, last);
  const Tensor at = indices.transpose(dim, last);
  // hot[.., j, i]: value j came from position i.
  const Tensor hot = eq(unsqueeze(at, -1), arange(0, double(n), 1, DType::I64, indices.device()));
  const Var gx = sum(where_cond(hot, unsqueeze(g, -1), 0.0), {-2});
  return transpose(gx, dim, last);
}

// x checked, d wrapped.
SortVar sort_var(OpId op, const Var& x, int64_t d, int64_t k, bool descending) {
  SortResult r = ops::sort_along(op, x.tensor(), d, k, descending);
  Tensor idx = r.indices;
  Var values = record(op_name(op), std::move(r.values), {x}, [idx, d](const Var& g, const Node& n) {
    return std::vector<Var>{scatter_back(g, idx, d, n.input(0))};
  });
  return {values, std::move(idx)};
}

}  // namespace

SortVar sort(const Var& x, int64_t dim, bool descending) {
  const OpScope scope("sort");
  if (!x.defined()) fail<InvalidArgument>("sort", "x must be defined");
  const int64_t d = ops::check_sort(OpId::sort, x.tensor(), dim);
  return sort_var(OpId::sort, x, d, ops::sort_size(x.tensor(), d), descending);
}

SortVar topk(const Var& x, int64_t k, int64_t dim, bool largest, bool /*sorted*/) {
  const OpScope scope("topk");
  if (!x.defined()) fail<InvalidArgument>("topk", "x must be defined");
  const int64_t d = ops::check_sort(OpId::topk, x.tensor(), dim);
  ops::check_topk_k(x.tensor(), k, d);
  return sort_var(OpId::topk, x, d, k, largest);
}

}  // namespace numr
