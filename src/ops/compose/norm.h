// rms_norm and layer_norm written once over X = Tensor (their compositions) or X = Var
// (differentiable, for the Var ops and their create_graph gradients). Inputs are already
// in the statistics dtype; statistics keep the last dim (size 1).
#pragma once

#include <cstdint>

#include "numr/autograd.h"
#include "numr/norm.h"
#include "numr/ops.h"

namespace numr::compose {

template <class X>
struct NormParts {
  X out, mean, rstd;  // mean undefined for rms_norm
};

// The forward: xhat = (x - mean) * rstd (x * rstd without centring), out = xhat * w (+ b).
template <class X>
NormParts<X> norm_parts(const X& x, const X& w, const X* b, double eps, bool centred) {
  NormParts<X> p;
  X xc = x;
  if (centred) {
    p.mean = mean(x, {-1}, true);
    xc = x - p.mean;
  }
  p.rstd = rsqrt(mean(square(xc), {-1}, true) + eps);
  p.out = xc * p.rstd * w;
  if (b) p.out = p.out + *b;
  return p;
}

// d_x from grad g and the normalised input xhat: rstd * (g w - xhat mean(g w xhat)
// [- mean(g w)]), the rows' means over the last dim.
template <class X>
X norm_input_grad(const X& g, const X& xhat, const X& w, const X& rstd, bool centred) {
  const X gw = g * w;
  X inner = gw - xhat * mean(gw * xhat, {-1}, true);
  if (centred) inner = inner - mean(gw, {-1}, true);
  return inner * rstd;
}

// The sum of v over every dim but the last.
template <class X>
X sum_rows(const X& v) {
  const Shape& s = v.shape();
  int64_t rows = 1;
  for (size_t i = 0; i + 1 < s.size(); ++i) rows *= s[i];
  return sum(reshape(v, Shape{rows, s.back()}), {0});
}

// group_norm of x [N, C, *], w and b [C], all in the statistics dtype: each group of
// C / groups channels normalised over its channels and positions, then w and b per channel.
template <class X>
X group_norm_parts(const X& x, int64_t groups, const X& w, const X& b, double eps) {
  const Shape& s = x.shape();
  int64_t per = s[1] / groups;
  for (size_t i = 2; i < s.size(); ++i) per *= s[i];
  const X g = reshape(x, Shape{s[0], groups, per});
  const X xc = g - mean(g, {-1}, true);
  const X xhat = reshape(xc * rsqrt(mean(square(xc), {-1}, true) + eps), s);
  Shape per_channel(s.size(), 1);
  per_channel[1] = s[1];
  return xhat * reshape(w, per_channel) + reshape(b, per_channel);
}

// rms_norm (b null, centred false) or layer_norm of x, w, b in x's dtype: computed in the
// statistics dtype, rounded once. Also the per-row statistics (shape x.shape()[:-1]).
NormForward norm_forward(const Tensor& x, const Tensor& w, const Tensor* b, double eps,
                         bool centred);
// The gradients from what norm_forward saved (mean undefined for rms_norm).
NormGrads norm_backward(const Tensor& grad, const Tensor& x, const Tensor& w, const Tensor& mean,
                        const Tensor& rstd, bool centred);

}  // namespace numr::compose
