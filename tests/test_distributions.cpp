// Random distributions (numr::random): at fixed seeds, the sample mean and variance against
// the true moments within 5 standard errors, a Kolmogorov-Smirnov test (continuous) or a
// chi-squared test (discrete) at the 0.001 level, the generator offsets of
// docs/semantics.md, agreement across backends, and argument errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <iostream>
#include <map>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include "core/backend.h"
#include "io_test_util.h"
#include "numr/distributions.h"
#include "numr/linalg.h"
#include "numr/ops.h"
#include "support/harness.h"

namespace numr {
namespace {

// ---- statistics computed here in double ----

std::vector<double> values(const Tensor& t) {
  return cast(to_device(t, Device::cpu()), DType::F64).to_vector<double>();
}

constexpr double kSigmas = 5.0;  // moment checks: |estimate - truth| <= 5 standard errors

// Mean within 5 SE (SE from the true variance) and variance within 5 SE (SE estimated from
// the sample's fourth central moment).
void expect_moments(const std::vector<double>& x, double mean, double variance,
                    const std::string& what) {
  const double n = double(x.size());
  double m = 0;
  for (double v : x) m += v;
  m /= n;
  double m2 = 0, m4 = 0;
  for (double v : x) {
    const double d = (v - m) * (v - m);
    m2 += d;
    m4 += d * d;
  }
  const double s2 = m2 / (n - 1);
  m4 /= n;
  EXPECT_LE(std::abs(m - mean), kSigmas * std::sqrt(variance / n))
      << what << ": sample mean " << m << " vs " << mean;
  const double se_var = std::sqrt(std::max(m4 - s2 * s2, 0.0) / n);
  EXPECT_LE(std::abs(s2 - variance), kSigmas * se_var)
      << what << ": sample variance " << s2 << " vs " << variance;
}

// The Kolmogorov-Smirnov statistic sqrt(n) D against 1.95, its 0.001 critical value.
constexpr double kKsCritical = 1.95;
double ks_statistic(std::vector<double> x, const std::function<double(double)>& cdf) {
  std::sort(x.begin(), x.end());
  const double n = double(x.size());
  double d = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double f = cdf(x[i]);
    d = std::max({d, f - double(i) / n, double(i + 1) / n - f});
  }
  return std::sqrt(n) * d;
}
void expect_ks(const std::vector<double>& x, const std::function<double(double)>& cdf,
               const std::string& what) {
  const double ks = ks_statistic(x, cdf);
  std::printf("KS %-36s sqrt(n) D = %.3f (critical %.2f)\n", what.c_str(), ks, kKsCritical);
  EXPECT_LT(ks, kKsCritical) << what;
}

// Chi-squared critical value at level 0.001 (Wilson-Hilferty, z = 3.09).
double chi2_critical(int df) {
  const double a = 2.0 / (9.0 * df);
  return df * std::pow(1.0 - a + 3.09 * std::sqrt(a), 3.0);
}
// Pearson's statistic of observed counts against expected ones, with cells of expected
// count below 5 pooled into their neighbour.
void expect_chi2(const std::vector<double>& observed, const std::vector<double>& expected,
                 const std::string& what) {
  double stat = 0, o = 0, e = 0;
  int cells = 0;
  for (size_t i = 0; i < observed.size(); ++i) {
    o += observed[i];
    e += expected[i];
    if (e >= 5 || i + 1 == observed.size()) {
      if (e > 0) {
        stat += (o - e) * (o - e) / e;
        ++cells;
      } else {
        EXPECT_EQ(o, 0) << what << ": counts where the probability is 0";
      }
      o = e = 0;
    }
  }
  const double crit = chi2_critical(std::max(cells - 1, 1));
  std::printf("chi2 %-35s %.2f over %d cells (critical %.2f)\n", what.c_str(), stat, cells, crit);
  EXPECT_LT(stat, crit) << what;
}
// Counts of the integer values 0 .. k-1 in x (values outside fail).
std::vector<double> counts(const std::vector<double>& x, int k) {
  std::vector<double> c(size_t(k), 0.0);
  for (double v : x) {
    EXPECT_EQ(v, std::floor(v));
    if (v < 0 || v >= k) {
      ADD_FAILURE() << "value " << v << " outside [0, " << k << ")";
      continue;
    }
    c[size_t(v)] += 1;
  }
  return c;
}

// ---- CDFs ----

double normal_cdf(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }

// Regularised lower incomplete gamma P(a, x): its series below a + 1, else 1 - the
// continued fraction of Q (modified Lentz).
double gamma_p(double a, double x) {
  if (x <= 0) return 0;
  const double lg = std::lgamma(a);
  if (x < a + 1) {
    double term = 1 / a, s = term;
    for (int n = 1; n < 10000; ++n) {
      term *= x / (a + n);
      s += term;
      if (std::abs(term) < 1e-16 * std::abs(s)) break;
    }
    return s * std::exp(-x + a * std::log(x) - lg);
  }
  double b = x + 1 - a, c = 1e300, d = 1 / b, h = d;
  for (int i = 1; i < 10000; ++i) {
    const double an = -i * (i - a);
    b += 2;
    d = an * d + b;
    if (std::abs(d) < 1e-300) d = 1e-300;
    c = b + an / c;
    if (std::abs(c) < 1e-300) c = 1e-300;
    d = 1 / d;
    const double del = d * c;
    h *= del;
    if (std::abs(del - 1) < 1e-16) break;
  }
  return 1 - std::exp(-x + a * std::log(x) - lg) * h;
}

// Continued fraction of the incomplete beta (modified Lentz).
double beta_cf(double a, double b, double x) {
  double c = 1, d = 1 - (a + b) * x / (a + 1);
  if (std::abs(d) < 1e-300) d = 1e-300;
  d = 1 / d;
  double h = d;
  for (int m = 1; m < 10000; ++m) {
    const double m2 = 2.0 * m;
    double aa = m * (b - m) * x / ((a + m2 - 1) * (a + m2));
    d = 1 + aa * d;
    if (std::abs(d) < 1e-300) d = 1e-300;
    c = 1 + aa / c;
    if (std::abs(c) < 1e-300) c = 1e-300;
    d = 1 / d;
    h *= d * c;
    aa = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1));
    d = 1 + aa * d;
    if (std::abs(d) < 1e-300) d = 1e-300;
    c = 1 + aa / c;
    if (std::abs(c) < 1e-300) c = 1e-300;
    d = 1 / d;
    const double del = d * c;
    h *= del;
    if (std::abs(del - 1) < 1e-16) break;
  }
  return h;
}
// Regularised incomplete beta I_x(a, b).
double beta_i(double a, double b, double x) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const double front = std::exp(std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) +
                                a * std::log(x) + b * std::log1p(-x));
  if (x < (a + 1) / (a + b + 2)) return front * beta_cf(a, b, x) / a;
  return 1 - front * beta_cf(b, a, 1 - x) / b;
}
double student_t_cdf(double df, double t) {
  const double tail = 0.5 * beta_i(df / 2, 0.5, df / (df + t * t));
  return t > 0 ? 1 - tail : tail;
}

