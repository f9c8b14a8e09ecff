// Shape and misc ops composed from other ops: roll, repeat_interleave, meshgrid,
// slice_assign (src/ops/shape_compose.h, shared with the Var forms), masked_fill, one_hot
// and dropout. No backend has kernels of its own for them.
#include "ops/misc_ops.h"

#include <cmath>
#include <string>

#include "numr/indexing.h"
#include "numr/ops.h"
#include "ops/common.h"
#include "ops/shape_compose.h"

namespace numr {

std::vector<int64_t> ops::roll_dims(const Tensor& x, const std::vector<int64_t>& shifts,
                                    const std::vector<int64_t>& dims) {
  ops::check_defined("roll", x);
  ops::check_dtype(OpId::roll, x.dtype());
  if (dims.empty()) {
    if (shifts.size() != 1)
      fail<InvalidArgument>("roll", "without dims, expected one shift, got ", shifts.size());
    return {};
  }
  if (shifts.size() != dims.size())
    fail<InvalidArgument>("roll", "got ", shifts.size(), " shifts for ", dims.size(),
                          " dims; they must pair up");
  std::vector<int64_t> out;
  for (int64_t d : dims) out.push_back(wrap_dim("roll", d, x.dim()));
  return out;
}

std::optional<int64_t> ops::repeat_interleave_dim(const Tensor& x, int64_t repeats,
                                                  std::optional<int64_t> dim) {
  ops::check_defined("repeat_interleave", x);
  ops::check_dtype(OpId::repeat_interleave, x.dtype());
  if (repeats < 0)
    fail<InvalidArgument>("repeat_interleave", "repeats must be >= 0, got ", repeats);
  std::optional<int64_t> d;
  if (dim) d = wrap_dim("repeat_interleave", *dim, x.dim());
  const int64_t n = d ? x.shape()[size_t(*d)] : x.numel();
  int64_t total = 0;
  if (__builtin_mul_overflow(n, repeats, &total) || total > kMaxNumel)
    fail<InvalidArgument>("repeat_interleave", n, " elements repeated ", repeats,
                          " times are more than 2^60");
  Shape out = d ? x.shape() : Shape{total};
  if (d) out[size_t(*d)] = total;
  checked_numel("repeat_interleave", out);
  return d;
}

ops::RepeatIndex ops::repeat_interleave_index(const Tensor& x, const Tensor& repeats,
                                              std::optional<int64_t> dim) {
  constexpr std::string_view kName = "repeat_interleave";
  ops::check_defined(kName, x);
  ops::check_defined(kName, repeats);
  ops::check_dtype(OpId::repeat_interleave, x.dtype());
  if (repeats.dtype() != DType::I64 && repeats.dtype() != DType::I32)
    fail<DTypeMismatch>(kName, "repeats must be I64 or I32, got ", repeats.dtype());
  if (repeats.device() != x.device())
    fail<DeviceMismatch>(kName, "repeats on ", repeats.device(), ", x on ", x.device());
  if (repeats.dim() > 1)
    fail<InvalidArgument>(kName, "repeats must be 0-d or 1-D, got shape ",
                          shape_str(repeats.shape()));
  std::optional<int64_t> d;
  if (dim) d = wrap_dim(kName, *dim, x.dim());
  const int64_t n = d ? x.shape()[size_t(*d)] : x.numel();
  const std::vector<int64_t> r = repeats.cast(DType::I64).to_vector<int64_t>();
  if (r.size() != 1 && int64_t(r.size()) != n)
    fail<InvalidArgument>(kName, "expected 1 or ", n, " repeats, got ", r.size());
  int64_t total = 0;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t k = r[r.size() == 1 ? 0 : size_t(i)];
    if (k < 0) fail<InvalidArgument>(kName, "repeats must be >= 0, got ", k, " at ", i);
    if (__builtin_add_overflow(total, k, &total) || total > kMaxNumel)
      fail<InvalidArgument>(kName, "the repeats add up to more than 2^60");
  }
  Shape out = d ? x.shape() : Shape{total};
  if (d) out[size_t(*d)] = total;
  checked_numel(kName, out);
  std::vector<int64_t> index;
  index.reserve(size_t(total));
  for (int64_t i = 0; i < n; ++i)
    index.insert(index.end(), size_t(r[r.size() == 1 ? 0 : size_t(i)]), i);
  return {d, Tensor::from_vector<int64_t>(index, {total}, x.device())};
}

