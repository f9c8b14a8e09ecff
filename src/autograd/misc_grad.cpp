// Var forms of the shape and misc ops: roll, repeat_interleave, meshgrid, slice_assign and
// einsum run the Tensor front end's composition over Vars (src/ops/shape_compose.h,
// src/ops/einsum.h), so their gradients are those of the ops they are made of. unfold and
// einsum's diagonal are views with a rule of their own; masked_fill and dropout multiply or
// select with a constant mask.
#include "autograd/grad_util.h"
#include "core/op_scope.h"
#include "ops/einsum.h"
#include "ops/misc_ops.h"
#include "ops/shape_compose.h"

namespace numr {

using autograd::record;

namespace {

using Grads = std::vector<Var>;

// g padded with zeros along dim d: `before` in front, up to `total` elements.
Var pad_dim(const Var& g, int64_t d, int64_t before, int64_t total) {
  const int64_t nd = g.dim();
  std::vector<int64_t> pads(size_t(2 * (nd - d)), 0);
  const size_t k = size_t(nd - 1 - d);  // pads[2k], pads[2k + 1] belong to dim nd - 1 - k
  pads[2 * k] = before;
  pads[2 * k + 1] = total - before - g.shape()[size_t(d)];
  return pad(g, pads, 0.0);
}

// The diagonal of dims i < j as the last dim (a view); its gradient puts g back on the
// diagonal of an [.., n, n] block (zero elsewhere) and moves the block to dims i and j.
Var einsum_diagonal(const Var& x, int64_t i, int64_t j) {
  Tensor value = einsum_detail::diagonal_view(x.tensor(), i, j);
  return record("einsum", std::move(value), {x}, [i, j](const Var& g, const Node& node) -> Grads {
    const int64_t nd = node.input(0).dim(), n = g.shape().back();
    Shape block = g.shape();
    block.push_back(n);
    const Tensor eye_mask = eye(n, n, DType::Bool, g.device());
    const Var full = where_cond(eye_mask, broadcast_to(unsqueeze(g, -1), block), 0.0);
    // full's dims: x's dims without i and j, then i, then j.
    std::vector<int64_t> perm(static_cast<size_t>(nd));
    for (int64_t d = 0, at = 0; d < nd; ++d)
      perm[size_t(d)] = d == i ? nd - 2 : d == j ? nd - 1 : at++;
    return {permute(full, perm)};
  });
}

}  // namespace

Var roll(const Var& x, const std::vector<int64_t>& shifts, const std::vector<int64_t>& dims) {
  const OpScope scope("roll");
  const std::vector<int64_t> d = ops::roll_dims(x.tensor(), shifts, dims);
  if (d.empty()) return reshape(compose::roll(flatten(x), shifts, {0}), x.shape());
  return compose::roll(x, shifts, d);
}

Var repeat_interleave(const Var& x, int64_t repeats, std::optional<int64_t> dim) {
  const OpScope scope("repeat_interleave");
  const std::optional<int64_t> d = ops::repeat_interleave_dim(x.tensor(), repeats, dim);
  return d ? compose::repeat_interleave(x, repeats, *d)
           : compose::repeat_interleave(flatten(x), repeats, 0);
}

Var repeat_interleave(const Var& x, const Tensor& repeats, std::optional<int64_t> dim) {
  const OpScope scope("repeat_interleave");
  const ops::RepeatIndex r = ops::repeat_interleave_index(x.tensor(), repeats, dim);
  return r.dim ? index_select(x, *r.dim, r.index) : index_select(flatten(x), 0, r.index);
}

std::vector<Var> meshgrid(const std::vector<Var>& xs, std::string_view indexing) {
  const OpScope scope("meshgrid");
  std::vector<const Tensor*> ps;
  for (const Var& x : xs) ps.push_back(&x.tensor());
  return compose::meshgrid(xs, ops::meshgrid_xy(ps, indexing));
}

Var slice_assign(const Var& x, const Var& src, int64_t dim, int64_t start) {
  const OpScope scope("slice_assign");
  const ops::SliceAt at = ops::slice_assign_at(x.tensor(), src.tensor(), dim, start);
  return compose::slice_assign(x, src, at.dim, at.start);
}

Var masked_fill(const Var& x, const Tensor& mask, double value) {
  const OpScope scope("masked_fill");
  return where_cond(ops::masked_fill_mask(x.tensor(), mask, value), value, x);
}

Var one_hot(const Var& index, int64_t num_classes) {
  return Var(one_hot(index.tensor(), num_classes), false);
}

Var einsum(std::string_view equation, const std::vector<Var>& operands) {
  const OpScope scope("einsum");
  std::vector<const Tensor*> ts;
  for (const Var& v : operands) ts.push_back(&v.tensor());
  const einsum_detail::EinsumPlan plan = einsum_detail::plan_einsum(equation, ts);
  return einsum_detail::run_einsum(plan, operands, einsum_diagonal);
}

Var dropout(const Var& x, double p, Generator& gen) {
  const OpScope scope("dropout");
  ops::check_dropout(x.tensor(), p);
  if (p == 0.0) return x;
  if (p == 1.0) return x * 0.0;
  return (x * ops::dropout_mask(x.tensor(), p, gen)) * (1.0 / (1.0 - p));
}

// Output window w, element e is input element w * step + e along d; the gradient adds each
// e's slice of g back at offsets e, e + step, ... (zeros between when step > 1).
Var unfold(const Var& x, int64_t dim, int64_t size, int64_t step) {
  const OpScope scope("unfold");
  Tensor value = unfold(x.tensor(), dim, size, step);  // checks the arguments first
  if (x.dim() == 0)                                    // [size] of the one element
    return record("unfold", std::move(value), {x}, [](const Var& g, const Node& n) -> Grads {
      return {g.numel() == 0 ? autograd::zeros_like(n.input(0)) : reshape(g, Shape{})};
    });
  const int64_t d = wrap_dim("unfold", dim, x.dim());
  return record("unfold", std::move(value), {x},
                [d, size, step](const Var& g, const Node& n) -> Grads {
                  const Var& in = n.input(0);
                  const int64_t len = in.shape()[size_t(d)], windows = g.shape()[size_t(d)];
                  if (size == 0 || windows == 0) return {autograd::zeros_like(in)};
                  Var total;
                  for (int64_t e = 0; e < size; ++e) {
                    Var ge = squeeze(narrow(g, -1, e, 1), -1);
                    int64_t span = windows;
                    if (step > 1 && windows > 1) {
                      // Each window's value followed by step - 1 zeros, the trailing zeros cut off.
                      Var spread = pad_dim(unsqueeze(ge, d + 1), d + 1, 0, step);
                      Shape merged = ge.shape();
                      merged[size_t(d)] = windows * step;
                      span = (windows - 1) * step + 1;
                      ge = narrow(reshape(spread, merged), d, 0, span);
                    }
                    const Var placed = pad_dim(ge, d, e, len);
                    total = total.defined() ? total + placed : placed;
                  }
                  return {total};
                });
}

}  // namespace numr