// ---- samples ----

constexpr int64_t kN = 100000;

Tensor full64(double v, int64_t n = kN) { return full({n}, v, DType::F64); }

TEST(Distributions, ExponentialMomentsAndKs) {
  Generator g(11);
  const double rate = 2.5;
  const auto x = values(random::exponential(full64(rate), g));
  expect_moments(x, 1 / rate, 1 / (rate * rate), "exponential(2.5)");
  expect_ks(
      x, [&](double v) { return v <= 0 ? 0 : -std::expm1(-rate * v); }, "exponential(2.5)");
}

TEST(Distributions, LaplaceMomentsAndKs) {
  Generator g(12);
  const double loc = -1.0, scale = 0.7;
  const auto x = values(random::laplace(full64(loc), full64(scale), g));
  expect_moments(x, loc, 2 * scale * scale, "laplace(-1, 0.7)");
  expect_ks(
      x,
      [&](double v) {
        const double z = (v - loc) / scale;
        return z < 0 ? 0.5 * std::exp(z) : 1 - 0.5 * std::exp(-z);
      },
      "laplace(-1, 0.7)");
}

TEST(Distributions, GammaMomentsAndKs) {
  for (double alpha : {0.3, 1.0, 2.5, 40.0}) {
    Generator g(13);
    const double rate = 1.5;
    const auto x = values(random::gamma(full64(alpha), full64(rate), g));
    const std::string what = "gamma(" + std::to_string(alpha) + ", 1.5)";
    expect_moments(x, alpha / rate, alpha / (rate * rate), what);
    expect_ks(
        x, [&](double v) { return gamma_p(alpha, rate * v); }, what);
  }
}

TEST(Distributions, GammaF32) {
  Generator g(14);
  const auto x = values(random::gamma(full({kN}, 0.6, DType::F32), g));
  expect_moments(x, 0.6, 0.6, "gamma(0.6) F32");
  expect_ks(
      x, [](double v) { return gamma_p(0.6, v); }, "gamma(0.6) F32");
}

