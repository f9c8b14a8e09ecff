// Var forms of convolution and distance: the Tensor front end's composition over Vars
// (src/ops/conv.h), so their gradients are those of pad, unfold, matmul and the
// elementwise ops they are made of, to any order.
#include "autograd/grad_util.h"
#include "core/op_scope.h"
#include "numr/conv.h"
#include "ops/conv.h"

namespace numr {
namespace {

const Tensor& value_or_none(const Var& v) {
  static const Tensor none;
  return v.defined() ? v.tensor() : none;
}

template <class F>
Var batched_call(const Var& x, bool batched, F f) {
  if (batched) return f(x);
  return squeeze(f(unsqueeze(x, 0)), 0);
}

}  // namespace

Var conv1d(const Var& x, const Var& w, const Var& bias, int64_t stride, int64_t padding,
           int64_t dilation, int64_t groups) {
  const OpScope scope("conv1d");
  const ops::ConvGeometry g =
      ops::conv_geometry("conv1d", OpId::conv1d, x.tensor(), w.tensor(), value_or_none(bias), 1,
                         {stride}, {padding}, {dilation}, groups);
  return batched_call(x, g.batched,
                      [&](const Var& xb) { return compose::conv_nd(xb, w, bias, g); });
}

Var conv2d(const Var& x, const Var& w, const Var& bias, Pair stride, Pair padding, Pair dilation,
           int64_t groups) {
  const OpScope scope("conv2d");
  const ops::ConvGeometry g = ops::conv_geometry(
      "conv2d", OpId::conv2d, x.tensor(), w.tensor(), value_or_none(bias), 2,
      {stride[0], stride[1]}, {padding[0], padding[1]}, {dilation[0], dilation[1]}, groups);
  return batched_call(x, g.batched,
                      [&](const Var& xb) { return compose::conv_nd(xb, w, bias, g); });
}

Var depthwise_conv2d(const Var& x, const Var& w, const Var& bias, Pair stride, Pair padding,
                     Pair dilation) {
  const OpScope scope("depthwise_conv2d");
  const ops::ConvGeometry g = ops::depthwise_geometry(x.tensor(), w.tensor(), value_or_none(bias),
                                                      stride, padding, dilation);
  return batched_call(x, g.batched,
                      [&](const Var& xb) { return compose::conv_nd(xb, w, bias, g); });
}

Var conv_transpose1d(const Var& x, const Var& w, const Var& bias, int64_t stride, int64_t padding,
                     int64_t output_padding, int64_t groups, int64_t dilation) {
  const OpScope scope("conv_transpose1d");
  const ops::TransposeGeometry g =
      ops::conv_transpose_geometry(x.tensor(), w.tensor(), value_or_none(bias), stride, padding,
                                   output_padding, groups, dilation);
  return batched_call(x, g.batched,
                      [&](const Var& xb) { return compose::conv_transpose_1d(xb, w, bias, g); });
}

Var cdist(const Var& x1, const Var& x2, double p, CdistCompute compute) {
  const OpScope scope("cdist");
  ops::check_cdist(x1.tensor(), x2.tensor(), p);
  return compose::cdist(x1, x2, p, compute);
}

Var pdist(const Var& x, double p) {
  const OpScope scope("pdist");
  ops::check_pdist(x.tensor(), p);
  return compose::pdist(x, p);
}

}  // namespace numr
