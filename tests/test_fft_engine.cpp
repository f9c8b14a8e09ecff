// The CPU FFT engine (src/backends/cpu/fft) against a direct DFT in long double, against
// numpy.fft (tests/data/fft_fixtures.inc, from scripts/fft_fixtures.py), in round trips,
// and over strided, batched and in-place layouts.
//
// Error bound: max_k |X_k - DFT_k| <= kC * eps * max(1, log2 n) * ||x||_2, with eps that
// of the engine's precision; the direct DFT's own error (long double) is far below it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdio>
#include <limits>
#include <random>
#include <thread>
#include <vector>

#include "backends/cpu/fft/factor.h"
#include "backends/cpu/fft/fft.h"
#include "backends/cpu/fft/plan_cache.h"
#include "numr/error.h"

namespace {

using numr::cpu::fft::BatchDim;
using numr::cpu::fft::Direction;
using LC = std::complex<long double>;

constexpr double kC = 2.0;

template <class T>
double bound(int64_t n, double norm) {
  const double log_n = std::max(1.0, std::log2(static_cast<double>(n)));
  return kC * std::numeric_limits<T>::epsilon() * log_n * norm;
}

// The direct DFT in long double, from a table of the n roots exp(2 pi i q / n) (the
// product jk reduced modulo n exactly, by stepping).
class DirectDft {
 public:
  explicit DirectDft(int64_t n) : roots_(n) {
    constexpr long double kPi = 3.141592653589793238462643383279502884L;
    for (int64_t q = 0; q < n; ++q) {
      const long double a = 2.0L * kPi * static_cast<long double>(q) / static_cast<long double>(n);
      roots_[q] = {std::cos(a), std::sin(a)};
    }
  }
  // sum_j x_j exp(sign 2 pi i jk / n)
  template <class T>
  LC bin(const std::vector<std::complex<T>>& x, int64_t k, int sign) const {
    const int64_t n = static_cast<int64_t>(roots_.size());
    // With sign < 0 the sum is conj(sum_j conj(x_j) w^jk).
    const long double im_sign = sign > 0 ? 1 : -1;
    const int64_t step = k % n;
    LC s = 0;
    for (int64_t j = 0, q = 0; j < n; ++j) {
      s += LC(x[j].real(), im_sign * x[j].imag()) * roots_[q];
      q += step;
      if (q >= n) q -= n;
    }
    return {s.real(), im_sign * s.imag()};
  }

