// Var ops and gradient rules of the indexing family. Reads move the gradient back with the
// adjoint write (gather <-> scatter-add, take <-> put with accumulate, gather_nd and
// embedding_lookup <-> index_put with accumulate), and writes move it forward with a read;
// the rules are written with Var ops, so they are differentiable again. Of values written
// to one position without accumulating, only the one kept (the last) gets a gradient.
#include <cstdint>
#include <vector>

#include "autograd/grad_util.h"
#include "core/op_scope.h"
#include "numr/indexing.h"

namespace numr {

using autograd::constant;
using autograd::record;
using autograd::sum_to;

namespace {

using Grads = std::vector<Var>;

Tensor as_i64(const Tensor& i) { return i.dtype() == DType::I64 ? i : i.cast(DType::I64); }

Var zeros_of(const Var& x) { return autograd::zeros_like(x); }
Var as_mask(const Tensor& cond, const Var& like) { return autograd::mask_like(cond, like); }

// t narrowed to `shape` (no larger in any dim), from the start of each dim.
Tensor box(const Tensor& t, const Shape& shape) {
  Tensor b = t;
  for (int64_t k = 0; k < t.dim(); ++k)
    if (shape[size_t(k)] < t.shape()[size_t(k)]) b = b.narrow(k, 0, shape[size_t(k)]);
  return b;
}

// g padded with zeros at the end of each dim to `shape` (src larger than index).
Var pad_to(const Var& g, const Shape& shape) {
  if (g.shape() == shape) return g;
  const size_t nd = shape.size();
  std::vector<int64_t> pads(2 * nd, 0);
  for (size_t k = 0; k < nd; ++k) pads[2 * k + 1] = shape[nd - 1 - k] - g.shape()[nd - 1 - k];
  return pad(g, pads, 0.0);
}

Tensor positions(const Shape& shape, Device dev) {
  return arange(0, double(shape_numel(shape)), 1, DType::I64, dev).reshape(shape);
}

// Whether each element of idx (row-major) is the last one scatter writes to its target
// along d of a tensor of `shape`: the value that Assign keeps.
Tensor scatter_winners(const Shape& shape, Device dev, int64_t d, const Tensor& idx) {
  const Tensor pos = positions(idx.shape(), dev);
  const Tensor w = scatter(full(shape, -1, DType::I64, dev), d, idx, pos);
  return eq(gather(w, d, idx), pos);
}

// The index_select index broadcast to the result (stride 0 off dim d), as a gather index.
Tensor select_index(const Tensor& index, int64_t d, const Shape& out) {
  Shape s(out.size(), 1);
  s[size_t(d)] = index.numel();
  return as_i64(index).reshape(s).broadcast_to(out);
}

// index [.., k] as k tensors of its leading shape.
std::vector<Tensor> components(const Tensor& index) {
  std::vector<Tensor> c;
  const Tensor idx = as_i64(index);
  for (int64_t j = 0; j < idx.shape().back(); ++j) c.push_back(idx.narrow(-1, j, 1).squeeze(-1));
  return c;
}

}  // namespace

Var gather(const Var& x, int64_t dim, const Tensor& index) {
  const OpScope scope("gather");
  Tensor value = gather(x.tensor(), dim, index);
  const int64_t d = wrap_dim("gather", dim, x.dim());
  return record("gather", std::move(value), {x},
                [d, idx = as_i64(index)](const Var& g, const Node& n) -> Grads {
                  return {scatter_reduce(zeros_of(n.input(0)), d, idx, g, ScatterReduce::Sum)};
                });
}

Var scatter(const Var& x, int64_t dim, const Tensor& index, const Var& src) {
  const OpScope scope("scatter");
  Tensor value = scatter(x.tensor(), dim, index, src.tensor());
  const int64_t d = wrap_dim("scatter", dim, x.dim());
  return record("scatter", std::move(value), {x, src},
                [d, idx = as_i64(index)](const Var& g, const Node& n) -> Grads {
                  // Overwritten elements of x get no gradient; of src, the values kept do.
                  const Var dx =
                      scatter(g, d, idx, constant(zeros(idx.shape(), g.dtype(), g.device())));
                  const Tensor win = scatter_winners(g.shape(), g.device(), d, idx);
                  return {dx, pad_to(gather(g, d, idx) * as_mask(win, g), n.input(1).shape())};
                });
}

Var scatter_reduce(const Var& x, int64_t dim, const Tensor& index, const Var& src,
                   ScatterReduce reduce, bool include_self) {
  const OpScope scope("scatter_reduce");
  Tensor value = scatter_reduce(x.tensor(), dim, index, src.tensor(), reduce, include_self);
  if (reduce == ScatterReduce::Prod && grad_enabled() && (x.requires_grad() || src.requires_grad()))
    fail<InvalidArgument>("scatter_reduce",
                          "the Prod reduction has no gradient in numr; use Sum, Mean, Amax or "
                          "Amin, or detach the inputs");
  const int64_t d = wrap_dim("scatter_reduce", dim, x.dim());
  return record(
      "scatter_reduce", std::move(value), {x, src},
      [d, idx = as_i64(index), reduce, include_self](const Var& g, const Node& n) -> Grads {
        const Tensor& xt = n.input(0).tensor();
        const Shape& src_shape = n.input(1).shape();
        const Device dev = xt.device();
        // How many values of src land on each element of x.
        const Tensor count = scatter_reduce(
            zeros(xt.shape(), DType::I64, dev), d, idx,
            ones(Shape{}, DType::I64, dev).broadcast_to(idx.shape()), ScatterReduce::Sum);
        const Tensor zero = zeros(Shape{}, DType::I64, dev);
        const Tensor unreached = eq(count, zero);
        if (reduce == ScatterReduce::Sum || reduce == ScatterReduce::Mean) {
          Var gs = g;  // the gradient each value combined receives
          if (reduce == ScatterReduce::Mean)
            gs = g /
                 constant(
                     clamp(include_self ? count + 1.0 : count, 1.0, std::nullopt).cast(g.dtype()));
          const Var dx = include_self ? gs : g * as_mask(unreached, g);
          return {dx, pad_to(gather(gs, d, idx), src_shape)};
        }
        // Amax, Amin: the gradient is shared equally by the elements equal to the result
        // (x's own element only with include_self; an element no value reached is x's).
        const Tensor out = n.output().tensor();
        const Tensor x_share = include_self ? eq(xt, out) : unreached;
        const Tensor s_share = eq(gather(out, d, idx), box(n.input(1).tensor(), idx.shape()));
        const Tensor ties =
            x_share.cast(DType::I64) + scatter_reduce(zeros(xt.shape(), DType::I64, dev), d, idx,
                                                      s_share.cast(DType::I64), ScatterReduce::Sum);
        const Var gs = g / constant(clamp(ties, 1.0, std::nullopt).cast(g.dtype()));
        return {gs * as_mask(x_share, g),
                pad_to(gather(gs, d, idx) * as_mask(s_share, g), src_shape)};
      });
}

Var index_select(const Var& x, int64_t dim, const Tensor& index) {
  const OpScope scope("index_select");
  Tensor value = index_select(x.tensor(), dim, index);
  const int64_t d = wrap_dim("index_select", dim, x.dim());
  const Tensor ib = select_index(index, d, value.shape());
  return record("index_select", std::move(value), {x},
                [d, ib](const Var& g, const Node& n) -> Grads {
                  return {scatter_reduce(zeros_of(n.input(0)), d, ib, g, ScatterReduce::Sum)};
                });
}

Var take(const Var& x, const Tensor& index) {
  const OpScope scope("take");
  return record("take", take(x.tensor(), index), {x},
                [idx = as_i64(index)](const Var& g, const Node& n) -> Grads {
                  return {put(zeros_of(n.input(0)), idx, g, true)};
                });
}

Var embedding_lookup(const Var& weight, const Tensor& index) {
  const OpScope scope("embedding_lookup");
  return record("embedding_lookup", embedding_lookup(weight.tensor(), index), {weight},
                [idx = as_i64(index)](const Var& g, const Node& n) -> Grads {
                  return {index_put(zeros_of(n.input(0)), {idx}, g, true)};
                });
}

Var gather_nd(const Var& x, const Tensor& index) {
  const OpScope scope("gather_nd");
  Tensor value = gather_nd(x.tensor(), index);  // checks index before components() reads it
  return record("gather_nd", std::move(value), {x},
                [comps = components(index)](const Var& g, const Node& n) -> Grads {
                  return {index_put(zeros_of(n.input(0)), comps, g, true)};
                });
}

Var index_put(const Var& x, const std::vector<Tensor>& indices, const Var& values,
              bool accumulate) {
  const OpScope scope("index_put");
  Tensor value = index_put(x.tensor(), indices, values.tensor(), accumulate);
  // The indexes broadcast together, as the forward took them.
  std::vector<Tensor> comps;
  Shape b = indices[0].shape();
  for (const Tensor& t : indices) b = broadcast_shapes("index_put", b, t.shape());
  for (const Tensor& t : indices) comps.push_back(as_i64(t).broadcast_to(b));
  return record("index_put", std::move(value), {x, values},
                [comps, b, accumulate](const Var& g, const Node& n) -> Grads {
                  const Var& vals = n.input(1);
                  const Tensor where = stack(comps, -1);
                  Var gv = gather_nd(g, where);  // [b.., rest..]
                  if (accumulate) return {g, sum_to(gv, vals.shape())};
                  const Device dev = g.device();
                  const Shape lead(g.shape().begin(), g.shape().begin() + int64_t(comps.size()));
                  const Tensor pos = positions(b, dev);
                  const Tensor w = index_put(full(lead, -1, DType::I64, dev), comps, pos);
                  Shape ws = b;
                  ws.resize(size_t(gv.dim()), 1);
                  const Tensor win = eq(gather_nd(w, where), pos).reshape(ws);
                  const Var dx = index_put(g, comps, constant(zeros(Shape{}, g.dtype(), dev)));
                  return {dx, sum_to(gv * as_mask(win, g), vals.shape())};
                });
}

Var put(const Var& x, const Tensor& index, const Var& values, bool accumulate) {
  const OpScope scope("put");
  Tensor value = put(x.tensor(), index, values.tensor(), accumulate);
  return record("put", std::move(value), {x, values},
                [idx = as_i64(index), accumulate](const Var& g, const Node& n) -> Grads {
                  const Shape& vshape = n.input(1).shape();
                  const Var gv = take(g, idx);
                  if (accumulate) return {g, reshape(gv, vshape)};
                  const Device dev = g.device();
                  const Tensor pos = positions(idx.shape(), dev);
                  const Tensor win =
                      eq(take(put(full(g.shape(), -1, DType::I64, dev), idx, pos), idx), pos);
                  const Var dx = put(g, idx, constant(zeros(idx.shape(), g.dtype(), dev)));
                  return {dx, reshape(gv * as_mask(win, g), vshape)};
                });
}

Var masked_select(const Var& x, const Tensor& mask) {
  const OpScope scope("masked_select");
  Tensor value = masked_select(x.tensor(), mask);
  const Shape s = broadcast_shapes("masked_select", x.shape(), mask.shape());
  return record("masked_select", std::move(value), {x},
                [s, mask](const Var& g, const Node& n) -> Grads {
                  const Tensor p = masked_select(positions(s, g.device()), mask);
                  const Var full_g = put(constant(zeros(s, g.dtype(), g.device())), p, g);
                  return {sum_to(full_g, n.input(0).shape())};
                });
}

}  // namespace numr
