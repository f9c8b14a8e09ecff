// Front ends of the indexing family. gather, scatter and scatter_reduce check their indexes
// and run the backend's index_gather / index_scatter (or their compositions); every other
// op of the family checks its own arguments, maps itself onto those two primitives (a 1-D
// index broadcast with stride 0, a linear index over leading dims) and calls them without
// checking again.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <string_view>

#include "numr/indexing.h"
#include "numr/ops.h"
#include "numr/sort.h"
#include "ops/common.h"
#include "ops/compose/indexing.h"

namespace numr {
namespace {

using ops::check_defined;

// index as I64 (I32 is widened), on x's device.
Tensor index_i64(std::string_view name, const Tensor& index, const Tensor& x,
                 std::string_view what = "index") {
  check_defined(name, index);
  ops::check_dtype_valid(name, index.dtype());
  if (index.device() != x.device())
    fail<DeviceMismatch>(name, what, " on ", index.device(), ", x on ", x.device());
  if (index.dtype() == DType::I64) return index;
  if (index.dtype() == DType::I32) return index.cast(DType::I64);
  fail<DTypeMismatch>(name, what, " must be I64 or I32, got ", index.dtype());
}

// Throws IndexOutOfBounds unless every element of index (I64) lies in [0, n). The index's
// max and min are read to the host: on a GPU this waits for the work queued before.
// dim < 0: the index counts elements of a flattened tensor.
void check_range(std::string_view name, const Tensor& index, int64_t n, int64_t dim) {
  if (index.numel() == 0) return;
  const int64_t hi = max(index).item<int64_t>();
  const int64_t lo = hi >= n ? hi : min(index).item<int64_t>();
  if (hi < n && lo >= 0) return;
  const int64_t bad = hi >= n ? hi : lo;
  if (dim < 0)
    fail<IndexOutOfBounds>(name, "index ", bad, " out of range for a tensor of ", n, " elements");
  fail<IndexOutOfBounds>(name, "index ", bad, " out of range for dim ", dim, " of size ", n);
}

// Dims [b, e) of t walked as one (extents of 1 skipped): their extent and the stride of the
// innermost; false when stepping them is not one arithmetic progression.
bool merge_range(const Tensor& t, int64_t b, int64_t e, int64_t& extent, int64_t& stride) {
  extent = 1;
  stride = 0;
  int64_t next = 0;
  bool first = true;
  for (int64_t k = e - 1; k >= b; --k) {
    const int64_t s = t.shape()[size_t(k)], st = t.strides()[size_t(k)];
    if (s == 1) continue;
    if (!first && st != next) return false;
    if (first) stride = st;
    first = false;
    next = st * s;
    extent *= s;
  }
  return true;
}

// t described as [outer, t.size(d), inner] with its own strides, when its dims merge so.
bool view3(const Tensor& t, int64_t d, TensorRef& r) {
  int64_t oe, os, ie, is;
  if (!merge_range(t, 0, d, oe, os) || !merge_range(t, d + 1, t.dim(), ie, is)) return false;
  r = ref_of(t);
  r.shape = {oe, t.shape()[size_t(d)], ie};
  r.strides = {os, t.strides()[size_t(d)], is};
  return true;
}

// view3 of t, or of a contiguous copy of it (kept alive in `keep`) when its dims do not merge.
TensorRef read3(const Tensor& t, int64_t d, Tensor& keep) {
  TensorRef r;
  keep = t;
  if (!view3(t, d, r)) {
    keep = t.contiguous();
    view3(keep, d, r);
  }
  return r;
}

// t narrowed to `shape`'s extents in every dim but d (a view).
Tensor box_of(const Tensor& t, const Shape& shape, int64_t d) {
  Tensor b = t;
  for (int64_t k = 0; k < t.dim(); ++k)
    if (k != d && shape[size_t(k)] < t.shape()[size_t(k)]) b = b.narrow(k, 0, shape[size_t(k)]);
  return b;
}

// gather once the arguments are checked: index (I64, in range) has x's rank and at most its
// extents off d.
Tensor gather_checked(const Tensor& x, int64_t d, const Tensor& index) {
  const Tensor xs = box_of(x, index.shape(), d);
  if (index.numel() == 0) return Tensor::empty(index.shape(), x.dtype(), x.device());
  Backend& be = backend_for(x.device());
  if (!use_kernel(be, OpId::gather, x.dtype())) return compose::gather(xs, d, index);
  Tensor out = Tensor::empty(index.shape(), x.dtype(), x.device());
  Tensor kx, ki, ko;
  GatherCall call;
  call.x = read3(xs, d, kx);
  call.index = read3(index, d, ki);
  call.out = read3(out, d, ko);
  be.index_gather(call);
  return out;
}

// Scatters src into out (a new tensor numr owns, holding the initial values) as
// ScatterCall describes; index (I64, in range) has out's rank and at most its extents off
// d, src is index's shape. `op_id` (scatter or scatter_reduce) picks kernel or composition.
void scatter_checked(OpId op_id, ScatterOp op, const Tensor& out, int64_t d, const Tensor& index,
                     const Tensor& src) {
  if (index.numel() == 0) return;
  Backend& be = backend_for(out.device());
  const Tensor box = box_of(out, index.shape(), d);
  if (!use_kernel(be, op_id, out.dtype())) {
    const Tensor r = compose::scatter(op, box, d, index, src);
    ops::copy_any_rank(be, ref_of(r), ref_of(box));
    return;
  }
  Tensor ki, ks;
  ScatterCall call;
  call.op = op;
  call.index = read3(index, d, ki);
  call.src = read3(src, d, ks);
  if (view3(box, d, call.out)) {
    be.index_scatter(call);
    return;
  }
  // A box whose leading or trailing dims do not merge: scatter into a contiguous copy of
  // it, then store that back.
  const Tensor tmp = box.contiguous();
  view3(tmp, d, call.out);
  be.index_scatter(call);
  ops::copy_any_rank(be, ref_of(tmp), ref_of(box));
}

void check_x(OpId op, const Tensor& x) {
  check_defined(op_name(op), x);
  ops::check_dtype(op, x.dtype());
}

// The checks gather, scatter and scatter_reduce share; returns the wrapped dim and sets
// idx to the index as I64.
int64_t check_dim_index(std::string_view name, const Tensor& x, int64_t dim, const Tensor& index,
                        Tensor& idx) {
  idx = index_i64(name, index, x);
  if (x.dim() == 0) fail<InvalidDimension>(name, "x must have at least 1 dim, got a 0-d tensor");
  const int64_t d = wrap_dim(name, dim, x.dim());
  if (idx.dim() != x.dim())
    fail<ShapeMismatch>(name, "index must have x's ", x.dim(), " dims, got ", idx.dim(), " (index ",
                        shape_str(idx.shape()), ", x ", shape_str(x.shape()), ")");
  for (int64_t k = 0; k < x.dim(); ++k)
    if (k != d && idx.shape()[size_t(k)] > x.shape()[size_t(k)])
      fail<ShapeMismatch>(name, "index ", shape_str(idx.shape()), " is larger than x ",
                          shape_str(x.shape()), " in dim ", k);
  return d;
}

// src checked against x and index; returns src's box of index's shape.
Tensor check_src(std::string_view name, const Tensor& x, const Tensor& idx, const Tensor& src) {
  check_defined(name, src);
  ops::check_same(name, {&x, &src});
  if (src.dim() != idx.dim())
    fail<ShapeMismatch>(name, "src must have x's ", x.dim(), " dims, got ", src.dim());
  for (int64_t k = 0; k < src.dim(); ++k)
    if (idx.shape()[size_t(k)] > src.shape()[size_t(k)])
      fail<ShapeMismatch>(name, "index ", shape_str(idx.shape()), " is larger than src ",
                          shape_str(src.shape()), " in dim ", k);
  return box_of(src, idx.shape(), -1);
}

// Shape of rank r with n at d and 1 elsewhere.
Shape axis_shape(int64_t r, int64_t d, int64_t n) {
  Shape s(size_t(r), 1);
  s[size_t(d)] = n;
  return s;
}

// The row-major linear index over x's first k dims of the k index tensors (I64, in range,
// broadcast to one shape).
Tensor linear_index(const std::vector<Tensor>& comps, const Shape& x_shape) {
  Tensor lin;
  int64_t stride = 1;
  for (size_t j = comps.size(); j-- > 0;) {
    const Tensor term = stride == 1 ? comps[j] : comps[j] * double(stride);
    lin = lin.defined() ? lin + term : term;
    stride *= x_shape[j];
  }
  return lin;
}

// The flat positions of flat mask's true elements, ascending, [n]: position j is where the
// running count of trues first reaches j + 1, found by a binary search of the count (no
// scatter, whose many writes to one place a deterministic backend would serialise).
Tensor selected_positions(const Tensor& mask, int64_t& n) {
  const int64_t total = mask.numel();
  if (total == 0) {
    n = 0;
    return Tensor::empty({0}, DType::I64, mask.device());
  }
  const Tensor count = cumsum(mask.cast(DType::I64), 0);
  n = count.narrow(0, total - 1, 1).item<int64_t>();
  return searchsorted(count, arange(1, double(n) + 1, 1, DType::I64, mask.device()));
}

ScatterOp scatter_op(ScatterReduce r) {
  switch (r) {
    case ScatterReduce::Sum:
    case ScatterReduce::Mean: return ScatterOp::Sum;
    case ScatterReduce::Prod: return ScatterOp::Prod;
    case ScatterReduce::Amax: return ScatterOp::Amax;
    case ScatterReduce::Amin: return ScatterOp::Amin;
  }
  fail<InvalidArgument>("scatter_reduce", "invalid reduction ", unsigned(r));
}

}  // namespace

Tensor gather(const Tensor& x, int64_t dim, const Tensor& index) {
  const OpScope scope("gather");
  check_x(OpId::gather, x);
  Tensor idx;
  const int64_t d = check_dim_index("gather", x, dim, index, idx);
  check_range("gather", idx, x.shape()[size_t(d)], d);
  return gather_checked(x, d, idx);
}

Tensor scatter(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src) {
  const OpScope scope("scatter");
  check_x(OpId::scatter, x);
  Tensor idx;
  const int64_t d = check_dim_index("scatter", x, dim, index, idx);
  const Tensor s = check_src("scatter", x, idx, src);
  check_range("scatter", idx, x.shape()[size_t(d)], d);
  const Tensor out = x.clone();
  scatter_checked(OpId::scatter, ScatterOp::Assign, out, d, idx, s);
  return out;
}

Tensor scatter_reduce(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src,
                      ScatterReduce reduce, bool include_self) {
  const OpScope scope("scatter_reduce");
  constexpr std::string_view name = "scatter_reduce";
  check_x(OpId::scatter_reduce, x);
  if (uint8_t(reduce) > uint8_t(ScatterReduce::Amin))
    fail<InvalidArgument>(name, "invalid reduction ", unsigned(reduce));
  Tensor idx;
  const int64_t d = check_dim_index(name, x, dim, index, idx);
  const Tensor s = check_src(name, x, idx, src);
  check_range(name, idx, x.shape()[size_t(d)], d);
  const ScatterOp op = scatter_op(reduce);
  const bool mean = reduce == ScatterReduce::Mean;
  if (idx.numel() == 0) return x.clone();
  // How many values land on each element (Mean divides by it; without include_self the
  // elements reached start from the reduction's identity).
  Tensor count;
  if (mean || !include_self) {
    count = zeros(x.shape(), DType::I64, x.device());
    const Tensor one = ones(Shape{}, DType::I64, x.device()).broadcast_to(idx.shape());
    scatter_checked(OpId::scatter_reduce, ScatterOp::Sum, count, d, idx, one);
  }
  const Tensor zero = zeros(Shape{}, DType::I64, x.device());
  Tensor out = include_self ? x.clone()
                            : where_cond(gt(count, zero),
                                         compose::scatter_identity(op, x.dtype(), x.device()), x)
                                  .contiguous();
  scatter_checked(OpId::scatter_reduce, op, out, d, idx, s);
  if (!mean) return out;
  const Tensor n = include_self ? count + 1.0 : count;
  const bool is_float = compute_dtype(x.dtype()) == DType::F32 || x.dtype() == DType::F64;
  // Floats divide in their compute dtype; integers divide exactly in F64 and round down, on
  // the host where the device has no F64 (WebGPU).
  Tensor q;
  if (is_float) {
    const DType c = compute_dtype(x.dtype());
    q = (out.cast(c) / n.cast(c)).cast(x.dtype());
  } else {
    const Device dev = x.device();
    const Device at = backend_for(dev).supports_dtype(DType::F64) ? dev : Device::cpu();
    q = floor(out.to(at).cast(DType::F64) / n.to(at).cast(DType::F64)).cast(x.dtype()).to(dev);
  }
  return where_cond(gt(n, zero), q, out);
}

Tensor index_select(const Tensor& x, int64_t dim, const Tensor& index) {
  const OpScope scope("index_select");
  constexpr std::string_view name = "index_select";
  check_x(OpId::index_select, x);
  const Tensor idx = index_i64(name, index, x);
  if (x.dim() == 0) fail<InvalidDimension>(name, "x must have at least 1 dim, got a 0-d tensor");
  const int64_t d = wrap_dim(name, dim, x.dim());
  if (idx.dim() > 1)
    fail<ShapeMismatch>(name, "index must be 1-D (or 0-d), got ", shape_str(idx.shape()));
  const int64_t k = idx.numel();
  check_range(name, idx, x.shape()[size_t(d)], d);
  Shape out_shape = x.shape();
  out_shape[size_t(d)] = k;
  return gather_checked(x, d, idx.reshape(axis_shape(x.dim(), d, k)).broadcast_to(out_shape));
}

Tensor take(const Tensor& x, const Tensor& index) {
  const OpScope scope("take");
  check_x(OpId::take, x);
  const Tensor idx = index_i64("take", index, x);
  check_range("take", idx, x.numel(), -1);
  const int64_t k = idx.numel();
  return gather_checked(x.reshape({x.numel()}), 0, idx.reshape({k})).reshape(idx.shape());
}

Tensor embedding_lookup(const Tensor& weight, const Tensor& index) {
  const OpScope scope("embedding_lookup");
  constexpr std::string_view name = "embedding_lookup";
  check_x(OpId::embedding_lookup, weight);
  const Tensor idx = index_i64(name, index, weight);
  if (weight.dim() != 2)
    fail<InvalidDimension>(name, "weight must be [V, D], got ", shape_str(weight.shape()));
  const int64_t v = weight.shape()[0], dd = weight.shape()[1], k = idx.numel();
  check_range(name, idx, v, 0);
  Shape out_shape = idx.shape();
  out_shape.push_back(dd);
  return gather_checked(weight, 0, idx.reshape({k, 1}).broadcast_to({k, dd})).reshape(out_shape);
}

Tensor gather_nd(const Tensor& x, const Tensor& index) {
  const OpScope scope("gather_nd");
  constexpr std::string_view name = "gather_nd";
  check_x(OpId::gather_nd, x);
  const Tensor idx = index_i64(name, index, x);
  if (idx.dim() < 1) fail<InvalidDimension>(name, "index must be [.., k], got a 0-d tensor");
  const int64_t k = idx.shape().back();
  if (k < 1 || k > x.dim())
    fail<ShapeMismatch>(name, "index's last dim k = ", k, " must be in [1, ", x.dim(), "] (x ",
                        shape_str(x.shape()), ")");
  std::vector<Tensor> comps;
  for (int64_t j = 0; j < k; ++j) {
    comps.push_back(idx.narrow(-1, j, 1).squeeze(-1));
    check_range(name, comps.back(), x.shape()[size_t(j)], j);
  }
  const Shape lead(idx.shape().begin(), idx.shape().end() - 1);
  const Shape rest(x.shape().begin() + k, x.shape().end());
  int64_t p = 1;
  for (int64_t j = 0; j < k; ++j) p *= x.shape()[size_t(j)];
  Shape xr = {p};
  xr.insert(xr.end(), rest.begin(), rest.end());
  const int64_t b = shape_numel(lead);
  Shape sel = {b};
  sel.insert(sel.end(), rest.begin(), rest.end());
  const Tensor lin = linear_index(comps, x.shape()).reshape({b});
  Shape out_shape = lead;
  out_shape.insert(out_shape.end(), rest.begin(), rest.end());
  return gather_checked(x.reshape(xr), 0,
                        lin.reshape(axis_shape(int64_t(sel.size()), 0, b)).broadcast_to(sel))
      .reshape(out_shape);
}

Tensor index_put(const Tensor& x, const std::vector<Tensor>& indices, const Tensor& values,
                 bool accumulate) {
  const OpScope scope("index_put");
  constexpr std::string_view name = "index_put";
  check_x(OpId::index_put, x);
  check_defined(name, values);
  ops::check_same(name, {&x, &values});
  if (accumulate && x.dtype() == DType::Bool)
    fail<UnsupportedDType>(name, "accumulate needs a numeric dtype, got Bool");
  const int64_t k = int64_t(indices.size());
  if (k < 1 || k > x.dim())
    fail<InvalidArgument>(name, "needs 1 to ", x.dim(), " index tensors (x ", shape_str(x.shape()),
                          "), got ", k);
  std::vector<Tensor> comps;
  Shape bshape;
  for (const Tensor& t : indices) {
    comps.push_back(index_i64(name, t, x, "indices"));
    bshape = comps.size() == 1 ? comps.back().shape()
                               : broadcast_shapes(name, bshape, comps.back().shape());
  }
  for (int64_t j = 0; j < k; ++j) {
    comps[size_t(j)] = comps[size_t(j)].broadcast_to(bshape);
    check_range(name, comps[size_t(j)], x.shape()[size_t(j)], j);
  }
  const Shape rest(x.shape().begin() + k, x.shape().end());
  Shape vshape = bshape;
  vshape.insert(vshape.end(), rest.begin(), rest.end());
  if (broadcast_shapes(name, values.shape(), vshape) != vshape)
    fail<ShapeMismatch>(name, "values ", shape_str(values.shape()), " do not broadcast to ",
                        shape_str(vshape));
  int64_t p = 1;
  for (int64_t j = 0; j < k; ++j) p *= x.shape()[size_t(j)];
  const int64_t b = shape_numel(bshape);
  Shape xr = {p}, sel = {b};
  xr.insert(xr.end(), rest.begin(), rest.end());
  sel.insert(sel.end(), rest.begin(), rest.end());
  const Tensor out = x.reshape(xr).clone();
  const Tensor lin = linear_index(comps, x.shape()).reshape({b});
  const Tensor ib = lin.reshape(axis_shape(int64_t(sel.size()), 0, b)).broadcast_to(sel);
  const Tensor vals = values.broadcast_to(vshape).reshape(sel);
  scatter_checked(accumulate ? OpId::scatter_reduce : OpId::scatter,
                  accumulate ? ScatterOp::Sum : ScatterOp::Assign, out, 0, ib, vals);
  return out.reshape(x.shape());
}

Tensor put(const Tensor& x, const Tensor& index, const Tensor& values, bool accumulate) {
  const OpScope scope("put");
  constexpr std::string_view name = "put";
  check_x(OpId::put, x);
  check_defined(name, values);
  ops::check_same(name, {&x, &values});
  if (accumulate && x.dtype() == DType::Bool)
    fail<UnsupportedDType>(name, "accumulate needs a numeric dtype, got Bool");
  const Tensor idx = index_i64(name, index, x);
  if (values.numel() != idx.numel())
    fail<ShapeMismatch>(name, "values must have index's ", idx.numel(), " elements, got ",
                        values.numel());
  check_range(name, idx, x.numel(), -1);
  const int64_t k = idx.numel();
  const Tensor out = x.reshape({x.numel()}).clone();
  scatter_checked(accumulate ? OpId::scatter_reduce : OpId::scatter,
                  accumulate ? ScatterOp::Sum : ScatterOp::Assign, out, 0, idx.reshape({k}),
                  values.reshape({k}));
  return out.reshape(x.shape());
}

Tensor masked_select(const Tensor& x, const Tensor& mask) {
  const OpScope scope("masked_select");
  constexpr std::string_view name = "masked_select";
  check_x(OpId::masked_select, x);
  check_defined(name, mask);
  if (mask.dtype() != DType::Bool)
    fail<DTypeMismatch>(name, "mask must be Bool, got ", mask.dtype());
  if (mask.device() != x.device())
    fail<DeviceMismatch>(name, "mask on ", mask.device(), ", x on ", x.device());
  const Shape s = broadcast_shapes(name, x.shape(), mask.shape());
  const int64_t total = shape_numel(s);
  int64_t n = 0;
  const Tensor at = selected_positions(mask.broadcast_to(s).reshape({total}), n);
  return gather_checked(x.broadcast_to(s).reshape({total}), 0, at);
}

Tensor nonzero(const Tensor& x) {
  const OpScope scope("nonzero");
  check_x(OpId::nonzero, x);
  const Tensor mask = x.dtype() == DType::Bool ? x : ne(x, zeros(Shape{}, x.dtype(), x.device()));
  const int64_t total = x.numel();
  int64_t n = 0;
  const Tensor at = selected_positions(mask.reshape({total}), n);
  if (x.dim() == 0) return zeros({n, 0}, DType::I64, x.device());
  std::vector<Tensor> coords;
  for (int64_t j = 0; j < x.dim(); ++j) {
    const int64_t e = x.shape()[size_t(j)];
    const Tensor c = arange(0, double(e), 1, DType::I64, x.device())
                         .reshape(axis_shape(x.dim(), j, e))
                         .broadcast_to(x.shape())
                         .reshape({total});
    coords.push_back(gather_checked(c, 0, at));
  }
  return stack(coords, 1);
}

Tensor bincount(const Tensor& x, const std::optional<Tensor>& weights, int64_t minlength) {
  const OpScope scope("bincount");
  constexpr std::string_view name = "bincount";
  check_defined(name, x);
  ops::check_dtype_valid(name, x.dtype());
  if (x.dtype() != DType::I64 && x.dtype() != DType::I32 && x.dtype() != DType::U8)
    fail<DTypeMismatch>(name, "x must be I64, I32 or U8, got ", x.dtype());
  if (x.dim() != 1) fail<InvalidDimension>(name, "x must be 1-D, got ", shape_str(x.shape()));
  if (minlength < 0) fail<InvalidArgument>(name, "minlength must be >= 0, got ", minlength);
  DType out_dtype = DType::I64;
  if (weights) {
    check_defined(name, *weights);
    ops::check_dtype(OpId::bincount, weights->dtype());
    if (weights->device() != x.device())
      fail<DeviceMismatch>(name, "weights on ", weights->device(), ", x on ", x.device());
    if (weights->shape() != x.shape())
      fail<ShapeMismatch>(name, "weights must have x's shape ", shape_str(x.shape()), ", got ",
                          shape_str(weights->shape()));
    out_dtype = weights->dtype();
  }
  const Tensor xi = x.cast(DType::I64);
  int64_t len = minlength;
  if (x.numel() > 0) {
    const int64_t lo = min(xi).item<int64_t>();
    if (lo < 0)
      fail<IndexOutOfBounds>(name, "value ", lo, " is negative: x must hold counts' indexes >= 0");
    len = std::max(len, max(xi).item<int64_t>() + 1);
  }
  if (!weights) {
    // Counts as the width of each value's run in x sorted: two binary searches per bin, where
    // a scatter of every element into few bins would be serialised per bin.
    const Tensor sorted = sort(xi, 0).values;
    const Tensor bins = arange(0, double(len), 1, DType::I64, x.device());
    return searchsorted(sorted, bins, true) - searchsorted(sorted, bins, false);
  }
  const Tensor out = zeros({len}, out_dtype, x.device());
  scatter_checked(OpId::scatter_reduce, ScatterOp::Sum, out, 0, xi, *weights);
  return out;
}

}  // namespace numr