 private:
  std::vector<LC> roots_;
};

template <class T>
double l2(const std::vector<std::complex<T>>& x) {
  long double s = 0;
  for (auto v : x) s += static_cast<long double>(std::norm(v));
  return static_cast<double>(std::sqrt(s));
}

template <class T>
std::vector<std::complex<T>> random_complex(int64_t n, uint64_t seed) {
  std::mt19937_64 g(seed);
  std::normal_distribution<double> d;
  std::vector<std::complex<T>> x(n);
  for (auto& v : x) v = {static_cast<T>(d(g)), static_cast<T>(d(g))};
  return x;
}

template <class T>
std::vector<std::complex<T>> transform(const std::vector<std::complex<T>>& x, Direction dir) {
  const int64_t n = static_cast<int64_t>(x.size());
  std::vector<std::complex<T>> y(n);
  numr::cpu::fft::c2c<T>(n, 1, dir, x.data(), 1, n, y.data(), 1, n);
  return y;
}

// Bins checked: all of them for short lengths, 16 spread over the rest for long ones.
std::vector<int64_t> bins(int64_t n) {
  std::vector<int64_t> k;
  if (n <= 4096) {
    for (int64_t i = 0; i < n; ++i) k.push_back(i);
  } else {
    for (int64_t i = 0; i < 16; ++i) k.push_back((i * 7919 * (n / 16 + 1) + i) % n);
    k.push_back(n - 1);
  }
  return k;
}

// The largest error over the checked bins, relative to ||x||_2 / (eps log2 n).
template <class T>
double c2c_error(int64_t n, Direction dir) {
  const auto x = random_complex<T>(n, static_cast<uint64_t>(n) * 31 + (dir == Direction::Forward));
  const auto y = transform(x, dir);
  const DirectDft dft(n);
  double err = 0;
  for (int64_t k : bins(n)) {
    const LC ref = dft.bin(x, k, static_cast<int>(dir));
    err = std::max(err, static_cast<double>(std::abs(LC(y[k].real(), y[k].imag()) - ref)));
  }
  return err / bound<T>(n, l2(x)) * kC;
}

const std::vector<int64_t>& long_lengths() {
  static const std::vector<int64_t> n = {97,          128,   243,     257,
                                         625,         1000,  1009,    1024 * 27,
                                         4096 * 5,    65537, 1 << 20, 2 * 3 * 5 * 7 * 11 * 13,
                                         17 * 19 * 23};
  return n;
}

template <class T>
void check_against_direct(const char* name) {
  double worst = 0;
  for (Direction dir : {Direction::Forward, Direction::Inverse}) {
    std::vector<int64_t> lengths;
    for (int64_t n = 1; n <= 64; ++n) lengths.push_back(n);
    for (int64_t n : long_lengths()) lengths.push_back(n);
    for (int64_t n : lengths) {
      const double e = c2c_error<T>(n, dir);
      worst = std::max(worst, e);
      EXPECT_LE(e, kC) << name << " n=" << n << " dir=" << static_cast<int>(dir)
                       << " bluestein=" << numr::cpu::fft::use_bluestein(n);
    }
  }
  std::printf("[fft %s] max |X - DFT| / (eps log2 n ||x||) = %.3f\n", name, worst);
}

TEST(FftEngine, ComplexAgainstDirectDftDouble) { check_against_direct<double>("double"); }
TEST(FftEngine, ComplexAgainstDirectDftFloat) { check_against_direct<float>("float"); }

TEST(FftEngine, BothAlgorithmsAreExercised) {
  // The direct comparison covers odd butterflies (7, 11, 13) and Bluestein (97, 1009, ..).
  EXPECT_FALSE(numr::cpu::fft::use_bluestein(7 * 11 * 13));
  EXPECT_TRUE(numr::cpu::fft::use_bluestein(97));
  EXPECT_TRUE(numr::cpu::fft::use_bluestein(65537));
  EXPECT_EQ(numr::cpu::fft::next_smooth(2 * 1009 - 1), 2025);
}

template <class T>
void check_round_trip(const char* name) {
  double worst = 0;
  for (int64_t n : {1, 2, 3, 7, 16, 60, 97, 1000, 1009, 4096 * 5, 65537}) {
    const auto x = random_complex<T>(n, 7 + n);
    const auto y = transform(transform(x, Direction::Forward), Direction::Inverse);
    double err = 0;
    for (int64_t j = 0; j < n; ++j)
      err = std::max(err, static_cast<double>(std::abs(y[j] / static_cast<T>(n) - x[j])));
    // Two transforms, the second's error divided by n: within twice the bound on ||x||.
    const double rel = err / bound<T>(n, l2(x) / std::sqrt(static_cast<double>(n)));
    worst = std::max(worst, rel);
    EXPECT_LE(rel, 2.0) << name << " n=" << n;
  }
  std::printf("[fft %s] round trip: max |x' - x| / (kC eps log2 n ||x|| / sqrt n) = %.3f\n", name,
              worst);
}

TEST(FftEngine, RoundTripDouble) { check_round_trip<double>("double"); }
TEST(FftEngine, RoundTripFloat) { check_round_trip<float>("float"); }

// ---- numpy.fft fixtures ----

struct Fixture {
  int64_t n;
  std::vector<double> x, fft, ifft, r, rfft, h, irfft;
};

const std::vector<Fixture>& fixtures() {
  static const std::vector<Fixture> f = {
#include "data/fft_fixtures.inc"
  };
  return f;
}

std::vector<std::complex<double>> pairs(const std::vector<double>& v) {
  std::vector<std::complex<double>> z(v.size() / 2);
  for (size_t i = 0; i < z.size(); ++i) z[i] = {v[2 * i], v[2 * i + 1]};
  return z;
}

double max_diff(const std::vector<std::complex<double>>& a,
                const std::vector<std::complex<double>>& b) {
  double e = 0;
  for (size_t i = 0; i < a.size(); ++i) e = std::max(e, std::abs(a[i] - b[i]));
  return e;
}

TEST(FftEngine, MatchesNumpy) {
  ASSERT_FALSE(fixtures().empty());
  double worst = 0;
  for (const Fixture& f : fixtures()) {
    const int64_t n = f.n;
    const auto x = pairs(f.x);
    // numpy's own error adds to ours: both within the bound, so within twice it.
    const double tol = 2 * bound<double>(n, l2(x));
    const double e_fwd = max_diff(transform(x, Direction::Forward), pairs(f.fft));
    const double e_inv = max_diff(transform(x, Direction::Inverse), pairs(f.ifft));
    EXPECT_LE(e_fwd, tol) << "fft n=" << n;
    EXPECT_LE(e_inv, tol) << "ifft n=" << n;

    std::vector<std::complex<double>> rx(n);
    for (int64_t j = 0; j < n; ++j) rx[j] = f.r[j];
    std::vector<std::complex<double>> ry(n / 2 + 1);
    numr::cpu::fft::r2c<double>(n, 1, f.r.data(), 1, n, ry.data(), 1, n / 2 + 1);
    const double e_r = max_diff(ry, pairs(f.rfft));
    EXPECT_LE(e_r, 2 * bound<double>(n, l2(rx))) << "rfft n=" << n;

    const auto h = pairs(f.h);
    std::vector<double> out(n);
    numr::cpu::fft::c2r<double>(n, 1, h.data(), 1, n / 2 + 1, out.data(), 1, n);
    // The Hermitian sequence h begins has norm <= sqrt(2) ||h||.
    double e_c = 0;
    for (int64_t j = 0; j < n; ++j) e_c = std::max(e_c, std::abs(out[j] - f.irfft[j]));
    EXPECT_LE(e_c, 2 * bound<double>(n, std::sqrt(2.0) * l2(h))) << "irfft n=" << n;
    worst = std::max({worst, e_fwd / tol, e_inv / tol});
  }
  std::printf("[fft] vs numpy: max error / (2 kC eps log2 n ||x||) = %.3f\n", worst);
}

// ---- real transforms against the direct DFT ----

template <class T>
void check_real(const char* name) {
  double worst_f = 0, worst_i = 0;
  std::vector<int64_t> lengths;
  for (int64_t n = 1; n <= 64; ++n) lengths.push_back(n);
  for (int64_t n : {97, 98, 1000, 1009, 4096 * 5, 65537, 65538}) lengths.push_back(n);
  for (int64_t n : lengths) {
    const auto z = random_complex<T>(n, 99 + n);
    std::vector<T> x(n);
    std::vector<std::complex<T>> xc(n);
    for (int64_t j = 0; j < n; ++j) x[j] = z[j].real(), xc[j] = x[j];
    const int64_t h = n / 2 + 1;
    std::vector<std::complex<T>> y(h);
    numr::cpu::fft::r2c<T>(n, 1, x.data(), 1, n, y.data(), 1, h);
    const DirectDft dft(n);
    double err = 0;
    for (int64_t k : bins(n)) {
      if (k >= h) continue;
      const LC ref = dft.bin(xc, k, -1);
      err = std::max(err, static_cast<double>(std::abs(LC(y[k].real(), y[k].imag()) - ref)));
    }
    err /= bound<T>(n, l2(xc)) / kC;
    worst_f = std::max(worst_f, err);
    EXPECT_LE(err, kC) << name << " rfft n=" << n;

    // c2r of a spectrum with nonzero imaginary parts at 0 and n/2, which must be ignored:
    // the reference is the full Hermitian sequence built from the real parts there.
    auto spec = random_complex<T>(h, 5 + n);
    std::vector<std::complex<T>> full(n);
    for (int64_t k = 0; k < h; ++k) full[k] = spec[k];
    full[0] = spec[0].real();
    if (n % 2 == 0) full[n / 2] = spec[n / 2].real();
    for (int64_t k = 1; k < h; ++k)
      if (n - k >= h) full[n - k] = std::conj(spec[k]);
    std::vector<T> out(n);
    numr::cpu::fft::c2r<T>(n, 1, spec.data(), 1, h, out.data(), 1, n);
    double err_i = 0;
    for (int64_t j : bins(n)) {
      const LC ref = dft.bin(full, j, 1);
      err_i =
          std::max(err_i, static_cast<double>(std::abs(static_cast<long double>(out[j]) - ref)));
    }
    err_i /= bound<T>(n, l2(full)) / kC;
    worst_i = std::max(worst_i, err_i);
    EXPECT_LE(err_i, kC) << name << " irfft n=" << n;
  }
  std::printf("[fft %s] rfft: %.3f, irfft: %.3f (error / (eps log2 n ||x||))\n", name, worst_f,
              worst_i);
}

TEST(FftEngine, RealAgainstDirectDftDouble) { check_real<double>("double"); }
TEST(FftEngine, RealAgainstDirectDftFloat) { check_real<float>("float"); }

TEST(FftEngine, RealRoundTrip) {
  for (int64_t n : {1, 2, 3, 4, 5, 10, 11, 97, 128, 1001}) {
    const auto z = random_complex<double>(n, 3 * n);
    std::vector<double> x(n), back(n);
    for (int64_t j = 0; j < n; ++j) x[j] = z[j].real();
    std::vector<std::complex<double>> y(n / 2 + 1);
    numr::cpu::fft::r2c<double>(n, 1, x.data(), 1, n, y.data(), 1, n / 2 + 1);
    numr::cpu::fft::c2r<double>(n, 1, y.data(), 1, n / 2 + 1, back.data(), 1, n);
    double norm = 0;
    for (double v : x) norm += v * v;
    for (int64_t j = 0; j < n; ++j)
      EXPECT_NEAR(back[j] / n, x[j], 2 * bound<double>(n, std::sqrt(norm / n))) << "n=" << n;
  }
}

// ---- layouts: every sequence must equal the contiguous transform bit for bit ----

TEST(FftEngine, StridedBatchedAndInPlace) {
  for (int64_t n : {1, 12, 97, 256}) {
    const int64_t batch = 37;
    // x: [n, batch] row-major, so sequence b is a column: stride batch, distance 1.
    const auto x = random_complex<double>(n * batch, 11 + n);
    std::vector<std::complex<double>> y(n * batch), expect(n * batch);
    for (Direction dir : {Direction::Forward, Direction::Inverse}) {
      for (int64_t b = 0; b < batch; ++b) {
        std::vector<std::complex<double>> col(n);
        for (int64_t j = 0; j < n; ++j) col[j] = x[j * batch + b];
        const auto t = transform(col, dir);
        for (int64_t j = 0; j < n; ++j) expect[b * n + j] = t[j];  // rows of [batch, n]
      }
      // Columns in, rows out.
      numr::cpu::fft::c2c<double>(n, batch, dir, x.data(), batch, 1, y.data(), 1, n);
      EXPECT_EQ(y, expect) << "n=" << n;
      // Reversed sequences (negative stride) written reversed give the same rows flipped.
      std::vector<std::complex<double>> rev(n * batch);
      numr::cpu::fft::c2c<double>(n, batch, dir, x.data(), batch, 1, rev.data() + n - 1, -1, n);
      for (int64_t b = 0; b < batch; ++b)
        for (int64_t j = 0; j < n; ++j) EXPECT_EQ(rev[b * n + n - 1 - j], expect[b * n + j]);
      // In place over the columns.
      auto inplace = x;
      numr::cpu::fft::c2c<double>(n, batch, dir, inplace.data(), batch, 1, inplace.data(), batch,
                                  1);
      for (int64_t b = 0; b < batch; ++b)
        for (int64_t j = 0; j < n; ++j) EXPECT_EQ(inplace[j * batch + b], expect[b * n + j]);
    }
  }
}

TEST(FftEngine, TwoBatchDims) {
  // x: [3, n, 5] row-major, transformed along the middle dim into out: [5, 3, n].
  const int64_t n = 30, d0 = 3, d2 = 5;
  const auto x = random_complex<float>(d0 * n * d2, 4);
  std::vector<std::complex<float>> out(d0 * n * d2);
  const BatchDim dims[] = {{d0, n * d2, n}, {d2, 1, d0 * n}};
  numr::cpu::fft::c2c<float>(n, Direction::Forward, dims, x.data(), d2, out.data(), 1);
  for (int64_t a = 0; a < d0; ++a)
    for (int64_t c = 0; c < d2; ++c) {
      std::vector<std::complex<float>> seq(n);
      for (int64_t j = 0; j < n; ++j) seq[j] = x[(a * n + j) * d2 + c];
      const auto t = transform(seq, Direction::Forward);
      for (int64_t j = 0; j < n; ++j) EXPECT_EQ(out[(c * d0 + a) * n + j], t[j]);
    }
}

TEST(FftEngine, RealBatchedStrided) {
  for (int64_t n : {7, 16, 97}) {
    const int64_t batch = 9, h = n / 2 + 1;
    const auto z = random_complex<double>(n * batch, 17 + n);
    std::vector<double> x(n * batch);  // [n, batch]: columns are the sequences
    for (int64_t i = 0; i < n * batch; ++i) x[i] = z[i].real();
    std::vector<std::complex<double>> y(h * batch);  // [h, batch]
    numr::cpu::fft::r2c<double>(n, batch, x.data(), batch, 1, y.data(), batch, 1);
    std::vector<double> back(n * batch);  // [batch, n]
    numr::cpu::fft::c2r<double>(n, batch, y.data(), batch, 1, back.data(), 1, n);
    for (int64_t b = 0; b < batch; ++b) {
      std::vector<double> col(n), one(n);
      std::vector<std::complex<double>> t(h);
      for (int64_t j = 0; j < n; ++j) col[j] = x[j * batch + b];
      numr::cpu::fft::r2c<double>(n, 1, col.data(), 1, n, t.data(), 1, h);
      for (int64_t k = 0; k < h; ++k) EXPECT_EQ(y[k * batch + b], t[k]);
      numr::cpu::fft::c2r<double>(n, 1, t.data(), 1, h, one.data(), 1, n);
      for (int64_t j = 0; j < n; ++j) EXPECT_EQ(back[b * n + j], one[j]);
    }
  }
}

TEST(FftEngine, LargeBatchOverThePoolMatchesSerial) {
  // Enough sequences to be spread over the pool; each must match its lone transform.
  const int64_t n = 60, batch = 4000;
  const auto x = random_complex<double>(n * batch, 23);
  std::vector<std::complex<double>> y(n * batch);
  numr::cpu::fft::c2c<double>(n, batch, Direction::Forward, x.data(), 1, n, y.data(), 1, n);
  for (int64_t b = 0; b < batch; b += 97) {
    const std::vector<std::complex<double>> seq(x.begin() + b * n, x.begin() + (b + 1) * n);
    const auto t = transform(seq, Direction::Forward);
    for (int64_t j = 0; j < n; ++j) ASSERT_EQ(y[b * n + j], t[j]) << b;
  }
}

TEST(FftEngine, PlansSharedAcrossThreads) {
  // Threads asking for the same fresh plans at once get equal results.
  const int64_t n = 3 * 1009;
  const auto x = random_complex<double>(n, 5);
  std::vector<std::vector<std::complex<double>>> results(4);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] { results[t] = transform(x, Direction::Inverse); });
  for (auto& t : threads) t.join();
  for (int t = 1; t < 4; ++t) EXPECT_EQ(results[t], results[0]);
  EXPECT_LE(numr::cpu::fft::cached_plan_count(), 64);
}

TEST(FftEngine, EmptyBatchAndBadLength) {
  std::vector<std::complex<double>> x(4);
  numr::cpu::fft::c2c<double>(4, 0, Direction::Forward, x.data(), 1, 4, x.data(), 1, 4);
  EXPECT_THROW(
      numr::cpu::fft::c2c<double>(0, 1, Direction::Forward, x.data(), 1, 0, x.data(), 1, 0),
      numr::InvalidArgument);
}

}  // namespace
