// Convolution and distance written once over T = Tensor or Var (both have the same ops),
// so the Tensor front ends and the Var forms share one definition and a Var form's
// gradient is that of the ops it is made of, to any order. The argument checks are
// functions both call first; the compositions take arguments already checked.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <string_view>
#include <type_traits>
#include <vector>

#include "numr/autograd.h"
#include "numr/conv.h"
#include "numr/ops.h"
#include "numr/shape.h"
#include "numr/tensor.h"

namespace numr::ops {

// One convolution's geometry: 1 or 2 spatial dims, x and w batched ([N, C, ...]).
struct ConvGeometry {
  int64_t spatial = 1;  // 1 or 2
  std::vector<int64_t> stride, padding, dilation;
  int64_t groups = 1;
  bool batched = true;  // x had its batch dim (unbatched x gets one of 1 and loses it after)
};

// Checks x, w and bias (undefined: none) of conv1d/conv2d against PyTorch's rules and
// returns the geometry; `spatial` is 1 or 2.
ConvGeometry conv_geometry(std::string_view op, OpId id, const Tensor& x, const Tensor& w,
                           const Tensor& bias, int64_t spatial, std::vector<int64_t> stride,
                           std::vector<int64_t> padding, std::vector<int64_t> dilation,
                           int64_t groups);
// depthwise_conv2d's geometry: conv2d's with groups = the input's channels.
ConvGeometry depthwise_geometry(const Tensor& x, const Tensor& w, const Tensor& bias,
                                std::array<int64_t, 2> stride, std::array<int64_t, 2> padding,
                                std::array<int64_t, 2> dilation);
// Checks conv_transpose1d's arguments; geometry of the equivalent conv1d (stride 1, the
// given dilation and groups, no padding: the transposed op pads itself).
struct TransposeGeometry {
  int64_t stride, padding, output_padding, dilation, groups;
  bool batched;
};
TransposeGeometry conv_transpose_geometry(const Tensor& x, const Tensor& w, const Tensor& bias,
                                          int64_t stride, int64_t padding, int64_t output_padding,
                                          int64_t groups, int64_t dilation);
// Checks cdist's operands and p.
void check_cdist(const Tensor& x1, const Tensor& x2, double p);
void check_pdist(const Tensor& x, double p);

}  // namespace numr::ops

