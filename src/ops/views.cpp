// Views: new (shape, strides, offset) over the same storage; no data moves, except that
// reshape copies when no view can express the result.
#include <algorithm>
#include <numeric>

#include "numr/ops.h"
#include "ops/common.h"

namespace numr {
namespace {

Tensor make_view(const Tensor& x, Shape shape, Strides strides, int64_t offset) {
  return Tensor(x.storage(), std::move(shape), std::move(strides), offset, x.dtype());
}

// Resolves one -1 and checks the element count.
Shape infer_shape(std::string_view op, const Tensor& x, const Shape& shape) {
  Shape out = shape;
  int64_t infer_at = -1;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == -1) {
      if (infer_at >= 0) fail<InvalidArgument>(op, "only one dim may be -1 in ", shape_str(shape));
      infer_at = int64_t(i);
      out[i] = 1;  // for the count of the others
    } else if (out[i] < 0) {
      fail<InvalidArgument>(op, "negative extent in ", shape_str(shape));
    }
  }
  const int64_t known = checked_numel(op, out);
  if (infer_at >= 0) {
    if (known == 0 || x.numel() % known != 0)
      fail<ShapeMismatch>(op, "cannot reshape ", shape_str(x.shape()), " into ", shape_str(shape));
    out[size_t(infer_at)] = x.numel() / known;
  }
  if (shape_numel(out) != x.numel())
    fail<ShapeMismatch>(op, "cannot reshape ", shape_str(x.shape()), " (", x.numel(),
                        " elements) into ", shape_str(shape));
  return out;
}

// Strides for viewing x with `shape` without copying, if possible: each run of new dims
// must map onto a run of old dims that is contiguous within itself.
bool view_strides(const Tensor& x, const Shape& shape, Strides& out) {
  out.assign(shape.size(), 0);
  if (x.numel() == 0) {
    out = contiguous_strides(shape);
    return true;
  }
  // Old dims without size-1 entries.
  std::vector<int64_t> os, ost;
  for (size_t i = 0; i < x.shape().size(); ++i)
    if (x.shape()[i] != 1) {
      os.push_back(x.shape()[i]);
      ost.push_back(x.strides()[i]);
    }
  size_t oi = 0;
  size_t ni = 0;
  while (ni < shape.size()) {
    if (shape[ni] == 1) {
      out[ni] = 1;
      ++ni;
      continue;
    }
    if (oi >= os.size()) return false;
    // Take old dims [oi, oj) and new dims [ni, nj) with equal products.
    size_t oj = oi + 1, nj = ni + 1;
    int64_t op = os[oi], np = shape[ni];
    while (op != np) {
      if (op < np) {
        if (oj >= os.size()) return false;
        if (ost[oj - 1] != ost[oj] * os[oj]) return false;
        op *= os[oj++];
      } else {
        if (nj >= shape.size()) return false;
        np *= shape[nj++];
      }
    }
    for (size_t k = oi + 1; k < oj; ++k)
      if (ost[k - 1] != ost[k] * os[k]) return false;
    int64_t stride = ost[oj - 1];
    for (size_t k = nj; k-- > ni;) {
      out[k] = shape[k] == 1 ? stride : stride;
      stride *= shape[k];
    }
    oi = oj;
    ni = nj;
  }
  return oi == os.size();
}

}  // namespace

Tensor view(const Tensor& x, const Shape& shape) {
  ops::check_defined("view", x);
  const Shape s = infer_shape("view", x, shape);
  Strides st;
  if (!view_strides(x, s, st))
    fail<NotContiguous>("view", "cannot view ", shape_str(x.shape()), " with strides ",
                        shape_str(x.strides()), " as ", shape_str(s), "; use reshape");
  return make_view(x, s, st, x.offset());
}

Tensor reshape(const Tensor& x, const Shape& shape) {
  const OpScope scope("reshape");
  ops::check_defined("reshape", x);
  const Shape s = infer_shape("reshape", x, shape);
  Strides st;
  if (view_strides(x, s, st)) return make_view(x, s, st, x.offset());
  const Tensor c = clone(x);
  return make_view(c, s, contiguous_strides(s), c.offset());
}

Tensor transpose(const Tensor& x, int64_t d0, int64_t d1) {
  ops::check_defined("transpose", x);
  const int64_t a = wrap_dim("transpose", d0, x.dim()), b = wrap_dim("transpose", d1, x.dim());
  Shape s = x.shape();
  Strides st = x.strides();
  std::swap(s[size_t(a)], s[size_t(b)]);
  std::swap(st[size_t(a)], st[size_t(b)]);
  return make_view(x, s, st, x.offset());
}

Tensor permute(const Tensor& x, const std::vector<int64_t>& dims) {
  ops::check_defined("permute", x);
  if (int64_t(dims.size()) != x.dim())
    fail<InvalidArgument>("permute", "expected ", x.dim(), " dims, got ", dims.size());
  std::vector<bool> seen(dims.size(), false);
  Shape s(dims.size());
  Strides st(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) {
    const int64_t d = wrap_dim("permute", dims[i], x.dim());
    if (seen[size_t(d)]) fail<InvalidArgument>("permute", "dim ", dims[i], " repeated");
    seen[size_t(d)] = true;
    s[i] = x.shape()[size_t(d)];
    st[i] = x.strides()[size_t(d)];
  }
  return make_view(x, s, st, x.offset());
}