TEST(Distributions, HalfPrecisionParameters) {
  // F16 and BF16 parameters are sampled in F32 and rounded once.
  for (DType t : {DType::F16, DType::BF16}) {
    Generator g(140), h(140);
    const Tensor x = random::exponential(full({kN}, 2.0, t), g);
    ASSERT_EQ(x.dtype(), t);
    const Tensor ref = random::exponential(full({kN}, 2.0, DType::F32), h);
    EXPECT_EQ(values(x), values(cast(ref, t)));
    expect_moments(values(x), 0.5, 0.25,
                   std::string("exponential(2) ") + std::string(dtype_name(t)));
  }
}

TEST(Distributions, BetaMomentsAndKs) {
  for (auto [a, b] : std::vector<std::pair<double, double>>{{0.5, 0.5}, {2.0, 5.0}}) {
    Generator g(15);
    const auto x = values(random::beta(full64(a), full64(b), g));
    const std::string what = "beta(" + std::to_string(a) + ", " + std::to_string(b) + ")";
    expect_moments(x, a / (a + b), a * b / ((a + b) * (a + b) * (a + b + 1)), what);
    expect_ks(
        x, [&](double v) { return beta_i(a, b, v); }, what);
  }
}

TEST(Distributions, ChiSquaredMomentsAndKs) {
  Generator g(16);
  const double k = 3.0;
  const auto x = values(random::chi_squared(full64(k), g));
  expect_moments(x, k, 2 * k, "chi_squared(3)");
  expect_ks(
      x, [&](double v) { return gamma_p(k / 2, v / 2); }, "chi_squared(3)");
}

TEST(Distributions, StudentTMomentsAndKs) {
  Generator g(17);
  // df = 9: the fourth moment exists, so the variance's standard error does.
  const double df = 9.0;
  const auto x = values(random::student_t(full64(df), g));
  expect_moments(x, 0, df / (df - 2), "student_t(9)");
  expect_ks(
      x, [&](double v) { return student_t_cdf(df, v); }, "student_t(9)");
  Generator g2(18);
  const auto y = values(random::student_t(full64(1.5), g2));
  expect_ks(
      y, [&](double v) { return student_t_cdf(1.5, v); }, "student_t(1.5)");
}

TEST(Distributions, FisherFMomentsAndKs) {
  Generator g(19);
  const double d1 = 5.0, d2 = 20.0;
  const auto x = values(random::fisher_f(full64(d1), full64(d2), g));
  const double mean = d2 / (d2 - 2);
  const double var = 2 * d2 * d2 * (d1 + d2 - 2) / (d1 * (d2 - 2) * (d2 - 2) * (d2 - 4));
  expect_moments(x, mean, var, "fisher_f(5, 20)");
  expect_ks(
      x, [&](double v) { return v <= 0 ? 0 : beta_i(d1 / 2, d2 / 2, d1 * v / (d1 * v + d2)); },
      "fisher_f(5, 20)");
}

TEST(Distributions, BernoulliChi2) {
  Generator g(20);
  const double p = 0.3;
  const auto x = values(random::bernoulli(full64(p), g));
  expect_moments(x, p, p * (1 - p), "bernoulli(0.3)");
  expect_chi2(counts(x, 2), {kN * (1 - p), kN * p}, "bernoulli(0.3)");
  Generator g2(21);
  const auto ends = values(random::bernoulli(Tensor::from_vector({0.0, 1.0}, {2}), g2));
  EXPECT_EQ(ends, (std::vector<double>{0.0, 1.0}));
}

std::vector<double> poisson_pmf(double rate, int k) {
  std::vector<double> p(static_cast<size_t>(k));
  for (int i = 0; i < k; ++i)
    p[size_t(i)] = std::exp(-rate + i * std::log(rate) - std::lgamma(i + 1.0));
  return p;
}
std::vector<double> binomial_pmf(double n, double p, int k) {
  std::vector<double> out(size_t(k), 0.0);
  for (int i = 0; i <= int(n) && i < k; ++i)
    out[size_t(i)] = std::exp(std::lgamma(n + 1) - std::lgamma(i + 1.0) - std::lgamma(n - i + 1) +
                              i * std::log(p) + (n - i) * std::log1p(-p));
  return out;
}
std::vector<double> scaled(std::vector<double> p, double n) {
  for (double& v : p) v *= n;
  return p;
}

TEST(Distributions, PoissonMomentsAndChi2) {
  // 3.5 takes the inversion path, 10 and 75 PTRS.
  for (double rate : {3.5, 10.0, 75.0}) {
    Generator g(22);
    const auto x = values(random::poisson(full64(rate), g));
    const std::string what = "poisson(" + std::to_string(rate) + ")";
    expect_moments(x, rate, rate, what);
    const int k = int(rate * 3 + 30);
    expect_chi2(counts(x, k), scaled(poisson_pmf(rate, k), kN), what);
  }
  Generator g(23);
  const auto big = values(random::poisson(full64(1e5), g));
  expect_moments(big, 1e5, 1e5, "poisson(1e5)");
  Generator g2(24);
  const auto f32 = values(random::poisson(full({kN}, 200.0, DType::F32), g2));
  expect_moments(f32, 200, 200, "poisson(200) F32");
  Generator g3(25);
  EXPECT_EQ(values(random::poisson(full64(0.0, 16), g3)), std::vector<double>(16, 0.0));
}

