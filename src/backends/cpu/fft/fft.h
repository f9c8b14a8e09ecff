// The CPU FFT engine: batched 1-D transforms of any length n >= 1 over float or double,
// independent of numr's tensors. Complex data is interleaved (std::complex<T>: re, im).
// Transforms are unnormalised: inverse(forward(x)) = n * x; the caller scales.
//
// A batch of sequences is described by batch dims: sequence (i0, i1, ..) starts at
// in + i0 * dims[0].in_stride + i1 * dims[1].in_stride + .. (likewise for out), and element
// j of a sequence lies j * stride further. Strides count elements of the array's own type
// (complex elements for complex arrays, reals for real ones) and may be zero (inputs only)
// or negative. In c2c, out may equal in with the same strides (in place); otherwise the
// output must not overlap the input.
#pragma once

#include <complex>
#include <cstdint>
#include <span>

namespace numr::cpu::fft {

// The sign of the exponent: forward X_k = sum_j x_j exp(-2 pi i jk / n), inverse exp(+..).
enum class Direction : int { Forward = -1, Inverse = 1 };

struct BatchDim {
  int64_t size = 1;
  int64_t in_stride = 0;
  int64_t out_stride = 0;
};

// n complex -> n complex along each sequence.
template <class T>
void c2c(int64_t n, Direction dir, std::span<const BatchDim> batch, const std::complex<T>* in,
         int64_t in_stride, std::complex<T>* out, int64_t out_stride);

// n reals -> the n / 2 + 1 first outputs of the forward transform.
template <class T>
void r2c(int64_t n, std::span<const BatchDim> batch, const T* in, int64_t in_stride,
         std::complex<T>* out, int64_t out_stride);

// n / 2 + 1 complex -> n reals: the inverse transform of the Hermitian sequence that the
// input begins (X_{n-k} = conj(X_k)); the imaginary parts of X_0, and of X_{n/2} for even
// n, are ignored, as in numpy.fft.irfft.
template <class T>
void c2r(int64_t n, std::span<const BatchDim> batch, const std::complex<T>* in, int64_t in_stride,
         T* out, int64_t out_stride);

// The same for `howmany` sequences `dist` elements apart (a single batch dim).
template <class T>
void c2c(int64_t n, int64_t howmany, Direction dir, const std::complex<T>* in, int64_t in_stride,
         int64_t in_dist, std::complex<T>* out, int64_t out_stride, int64_t out_dist) {
  const BatchDim d{howmany, in_dist, out_dist};
  c2c<T>(n, dir, std::span<const BatchDim>(&d, 1), in, in_stride, out, out_stride);
}
template <class T>
void r2c(int64_t n, int64_t howmany, const T* in, int64_t in_stride, int64_t in_dist,
         std::complex<T>* out, int64_t out_stride, int64_t out_dist) {
  const BatchDim d{howmany, in_dist, out_dist};
  r2c<T>(n, std::span<const BatchDim>(&d, 1), in, in_stride, out, out_stride);
}
template <class T>
void c2r(int64_t n, int64_t howmany, const std::complex<T>* in, int64_t in_stride, int64_t in_dist,
         T* out, int64_t out_stride, int64_t out_dist) {
  const BatchDim d{howmany, in_dist, out_dist};
  c2r<T>(n, std::span<const BatchDim>(&d, 1), in, in_stride, out, out_stride);
}

}  // namespace numr::cpu::fft