Tensor narrow(const Tensor& x, int64_t dim, int64_t start, int64_t length) {
  ops::check_defined("narrow", x);
  const int64_t d = wrap_dim("narrow", dim, x.dim());
  const int64_t n = x.shape()[size_t(d)];
  if (start < 0) start += n;
  if (start < 0 || length < 0 || start > n || length > n - start)
    fail<IndexOutOfBounds>("narrow", "range of ", length, " from ", start, " outside [0, ", n,
                           ") of dim ", dim);
  Shape s = x.shape();
  s[size_t(d)] = length;
  // An empty view keeps x's offset: past the end of a reversed dim, start * stride would
  // point before the storage.
  const int64_t offset = length == 0 ? x.offset() : x.offset() + start * x.strides()[size_t(d)];
  return make_view(x, s, x.strides(), offset);
}

Tensor broadcast_to(const Tensor& x, const Shape& shape) {
  ops::check_defined("broadcast_to", x);
  if (shape.size() < x.shape().size())
    fail<BroadcastError>("broadcast_to", "cannot broadcast ", shape_str(x.shape()), " to ",
                         shape_str(shape));
  const size_t k = shape.size() - x.shape().size();
  for (size_t i = 0; i < x.shape().size(); ++i)
    if (x.shape()[i] != shape[k + i] && x.shape()[i] != 1)
      fail<BroadcastError>("broadcast_to", "cannot broadcast ", shape_str(x.shape()), " to ",
                           shape_str(shape));
  checked_numel("broadcast_to", shape);
  Strides strides(shape.size(), 0);
  for (size_t i = 0; i < x.shape().size(); ++i)
    if (x.shape()[i] == shape[k + i]) strides[k + i] = x.strides()[i];
  return make_view(x, shape, strides, x.offset());
}

Tensor squeeze(const Tensor& x, std::optional<int64_t> dim) {
  ops::check_defined("squeeze", x);
  Shape s;
  Strides st;
  std::optional<int64_t> d;
  if (dim) d = wrap_dim("squeeze", *dim, x.dim());
  for (int64_t i = 0; i < x.dim(); ++i) {
    const bool drop = x.shape()[size_t(i)] == 1 && (!d || *d == i);
    if (!drop) {
      s.push_back(x.shape()[size_t(i)]);
      st.push_back(x.strides()[size_t(i)]);
    }
  }
  return make_view(x, s, st, x.offset());
}

Tensor unsqueeze(const Tensor& x, int64_t dim) {
  ops::check_defined("unsqueeze", x);
  const int64_t d = wrap_dim("unsqueeze", dim, x.dim() + 1);
  Shape s = x.shape();
  Strides st = x.strides();
  const int64_t stride = d < x.dim() ? x.strides()[size_t(d)] * x.shape()[size_t(d)] : 1;
  s.insert(s.begin() + d, 1);
  st.insert(st.begin() + d, stride);
  return make_view(x, s, st, x.offset());
}

Tensor flatten(const Tensor& x, int64_t start_dim, int64_t end_dim) {
  const OpScope scope("flatten");
  ops::check_defined("flatten", x);
  if (x.dim() == 0) return reshape(x, {1});
  const int64_t a = wrap_dim("flatten", start_dim, x.dim()),
                b = wrap_dim("flatten", end_dim, x.dim());
  if (a > b) fail<InvalidDimension>("flatten", "start_dim ", start_dim, " after end_dim ", end_dim);
  Shape s(x.shape().begin(), x.shape().begin() + a);
  int64_t m = 1;
  for (int64_t i = a; i <= b; ++i) m *= x.shape()[size_t(i)];
  s.push_back(m);
  s.insert(s.end(), x.shape().begin() + b + 1, x.shape().end());
  return reshape(x, s);
}

Tensor flip(const Tensor& x, const std::vector<int64_t>& dims) {
  ops::check_defined("flip", x);
  Strides st = x.strides();
  int64_t offset = x.offset();
  std::vector<bool> seen(size_t(x.dim()), false);
  for (int64_t dim : dims) {
    const int64_t d = wrap_dim("flip", dim, x.dim());
    if (seen[size_t(d)]) fail<InvalidArgument>("flip", "dim ", dim, " repeated");
    seen[size_t(d)] = true;
    const int64_t n = x.shape()[size_t(d)];
    if (n > 0) offset += (n - 1) * st[size_t(d)];
    st[size_t(d)] = -st[size_t(d)];
  }
  return make_view(x, x.shape(), st, offset);
}

// Window w along dim d starts at element w * step; the new last dim walks one window with
// d's stride. Windows that overlap share elements, which check_writable rejects for writes.
Tensor unfold(const Tensor& x, int64_t dim, int64_t size, int64_t step) {
  ops::check_defined("unfold", x);
  if (x.dim() == 0) {  // as PyTorch: one element, windows of at most 1 -> [size]
    wrap_dim("unfold", dim, 1);
    if (size < 0 || size > 1)
      fail<InvalidArgument>("unfold", "window size ", size, " outside [0, 1] of a 0-d tensor");
    if (step <= 0) fail<InvalidArgument>("unfold", "step must be > 0, got ", step);
    return make_view(x, {size}, {1}, x.offset());
  }
  const int64_t d = wrap_dim("unfold", dim, x.dim());
  const int64_t n = x.shape()[size_t(d)];
  if (size < 0 || size > n)
    fail<InvalidArgument>("unfold", "window size ", size, " outside [0, ", n, "] of dim ", dim);
  if (step <= 0) fail<InvalidArgument>("unfold", "step must be > 0, got ", step);
  const int64_t windows = (n - size) / step + 1;
  Shape s = x.shape();
  Strides st = x.strides();
  const int64_t inner = st[size_t(d)];
  s[size_t(d)] = windows;
  s.push_back(size);
  checked_numel("unfold", s);
  // One window needs no stride between windows (and step may be too large for one).
  if (windows > 1) st[size_t(d)] = inner * step;
  st.push_back(inner);
  return make_view(x, s, st, x.offset());
}

}  // namespace numr
