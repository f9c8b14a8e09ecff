// The torch.fft functions built from three transforms along one dim (complex to complex,
// real to complex, complex to real), written once over Tensor and Var. The Var
// transforms' gradients are transforms again, so every order differentiates.
#pragma once

#include <cmath>
#include <string_view>
#include <vector>

#include "numr/complex.h"
#include "numr/fft.h"
#include "numr/ops.h"

namespace numr::fft::detail {

// Unnormalised transforms along dim, times scale (on the CPU engine).
Tensor c2c(const Tensor& z, int64_t dim, bool forward, double scale);
Tensor r2c(const Tensor& x, int64_t dim, double scale);
Tensor c2r(const Tensor& z, int64_t dim, int64_t n, double scale);
// The same transforms (unnormalised) as Tensor ops alone, for a backend without FFT
// kernels (src/ops/fft_composed.cpp).
Tensor composed_c2c(const Tensor& z, int64_t dim, bool forward);
Tensor composed_r2c(const Tensor& x, int64_t dim);
Tensor composed_c2r(const Tensor& z, int64_t dim, int64_t n);
Var c2c(const Var& z, int64_t dim, bool forward, double scale);
Var r2c(const Var& x, int64_t dim, double scale);
Var c2r(const Var& z, int64_t dim, int64_t n, double scale);

// Checks x's dtype for a transform taking `want_complex` (or real) input and returns the
// dtype to convert it to: F32/F64 (or Complex64/Complex128); throws for others.
DType input_dtype(std::string_view op, DType t, bool want_complex);
const Tensor& value_of(const Tensor& t);
const Tensor& value_of(const Var& v);

inline double scale_of(Norm norm, double n, bool forward) {
  switch (norm) {
    case Norm::Backward: return forward ? 1.0 : 1.0 / n;
    case Norm::Ortho: return 1.0 / std::sqrt(n);
    case Norm::Forward: return forward ? 1.0 / n : 1.0;
  }
  return 1.0;
}

// x cut or zero-padded to n along d.
template <class T>
T resized(std::string_view op, const T& x, int64_t d, int64_t n) {
  if (n < 1) fail<InvalidArgument>(op, "a transform needs at least 1 point, asked for ", n);
  const int64_t have = x.shape()[size_t(d)];
  if (n == have) return x;
  if (n < have) return narrow(x, d, 0, n);
  Shape pad = x.shape();
  pad[size_t(d)] = n - have;
  const Tensor zero = zeros(pad, x.dtype(), value_of(x).device());
  return cat({x, T(zero)}, d);
}

template <class T>
T converted(std::string_view op, const T& x, bool want_complex) {
  if (x.dim() == 0) fail<InvalidArgument>(op, "needs at least one dim, x is 0-d");
  const DType t = input_dtype(op, x.dtype(), want_complex);
  return x.dtype() == t ? x : cast(x, t);
}

template <class T>
T one_dim(std::string_view op, const T& x_in, std::optional<int64_t> n, int64_t dim, Norm norm,
          bool forward, bool real_in, bool real_out) {
  const T x = converted(op, x_in, !real_in);
  const int64_t d = wrap_dim(op, dim, x.dim());
  if (real_out) {
    const int64_t len = n ? *n : 2 * (x.shape()[size_t(d)] - 1);
    if (len < 1) fail<InvalidArgument>(op, "the output length ", len, " is not positive");
    return c2r(resized(op, x, d, len / 2 + 1), d, len, scale_of(norm, double(len), false));
  }
  const T xs = resized(op, x, d, n ? *n : x.shape()[size_t(d)]);
  const double scale = scale_of(norm, double(xs.shape()[size_t(d)]), forward);
  return real_in ? r2c(xs, d, scale) : c2c(xs, d, forward, scale);
}

// The dims and lengths of an n-dimensional transform of x, as torch.fft.fftn picks them.
inline std::pair<std::vector<int64_t>, std::vector<int64_t>> plan_dims(
    std::string_view op, const Shape& shape, const std::vector<int64_t>& s,
    const std::vector<int64_t>& dims_in) {
  const auto nd = int64_t(shape.size());
  std::vector<int64_t> dims;
  if (!dims_in.empty()) {
    for (int64_t d : dims_in) {
      const int64_t w = wrap_dim(op, d, nd);
      for (int64_t e : dims)
        if (e == w) fail<InvalidDimension>(op, "dim ", d, " appears more than once");
      dims.push_back(w);
    }
  } else {
    const auto k = s.empty() ? nd : int64_t(s.size());
    if (k > nd) fail<InvalidArgument>(op, "s has ", k, " lengths but x only ", nd, " dims");
    for (int64_t d = nd - k; d < nd; ++d) dims.push_back(d);
  }
  if (!s.empty() && s.size() != dims.size())
    fail<InvalidArgument>(op, "s has ", s.size(), " lengths for ", dims.size(), " dims");
  if (dims.empty()) fail<InvalidArgument>(op, "no dims to transform");
  std::vector<int64_t> lens;
  for (size_t i = 0; i < dims.size(); ++i)
    lens.push_back(s.empty() ? (size_t(dims[i]) < shape.size() ? shape[size_t(dims[i])] : 0) : s[i]);
  return {dims, lens};
}

template <class T>
T n_dim(std::string_view op, const T& x_in, const std::vector<int64_t>& s,
        const std::vector<int64_t>& dims_in, Norm norm, bool forward, bool real_in,
        bool real_out) {
  T x = converted(op, x_in, !real_in);
  if (x.dim() == 0) fail<InvalidArgument>(op, "needs at least one dim, x is 0-d");
  auto [dims, lens] = plan_dims(op, x.shape(), s, dims_in);
  const size_t last = dims.size() - 1;
  if (real_out) {  // c2c over all but the last dim, then c2r along it
    const int64_t len = s.empty() ? 2 * (x.shape()[size_t(dims[last])] - 1) : lens[last];
    if (len < 1) fail<InvalidArgument>(op, "the output length ", len, " is not positive");
    for (size_t i = 0; i < last; ++i) {
      x = resized(op, x, dims[i], lens[i]);
      x = c2c(x, dims[i], false, scale_of(norm, double(lens[i]), false));
    }
    return c2r(resized(op, x, dims[last], len / 2 + 1), dims[last], len,
               scale_of(norm, double(len), false));
  }
  for (size_t i = 0; i < dims.size(); ++i) x = resized(op, x, dims[i], lens[i]);
  if (real_in) {  // r2c along the last dim, then c2c over the others
    x = r2c(x, dims[last], scale_of(norm, double(lens[last]), true));
    for (size_t i = 0; i < last; ++i) x = c2c(x, dims[i], true, scale_of(norm, double(lens[i]), true));
    return x;
  }
  for (size_t i = 0; i < dims.size(); ++i)
    x = c2c(x, dims[i], forward, scale_of(norm, double(lens[i]), forward));
  return x;
}

}  // namespace numr::fft::detail
