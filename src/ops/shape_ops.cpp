// Shape ops: cat, stack, split, chunk, repeat, pad. New outputs are written by the
// backend's copy and fill into views of the output; split and chunk return views.
#include <algorithm>
#include <string>

#include "numr/ops.h"
#include "ops/common.h"

namespace numr {
namespace {

// Non-empty list; all defined, on one device, of one dtype, accepted by op.
void check_list(OpId op, const std::vector<Tensor>& xs) {
  const std::string_view name = op_name(op);
  if (xs.empty()) fail<InvalidArgument>(name, "expected a non-empty list of tensors");
  for (size_t i = 0; i < xs.size(); ++i) {
    if (!xs[i].defined()) fail<InvalidArgument>(name, "tensor ", i, " is undefined");
    if (xs[i].device() != xs[0].device())
      fail<DeviceMismatch>(name, "tensor ", i, " is on ", xs[i].device(), ", tensor 0 on ",
                           xs[0].device());
    if (xs[i].dtype() != xs[0].dtype())
      fail<DTypeMismatch>(name, "tensor ", i, " is ", xs[i].dtype(), ", tensor 0 is ",
                          xs[0].dtype(), " (numr never promotes; use cast)");
  }
  ops::check_dtype(op, xs[0].dtype());
}

// Copies src into dst (a view of a fresh output) on their device.
void copy_into(const Tensor& src, const Tensor& dst) {
  if (dst.numel() == 0) return;
  ops::copy_values(src, dst);
}

// The pieces of x along dim d of at most `size` elements each; the last may be smaller.
std::vector<Tensor> split_views(const Tensor& x, int64_t size, int64_t d) {
  const int64_t n = x.shape()[size_t(d)];
  std::vector<Tensor> out;
  if (n == 0) {  // one empty piece, as in PyTorch
    out.push_back(narrow(x, d, 0, 0));
    return out;
  }
  for (int64_t start = 0; start < n; start += size)
    out.push_back(narrow(x, d, start, std::min(size, n - start)));
  return out;
}

}  // namespace

Tensor cat(const std::vector<Tensor>& xs, int64_t dim) {
  const OpScope scope("cat");
  check_list(OpId::cat, xs);
  const Tensor& first = xs[0];
  if (first.dim() == 0) fail<InvalidDimension>("cat", "cannot concatenate 0-d tensors");
  const int64_t d = wrap_dim("cat", dim, first.dim());
  Shape shape = first.shape();
  int64_t total = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    const Shape& s = xs[i].shape();
    bool same = s.size() == shape.size();
    for (size_t k = 0; same && k < s.size(); ++k)
      if (int64_t(k) != d && s[k] != shape[k]) same = false;
    if (!same)
      fail<ShapeMismatch>("cat", "tensor ", i, " has shape ", shape_str(s), ", tensor 0 has ",
                          shape_str(shape), "; they must match except in dim ", d);
    if (__builtin_add_overflow(total, s[size_t(d)], &total))
      fail<InvalidArgument>("cat", "the extents along dim ", d,
                            " add up to more than an int64_t holds");
  }
  shape[size_t(d)] = total;
  checked_numel(current_op("cat"), shape);
  Tensor out = Tensor::empty(shape, first.dtype(), first.device());
  int64_t at = 0;
  for (const Tensor& x : xs) {
    const int64_t len = x.shape()[size_t(d)];
    copy_into(x, narrow(out, d, at, len));
    at += len;
  }
  return out;
}

Tensor stack(const std::vector<Tensor>& xs, int64_t dim) {
  const OpScope scope("stack");
  check_list(OpId::stack, xs);
  const Shape& shape = xs[0].shape();
  for (size_t i = 1; i < xs.size(); ++i)
    if (xs[i].shape() != shape)
      fail<ShapeMismatch>("stack", "tensor ", i, " has shape ", shape_str(xs[i].shape()),
                          ", tensor 0 has ", shape_str(shape), "; all must be equal");
  const int64_t d = wrap_dim("stack", dim, xs[0].dim() + 1);
  std::vector<Tensor> parts;
  parts.reserve(xs.size());
  for (const Tensor& x : xs) parts.push_back(unsqueeze(x, d));
  return cat(parts, d);
}

std::vector<Tensor> split(const Tensor& x, int64_t split_size, int64_t dim) {
  const OpScope scope("split");
  ops::check_defined("split", x);
  ops::check_dtype(OpId::split, x.dtype());
  const int64_t d = wrap_dim("split", dim, x.dim());
  if (split_size <= 0) fail<InvalidArgument>("split", "split_size must be > 0, got ", split_size);
  return split_views(x, split_size, d);
}

