// Quasi-random sequences: Sobol and Halton points computed on the host and uploaded, and
// latin_hypercube composed of rand draws and sorts.
#include <cstdint>
#include <vector>

#include "core/op_scope.h"
#include "numr/distributions.h"
#include "numr/indexing.h"
#include "numr/ops.h"
#include "numr/sort.h"
#include "ops/common.h"
#include "ops/random_common.h"
#include "ops/sobol_table.h"

namespace numr::random {
namespace {

constexpr int kSobolBits = 30;

void check_nd(std::string_view op, int64_t n, int64_t d, int64_t max_d, DType dtype) {
  if (n < 0) fail<InvalidArgument>(op, "n must be >= 0, got ", n);
  if (d < 1 || d > max_d) fail<InvalidArgument>(op, "d must be in [1, ", max_d, "], got ", d);
  if (!is_floating(dtype))
    fail<UnsupportedDType>(op, "points need a floating dtype, got ", dtype_name(dtype));
  checked_numel(op, {n, d});
}

// Direction numbers v[dim][j], j < kSobolBits, already shifted to the top of 30 bits.
std::vector<uint32_t> sobol_directions(int64_t d) {
  std::vector<uint32_t> v(size_t(d) * kSobolBits);
  size_t pos = 0;
  for (int64_t dim = 0; dim < d; ++dim) {
    uint32_t* row = &v[size_t(dim) * kSobolBits];
    const uint32_t poly = detail::kSobolTable[pos++];
    int s = 0;
    while ((poly >> (s + 1)) != 0) ++s;  // degree
    for (int j = 0; j < s; ++j) row[j] = detail::kSobolTable[pos++];
    if (s == 0) {  // the first dimension: every m_j = 1
      for (int j = 0; j < kSobolBits; ++j) row[j] = 1;
    } else {
      // m_j = 2^s m_{j-s} xor m_{j-s} xor the xor of 2^k a_k m_{j-k}, k = 1 .. s-1, where
      // a_k is bit s-k of poly.
      for (int j = s; j < kSobolBits; ++j) {
        uint32_t m = row[j - s] ^ (row[j - s] << s);
        for (int k = 1; k < s; ++k)
          if ((poly >> (s - k)) & 1u) m ^= row[j - k] << k;
        row[j] = m;
      }
    }
    for (int j = 0; j < kSobolBits; ++j) row[j] <<= (kSobolBits - 1 - j);
  }
  return v;
}

Tensor sobol_points(int64_t n, int64_t d, const std::vector<uint32_t>& shift, DType dtype,
                    Device device) {
  const std::vector<uint32_t> v = sobol_directions(d);
  std::vector<double> out(size_t(n * d));
  std::vector<uint32_t> x(size_t(d), 0);
  const double scale = 1.0 / double(uint32_t(1) << kSobolBits);
  for (int64_t i = 0; i < n; ++i) {
    if (i > 0) {
      // Gray-code order: point i flips the direction of the lowest zero bit of i - 1.
      int c = 0;
      for (uint64_t b = uint64_t(i - 1); b & 1u; b >>= 1) ++c;
      if (c >= kSobolBits)
        fail<InvalidArgument>("sobol", "n must be at most 2^", kSobolBits, ", got ", n);
      for (int64_t j = 0; j < d; ++j) x[size_t(j)] ^= v[size_t(j) * kSobolBits + size_t(c)];
    }
    for (int64_t j = 0; j < d; ++j)
      out[size_t(i * d + j)] = double(x[size_t(j)] ^ shift[size_t(j)]) * scale;
  }
  const Tensor t = Tensor::from_vector(out, {n, d}, device);
  return dtype == DType::F64 ? t : cast(t, dtype);
}

std::vector<int64_t> first_primes(int64_t d) {
  std::vector<int64_t> primes;
  for (int64_t c = 2; int64_t(primes.size()) < d; ++c) {
    bool prime = true;
    for (int64_t p : primes) {
      if (p * p > c) break;
      if (c % p == 0) {
        prime = false;
        break;
      }
    }
    if (prime) primes.push_back(c);
  }
  return primes;
}

}  // namespace

Tensor sobol(int64_t n, int64_t d, DType dtype, Device device) {
  const OpScope scope("sobol");
  check_nd("sobol", n, d, detail::kSobolMaxDims, dtype);
  if (n > (int64_t(1) << kSobolBits))
    fail<InvalidArgument>("sobol", "n must be at most 2^", kSobolBits, ", got ", n);
  return sobol_points(n, d, std::vector<uint32_t>(size_t(d), 0), dtype, device);
}

Tensor sobol(int64_t n, int64_t d, Generator& gen, DType dtype, Device device) {
  const OpScope scope("sobol");
  check_nd("sobol", n, d, detail::kSobolMaxDims, dtype);
  if (n > (int64_t(1) << kSobolBits))
    fail<InvalidArgument>("sobol", "n must be at most 2^", kSobolBits, ", got ", n);
  // One 30-bit shift per dimension: randint draws d counters.
  const std::vector<int64_t> words =
      randint(0, int64_t(1) << kSobolBits, {d}, DType::I64, Device::cpu(), gen)
          .to_vector<int64_t>();
  return sobol_points(n, d, std::vector<uint32_t>(words.begin(), words.end()), dtype, device);
}

Tensor halton(int64_t n, int64_t d, DType dtype, Device device) {
  const OpScope scope("halton");
  check_nd("halton", n, d, 1024, dtype);
  const std::vector<int64_t> primes = first_primes(d);
  std::vector<double> out(size_t(n * d));
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < d; ++j) {
      // Radical inverse: the base-p digits of i mirrored after the point.
      const int64_t p = primes[size_t(j)];
      double f = 1.0, r = 0.0;
      for (int64_t k = i; k > 0; k /= p) {
        f /= double(p);
        r += f * double(k % p);
      }
      out[size_t(i * d + j)] = r;
    }
  }
  const Tensor t = Tensor::from_vector(out, {n, d}, device);
  return dtype == DType::F64 ? t : cast(t, dtype);
}

Tensor latin_hypercube(int64_t n, int64_t d, Generator& gen, DType dtype, Device device) {
  const OpScope scope("latin_hypercube");
  check_nd("latin_hypercube", n, d, kMaxNumel, dtype);
  const DType wd = detail::work_dtype(dtype);
  // Draws 0 and 1: the sort keys of each column's permutation (as randperm); draw 2: jitter.
  const detail::Draws draws(gen, {n, d}, 3, wd, device);
  const Tensor k1 = draws.uniform(0, 0), k2 = draws.uniform(0, 1);
  const Tensor by_k2 = argsort(k2, 0);
  const Tensor by_k1 = argsort(gather(k1, 0, by_k2), 0);
  const Tensor perm = cast(gather(by_k2, 0, by_k1), wd);
  const Tensor x = (perm + draws.uniform(0, 2)) / double(n);
  return x.dtype() == dtype ? x : cast(x, dtype);
}

}  // namespace numr::random