TEST(Distributions, PoissonMixedRates) {
  // One tensor with rates on both sides of 10: each element follows its own rate.
  Generator g(26);
  std::vector<double> rates(2 * kN);
  for (size_t i = 0; i < rates.size(); ++i) rates[i] = i % 2 ? 40.0 : 2.0;
  const auto x = values(random::poisson(Tensor::from_vector(rates, {2 * kN}), g));
  std::vector<double> lo, hi;
  for (size_t i = 0; i < x.size(); ++i) (i % 2 ? hi : lo).push_back(x[i]);
  expect_moments(lo, 2, 2, "poisson(2) mixed");
  expect_moments(hi, 40, 40, "poisson(40) mixed");
  expect_chi2(counts(hi, 100), scaled(poisson_pmf(40, 100), kN), "poisson(40) mixed");
}

TEST(Distributions, BinomialMomentsAndChi2) {
  // Inversion (n p < 10), BTRS (n p >= 10), and the reflections for p > 1/2.
  for (auto [n, p] : std::vector<std::pair<double, double>>{
           {20, 0.3}, {10, 0.75}, {200, 0.4}, {100, 0.9}, {1000, 0.02}}) {
    Generator g(27);
    const auto x = values(random::binomial(full64(n), full64(p), g));
    const std::string what = "binomial(" + std::to_string(int(n)) + ", " + std::to_string(p) + ")";
    expect_moments(x, n * p, n * p * (1 - p), what);
    expect_chi2(counts(x, int(n) + 1), scaled(binomial_pmf(n, p, int(n) + 1), kN), what);
  }
  Generator g(28);
  const auto big = values(random::binomial(full64(1e6), full64(0.3), g));
  expect_moments(big, 3e5, 1e6 * 0.3 * 0.7, "binomial(1e6, 0.3)");
  Generator g2(29);
  const auto ends = values(random::binomial(Tensor::from_vector({0.0, 7.0, 7.0}, {3}),
                                            Tensor::from_vector({0.5, 0.0, 1.0}, {3}), g2));
  EXPECT_EQ(ends, (std::vector<double>{0.0, 0.0, 7.0}));
}

TEST(Distributions, MultinomialWithReplacement) {
  const std::vector<double> w = {0.1, 0.0, 0.3, 0.6, 1.0};  // unnormalised, one zero
  const double total = 2.0;
  Generator g(30);
  const Tensor probs = Tensor::from_vector(w, {1, 5});
  const Tensor s = random::multinomial(probs, kN, true, g);
  ASSERT_EQ(s.dtype(), DType::I64);
  ASSERT_EQ(s.shape(), (Shape{1, kN}));
  std::vector<double> expected;
  for (double v : w) expected.push_back(kN * v / total);
  expect_chi2(counts(values(s), 5), expected, "multinomial with replacement");
}

TEST(Distributions, MultinomialWithoutReplacement) {
  // Each row holds distinct categories of non-zero weight; the first draw follows the
  // weights.
  const std::vector<double> w = {1.0, 0.0, 2.0, 3.0, 4.0};
  const int64_t rows = 20000;
  std::vector<double> tiled;
  for (int64_t r = 0; r < rows; ++r) tiled.insert(tiled.end(), w.begin(), w.end());
  Generator g(31);
  const Tensor s = random::multinomial(Tensor::from_vector(tiled, {rows, 5}), 3, false, g);
  ASSERT_EQ(s.shape(), (Shape{rows, 3}));
  const std::vector<int64_t> v = s.to_vector<int64_t>();
  std::vector<double> first(5, 0.0);
  for (int64_t r = 0; r < rows; ++r) {
    const std::set<int64_t> row(v.begin() + r * 3, v.begin() + r * 3 + 3);
    EXPECT_EQ(row.size(), 3u);
    EXPECT_EQ(row.count(1), 0u);
    first[size_t(v[size_t(r * 3)])] += 1;
  }
  std::vector<double> expected;
  for (double x : w) expected.push_back(rows * x / 10.0);
  expect_chi2(first, expected, "multinomial without replacement, first");
}