// Pieces of ceil(n / chunks) elements, as in PyTorch: there may be fewer than `chunks`.
std::vector<Tensor> chunk(const Tensor& x, int64_t chunks, int64_t dim) {
  const OpScope scope("chunk");
  ops::check_defined("chunk", x);
  ops::check_dtype(OpId::chunk, x.dtype());
  const int64_t d = wrap_dim("chunk", dim, x.dim());
  if (chunks <= 0) fail<InvalidArgument>("chunk", "chunks must be > 0, got ", chunks);
  const int64_t n = x.shape()[size_t(d)];
  // ceil(n / chunks) without n + chunks - 1, which overflows for large chunks.
  const int64_t size = n / chunks + (n % chunks != 0 ? 1 : 0);
  return split_views(x, std::max<int64_t>(size, 1), d);
}

Tensor repeat(const Tensor& x, const std::vector<int64_t>& repeats) {
  const OpScope scope("repeat");
  ops::check_defined("repeat", x);
  ops::check_dtype(OpId::repeat, x.dtype());
  const size_t r = repeats.size();
  if (r < size_t(x.dim()))
    fail<InvalidArgument>("repeat", "got ", r, " repeats for a tensor of ", x.dim(),
                          " dims; need at least as many");
  for (int64_t k : repeats)
    if (k < 0) fail<InvalidArgument>("repeat", "repeats must be >= 0, got ", k);
  // x with leading 1s so it has r dims.
  Shape xs(r - size_t(x.dim()), 1);
  xs.insert(xs.end(), x.shape().begin(), x.shape().end());
  Shape result;
  for (size_t i = 0; i < r; ++i) {
    int64_t e = 0;
    if (__builtin_mul_overflow(xs[i], repeats[i], &e) || e > kMaxNumel)
      fail<InvalidArgument>("repeat", shape_str(x.shape()), " repeated ", shape_str(repeats),
                            " has more than 2^60 elements");
    result.push_back(e);
  }
  checked_numel("repeat", result);
  Tensor v = reshape(x, xs);
  // Each repeated dim i becomes the pair (repeats[i], xs[i]): broadcasting a new size-1
  // dim in front of it and copying lays out the tiles in torch.repeat's order.
  Shape wide;
  for (size_t i = 0, at = 0; i < r; ++i, ++at) {
    if (repeats[i] != 1) {
      v = unsqueeze(v, int64_t(at));
      wide.push_back(repeats[i]);
      ++at;
    }
    wide.push_back(xs[i]);
  }
  Tensor out = Tensor::empty(wide, x.dtype(), x.device());
  copy_into(broadcast_to(v, wide), out);
  return reshape(out, result);
}

Tensor pad(const Tensor& x, const std::vector<int64_t>& pads, double value) {
  const OpScope scope("pad");
  ops::check_defined("pad", x);
  ops::check_dtype(OpId::pad, x.dtype());
  if (pads.size() % 2 != 0)
    fail<InvalidArgument>("pad", "pads must come in (before, after) pairs, got ", pads.size(),
                          " values");
  if (pads.size() / 2 > size_t(x.dim()))
    fail<InvalidArgument>("pad", pads.size() / 2, " padded dims for a tensor of ", x.dim(),
                          " dims");
  for (int64_t p : pads)
    if (p < 0) fail<InvalidArgument>("pad", "pads must be >= 0, got ", p);
  ops::check_scalar_fits("pad", value, x.dtype());
  Shape shape = x.shape();
  // pads[2k], pads[2k+1] apply to dim (ndim - 1 - k).
  for (size_t k = 0; k < pads.size() / 2; ++k) {
    int64_t& e = shape[size_t(x.dim()) - 1 - k];
    if (__builtin_add_overflow(e, pads[2 * k], &e) ||
        __builtin_add_overflow(e, pads[2 * k + 1], &e))
      fail<InvalidArgument>("pad", "padding ", shape_str(x.shape()), " by ", shape_str(pads),
                            " overflows an extent");
  }
  checked_numel("pad", shape);
  Tensor out = Tensor::empty(shape, x.dtype(), x.device());
  if (out.numel() == 0) return out;
  ops::fill_values(out, value);
  Tensor inner = out;
  for (size_t k = 0; k < pads.size() / 2; ++k) {
    const int64_t d = x.dim() - 1 - int64_t(k);
    inner = narrow(inner, d, pads[2 * k], x.shape()[size_t(d)]);
  }
  copy_into(x, inner);
  return out;
}

}  // namespace numr
