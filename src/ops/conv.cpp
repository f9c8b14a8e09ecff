// Convolution and distance composed from pad, unfold views and matmul (src/ops/conv.h,
// shared with the Var forms). No backend has kernels of its own for them.
#include "ops/conv.h"

#include <string>

#include "core/op_scope.h"
#include "numr/conv.h"
#include "numr/ops.h"
#include "ops/common.h"

namespace numr {
namespace {

void check_tensors(std::string_view op, OpId id, const Tensor& x, const Tensor& w,
                   const Tensor& bias) {
  ops::check_defined(op, x);
  ops::check_defined(op, w);
  ops::check_dtype(id, x.dtype());
  if (bias.defined())
    ops::check_same(op, {&x, &w, &bias});
  else
    ops::check_same(op, {&x, &w});
}

void check_bias(std::string_view op, const Tensor& bias, int64_t channels) {
  if (bias.defined() && bias.shape() != Shape{channels})
    fail<ShapeMismatch>(op, "bias has shape ", shape_str(bias.shape()), "; expected [", channels,
                        "] (one per output channel)");
}

// Output length of a window of span (K - 1) d + 1 every stride over padded_len; >= 1.
int64_t out_len(std::string_view op, int64_t padded_len, int64_t k, int64_t d, int64_t stride,
                std::string_view what) {
  int64_t span = 0;
  const bool huge = __builtin_mul_overflow(k - 1, d, &span) || span >= kMaxNumel;
  if (huge || padded_len < span + 1)
    fail<InvalidArgument>(
        op, "output size 0 along ", what, " is too small: padded input ", padded_len,
        " is shorter than the dilated kernel ",
        huge ? std::string("(K - 1) dilation + 1 > 2^60") : std::to_string(span + 1));
  return (padded_len - span - 1) / stride + 1;
}

// a * b + c, or InvalidArgument when it leaves int64.
int64_t checked_mul_add(std::string_view op, int64_t a, int64_t b, int64_t c) {
  int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r) || __builtin_add_overflow(r, c, &r))
    fail<InvalidArgument>(op, "output size overflows int64");
  return r;
}

}  // namespace

ops::ConvGeometry ops::conv_geometry(std::string_view op, OpId id, const Tensor& x, const Tensor& w,
                                     const Tensor& bias, int64_t spatial,
                                     std::vector<int64_t> stride, std::vector<int64_t> padding,
                                     std::vector<int64_t> dilation, int64_t groups) {
  check_tensors(op, id, x, w, bias);
  if (x.dim() != spatial + 1 && x.dim() != spatial + 2)
    fail<InvalidDimension>(op, "expected a ", spatial + 1, "-d (unbatched) or ", spatial + 2,
                           "-d (batched) input, got shape ", shape_str(x.shape()));
  if (w.dim() != spatial + 2)
    fail<InvalidDimension>(op, "expected a ", spatial + 2, "-d weight, got shape ",
                           shape_str(w.shape()));
  if (bias.defined() && bias.dim() != 1)
    fail<InvalidDimension>(op, "expected a 1-d bias, got shape ", shape_str(bias.shape()));
  if (groups < 1) fail<InvalidArgument>(op, "groups must be >= 1, got ", groups);
  for (int64_t i = 0; i < spatial; ++i) {
    if (stride[size_t(i)] < 1)
      fail<InvalidArgument>(op, "stride must be >= 1, got ", stride[size_t(i)]);
    if (dilation[size_t(i)] < 1)
      fail<InvalidArgument>(op, "dilation must be >= 1, got ", dilation[size_t(i)]);
    if (padding[size_t(i)] < 0)
      fail<InvalidArgument>(op, "padding must be >= 0, got ", padding[size_t(i)]);
    if (padding[size_t(i)] > kMaxNumel)
      fail<InvalidArgument>(op, "padding ", padding[size_t(i)], " is more than 2^60");
  }
  const bool batched = x.dim() == spatial + 2;
  const int64_t c = x.shape()[batched ? 1 : 0], o = w.shape()[0];
  if (o % groups != 0)
    fail<InvalidArgument>(op, "weight has ", o,
                          " output channels, not divisible by groups = ", groups);
  if (w.shape()[1] * groups != c)
    fail<ShapeMismatch>(op, "input has ", c, " channels; weight of shape ", shape_str(w.shape()),
                        " with groups = ", groups, " expects ", w.shape()[1] * groups);
  check_bias(op, bias, o);
  const int64_t first = batched ? 2 : 1, n = batched ? x.shape()[0] : 1;
  // The padded input, the columns [N, C K.., L..] and the result must be tensors numr holds.
  Shape padded{n, c}, cols{n, c}, out{n, o};
  for (int64_t i = 0; i < spatial; ++i) {
    const int64_t k = w.shape()[size_t(2 + i)];
    if (k < 1) fail<InvalidArgument>(op, "kernel size must be >= 1, got ", k);
    const int64_t len = x.shape()[size_t(first + i)] + 2 * padding[size_t(i)];
    const int64_t lo = out_len(op, len, k, dilation[size_t(i)], stride[size_t(i)],
                               "spatial dim " + std::to_string(i));
    padded.push_back(len);
    cols.push_back(k);
    cols.push_back(lo);
    out.push_back(lo);
  }
  checked_numel(op, padded);
  checked_numel(op, cols);
  checked_numel(op, out);
  return {spatial, std::move(stride), std::move(padding), std::move(dilation), groups, batched};
}