TEST(Distributions, RandpermUniform) {
  Generator g(32);
  const int trials = 12000;
  std::map<std::vector<int64_t>, double> seen;
  for (int t = 0; t < trials; ++t) seen[random::randperm(4, g).to_vector<int64_t>()] += 1;
  std::vector<int64_t> p = {0, 1, 2, 3};
  std::vector<double> obs, expected;
  do {
    obs.push_back(seen.count(p) ? seen[p] : 0.0);
    expected.push_back(trials / 24.0);
  } while (std::next_permutation(p.begin(), p.end()));
  EXPECT_EQ(seen.size(), 24u);
  expect_chi2(obs, expected, "randperm(4) over 24 orders");
  std::vector<int64_t> big = random::randperm(100000, g).to_vector<int64_t>();
  std::sort(big.begin(), big.end());
  std::vector<int64_t> iota(100000);
  std::iota(iota.begin(), iota.end(), 0);
  EXPECT_EQ(big, iota);
  EXPECT_EQ(random::randperm(0, g).numel(), 0);
}

TEST(Distributions, MultivariateNormal) {
  const Tensor mean = Tensor::from_vector({1.0, -2.0, 0.5}, {3});
  const std::vector<double> c = {4.0, 1.2, -0.6, 1.2, 2.0, 0.3, -0.6, 0.3, 1.0};
  const Tensor cov = Tensor::from_vector(c, {3, 3});
  Generator g(33);
  const Tensor x = random::multivariate_normal(mean, cov, std::nullopt, {kN}, g);
  ASSERT_EQ(x.shape(), (Shape{kN, 3}));
  const auto v = values(x);
  const std::vector<double> mu = {1.0, -2.0, 0.5};
  for (int i = 0; i < 3; ++i) {
    std::vector<double> col;
    for (int64_t r = 0; r < kN; ++r) col.push_back(v[size_t(r * 3 + i)]);
    const double sd = std::sqrt(c[size_t(i * 4)]);
    expect_moments(col, mu[size_t(i)], c[size_t(i * 4)], "mvn marginal " + std::to_string(i));
    expect_ks(
        col, [&](double y) { return normal_cdf((y - mu[size_t(i)]) / sd); },
        "mvn marginal " + std::to_string(i));
  }
  // Covariances: the sample covariance of each pair within 5 standard errors
  // (SE = sqrt((c_ii c_jj + c_ij^2) / n) for a normal pair).
  for (int i = 0; i < 3; ++i) {
    for (int j = i + 1; j < 3; ++j) {
      double s = 0;
      for (int64_t r = 0; r < kN; ++r)
        s += (v[size_t(r * 3 + i)] - mu[size_t(i)]) * (v[size_t(r * 3 + j)] - mu[size_t(j)]);
      s /= double(kN);
      const double cij = c[size_t(i * 3 + j)];
      const double se = std::sqrt((c[size_t(i * 4)] * c[size_t(j * 4)] + cij * cij) / kN);
      EXPECT_LE(std::abs(s - cij), kSigmas * se) << "cov " << i << j;
    }
  }
  // scale_tril = cholesky(cov) gives the same samples at the same seed.
  Generator g2(33);
  const Tensor l = linalg::cholesky(cov);
  const Tensor y = random::multivariate_normal(mean, std::nullopt, l, {kN}, g2);
  EXPECT_EQ(values(y), v);
  // Batches: mean [2, 3] with one cov -> sample_shape + [2, 3].
  Generator g3(34);
  const Tensor batch =
      random::multivariate_normal(stack({mean, mean * 2.0}, 0), cov, std::nullopt, {4, 5}, g3);
  EXPECT_EQ(batch.shape(), (Shape{4, 5, 2, 3}));
}

// ---- generator offsets and reproducibility ----

TEST(Distributions, RoundZeroIsTheCallersStream) {
  // exponential reads one uniform per element at the generator's offset.
  Generator g(40), h(40);
  g.set_offset(1000);
  h.set_offset(1000);
  const Tensor rate = Tensor::from_vector({0.5, 1.0, 2.0, 4.0}, {4});
  const Tensor x = random::exponential(rate, g);
  const Tensor u = rand({4}, DType::F64, Device::cpu(), h);
  EXPECT_EQ(values(x), values(-log1p(-u) / rate));
  EXPECT_EQ(g.offset(), h.offset());
  Generator b(41), c(41);
  EXPECT_EQ(
      values(random::bernoulli(full64(0.5, 64), b)),
      values(cast(lt(rand({64}, DType::F64, Device::cpu(), c), full64(0.5, 64)), DType::F64)));
}

