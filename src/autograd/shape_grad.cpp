// Var ops and gradient rules of views, copies and shape ops. Every rule moves the gradient
// back with the adjoint shape op (narrow <-> pad, cat <-> narrow, repeat <-> sum, ...),
// written with Var ops, so it is differentiable again.
#include "autograd/grad_util.h"
#include "core/op_scope.h"
#include "numr/complex.h"

namespace numr {

using autograd::record;
using autograd::sum_to;

namespace {

using Grads = std::vector<Var>;

// The gradient of x's elements [start, start + length) along dim d: g padded with zeros
// back to x's shape.
Var unnarrow(const Var& g, const Shape& in, int64_t d, int64_t start) {
  const int64_t nd = int64_t(in.size());
  std::vector<int64_t> pads(size_t(2 * (nd - d)), 0);
  const size_t k = size_t(nd - 1 - d);  // pads[2k], pads[2k + 1] belong to dim nd - 1 - k
  pads[2 * k] = start;
  pads[2 * k + 1] = in[size_t(d)] - start - g.shape()[size_t(d)];
  return pad(g, pads, 0.0);
}

// A piece of x along dim d from `start`, already made by a Tensor op (narrow, split, chunk).
Var piece(std::string_view name, const Var& x, Tensor value, int64_t d, int64_t start) {
  return record(name, std::move(value), {x}, [d, start](const Var& g, const Node& n) -> Grads {
    return {unnarrow(g, n.input(0).shape(), d, start)};
  });
}

std::vector<Var> pieces(std::string_view name, const Var& x, const std::vector<Tensor>& parts,
                        int64_t dim) {
  const int64_t d = wrap_dim(name, dim, x.dim());
  std::vector<Var> out;
  int64_t at = 0;
  for (const Tensor& p : parts) {
    out.push_back(piece(name, x, p, d, at));
    at += p.shape()[size_t(d)];
  }
  return out;
}

// Ops whose gradient is g reshaped to the input's shape.
Var reshaped(std::string_view name, const Var& x, Tensor value) {
  return record(name, std::move(value), {x}, [](const Var& g, const Node& n) -> Grads {
    return {reshape(g, n.input(0).shape())};
  });
}

// Copies: the gradient passes through unchanged.
Var passed(std::string_view name, const Var& x, Tensor value) {
  return record(name, std::move(value), {x},
                [](const Var& g, const Node&) -> Grads { return {g}; });
}

}  // namespace

// ---- views ----
Var reshape(const Var& x, const Shape& shape) {
  const OpScope scope("reshape");
  return reshaped("reshape", x, reshape(x.tensor(), shape));
}
// g need not be contiguous, so its way back is reshape, not view.
Var view(const Var& x, const Shape& shape) {
  const OpScope scope("view");
  return reshaped("view", x, view(x.tensor(), shape));
}
Var squeeze(const Var& x, std::optional<int64_t> dim) {
  const OpScope scope("squeeze");
  return reshaped("squeeze", x, squeeze(x.tensor(), dim));
}
Var unsqueeze(const Var& x, int64_t dim) {
  const OpScope scope("unsqueeze");
  return reshaped("unsqueeze", x, unsqueeze(x.tensor(), dim));
}
Var flatten(const Var& x, int64_t start_dim, int64_t end_dim) {
  const OpScope scope("flatten");
  return reshaped("flatten", x, flatten(x.tensor(), start_dim, end_dim));
}

Var transpose(const Var& x, int64_t d0, int64_t d1) {
  const OpScope scope("transpose");
  return record("transpose", transpose(x.tensor(), d0, d1), {x},
                [d0, d1](const Var& g, const Node&) -> Grads { return {transpose(g, d0, d1)}; });
}

Var permute(const Var& x, const std::vector<int64_t>& dims) {
  const OpScope scope("permute");
  Tensor value = permute(x.tensor(), dims);  // checks dims first
  std::vector<int64_t> inverse(dims.size());
  for (size_t i = 0; i < dims.size(); ++i)
    inverse[size_t(wrap_dim("permute", dims[i], x.dim()))] = int64_t(i);
  return record("permute", std::move(value), {x},
                [inverse](const Var& g, const Node&) -> Grads { return {permute(g, inverse)}; });
}

Var narrow(const Var& x, int64_t dim, int64_t start, int64_t length) {
  const OpScope scope("narrow");
  Tensor value = narrow(x.tensor(), dim, start, length);  // checks the range first
  const int64_t d = wrap_dim("narrow", dim, x.dim());
  if (start < 0) start += x.shape()[size_t(d)];
  return piece("narrow", x, std::move(value), d, start);
}

Var broadcast_to(const Var& x, const Shape& shape) {
  const OpScope scope("broadcast_to");
  return record(
      "broadcast_to", broadcast_to(x.tensor(), shape), {x},
      [](const Var& g, const Node& n) -> Grads { return {sum_to(g, n.input(0).shape())}; });
}

Var flip(const Var& x, const std::vector<int64_t>& dims) {
  const OpScope scope("flip");
  return record("flip", flip(x.tensor(), dims), {x},
                [dims](const Var& g, const Node&) -> Grads { return {flip(g, dims)}; });
}

// ---- copies ----
Var contiguous(const Var& x) {
  const OpScope scope("contiguous");
  return passed("contiguous", x, contiguous(x.tensor()));
}
Var clone(const Var& x) {
  const OpScope scope("clone");
  return passed("clone", x, clone(x.tensor()));
}

Var cast(const Var& x, DType dtype) {
  const OpScope scope("cast");
  // A cast to an integer or Bool dtype records nothing (record() keeps floating results only).
  return record("cast", cast(x.tensor(), dtype), {x},
                [](const Var& g, const Node& n) -> Grads {
                  // A real input cast to complex gets the real part of the gradient.
                  const DType in = n.input(0).dtype();
                  return {cast(is_complex(in) ? g : real(g), in)};
                });
}

Var to_device(const Var& x, Device device) {
  const OpScope scope("to_device");
  return record(
      "to_device", to_device(x.tensor(), device), {x},
      [](const Var& g, const Node& n) -> Grads { return {to_device(g, n.input(0).device())}; });
}

// ---- shape ops ----
Var cat(const std::vector<Var>& xs, int64_t dim) {
  const OpScope scope("cat");
  std::vector<Tensor> ts;
  ts.reserve(xs.size());
  for (const Var& v : xs) ts.push_back(v.tensor());
  Tensor value = cat(ts, dim);
  const int64_t d = wrap_dim("cat", dim, value.dim());
  return record("cat", std::move(value), xs, [d](const Var& g, const Node& n) -> Grads {
    Grads out;
    int64_t at = 0;
    for (const Var& in : n.inputs()) {
      const int64_t len = in.shape()[size_t(d)];
      out.push_back(in.requires_grad() ? narrow(g, d, at, len) : Var());
      at += len;
    }
    return out;
  });
}

Var stack(const std::vector<Var>& xs, int64_t dim) {
  const OpScope scope("stack");
  std::vector<Tensor> ts;
  ts.reserve(xs.size());
  for (const Var& v : xs) ts.push_back(v.tensor());
  Tensor value = stack(ts, dim);
  const int64_t d = wrap_dim("stack", dim, value.dim());
  return record("stack", std::move(value), xs, [d](const Var& g, const Node& n) -> Grads {
    Grads out;
    for (size_t i = 0; i < n.inputs().size(); ++i) {
      const Var& in = n.input(i);
      out.push_back(in.requires_grad() ? reshape(narrow(g, d, int64_t(i), 1), in.shape()) : Var());
    }
    return out;
  });
}

std::vector<Var> split(const Var& x, int64_t split_size, int64_t dim) {
  const OpScope scope("split");
  return pieces("split", x, split(x.tensor(), split_size, dim), dim);
}

std::vector<Var> chunk(const Var& x, int64_t chunks, int64_t dim) {
  const OpScope scope("chunk");
  return pieces("chunk", x, chunk(x.tensor(), chunks, dim), dim);
}

Var repeat(const Var& x, const std::vector<int64_t>& repeats) {
  const OpScope scope("repeat");
  // Output dim i holds repeats[i] tiles of x's dim i, so g viewed as
  // [r0, s0, r1, s1, ...] summed over the r dims is the gradient.
  return record("repeat", repeat(x.tensor(), repeats), {x},
                [repeats](const Var& g, const Node& n) -> Grads {
                  const Shape& in = n.input(0).shape();
                  const size_t lead = repeats.size() - in.size();
                  Shape tiled;
                  std::vector<int64_t> tile_dims;
                  for (size_t i = 0; i < repeats.size(); ++i) {
                    tile_dims.push_back(int64_t(tiled.size()));
                    tiled.push_back(repeats[i]);
                    tiled.push_back(i < lead ? 1 : in[i - lead]);
                  }
                  return {reshape(sum(reshape(g, tiled), tile_dims), in)};
                });
}

Var pad(const Var& x, const std::vector<int64_t>& pads, double value) {
  const OpScope scope("pad");
  // The padding is constant; the input's region is cut back out.
  return record("pad", pad(x.tensor(), pads, value), {x},
                [pads](const Var& g, const Node& n) -> Grads {
                  const Shape& in = n.input(0).shape();
                  Var r = g;
                  for (size_t k = 0; k < pads.size() / 2; ++k) {
                    const int64_t d = int64_t(in.size()) - 1 - int64_t(k);
                    r = narrow(r, d, pads[2 * k], in[size_t(d)]);
                  }
                  return {r};
                });
}

Var cat(std::initializer_list<Var> xs, int64_t dim) { return cat(std::vector<Var>(xs), dim); }
Var stack(std::initializer_list<Var> xs, int64_t dim) { return stack(std::vector<Var>(xs), dim); }

}  // namespace numr
