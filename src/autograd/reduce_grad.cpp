// Var ops and gradient rules of the reduction, scan and softmax families. Each rule is
// written with Var ops, so it is itself differentiable (second and higher order).
#include <algorithm>

#include "autograd/grad_util.h"
#include "core/op_scope.h"
#include "ops/common.h"

namespace numr {

using autograd::constant;
using autograd::record;
using autograd::scalar_like;
using autograd::zeros_like;

namespace {

using Grads = std::vector<Var>;

// The reduction's input shape with the reduced dims (normalised, sorted) set to 1.
Shape kept_shape(const Shape& in, const std::vector<int64_t>& ds) {
  Shape s = in;
  for (int64_t d : ds) s[size_t(d)] = 1;
  return s;
}

int64_t reduced_count(const Shape& in, const std::vector<int64_t>& ds) {
  int64_t n = 1;
  for (int64_t d : ds) n *= in[size_t(d)];
  return n;
}

// A reduction's output (or its gradient), with or without kept dims, broadcast back over
// the input's shape. Reshaping to the kept-dims shape works either way: dropping size-1
// dims does not reorder elements.
Var expand_reduced(const Var& g, const Shape& in, const std::vector<int64_t>& ds) {
  return broadcast_to(reshape(g, kept_shape(in, ds)), in);
}

// For each element along the last dim, the product of all the others. Prefix products times
// suffix products, never dividing, so it is right when elements are zero.
Var product_of_others(const Var& xf) {
  const int64_t n = xf.shape().back();
  const Var before = cumprod(pad(narrow(xf, -1, 0, n - 1), {1, 0}, 1.0), -1);
  const Var after = flip(cumprod(flip(pad(narrow(xf, -1, 1, n - 1), {0, 1}, 1.0), {-1}), -1), {-1});
  return before * after;
}

// max/min: the gradient goes to the elements equal to the result, split evenly among ties.
// The split is a constant, as the op is linear in the chosen elements.
Var extreme(std::string_view name, const Var& x, Tensor value, const std::vector<int64_t>& dims) {
  return record(name, std::move(value), {x}, [name, dims](const Var& g, const Node& n) -> Grads {
    const Var& in = n.input(0);
    const std::vector<int64_t> ds = ops::reduce_dims(name, dims, in.dim());
    const Tensor best = reshape(n.output().tensor(), kept_shape(in.shape(), ds));
    const Tensor hit = eq(in.tensor(), best).cast(in.dtype());
    const Tensor share = hit / sum(hit, ds, /*keepdim=*/true);
    return {expand_reduced(g, in.shape(), ds) * constant(share)};
  });
}

// Sums g from the last element back to each element along dim.
Var reverse_cumsum(const Var& g, int64_t dim) {
  if (g.dim() == 0) return g;  // a 0-d tensor's cumsum is itself
  return flip(cumsum(flip(g, {dim}), dim), {dim});
}

// v moved by s towards the start along dim d (normalised): element k is v_{k+s}, and the
// last s elements are fill.
Var shift_down(const Var& v, int64_t d, int64_t s, double fill) {
  const int64_t n = v.shape()[size_t(d)];
  std::vector<int64_t> pads(size_t(2 * (v.dim() - d)), 0);
  pads[size_t(2 * (v.dim() - 1 - d) + 1)] = s;
  return pad(narrow(v, d, s, n - s), pads, fill);
}

// The gradient of cumprod, without dividing by x, so it is exact where x has zeros:
//   dL/dx_k = P_k S_k,  P_k = prod_{i<k} x_i,  S_k = sum_{j>=k} g_j prod_{k<i<=j} x_i.
// S solves S_k = g_k + x_{k+1} S_{k+1}; the recurrence is unrolled by doubling: with
// S_k = a_k + c_k S_{k+s}, substituting S_{k+s} doubles s. log2(n) steps of Var ops, so
// the rule is differentiable again.
Var cumprod_grad(const Var& x, const Var& g, int64_t dim) {
  if (x.dim() == 0) return g;
  const int64_t d = wrap_dim("cumprod", dim, x.dim());
  const int64_t n = x.shape()[size_t(d)];
  if (n <= 1) return g;
  std::vector<int64_t> first(size_t(2 * (x.dim() - d)), 0);
  first[size_t(2 * (x.dim() - 1 - d))] = 1;
  const Var before = cumprod(pad(narrow(x, d, 0, n - 1), first, 1.0), d);
  Var a = g;
  Var c = shift_down(x, d, 1, 0.0);
  for (int64_t s = 1; s < n; s *= 2) {
    a = a + c * shift_down(a, d, s, 0.0);
    if (2 * s < n) c = c * shift_down(c, d, s, 0.0);
  }
  return before * a;
}

}  // namespace

// ---- reductions ----
Var sum(const Var& x, const std::vector<int64_t>& dims, bool keepdim) {
  const OpScope scope("sum");
  return record("sum", sum(x.tensor(), dims, keepdim), {x},
                [dims](const Var& g, const Node& n) -> Grads {
                  const Shape& in = n.input(0).shape();
                  return {expand_reduced(g, in, ops::reduce_dims("sum", dims, int64_t(in.size())))};
                });
}

Var mean(const Var& x, const std::vector<int64_t>& dims, bool keepdim) {
  const OpScope scope("mean");
  return record("mean", mean(x.tensor(), dims, keepdim), {x},
                [dims](const Var& g, const Node& n) -> Grads {
                  const Shape& in = n.input(0).shape();
                  const auto ds = ops::reduce_dims("mean", dims, int64_t(in.size()));
                  return {expand_reduced(g, in, ds) / double(reduced_count(in, ds))};
                });
}

Var max(const Var& x, const std::vector<int64_t>& dims, bool keepdim) {
  const OpScope scope("max");
  return extreme("max", x, max(x.tensor(), dims, keepdim), dims);
}

Var min(const Var& x, const std::vector<int64_t>& dims, bool keepdim) {
  const OpScope scope("min");
  return extreme("min", x, min(x.tensor(), dims, keepdim), dims);
}

Var prod(const Var& x, const std::vector<int64_t>& dims, bool keepdim) {
  const OpScope scope("prod");
  // d prod / d x_i is the product of the other elements of x_i's group. The reduced dims
  // are moved last and flattened into one, so each group is a row. The second derivative
  // goes through cumprod's rule.
  return record("prod", prod(x.tensor(), dims, keepdim), {x},
                [dims](const Var& g, const Node& n) -> Grads {
                  const Var& in = n.input(0);
                  if (in.numel() == 0) return {zeros_like(in)};
                  const Shape& s = in.shape();
                  const auto ds = ops::reduce_dims("prod", dims, in.dim());
                  std::vector<int64_t> perm;
                  Shape rows;
                  for (int64_t d = 0; d < in.dim(); ++d)
                    if (std::find(ds.begin(), ds.end(), d) == ds.end()) {
                      perm.push_back(d);
                      rows.push_back(s[size_t(d)]);
                    }
                  perm.insert(perm.end(), ds.begin(), ds.end());
                  Shape g_rows = rows;
                  rows.push_back(reduced_count(s, ds));
                  g_rows.push_back(1);
                  const Var others = product_of_others(reshape(permute(in, perm), rows));
                  Shape permuted;
                  std::vector<int64_t> inverse(perm.size());
                  for (size_t i = 0; i < perm.size(); ++i) {
                    permuted.push_back(s[size_t(perm[i])]);
                    inverse[size_t(perm[i])] = int64_t(i);
                  }
                  return {permute(reshape(others * reshape(g, g_rows), permuted), inverse)};
                });
}

Var any(const Var& x, const std::vector<int64_t>& dims, bool keepdim) {
  const OpScope scope("any");
  return constant(any(x.tensor(), dims, keepdim));
}
Var all(const Var& x, const std::vector<int64_t>& dims, bool keepdim) {
  const OpScope scope("all");
  return constant(all(x.tensor(), dims, keepdim));
}
Var argmax(const Var& x, std::optional<int64_t> dim, bool keepdim) {
  const OpScope scope("argmax");
  return constant(argmax(x.tensor(), dim, keepdim));
}
Var argmin(const Var& x, std::optional<int64_t> dim, bool keepdim) {
  const OpScope scope("argmin");
  return constant(argmin(x.tensor(), dim, keepdim));
}

Var var(const Var& x, const std::vector<int64_t>& dims, int64_t correction, bool keepdim) {
  const OpScope scope("var");
  // d var / d x_i = 2 (x_i - mean) / (n - correction).
  return record("var", var(x.tensor(), dims, correction, keepdim), {x},
                [dims, correction](const Var& g, const Node& n) -> Grads {
                  const Var& in = n.input(0);
                  const auto ds = ops::reduce_dims("var", dims, in.dim());
                  const double denom = double(reduced_count(in.shape(), ds) - correction);
                  const Var centered = in - mean(in, ds, /*keepdim=*/true);
                  return {expand_reduced(g, in.shape(), ds) * centered * (2.0 / denom)};
                });
}

Var std(const Var& x, const std::vector<int64_t>& dims, int64_t correction, bool keepdim) {
  const OpScope scope("std");
  // d std / d x_i = (x_i - mean) / ((n - correction) std); 0 where std is 0 (constant
  // values: 0 / 0), as in PyTorch.
  return record("std", std(x.tensor(), dims, correction, keepdim), {x},
                [dims, correction](const Var& g, const Node& n) -> Grads {
                  const Var& in = n.input(0);
                  const auto ds = ops::reduce_dims("std", dims, in.dim());
                  const double denom = double(reduced_count(in.shape(), ds) - correction);
                  const Var centered = in - mean(in, ds, /*keepdim=*/true);
                  const Var y = n.output();
                  const Var g_over_y =
                      where_cond(constant(eq(y.tensor(), zeros({}, y.dtype(), y.device()))),
                                 scalar_like(g, 0.0), g / y);
                  return {expand_reduced(g_over_y, in.shape(), ds) * centered / denom};
                });
}

Var logsumexp(const Var& x, const std::vector<int64_t>& dims, bool keepdim) {
  const OpScope scope("logsumexp");
  // The gradient is g times the softmax over the reduced dims, exp(x - out).
  return record("logsumexp", logsumexp(x.tensor(), dims, keepdim), {x},
                [dims](const Var& g, const Node& n) -> Grads {
                  const Var& in = n.input(0);
                  const auto ds = ops::reduce_dims("logsumexp", dims, in.dim());
                  const Var weights = exp(in - expand_reduced(n.output(), in.shape(), ds));
                  return {expand_reduced(g, in.shape(), ds) * weights};
                });
}

// ---- scans ----
Var cumsum(const Var& x, int64_t dim) {
  const OpScope scope("cumsum");
  return record("cumsum", cumsum(x.tensor(), dim), {x},
                [dim](const Var& g, const Node&) -> Grads { return {reverse_cumsum(g, dim)}; });
}

Var cumprod(const Var& x, int64_t dim) {
  const OpScope scope("cumprod");
  return record(
      "cumprod", cumprod(x.tensor(), dim), {x},
      [dim](const Var& g, const Node& n) -> Grads { return {cumprod_grad(n.input(0), g, dim)}; });
}

// ---- softmax ----
Var softmax(const Var& x, int64_t dim) {
  const OpScope scope("softmax");
  return record("softmax", softmax(x.tensor(), dim), {x},
                [dim](const Var& g, const Node& n) -> Grads {
                  const Var y = n.output();
                  return {y * (g - sum(g * y, {dim}, /*keepdim=*/true))};
                });
}

Var log_softmax(const Var& x, int64_t dim) {
  const OpScope scope("log_softmax");
  return record("log_softmax", log_softmax(x.tensor(), dim), {x},
                [dim](const Var& g, const Node& n) -> Grads {
                  return {g - exp(n.output()) * sum(g, {dim}, /*keepdim=*/true)};
                });
}

}  // namespace numr