TEST(Distributions, OffsetsAdvanceByDocumentedCounts) {
  // Draws per element and round (docs/semantics.md): the advance does not depend on how
  // many rejection rounds ran.
  const int64_t n = 1000;
  const Tensor p = full64(0.5, n), two = full64(2.0, n), big = full64(50.0, n);
  struct Case {
    std::string name;
    std::function<void(Generator&)> run;
    uint64_t advance;
  };
  const std::vector<Case> cases = {
      {"exponential", [&](Generator& g) { random::exponential(two, g); }, n},
      {"laplace", [&](Generator& g) { random::laplace(p, two, g); }, n},
      {"gamma", [&](Generator& g) { random::gamma(p, g); }, 3 * n},
      {"beta", [&](Generator& g) { random::beta(p, two, g); }, 6 * n},
      {"chi_squared", [&](Generator& g) { random::chi_squared(two, g); }, 3 * n},
      {"student_t", [&](Generator& g) { random::student_t(two, g); }, 4 * n},
      {"fisher_f", [&](Generator& g) { random::fisher_f(two, big, g); }, 6 * n},
      {"bernoulli", [&](Generator& g) { random::bernoulli(p, g); }, n},
      {"poisson", [&](Generator& g) { random::poisson(big, g); }, 3 * n},
      {"binomial", [&](Generator& g) { random::binomial(big, p, g); }, 3 * n},
      {"multinomial",
       [&](Generator& g) {
         random::multinomial(reshape(p, {10, 100}), 7, true, g);
       },
       70},
      {"multinomial w/o",
       [&](Generator& g) {
         random::multinomial(reshape(p, {10, 100}), 7, false, g);
       },
       n},
      {"randperm", [&](Generator& g) { random::randperm(n, g); }, 2 * n},
      {"latin_hypercube", [&](Generator& g) { random::latin_hypercube(100, 10, g); }, 3 * n},
      {"sobol scrambled", [&](Generator& g) { random::sobol(8, 10, g); }, 10},
      {"multivariate_normal",
       [&](Generator& g) {
         random::multivariate_normal(full64(0.0, 4), eye(4, std::nullopt, DType::F64), std::nullopt,
                                     {250}, g);
       },
       n},
  };
  for (const Case& c : cases) {
    for (uint64_t seed : {1u, 2u, 3u}) {
      Generator g(seed);
      g.set_offset(77);
      c.run(g);
      EXPECT_EQ(g.offset(), 77 + c.advance) << c.name;
    }
  }
}

TEST(Distributions, SameSeedSameNumbers) {
  const Tensor a = full64(0.7, 500), n = full64(30.0, 500);
  for (int rep = 0; rep < 2; ++rep) {
    Generator g1(99), g2(99), g3(100);
    const auto x1 = values(random::gamma(a, g1));
    const auto x2 = values(random::gamma(a, g2));
    const auto x3 = values(random::gamma(a, g3));
    EXPECT_EQ(x1, x2);
    EXPECT_NE(x1, x3);
    EXPECT_EQ(values(random::binomial(n, a, g1)), values(random::binomial(n, a, g2)));
    EXPECT_EQ(values(random::poisson(n, g1)), values(random::poisson(n, g2)));
  }
  // An element's sample depends only on its own parameter and position: changing the other
  // elements' parameters (and so their rejection rounds) leaves it as it was.
  std::vector<double> a1(200, 2.0), a2(200, 2.0);
  for (size_t i = 1; i < a2.size(); i += 2) a2[i] = 0.2;
  Generator h1(5), h2(5);
  const auto s1 = values(random::gamma(Tensor::from_vector(a1, {200}), h1));
  const auto s2 = values(random::gamma(Tensor::from_vector(a2, {200}), h2));
  for (size_t i = 0; i < s1.size(); i += 2) EXPECT_EQ(s1[i], s2[i]) << i;
}

// ---- across backends ----