ops::ConvGeometry ops::depthwise_geometry(const Tensor& x, const Tensor& w, const Tensor& bias,
                                          Pair stride, Pair padding, Pair dilation) {
  constexpr std::string_view op = "depthwise_conv2d";
  ops::check_defined(op, x);
  if (x.dim() != 3 && x.dim() != 4)
    fail<InvalidDimension>(op, "expected a 3-d (unbatched) or 4-d (batched) input, got shape ",
                           shape_str(x.shape()));
  const int64_t c = x.shape()[x.dim() == 4 ? 1 : 0];
  if (c < 1) fail<InvalidArgument>(op, "input has no channels");
  return conv_geometry(op, OpId::depthwise_conv2d, x, w, bias, 2, {stride[0], stride[1]},
                       {padding[0], padding[1]}, {dilation[0], dilation[1]}, c);
}

ops::TransposeGeometry ops::conv_transpose_geometry(const Tensor& x, const Tensor& w,
                                                    const Tensor& bias, int64_t stride,
                                                    int64_t padding, int64_t output_padding,
                                                    int64_t groups, int64_t dilation) {
  constexpr std::string_view op = "conv_transpose1d";
  check_tensors(op, OpId::conv_transpose1d, x, w, bias);
  if (x.dim() != 2 && x.dim() != 3)
    fail<InvalidDimension>(op, "expected a 2-d (unbatched) or 3-d (batched) input, got shape ",
                           shape_str(x.shape()));
  if (w.dim() != 3)
    fail<InvalidDimension>(op, "expected a 3-d weight, got shape ", shape_str(w.shape()));
  if (bias.defined() && bias.dim() != 1)
    fail<InvalidDimension>(op, "expected a 1-d bias, got shape ", shape_str(bias.shape()));
  if (groups < 1) fail<InvalidArgument>(op, "groups must be >= 1, got ", groups);
  if (stride < 1) fail<InvalidArgument>(op, "stride must be >= 1, got ", stride);
  if (dilation < 1) fail<InvalidArgument>(op, "dilation must be >= 1, got ", dilation);
  if (padding < 0) fail<InvalidArgument>(op, "padding must be >= 0, got ", padding);
  if (output_padding < 0 || (output_padding >= stride && output_padding >= dilation))
    fail<InvalidArgument>(op, "output_padding must be >= 0 and smaller than stride (", stride,
                          ") or dilation (", dilation, "), got ", output_padding);
  const bool batched = x.dim() == 3;
  const int64_t c = x.shape()[batched ? 1 : 0], len = x.shape()[batched ? 2 : 1];
  if (w.shape()[0] != c)
    fail<ShapeMismatch>(op, "input has ", c, " channels; weight of shape ", shape_str(w.shape()),
                        " expects ", w.shape()[0]);
  if (c % groups != 0)
    fail<InvalidArgument>(op, "input channels ", c, " are not divisible by groups = ", groups);
  const int64_t k = w.shape()[2];
  if (k < 1) fail<InvalidArgument>(op, "kernel size must be >= 1, got ", k);
  check_bias(op, bias, w.shape()[1] * groups);
  if (padding > kMaxNumel) fail<InvalidArgument>(op, "padding ", padding, " is more than 2^60");
  if (len < 1) fail<InvalidArgument>(op, "output size 0 is too small (input length 0)");
  // The input with zeros between and around, and the result, as conv_transpose_1d builds them.
  const int64_t spread = checked_mul_add(op, len - 1, stride, 1);
  const int64_t reach = checked_mul_add(op, dilation, k - 1, 0);
  const int64_t tail = checked_mul_add(op, 1, reach, output_padding);
  const int64_t size = checked_mul_add(op, 1, spread - 2 * padding, tail);
  if (size < 1)
    fail<InvalidArgument>(op, "output size ", size, " is too small (input length ", len, ")");
  const int64_t n = batched ? x.shape()[0] : 1;
  checked_numel(op, {n, c, checked_mul_add(op, 1, size, reach)});
  checked_numel(op, {n, c, k, size});  // the columns of the inner convolution
  checked_numel(op, {n, w.shape()[1] * groups, size});
  return {stride, padding, output_padding, dilation, groups, batched};
}