bool ops::meshgrid_xy(const std::vector<const Tensor*>& xs, std::string_view indexing) {
  if (indexing != "ij" && indexing != "xy")
    fail<InvalidArgument>("meshgrid", "indexing must be \"ij\" or \"xy\", got \"", indexing, "\"");
  if (xs.empty()) fail<InvalidArgument>("meshgrid", "expected a non-empty list of tensors");
  Shape grid;
  for (size_t i = 0; i < xs.size(); ++i) {
    const Tensor& x = *xs[i];
    if (!x.defined()) fail<InvalidArgument>("meshgrid", "tensor ", i, " is undefined");
    if (x.device() != xs[0]->device())
      fail<DeviceMismatch>("meshgrid", "tensor ", i, " is on ", x.device(), ", tensor 0 on ",
                           xs[0]->device());
    if (x.dtype() != xs[0]->dtype())
      fail<DTypeMismatch>("meshgrid", "tensor ", i, " is ", x.dtype(), ", tensor 0 is ",
                          xs[0]->dtype(), " (numr never promotes; use cast)");
    if (x.dim() > 1)
      fail<InvalidArgument>("meshgrid", "tensor ", i, " has shape ", shape_str(x.shape()),
                            "; expected 0 or 1 dims");
    grid.push_back(x.numel());
  }
  ops::check_dtype(OpId::meshgrid, xs[0]->dtype());
  checked_numel("meshgrid", grid);
  return indexing == "xy";
}

ops::SliceAt ops::slice_assign_at(const Tensor& x, const Tensor& src, int64_t dim, int64_t start) {
  ops::check_same("slice_assign", {&x, &src});
  ops::check_dtype(OpId::slice_assign, x.dtype());
  const int64_t d = wrap_dim("slice_assign", dim, x.dim());
  bool same = src.dim() == x.dim();
  for (int64_t k = 0; same && k < x.dim(); ++k)
    if (k != d && src.shape()[size_t(k)] != x.shape()[size_t(k)]) same = false;
  if (!same)
    fail<ShapeMismatch>("slice_assign", "src has shape ", shape_str(src.shape()), ", x has ",
                        shape_str(x.shape()), "; they must match except in dim ", dim);
  const int64_t n = x.shape()[size_t(d)], len = src.shape()[size_t(d)];
  const int64_t s = start < 0 && start >= -n ? start + n : start;
  if (s < 0 || s > n || len > n - s)
    fail<IndexOutOfBounds>("slice_assign", "src of ", len, " elements from ", start,
                           " does not fit in [0, ", n, ") of dim ", dim);
  return {d, s};
}

Tensor ops::masked_fill_mask(const Tensor& x, const Tensor& mask, double value) {
  ops::check_defined("masked_fill", x);
  ops::check_defined("masked_fill", mask);
  ops::check_dtype(OpId::masked_fill, x.dtype());
  if (mask.dtype() != DType::Bool)
    fail<DTypeMismatch>("masked_fill", "mask must be Bool, got ", mask.dtype());
  if (mask.device() != x.device())
    fail<DeviceMismatch>("masked_fill", "mask on ", mask.device(), ", x on ", x.device());
  if (broadcast_shapes("masked_fill", mask.shape(), x.shape()) != x.shape())
    fail<BroadcastError>("masked_fill", "mask of shape ", shape_str(mask.shape()),
                         " does not broadcast to x's shape ", shape_str(x.shape()));
  ops::check_scalar_fits("masked_fill", value, x.dtype());
  return broadcast_to(mask, x.shape());
}

void ops::check_dropout(const Tensor& x, double p) {
  ops::check_defined("dropout", x);
  ops::check_dtype(OpId::dropout, x.dtype());
  if (!(p >= 0.0 && p <= 1.0)) fail<InvalidArgument>("dropout", "p must be in [0, 1], got ", p);
}

Tensor ops::dropout_mask(const Tensor& x, double p, Generator& gen) {
  // u is a multiple of 2^-24, so u >= p exactly when u >= ceil(p 2^24) / 2^24, which F32
  // holds exactly (p itself may round down in F32 and keep an element it should drop).
  const double threshold = std::ceil(std::ldexp(p, 24)) * 0x1p-24;
  const Tensor u = rand(x.shape(), DType::F32, x.device(), gen);
  return cast(ge(u, full(Shape{}, threshold, DType::F32, x.device())), x.dtype());
}