TEST(Distributions, BackendsAgreeWithCpu) {
  std::vector<Device> others;
  for (const test::TestDevice& d : test::test_devices())
    if (d.available && d.device != Device::cpu()) others.push_back(d.device);
  if (others.empty()) GTEST_SKIP() << "no CUDA or WebGPU device";
  for (Device dev : others) {
    for (DType t : {DType::F32, DType::F64}) {
      if (!backend_for(dev).supports_dtype(t)) continue;
      auto on = [&](const Tensor& x, Device d) { return to_device(cast(x, t), d); };
      const Tensor a = Tensor::from_vector({0.3, 1.0, 2.5, 40.0, 7.0, 12.0}, {6});
      const Tensor p = Tensor::from_vector({0.1, 0.5, 0.9, 0.3, 0.6, 0.05}, {6});
      const Tensor cnt = Tensor::from_vector({5.0, 30.0, 200.0, 7.0, 1000.0, 3.0}, {6});
      auto run = [&](Device d) {
        Generator g(2026);
        std::vector<std::vector<double>> out;
        out.push_back(values(random::gamma(on(a, d), g)));
        out.push_back(values(random::beta(on(a, d), on(p, d) * 4.0, g)));
        out.push_back(values(random::poisson(on(a, d) * 3.0, g)));
        out.push_back(values(random::binomial(on(cnt, d), on(p, d), g)));
        out.push_back(values(random::student_t(on(a, d), g)));
        out.push_back(values(random::laplace(on(a, d), on(p, d), g)));
        // The index results are I64, which some backends (WebGPU) lack: compared where held.
        if (backend_for(dev).supports_dtype(DType::I64)) {
          out.push_back(values(random::multinomial(on(p, d), 4, false, g)));
          out.push_back(values(random::randperm(50, g, d)));
        }
        return out;
      };
      if (!backend_for(dev).supports_dtype(DType::I64))
        std::cout << "[  SKIPPED ] multinomial and randperm on " << dev.str()
                  << ": the backend has no I64\n";
      const auto cpu = run(Device::cpu());
      const auto got = run(dev);
      for (size_t i = 0; i < cpu.size(); ++i)
        for (size_t j = 0; j < cpu[i].size(); ++j)
          EXPECT_NEAR(got[i][j], cpu[i][j], 1e-5 * std::max(1.0, std::abs(cpu[i][j])))
              << dev.str() << " " << dtype_name(t) << " sampler " << i << " element " << j;
    }
  }
}

// ---- quasi-random ----

#include "data/qmc_oracle.inc"

TEST(QuasiRandom, SobolMatchesScipy) {
  const auto x = random::sobol(kQmcPoints, kSobolRefDims).to_vector<double>();
  for (int i = 0; i < kQmcPoints; ++i)
    for (size_t c = 0; c < std::size(kSobolCols); ++c)
      EXPECT_EQ(x[size_t(i * kSobolRefDims + kSobolCols[c])], kSobolRef[i][c])
          << "point " << i << " dim " << kSobolCols[c];
  const auto f32 = random::sobol(8, 2, DType::F32).to_vector<float>();
  EXPECT_EQ(f32[2], 0.5f);
  EXPECT_EQ(f32[4], 0.75f);
}

TEST(QuasiRandom, SobolScrambledKeepsStrata) {
  // A digital shift keeps the (0, m, 1)-net property of each coordinate: with n = 2^m, each
  // interval [j / n, (j + 1) / n) holds one point.
  Generator g(50);
  const int64_t n = 256, d = 16;
  const auto x = random::sobol(n, d, g).to_vector<double>();
  const auto plain = random::sobol(n, d).to_vector<double>();
  EXPECT_NE(x, plain);
  for (int64_t j = 0; j < d; ++j) {
    std::vector<int> hits(size_t(n), 0);
    for (int64_t i = 0; i < n; ++i) hits[size_t(x[size_t(i * d + j)] * double(n))] += 1;
    EXPECT_EQ(*std::min_element(hits.begin(), hits.end()), 1) << "dim " << j;
  }
}

TEST(QuasiRandom, HaltonMatchesScipy) {
  const auto x = random::halton(kQmcPoints, 12).to_vector<double>();
  for (int i = 0; i < kQmcPoints; ++i)
    for (int c = 0; c < 12; ++c)
      EXPECT_NEAR(x[size_t(i * 12 + c)], kHaltonRef[i][c], 1e-15) << "point " << i << " dim " << c;
}

TEST(QuasiRandom, LatinHypercubeStrata) {
  Generator g(51);
  const int64_t n = 500, d = 7;
  const Tensor t = random::latin_hypercube(n, d, g);
  ASSERT_EQ(t.shape(), (Shape{n, d}));
  const auto x = t.to_vector<double>();
  for (int64_t j = 0; j < d; ++j) {
    std::vector<int> hits(size_t(n), 0);
    std::vector<double> col;
    for (int64_t i = 0; i < n; ++i) {
      hits[size_t(x[size_t(i * d + j)] * double(n))] += 1;
      col.push_back(x[size_t(i * d + j)]);
    }
    EXPECT_EQ(*std::min_element(hits.begin(), hits.end()), 1) << "dim " << j;
  }
  // The points of one column are uniform over [0, 1).
  Generator g2(52);
  const auto big = random::latin_hypercube(kN, 1, g2).to_vector<double>();
  expect_ks(
      big, [](double v) { return std::clamp(v, 0.0, 1.0); }, "latin_hypercube column");
}

// ---- errors ----

using io_test::expect_error;

