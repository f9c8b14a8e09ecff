// Statistics against float64 loops written here from the definitions, NumPy where CI has
// it (quantile, histogram, cov, corrcoef), and gradient checks.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <sstream>

#include "io_test_util.h"
#include "numr/numr.h"
#include "support/gradcheck.h"
#include "support/harness.h"

namespace numr {
namespace {

using test::for_each_case;
using QI = QuantileInterpolation;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::vector<double> host(const Tensor& t) {
  return t.to(Device::cpu()).cast(DType::F64).to_vector<double>();
}

// Values of dtype t (integers for integer dtypes), rows x cols, with repeats.
Tensor sample(int64_t rows, int64_t cols, DType t, Device dev, uint64_t seed, bool nan = false) {
  test::InputSpec spec;
  spec.integers = !is_floating(t);
  spec.lo = is_floating(t) ? -3 : 0;
  spec.hi = is_floating(t) ? 3 : 9;
  Tensor x = test::make_input({rows, cols}, t, Device::cpu(), spec, seed);
  if (nan) {
    std::vector<double> v = host(x);
    v[size_t(cols + 1)] = kNaN;  // row 1 holds a NaN
    x = Tensor::from_vector(v, {rows, cols}).cast(t);
  }
  return x.to(dev);
}

double tol_of(DType t) {
  switch (t) {
    case DType::F64: return 1e-12;
    case DType::F32: return 2e-5;
    case DType::F16: return 2e-3;
    default: return 1.6e-2;
  }
}

std::string close(const std::string& what, const std::vector<double>& got,
                  const std::vector<double>& want, double tol) {
  if (got.size() != want.size()) return what + ": " + std::to_string(got.size()) + " values";
  for (size_t i = 0; i < got.size(); ++i) {
    const bool ok = std::isnan(want[i])
                        ? std::isnan(got[i])
                        : std::abs(got[i] - want[i]) <= tol * (1 + std::abs(want[i]));
    if (!ok) {
      std::ostringstream os;
      os << what << ": [" << i << "] = " << got[i] << ", expected " << want[i];
      return os.str();
    }
  }
  return "";
}

// Row r of a rows x cols host array.
std::vector<double> row(const std::vector<double>& v, int64_t cols, int64_t r) {
  return {v.begin() + r * cols, v.begin() + (r + 1) * cols};
}

double ref_quantile(std::vector<double> v, double q, QI mode) {
  if (std::any_of(v.begin(), v.end(), [](double x) { return std::isnan(x); })) return kNaN;
  std::sort(v.begin(), v.end());
  const double p = q * double(v.size() - 1);
  const double a = v[size_t(std::floor(p))], b = v[size_t(std::ceil(p))], w = p - std::floor(p);
  switch (mode) {
    case QI::Linear: return a + (b - a) * w;
    case QI::Lower: return a;
    case QI::Higher: return b;
    case QI::Midpoint: return (a + b) / 2;
    case QI::Nearest: return v[size_t(std::nearbyint(p))];
  }
  return 0;
}

double central(const std::vector<double>& v, int k) {
  double m = 0;
  for (double x : v) m += x;
  m /= double(v.size());
  double s = 0;
  for (double x : v) s += std::pow(x - m, k);
  return s / double(v.size());
}

TEST(ParityStats, Quantile) {
  for_each_case(OpId::quantile, test::dtypes_of(OpId::quantile), [](DType t, Device dev) {
    const Tensor x = sample(4, 9, t, dev, 1, true);
    const std::vector<double> xv = host(x);
    const std::vector<double> qs = {0.0, 0.1, 0.25, 0.5, 0.875, 1.0};
    for (QI mode : {QI::Linear, QI::Lower, QI::Higher, QI::Midpoint, QI::Nearest}) {
      const Tensor r = quantile(x, qs, 1);  // [6, 4]
      const Tensor rm = quantile(x, qs, 1, false, mode);
      std::vector<double> want;
      for (double q : qs)
        for (int64_t i = 0; i < 4; ++i) want.push_back(ref_quantile(row(xv, 9, i), q, mode));
      if (rm.shape() != Shape{6, 4}) return std::string("quantile: shape ") + shape_str(rm.shape());
      if (auto e = close("quantile rows", host(rm), want, tol_of(t)); !e.empty()) return e;
      (void)r;
    }
    // Over all of x, keepdim, and one q along dim 0.
    const Tensor finite = sample(5, 3, t, dev, 2);
    const std::vector<double> fv = host(finite);
    const Tensor all = quantile(finite, 0.3, std::nullopt, true);
    if (all.shape() != Shape{1, 1}) return std::string("keepdim shape");
    if (auto e = close("quantile all", host(all), {ref_quantile(fv, 0.3, QI::Linear)}, tol_of(t));
        !e.empty())
      return e;
    std::vector<double> cols;
    for (int64_t j = 0; j < 3; ++j) {
      std::vector<double> c;
      for (int64_t i = 0; i < 5; ++i) c.push_back(fv[size_t(i * 3 + j)]);
      cols.push_back(ref_quantile(c, 0.6, QI::Linear));
    }
    return close("quantile dim 0", host(quantile(finite, 0.6, 0)), cols, tol_of(t));
  });
}

TEST(ParityStats, MedianAndMode) {
  for_each_case(OpId::median, test::dtypes_of(OpId::median), [](DType t, Device dev) {
    const Tensor x = sample(3, 8, t, dev, 3, is_floating(t));
    const std::vector<double> xv = host(x);
    const auto [v, i] = median(x, 1);
    const std::vector<double> got = host(v);
    const std::vector<int64_t> at = i.to(Device::cpu()).to_vector<int64_t>();
    for (int64_t r = 0; r < 3; ++r) {
      std::vector<double> s = row(xv, 8, r);
      const bool has_nan = std::any_of(s.begin(), s.end(), [](double y) { return std::isnan(y); });
      std::vector<double> sorted = s;
      std::sort(sorted.begin(), sorted.end());
      const double want = has_nan ? kNaN : sorted[3];
      if (auto e = close("median", {got[size_t(r)]}, {want}, 0); !e.empty()) return e;
      const double picked = s[size_t(at[size_t(r)])];
      if (!(has_nan ? std::isnan(picked) : picked == want)) return std::string("median index");
    }
    const Tensor finite = sample(1, 7, t, dev, 4);
    std::vector<double> fv = host(finite);
    std::sort(fv.begin(), fv.end());
    return close("median of all", host(median(finite)), {fv[3]}, 0);
  });
  for_each_case(OpId::mode, test::dtypes_of(OpId::mode), [](DType t, Device dev) {
    test::InputSpec spec;
    spec.integers = true;
    spec.lo = is_signed(t) ? -3 : 0;
    spec.hi = 3;
    const Tensor x = test::make_input({4, 11}, t, dev, spec, 5);
    const std::vector<double> xv = host(x);
    const auto [v, i] = mode(x, 1);
    const std::vector<double> got = host(v);
    const std::vector<int64_t> at = i.to(Device::cpu()).to_vector<int64_t>();
    for (int64_t r = 0; r < 4; ++r) {
      const std::vector<double> s = row(xv, 11, r);
      std::map<double, int> count;
      for (double y : s) ++count[y];
      double best = 0;
      int most = 0;
      for (const auto& [value, c] : count)
        if (c > most) best = value, most = c;
      const auto first = std::find(s.begin(), s.end(), best) - s.begin();
      if (got[size_t(r)] != best || at[size_t(r)] != first) {
        std::ostringstream os;
        os << "mode row " << r << ": " << got[size_t(r)] << " at " << at[size_t(r)] << ", expected "
           << best << " at " << first;
        return os.str();
      }
    }
    // Along dim 0 with keepdim, and a 1-D input.
    const auto [v0, i0] = mode(x, 0, true);
    if (v0.shape() != Shape{1, 11}) return std::string("mode keepdim shape");
    const auto [v1, i1] = mode(x.narrow(0, 2, 1).squeeze(0), 0);
    if (v1.dim() != 0 || host(v1)[0] != got[2]) return std::string("mode of a 1-D tensor");
    return std::string();
  });
}

TEST(ParityStats, Histogram) {
  for_each_case(OpId::histogram, test::dtypes_of(OpId::histogram), [](DType t, Device dev) {
    const Tensor x = sample(6, 20, t, dev, 6, true);
    const std::vector<double> xv = host(x);
    for (auto range : {std::optional<std::pair<double, double>>{{-2.0, 2.5}},
                       std::optional<std::pair<double, double>>{}}) {
      const auto [counts, edges] = histogram(x.narrow(0, 2, 4), 7, range);
      const std::vector<double> ev = host(edges);
      std::vector<double> want(7, 0.0);
      for (size_t k = 2 * 20; k < xv.size(); ++k) {
        const double y = xv[k];
        if (!(y >= ev[0] && y <= ev[7])) continue;
        size_t b = 0;
        while (b + 1 < 7 && y >= ev[b + 1]) ++b;
        want[b] += 1;
      }
      if (auto e = close("histogram", host(counts), want, 0); !e.empty()) return e;
    }
    // Weights and density.
    const Tensor w = abs(sample(6, 20, t, dev, 7));
    const auto [wc, we] = histogram(x, 4, std::pair{-3.0, 3.0}, w, true);
    const std::vector<double> wv = host(w), ev = host(we);
    std::vector<double> want(4, 0.0);
    double total = 0;
    for (size_t k = 0; k < xv.size(); ++k) {
      const double y = xv[k];
      if (!(y >= -3 && y <= 3)) continue;
      size_t b = 0;
      while (b + 1 < 4 && y >= ev[b + 1]) ++b;
      want[b] += wv[k];
      total += wv[k];
    }
    for (double& c : want) c /= total * 1.5;
    return close("weighted density", host(wc), want, tol_of(t) * 4);
  });
}

TEST(ParityStats, CovCorrcoefSkewKurtosis) {
  for (OpId op : {OpId::cov, OpId::corrcoef, OpId::skew, OpId::kurtosis})
    for_each_case(op, test::dtypes_of(op), [op](DType t, Device dev) {
      const Tensor x = sample(3, 10, t, dev, 8);
      const std::vector<double> xv = host(x);
      std::vector<double> want;
      if (op == OpId::cov || op == OpId::corrcoef) {
        double c[3][3];
        for (int a = 0; a < 3; ++a)
          for (int b = 0; b < 3; ++b) {
            const auto ra = row(xv, 10, a), rb = row(xv, 10, b);
            double ma = 0, mb = 0, s = 0;
            for (int k = 0; k < 10; ++k) ma += ra[size_t(k)] / 10, mb += rb[size_t(k)] / 10;
            for (int k = 0; k < 10; ++k) s += (ra[size_t(k)] - ma) * (rb[size_t(k)] - mb);
            c[a][b] = s / 9;
          }
        for (int a = 0; a < 3; ++a)
          for (int b = 0; b < 3; ++b)
            want.push_back(op == OpId::cov ? c[a][b] : c[a][b] / std::sqrt(c[a][a] * c[b][b]));
        const Tensor got = op == OpId::cov ? cov(x) : corrcoef(x);
        if (auto e = close(std::string(op_name(op)), host(got), want, tol_of(t) * 4); !e.empty())
          return e;
        if (op == OpId::cov) {  // a 1-D input is one variable; correction 0 divides by N
          const double v0 = c[1][1] * 9 / 10;
          return close("cov 1-D", host(cov(x.narrow(0, 1, 1).squeeze(0), 0)), {v0}, tol_of(t) * 4);
        }
        return close("corrcoef 1-D", host(corrcoef(x.narrow(0, 0, 1).squeeze(0))), {1.0}, 0);
      }
      for (bool bias : {true, false}) {
        std::vector<double> w;
        for (int64_t r = 0; r < 3; ++r) {
          const auto v = row(xv, 10, r);
          const double n = 10, m2 = central(v, 2);
          if (op == OpId::skew) {
            const double g = central(v, 3) / std::pow(m2, 1.5);
            w.push_back(bias ? g : g * std::sqrt(n * (n - 1)) / (n - 2));
          } else {
            const double g = central(v, 4) / (m2 * m2);
            w.push_back(bias ? g - 3
                             : ((n * n - 1) * g - 3 * (n - 1) * (n - 1)) / ((n - 2) * (n - 3)));
          }
        }
        const Tensor got =
            op == OpId::skew ? skew(x, 1, false, bias) : kurtosis(x, 1, false, true, bias);
        if (auto e = close(std::string(op_name(op)), host(got), w, tol_of(t) * 8); !e.empty())
          return e;
      }
      // Over all of x; Pearson's kurtosis adds 3 back.
      const Tensor all = op == OpId::skew ? skew(x) : kurtosis(x, std::nullopt, false, false);
      const double m2 = central(xv, 2);
      const double want_all =
          op == OpId::skew ? central(xv, 3) / std::pow(m2, 1.5) : central(xv, 4) / (m2 * m2);
      return close("over all", host(all), {want_all}, tol_of(t) * 8);
    });
}

TEST(Stats, Errors) {
  auto expect_throw = [](const char* what, auto f) { EXPECT_THROW(f(), Error) << what; };
  const Tensor x = zeros({3, 4});
  expect_throw("q out of range", [&] { quantile(x, 1.5); });
  expect_throw("q NaN", [&] { quantile(x, kNaN); });
  expect_throw("integer quantile", [&] { quantile(zeros({3}, DType::I32), 0.5); });
  expect_throw("empty dim", [&] { quantile(zeros({3, 0}), 0.5, 1); });
  expect_throw("empty median", [&] { median(zeros({0})); });
  expect_throw("bins", [&] { histogram(x, 0); });
  expect_throw("range", [&] { histogram(x, 3, std::pair{1.0, -1.0}); });
  expect_throw("nan range", [&] { histogram(full({2}, kNaN), 3); });
  expect_throw("weights shape", [&] { histogram(x, 3, std::nullopt, zeros({4})); });
  expect_throw("cov 3-D", [&] { cov(zeros({2, 2, 2})); });
  expect_throw("dim", [&] { skew(x, 2); });
  try {
    quantile(x, -0.5);
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("[quantile]", 0), 0u) << e.what();
  }
}

TEST(Stats, CovWeightErrors) {
  const Tensor x = zeros({2, 4}, DType::F64);
  const auto expect = [](auto&& f, const char* needle) {
    try {
      f();
      ADD_FAILURE() << "no error for " << needle;
    } catch (const Error& e) {
      const std::string what = e.what();
      EXPECT_EQ(what.rfind("[cov]", 0), 0u) << what;
      EXPECT_NE(what.find(needle), std::string::npos) << what;
    }
  };
  expect([&] { (void)cov(x, 1, ones({3}, DType::I64)); }, "one entry per observation");
  expect([&] { (void)cov(x, 1, ones({4}, DType::F64)); }, "integer dtype");
  expect([&] { (void)cov(x, 1, std::nullopt, ones({4}, DType::I32)); }, "floating dtype");
  expect([&] { (void)cov(x, 1, std::nullopt, full({4}, -1.0, DType::F64)); }, "negative");
  expect([&] { (void)cov(x, 1, full({4}, -1.0, DType::I64)); }, "negative");
}

// NumPy's quantile methods, histogram, cov (with weights) and corrcoef on the same values.
TEST(Stats, NumpyOracle) {
  const auto python = io_test::python_with_numpy();
  if (!python) GTEST_SKIP() << "no python3 with numpy (Debian: python3-numpy)";
  const Tensor x = sample(3, 17, DType::F64, Device::cpu(), 9);
  const std::string dir = ::testing::TempDir();
  save_npy(dir + "/numr_stats_x.npy", x);
  std::ostringstream os;
  os.precision(17);
  for (QI mode : {QI::Linear, QI::Lower, QI::Higher, QI::Midpoint, QI::Nearest})
    for (double v : host(quantile(x, {0.05, 0.5, 0.9}, 1, false, mode))) os << v << ' ';
  for (double v : host(histogram(x, 6).counts)) os << v << ' ';
  for (double v : host(cov(x))) os << v << ' ';
  for (double v : host(corrcoef(x))) os << v << ' ';
  const Tensor fw = Tensor::from_vector(
      std::vector<int64_t>{1, 2, 0, 3, 1, 1, 4, 2, 1, 1, 2, 3, 1, 1, 2, 1, 5}, {17});
  const Tensor aw = Tensor::from_vector(
      std::vector<double>{0.5, 1, 2, 0.25, 1, 3, 1, 1, 0.75, 2, 1, 1, 0.1, 1, 1, 2, 1}, {17});
  for (double v : host(cov(x, 1, fw, aw))) os << v << ' ';
  for (double v : host(cov(x, 0, fw))) os << v << ' ';
  for (double v : host(cov(x, 2, std::nullopt, aw))) os << v << ' ';
  save_npy(dir + "/numr_stats_fw.npy", fw);
  save_npy(dir + "/numr_stats_aw.npy", aw);
  const std::string script = R"(
import sys
import numpy as np
x = np.load(sys.argv[1] + "/numr_stats_x.npy")
got = np.array([float(s) for s in open(sys.argv[1] + "/numr_stats_got.txt").read().split()])
want = []
for m in ["linear", "lower", "higher", "midpoint", "nearest"]:
    want += list(np.quantile(x, [0.05, 0.5, 0.9], axis=1, method=m).ravel())
want += list(np.histogram(x, 6)[0].astype(float))
want += list(np.cov(x).ravel()) + list(np.corrcoef(x).ravel())
fw = np.load(sys.argv[1] + "/numr_stats_fw.npy")
aw = np.load(sys.argv[1] + "/numr_stats_aw.npy")
want += list(np.cov(x, fweights=fw, aweights=aw).ravel())
want += list(np.cov(x, ddof=0, fweights=fw).ravel())
want += list(np.cov(x, ddof=2, aweights=aw).ravel())
want = np.array(want)
bad = np.abs(got - want) > 1e-12 * (1 + np.abs(want))
print("ok" if got.shape == want.shape and not bad.any() else "differ at %s" % np.nonzero(bad)[0])
)";
  const std::string cmd_input = dir + "/numr_stats_got.txt";
  {
    std::FILE* f = std::fopen(cmd_input.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs(os.str().c_str(), f);
    std::fclose(f);
  }
  EXPECT_EQ(io_test::run_python(*python, script, dir), "ok\n");
}

TEST(GradStats, Checks) {
  using test::check_gradients;
  const Tensor x = test::grad_input({3, 7}, 51), v = test::grad_input({9}, 52);
  check_gradients(OpId::quantile, "linear, several q, dim 1",
                  [](const std::vector<Var>& a) {
                    return quantile(a[0], {0.2, 0.5, 0.95}, 1);
                  },
                  {x});
  check_gradients(OpId::quantile, "midpoint over all",
                  [](const std::vector<Var>& a) {
                    return quantile(a[0], 0.5, std::nullopt, false, QI::Midpoint);
                  },
                  {x});
  check_gradients(OpId::median, "along dim 1 and over all",
                  [](const std::vector<Var>& a) { return median(a[0], 1).values + median(a[0]); },
                  {x});
  check_gradients(OpId::cov, "", [](const std::vector<Var>& a) { return cov(a[0]); }, {x});
  check_gradients(
      OpId::cov, "weighted",
      [](const std::vector<Var>& a) {
        const Device dev = a[0].device();
        const Tensor fw = Tensor::from_vector(std::vector<int32_t>{1, 2, 0, 3, 1, 1, 2}, {7});
        const Tensor aw = Tensor::from_vector(std::vector<double>{0.5, 1, 2, 1, 0.25, 1, 3}, {7});
        return cov(a[0], 1, fw.to(dev), aw.cast(a[0].dtype()).to(dev));
      },
      {x});
  check_gradients(OpId::corrcoef, "", [](const std::vector<Var>& a) { return corrcoef(a[0]); },
                  {x});
  check_gradients(OpId::skew, "unbiased, dim 1",
                  [](const std::vector<Var>& a) { return skew(a[0], 1, false, false); }, {x});
  check_gradients(OpId::kurtosis, "over all",
                  [](const std::vector<Var>& a) { return kurtosis(a[0]); }, {v});
}

}  // namespace
}  // namespace numr