namespace {

void check_p(std::string_view op, double p) {
  if (!(p >= 0.0)) fail<InvalidArgument>(op, "p must be >= 0, got ", p);
}

}  // namespace

void ops::check_cdist(const Tensor& x1, const Tensor& x2, double p) {
  ops::check_defined("cdist", x1);
  ops::check_defined("cdist", x2);
  ops::check_dtype(OpId::cdist, x1.dtype());
  ops::check_same("cdist", {&x1, &x2});
  check_p("cdist", p);
  if (x1.dim() < 2 || x2.dim() < 2)
    fail<InvalidDimension>("cdist", "expected x1 and x2 of at least 2 dims, got shapes ",
                           shape_str(x1.shape()), " and ", shape_str(x2.shape()));
  if (x1.shape().back() != x2.shape().back())
    fail<ShapeMismatch>("cdist", "x1 rows have ", x1.shape().back(), " coordinates, x2 rows ",
                        x2.shape().back());
  Shape b1(x1.shape().begin(), x1.shape().end() - 2), b2(x2.shape().begin(), x2.shape().end() - 2);
  Shape out = broadcast_shapes("cdist", b1, b2);
  out.push_back(x1.shape()[size_t(x1.dim() - 2)]);
  out.push_back(x2.shape()[size_t(x2.dim() - 2)]);
  checked_numel("cdist", out);
}

void ops::check_pdist(const Tensor& x, double p) {
  ops::check_defined("pdist", x);
  ops::check_dtype(OpId::pdist, x.dtype());
  check_p("pdist", p);
  if (x.dim() != 2)
    fail<InvalidDimension>("pdist", "expected a 2-d input, got shape ", shape_str(x.shape()));
}

namespace {

// The composition on x with its batch dim (added for an unbatched x, removed after).
template <class T, class F>
T batched_call(const T& x, bool batched, F f) {
  if (batched) return f(x);
  return squeeze(f(unsqueeze(x, 0)), 0);
}

}  // namespace

Tensor conv1d(const Tensor& x, const Tensor& w, const Tensor& bias, int64_t stride, int64_t padding,
              int64_t dilation, int64_t groups) {
  const OpScope scope("conv1d");
  const ops::ConvGeometry g = ops::conv_geometry("conv1d", OpId::conv1d, x, w, bias, 1, {stride},
                                                 {padding}, {dilation}, groups);
  return batched_call(x, g.batched,
                      [&](const Tensor& xb) { return compose::conv_nd(xb, w, bias, g); });
}

Tensor conv2d(const Tensor& x, const Tensor& w, const Tensor& bias, Pair stride, Pair padding,
              Pair dilation, int64_t groups) {
  const OpScope scope("conv2d");
  const ops::ConvGeometry g =
      ops::conv_geometry("conv2d", OpId::conv2d, x, w, bias, 2, {stride[0], stride[1]},
                         {padding[0], padding[1]}, {dilation[0], dilation[1]}, groups);
  return batched_call(x, g.batched,
                      [&](const Tensor& xb) { return compose::conv_nd(xb, w, bias, g); });
}

Tensor depthwise_conv2d(const Tensor& x, const Tensor& w, const Tensor& bias, Pair stride,
                        Pair padding, Pair dilation) {
  const OpScope scope("depthwise_conv2d");
  const ops::ConvGeometry g = ops::depthwise_geometry(x, w, bias, stride, padding, dilation);
  return batched_call(x, g.batched,
                      [&](const Tensor& xb) { return compose::conv_nd(xb, w, bias, g); });
}

Tensor conv_transpose1d(const Tensor& x, const Tensor& w, const Tensor& bias, int64_t stride,
                        int64_t padding, int64_t output_padding, int64_t groups, int64_t dilation) {
  const OpScope scope("conv_transpose1d");
  const ops::TransposeGeometry g =
      ops::conv_transpose_geometry(x, w, bias, stride, padding, output_padding, groups, dilation);
  return batched_call(x, g.batched,
                      [&](const Tensor& xb) { return compose::conv_transpose_1d(xb, w, bias, g); });
}

Tensor cdist(const Tensor& x1, const Tensor& x2, double p, CdistCompute compute) {
  const OpScope scope("cdist");
  ops::check_cdist(x1, x2, p);
  return compose::cdist(x1, x2, p, compute);
}

Tensor pdist(const Tensor& x, double p) {
  const OpScope scope("pdist");
  ops::check_pdist(x, p);
  return compose::pdist(x, p);
}

}  // namespace numr
