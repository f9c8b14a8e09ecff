// The transforms of a backend without FFT kernels, written with Tensor ops alone (complex
// matmul, elementwise products, views): lengths up to 16, and primes up to 64, as a product
// with the DFT matrix; other composite lengths by the four-step split n = n1 n2 (a short
// transform along n1, twiddles, the rest along n2); larger primes by Bluestein's chirp
// convolution over a power-of-two length. O(n log n) work in O(log n) passes; the
// constants are made on the host in double and rounded once to the data's precision.
#include <cmath>
#include <complex>
#include <numbers>
#include <vector>

#include "numr/complex.h"
#include "numr/fft.h"
#include "numr/ops.h"
#include "ops/fft_compose.h"

namespace numr::fft::detail {
namespace {

using cd = std::complex<double>;

constexpr int64_t kLeaf = 16;         // the longest split factor taken as one DFT product
constexpr int64_t kDirectPrime = 64;  // primes up to this multiply by their DFT matrix

Tensor constant(const std::vector<cd>& v, const Shape& shape, DType t, Device d) {
  return Tensor::from_vector(v, shape).cast(t).to(d);
}

// exp(sign * 2 pi i * num / den) with num reduced mod den first, so large products stay
// exact.
cd root(int64_t num, int64_t den, double sign) {
  const int64_t r = num % den;
  return std::polar(1.0, sign * 2 * std::numbers::pi * double(r) / double(den));
}

int64_t smallest_factor(int64_t n) {
  for (int64_t p = 2; p * p <= n; ++p)
    if (n % p == 0) return p;
  return n;
}

Tensor dft_rows(const Tensor& x, bool forward);

// x [B, n] times the DFT matrix.
Tensor direct(const Tensor& x, bool forward) {
  const int64_t n = x.size(1);
  const double sign = forward ? -1.0 : 1.0;
  std::vector<cd> w(static_cast<size_t>(n * n));
  for (int64_t j = 0; j < n; ++j)
    for (int64_t k = 0; k < n; ++k) w[size_t(j * n + k)] = root(j * k, n, sign);
  return matmul(x, constant(w, Shape{n, n}, x.dtype(), x.device()));
}

// n = n1 n2, input index i1 n2 + i2, output index k1 + n1 k2.
Tensor four_step(const Tensor& x, int64_t n1, bool forward) {
  const int64_t b = x.size(0), n = x.size(1), n2 = n / n1;
  const double sign = forward ? -1.0 : 1.0;
  // Along i1: rows (b, i2) of length n1 -> [b, n2, n1] indexed (i2, k1).
  Tensor y = dft_rows(x.view({b, n1, n2}).transpose(1, 2).contiguous().view({b * n2, n1}), forward);
  std::vector<cd> tw(static_cast<size_t>(n));
  for (int64_t i2 = 0; i2 < n2; ++i2)
    for (int64_t k1 = 0; k1 < n1; ++k1) tw[size_t(i2 * n1 + k1)] = root(i2 * k1, n, sign);
  y = y.view({b, n2, n1}) * constant(tw, Shape{n2, n1}, x.dtype(), x.device());
  // Along i2: rows (b, k1) of length n2 -> [b, n1, n2] indexed (k1, k2).
  const Tensor z = dft_rows(y.transpose(1, 2).contiguous().view({b * n1, n2}), forward);
  return z.view({b, n1, n2}).transpose(1, 2).contiguous().view({b, n});
}

// Bluestein: X_k = w_k sum_j (x_j w_j) conj(w_{k-j}), w_j = exp(-+ i pi j^2 / n), the sum a
// circular convolution of power-of-two length m >= 2n - 1.
Tensor bluestein(const Tensor& x, bool forward) {
  const int64_t n = x.size(1);
  int64_t m = 1;
  while (m < 2 * n - 1) m *= 2;
  const double sign = forward ? -1.0 : 1.0;
  std::vector<cd> w(static_cast<size_t>(n)), kernel(static_cast<size_t>(m), cd(0));
  for (int64_t j = 0; j < n; ++j) {
    w[size_t(j)] = root(j * j, 2 * n, sign);
    kernel[size_t(j)] = std::conj(w[size_t(j)]);
    if (j > 0) kernel[size_t(m - j)] = std::conj(w[size_t(j)]);
  }
  // The kernel's spectrum, by the CPU's engine in double.
  const Tensor kernel_hat =
      fft::fft(Tensor::from_vector(kernel, Shape{m})).cast(x.dtype()).to(x.device());
  const Tensor chirp = constant(w, Shape{n}, x.dtype(), x.device());
  const Tensor a = pad(x * chirp, {0, m - n});
  const Tensor conv = dft_rows(dft_rows(a, true) * kernel_hat, false) * (1.0 / double(m));
  return conv.narrow(1, 0, n) * chirp;
}

// The unnormalised transform of each row of x [B, n] (complex, contiguous).
Tensor dft_rows(const Tensor& x, bool forward) {
  const int64_t n = x.size(1);
  if (n == 1 || x.size(0) == 0) return x;
  if (n <= kLeaf) return direct(x, forward);
  const int64_t p = smallest_factor(n);
  if (p == n) return n <= kDirectPrime ? direct(x, forward) : bluestein(x, forward);
  // The split factor: the small prime factors gathered while they fit a leaf, or p alone.
  int64_t n1 = p, rest = n / p;
  for (int64_t q = smallest_factor(rest); rest > 1 && n1 * q <= kLeaf && q < rest;
       q = smallest_factor(rest)) {
    n1 *= q;
    rest /= q;
  }
  return four_step(x, n1, forward);
}

// z's dim d as rows [B, n]: f applied to them, then moved back.
template <class F>
Tensor along(const Tensor& z, int64_t d, F&& f) {
  std::vector<int64_t> perm, back(size_t(z.dim()));
  for (int64_t i = 0; i < z.dim(); ++i)
    if (i != d) perm.push_back(i);
  perm.push_back(d);
  for (size_t i = 0; i < perm.size(); ++i) back[size_t(perm[i])] = int64_t(i);
  const Tensor moved = z.permute(perm).contiguous();
  Shape lead = moved.shape();
  const int64_t n = lead.back();
  lead.pop_back();
  int64_t rows = 1;
  for (int64_t s : lead) rows *= s;
  const Tensor out = f(moved.view({rows, n}));
  Shape shape = lead;
  shape.push_back(out.size(1));
  return out.view(shape).permute(back);
}

}  // namespace

Tensor composed_c2c(const Tensor& z, int64_t d, bool forward) {
  if (z.numel() == 0) return z.clone();
  return along(z, d, [&](const Tensor& rows) { return dft_rows(rows, forward); });
}

Tensor composed_r2c(const Tensor& x, int64_t d) {
  const int64_t n = x.shape()[size_t(d)];
  const Tensor z = x.cast(complex_dtype_for(x.dtype()));
  if (z.numel() == 0) {
    Shape s = x.shape();
    s[size_t(d)] = n / 2 + 1;
    return zeros(s, z.dtype(), x.device());
  }
  return along(z, d,
               [&](const Tensor& rows) { return dft_rows(rows, true).narrow(1, 0, n / 2 + 1); });
}

// The full spectrum from its first n / 2 + 1 entries (X[n - k] = conj(X[k])); the real part
// of its inverse discards the imaginary parts of X[0] and X[n / 2], as C2R transforms do.
Tensor composed_c2r(const Tensor& z, int64_t d, int64_t n) {
  const int64_t half = n / 2 + 1;
  Shape s = z.shape();
  s[size_t(d)] = n;
  if (z.numel() == 0 || n == 0) return zeros(s, complex_part_dtype(z.dtype()), z.device());
  return along(z, d, [&](const Tensor& rows) {
    const Tensor head = rows.narrow(1, 0, std::min(half, rows.size(1)));
    const int64_t mirrored = n - half;  // X[half .. n-1] = conj(X[n-half .. 1])
    const Tensor full =
        mirrored > 0 ? cat({head, conj(flip(head.narrow(1, 1, mirrored), {1}))}, 1) : head;
    return real(dft_rows(full.contiguous(), false)).contiguous();
  });
}

}  // namespace numr::fft::detail