namespace numr::compose {

// The convolution of batched x [N, C, S...] with w [O, C/G, K...] (S, K: 1 or 2 dims):
// zero padding, then im2col as strided views (unfold over each spatial dim: a window of
// (K - 1) d + 1 every stride, then every d-th element of it), one copy of the columns
// as [N, G, C/G K..., L] and one matmul batched over the groups against w as
// [G, O/G, C/G K...].
template <class T>
T conv_nd(const T& x, const T& w, const T& bias, const ops::ConvGeometry& g) {
  const int64_t s = g.spatial, n = x.shape()[0], c = x.shape()[1], o = w.shape()[0];
  const int64_t groups = g.groups, cg = c / groups;
  T xp = x;
  bool padded = false;
  std::vector<int64_t> pads;
  for (int64_t i = s; i-- > 0;) {  // pad's pairs start from the last dim
    pads.push_back(g.padding[size_t(i)]);
    pads.push_back(g.padding[size_t(i)]);
    padded = padded || g.padding[size_t(i)] > 0;
  }
  if (padded) xp = pad(x, pads, 0.0);
  // After the loop: [N, C, Lo_0 .. Lo_{s-1}, K_0 .. K_{s-1}].
  Shape out_shape{n, o};
  int64_t l = 1, ck = cg;
  for (int64_t i = 0; i < s; ++i) {
    const int64_t k = w.shape()[size_t(2 + i)], d = g.dilation[size_t(i)];
    xp = unfold(xp, 2 + i, (k - 1) * d + 1, g.stride[size_t(i)]);
    if (d > 1) xp = squeeze(unfold(xp, -1, 1, d), -1);
    out_shape.push_back(xp.shape()[size_t(2 + i)]);
    l *= xp.shape()[size_t(2 + i)];
    ck *= k;
  }
  // [N, G, C/G, Lo..., K...] -> [N, G, C/G, K..., Lo...] -> [N, G, C/G K..., L] (the copy).
  Shape split{n, groups, cg};
  std::vector<int64_t> perm{0, 1, 2};
  for (int64_t i = 0; i < 2 * s; ++i) split.push_back(xp.shape()[size_t(2 + i)]);
  for (int64_t i = 0; i < s; ++i) perm.push_back(3 + s + i);
  for (int64_t i = 0; i < s; ++i) perm.push_back(3 + i);
  const T cols = reshape(permute(reshape(xp, split), perm), Shape{n, groups, ck, l});
  const T wg = reshape(w, Shape{groups, o / groups, ck});
  T out = reshape(matmul(wg, cols), out_shape);  // [N, G, O/G, L] is [N, O, Lo...]
  if (bias.defined()) {
    Shape bshape(size_t(2 + s), 1);
    bshape[1] = o;
    out = out + reshape(bias, bshape);
  }
  return out;
}

// x [N, C_in, L] and w [C_in, C_out/G, K]: zeros between the inputs (stride - 1 of them),
// d (K - 1) - padding on each side (+ output_padding on the right; a negative amount crops),
// then a stride-1 convolution with w flipped along K and its channel roles swapped per group.
template <class T>
T conv_transpose_1d(const T& x, const T& w, const T& bias, const ops::TransposeGeometry& g) {
  const int64_t n = x.shape()[0], cin = x.shape()[1], len = x.shape()[2];
  const int64_t cout_g = w.shape()[1], k = w.shape()[2], groups = g.groups;
  T z = x;
  if (g.stride > 1 && len > 0) {
    z = reshape(pad(unsqueeze(x, -1), {0, g.stride - 1}, 0.0), Shape{n, cin, len * g.stride});
    z = narrow(z, 2, 0, (len - 1) * g.stride + 1);
  }
  const int64_t left = g.dilation * (k - 1) - g.padding, right = left + g.output_padding;
  if (left > 0 || right > 0) z = pad(z, {std::max<int64_t>(left, 0), std::max<int64_t>(right, 0)});
  if (left < 0 || right < 0) {
    const int64_t start = std::max<int64_t>(-left, 0);
    z = narrow(z, 2, start, z.shape()[2] - start - std::max<int64_t>(-right, 0));
  }
  // [C_in, C_out/G, K] -> [G, C_in/G, C_out/G, K] -> [G, C_out/G, C_in/G, K], flipped.
  const T wt =
      reshape(flip(transpose(reshape(w, Shape{groups, cin / groups, cout_g, k}), 1, 2), {3}),
              Shape{groups * cout_g, cin / groups, k});
  ops::ConvGeometry cg;
  cg.spatial = 1;
  cg.stride = {1};
  cg.padding = {0};
  cg.dilation = {g.dilation};
  cg.groups = groups;
  return conv_nd(z, wt, bias, cg);
}

inline const Tensor& value_of(const Tensor& t) { return t; }
inline const Tensor& value_of(const Var& v) { return v.tensor(); }

// s > 0 ? f(s) : 0, with f evaluated at 1 where s is 0: the gradient through the zero
// branch is exactly 0 rather than 0 times an infinite derivative (NaN).
template <class T, class F>
T where_positive(const T& s, F f) {
  const Tensor pos = gt(value_of(s), full(Shape{}, 0.0, s.dtype(), s.device()));
  return where_cond(pos, f(where_cond(pos, s, 1.0)), 0.0);
}

// The distances of rows x1 [.., P, M] to rows x2 [.., R, M] (batch dims broadcast) from
// their coordinate differences [.., P, R, M].
template <class T>
T cdist_block(const T& x1, const T& x2, double p) {
  const T diff = unsqueeze(x1, -2) - unsqueeze(x2, -3);
  if (p == 0.0) {  // a count: no gradient, as PyTorch's is zero
    const Tensor& v = value_of(diff);
    const Tensor count =
        sum(cast(ne(v, full(Shape{}, 0.0, v.dtype(), v.device())), v.dtype()), {-1});
    if constexpr (std::is_same_v<T, Tensor>)
      return count;
    else
      return T(count);
  }
  if (p == 1.0) return sum(abs(diff), {-1});
  if (std::isinf(p)) {
    if (diff.shape().back() == 0) return sum(diff, {-1});  // max of nothing: distance 0
    return max(abs(diff), {-1});
  }
  if (p == 2.0) return where_positive(sum(square(diff), {-1}), [](const T& v) { return sqrt(v); });
  const T ad = abs(diff);
  const T terms = where_positive(ad, [p](const T& v) { return pow_scalar(v, p); });
  return where_positive(sum(terms, {-1}), [p](const T& v) { return pow_scalar(v, 1.0 / p); });
}

// p = 2 through one GEMM: |a|^2 + |b|^2 - 2 a.b, where cancellation can leave a hair below
// zero (distance 0, gradient 0 through where_positive).
template <class T>
T cdist_matmul(const T& x1, const T& x2) {
  const T n1 = sum(square(x1), {-1}, true);                     // [.., P, 1]
  const T n2 = transpose(sum(square(x2), {-1}, true), -1, -2);  // [.., 1, R]
  const T d2 = (n1 + n2) - matmul(x1, transpose(x2, -1, -2)) * 2.0;
  return where_positive(d2, [](const T& v) { return sqrt(v); });
}

// cdist in blocks of rows of x1, so the differences held at once stay near 2^24 elements.
// F16 and BF16 compute in F32 and round once: their squares and powers would overflow (a
// difference of 256 squares to F16's largest finite value) and each step would round.
template <class T>
T cdist(const T& x1, const T& x2, double p, CdistCompute compute) {
  if (x1.dtype() == DType::F16 || x1.dtype() == DType::BF16)
    return cast(cdist(cast(x1, DType::F32), cast(x2, DType::F32), p, compute), x1.dtype());
  const int64_t rows = x1.shape()[x1.dim() - 2], r = x2.shape()[x2.dim() - 2];
  const bool large = rows > 25 || r > 25;
  if (p == 2.0 &&
      (compute == CdistCompute::Matmul || (compute == CdistCompute::MatmulIfLarge && large)))
    return cdist_matmul(x1, x2);
  const int64_t m = x1.shape().back();
  Shape batch1(x1.shape().begin(), x1.shape().end() - 2);
  Shape batch2(x2.shape().begin(), x2.shape().end() - 2);
  const int64_t per_row =
      std::max<int64_t>(1, shape_numel(broadcast_shapes("cdist", batch1, batch2)) *
                               std::max<int64_t>(r, 1) * std::max<int64_t>(m, 1));
  const int64_t block = std::max<int64_t>(1, (int64_t(1) << 24) / per_row);
  if (rows <= block) return cdist_block(x1, x2, p);
  std::vector<T> parts;
  for (int64_t i = 0; i < rows; i += block)
    parts.push_back(cdist_block(narrow(x1, x1.dim() - 2, i, std::min(block, rows - i)), x2, p));
  return cat(parts, parts[0].dim() - 2);  // the rows dim of the broadcast result
}

// The upper triangle (i < j) of cdist(x, x) [N, N], row by row.
template <class T>
T pdist(const T& x, double p) {
  const int64_t n = x.shape()[0];
  const T d = cdist(x, x, p, CdistCompute::Differences);
  if (n < 2) return reshape(narrow(flatten(d), 0, 0, 0), Shape{0});
  std::vector<T> rows;
  for (int64_t i = 0; i + 1 < n; ++i)
    rows.push_back(reshape(narrow(narrow(d, 0, i, 1), 1, i + 1, n - i - 1), Shape{n - i - 1}));
  return cat(rows, 0);
}

}  // namespace numr::compose