Tensor roll(const Tensor& x, const std::vector<int64_t>& shifts, const std::vector<int64_t>& dims) {
  const OpScope scope("roll");
  const std::vector<int64_t> d = ops::roll_dims(x, shifts, dims);
  if (d.empty()) return reshape(compose::roll(flatten(x), shifts, {0}), x.shape());
  return compose::roll(x, shifts, d);
}

Tensor repeat_interleave(const Tensor& x, int64_t repeats, std::optional<int64_t> dim) {
  const OpScope scope("repeat_interleave");
  const std::optional<int64_t> d = ops::repeat_interleave_dim(x, repeats, dim);
  const Tensor out = d ? compose::repeat_interleave(x, repeats, *d)
                       : compose::repeat_interleave(flatten(x), repeats, 0);
  // An empty result may come back as a view of x.
  return out.storage() == x.storage() ? clone(out) : out;
}

Tensor repeat_interleave(const Tensor& x, const Tensor& repeats, std::optional<int64_t> dim) {
  const OpScope scope("repeat_interleave");
  const ops::RepeatIndex r = ops::repeat_interleave_index(x, repeats, dim);
  return r.dim ? index_select(x, *r.dim, r.index) : index_select(flatten(x), 0, r.index);
}

Tensor repeat_interleave(const Tensor& repeats) {
  const OpScope scope("repeat_interleave");
  ops::check_defined("repeat_interleave", repeats);
  if (repeats.dim() != 1)
    fail<InvalidArgument>("repeat_interleave", "repeats alone must be 1-D, got shape ",
                          shape_str(repeats.shape()));
  return ops::repeat_interleave_index(repeats, repeats, 0).index;
}

std::vector<Tensor> meshgrid(const std::vector<Tensor>& xs, std::string_view indexing) {
  const OpScope scope("meshgrid");
  std::vector<const Tensor*> ps;
  for (const Tensor& x : xs) ps.push_back(&x);
  return compose::meshgrid(xs, ops::meshgrid_xy(ps, indexing));
}

Tensor slice_assign(const Tensor& x, const Tensor& src, int64_t dim, int64_t start) {
  const OpScope scope("slice_assign");
  const ops::SliceAt at = ops::slice_assign_at(x, src, dim, start);
  return compose::slice_assign(x, src, at.dim, at.start);
}

Tensor masked_fill(const Tensor& x, const Tensor& mask, double value) {
  const OpScope scope("masked_fill");
  return where_cond(ops::masked_fill_mask(x, mask, value), value, x);
}

Tensor one_hot(const Tensor& index, int64_t num_classes) {
  const OpScope scope("one_hot");
  ops::check_defined("one_hot", index);
  ops::check_dtype(OpId::one_hot, index.dtype());
  if (num_classes < -1)
    fail<InvalidArgument>("one_hot", "num_classes must be >= 0 or -1, got ", num_classes);
  const Tensor idx = cast(index, DType::I64);
  if (idx.numel() == 0 && num_classes == -1)
    fail<InvalidArgument>("one_hot", "cannot infer num_classes from an empty index");
  if (idx.numel() > 0) {
    const int64_t lo = min(idx).item<int64_t>(), hi = max(idx).item<int64_t>();
    if (lo < 0) fail<IndexOutOfBounds>("one_hot", "index ", lo, " is negative");
    if (num_classes == -1) {
      if (__builtin_add_overflow(hi, 1, &num_classes))
        fail<InvalidArgument>("one_hot", "max index ", hi, " + 1 classes overflow");
    } else if (hi >= num_classes) {
      fail<IndexOutOfBounds>("one_hot", "index ", hi, " outside [0, ", num_classes, ")");
    }
  }
  Shape shape = idx.shape();
  shape.push_back(num_classes);
  checked_numel("one_hot", shape);
  const Tensor classes = arange(0, double(num_classes), 1, DType::I64, idx.device());
  return cast(eq(unsqueeze(idx, -1), classes), DType::I64);
}

Tensor dropout(const Tensor& x, double p, Generator& gen) {
  const OpScope scope("dropout");
  ops::check_dropout(x, p);
  if (p == 0.0) return x;
  if (p == 1.0) return mul_scalar(x, 0.0);
  return mul_scalar(x * ops::dropout_mask(x, p, gen), 1.0 / (1.0 - p));
}

}  // namespace numr