TEST(Distributions, BadArguments) {
  Generator g(60);
  const Tensor one = full64(1.0, 3), neg = full64(-1.0, 3), zero = full64(0.0, 3);
  const Tensor nan = full64(std::nan(""), 3);
  const Tensor ints = full({3}, 1.0, DType::I64);
  expect_error<InvalidArgument>(
      "exponential", [&] { random::exponential(zero, g); }, "rate");
  expect_error<InvalidArgument>(
      "exponential", [&] { random::exponential(nan, g); }, "rate");
  expect_error<UnsupportedDType>("exponential", [&] { random::exponential(ints, g); });
  expect_error<InvalidArgument>(
      "laplace", [&] { random::laplace(one, neg, g); }, "scale");
  expect_error<InvalidArgument>(
      "gamma", [&] { random::gamma(neg, g); }, "concentration");
  expect_error<InvalidArgument>(
      "gamma", [&] { random::gamma(one, zero, g); }, "rate");
  expect_error<InvalidArgument>("beta", [&] { random::beta(one, neg, g); });
  expect_error<InvalidArgument>(
      "chi_squared", [&] { random::chi_squared(zero, g); }, "df");
  expect_error<InvalidArgument>(
      "student_t", [&] { random::student_t(neg, g); }, "df");
  expect_error<InvalidArgument>(
      "fisher_f", [&] { random::fisher_f(one, zero, g); }, "d2");
  expect_error<InvalidArgument>(
      "bernoulli", [&] { random::bernoulli(one * 1.5, g); }, "[0, 1]");
  expect_error<InvalidArgument>(
      "bernoulli", [&] { random::bernoulli(nan, g); }, "[0, 1]");
  expect_error<InvalidArgument>(
      "poisson", [&] { random::poisson(neg, g); }, "rate");
  expect_error<InvalidArgument>(
      "binomial", [&] { random::binomial(one * 2.5, one * 0.5, g); }, "count");
  expect_error<InvalidArgument>(
      "binomial", [&] { random::binomial(neg, one * 0.5, g); }, "count");
  expect_error<InvalidArgument>(
      "binomial", [&] { random::binomial(one * INFINITY, one * 0.5, g); }, "count");
  expect_error<InvalidArgument>(
      "binomial", [&] { random::binomial(one, one * 2.0, g); }, "prob");
  expect_error<BroadcastError>("gamma", [&] { random::gamma(full64(1.0, 3), full64(1.0, 4), g); });
  expect_error<DTypeMismatch>("beta", [&] { random::beta(one, full({3}, 1.0, DType::F32), g); });
  expect_error<InvalidArgument>("gamma", [&] { random::gamma(Tensor(), g); });
  expect_error<InvalidArgument>(
      "multinomial", [&] { random::multinomial(neg, 1, true, g); }, ">= 0");
  expect_error<InvalidArgument>(
      "multinomial", [&] { random::multinomial(zero, 1, true, g); }, "weight > 0");
  expect_error<InvalidArgument>(
      "multinomial",
      [&] {
        random::multinomial(full64(1.0, 8).reshape({2, 2, 2}), 1, true, g);
      },
      "[K] or [B, K]");
  expect_error<InvalidArgument>(
      "multinomial",
      [&] {
        random::multinomial(Tensor::from_vector({1.0, 0.0, 1.0}, {3}), 3, false, g);
      },
      "non-zero");
  expect_error<InvalidArgument>(
      "multinomial", [&] { random::multinomial(one, 4, false, g); }, "categories");
  expect_error<InvalidArgument>("multinomial", [&] { random::multinomial(one, -1, true, g); });
  expect_error<InvalidArgument>("randperm", [&] { random::randperm(-1, g); });
  const Tensor mean = full64(0.0, 3);
  expect_error<InvalidArgument>(
      "multivariate_normal",
      [&] { random::multivariate_normal(mean, std::nullopt, std::nullopt, {2}, g); },
      "exactly one");
  expect_error<ShapeMismatch>("multivariate_normal", [&] {
    random::multivariate_normal(mean, eye(2, std::nullopt, DType::F64), std::nullopt, {2}, g);
  });
  expect_error<InvalidArgument>(
      "multivariate_normal",
      [&] {
        random::multivariate_normal(mean, std::nullopt, eye(3, std::nullopt, DType::F64) * -1.0,
                                    {2}, g);
      },
      "positive diagonal");
  expect_error<InvalidArgument>(
      "sobol", [&] { random::sobol(4, 1025); }, "d must be");
  expect_error<InvalidArgument>("sobol", [&] { random::sobol(-1, 2); });
  expect_error<UnsupportedDType>("sobol", [&] { random::sobol(4, 2, DType::I32); });
  expect_error<InvalidArgument>("halton", [&] { random::halton(4, 0); });
  expect_error<InvalidArgument>("latin_hypercube", [&] { random::latin_hypercube(4, 0, g); });
}

}  // namespace
}  // namespace numr
