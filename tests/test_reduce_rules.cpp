// The reduction rules of math/reduce_rules.h over double: NaN-sticky extremes, first-index
// ties however partial states are merged, Welford/Chan against a direct two-pass, and
// logsumexp's guards for -inf, +inf and NaN.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "math/reduce_rules.h"

namespace numr::math {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

template <bool kMax>
double extreme_of(const std::vector<double>& v) {
  double best = v[0];
  for (double x : v) best = extreme_merge<kMax>(best, x);
  return best;
}

TEST(ReduceRules, ExtremeIsNanStickyWherever) {
  EXPECT_EQ(extreme_of<true>({1, 7, -2, 7}), 7);
  EXPECT_EQ(extreme_of<false>({1, 7, -2, 7}), -2);
  EXPECT_EQ(extreme_of<true>({-kInf, -kInf}), -kInf);
  for (size_t at = 0; at < 4; ++at) {
    std::vector<double> v = {1, kInf, -3, 2};
    v[at] = kNaN;
    EXPECT_TRUE(std::isnan(extreme_of<true>(v))) << at;
    EXPECT_TRUE(std::isnan(extreme_of<false>(v))) << at;
  }
}

struct Arg {
  double best = 0;
  int64_t idx = -1;
};

template <bool kMax>
Arg arg_of(const std::vector<double>& v, size_t b, size_t e) {
  Arg s;
  for (size_t i = b; i < e; ++i)
    if (arg_feed_takes<kMax>([&] { return s.idx < 0; }, v[i], s.best)) s = {v[i], int64_t(i)};
  return s;
}

template <bool kMax>
void merge_into(Arg& a, const Arg& o) {
  if (arg_merge_takes<kMax>(o.idx >= 0, a.idx < 0, o.idx < a.idx, o.best, a.best)) a = o;
}

// The first index of the extreme (or of the first NaN) for every split point, with the
// two parts merged in either order, and with an empty state on either side.
template <bool kMax>
void expect_first_index(const std::vector<double>& v, int64_t want) {
  EXPECT_EQ(arg_of<kMax>(v, 0, v.size()).idx, want);
  for (size_t cut = 0; cut <= v.size(); ++cut) {
    const Arg lo = arg_of<kMax>(v, 0, cut), hi = arg_of<kMax>(v, cut, v.size());
    Arg fwd = lo, rev = hi, empty;
    merge_into<kMax>(fwd, hi);
    merge_into<kMax>(rev, lo);
    merge_into<kMax>(empty, fwd);
    EXPECT_EQ(fwd.idx, want) << "cut " << cut;
    EXPECT_EQ(rev.idx, want) << "cut " << cut << ", merged in reverse";
    EXPECT_EQ(empty.idx, want) << "cut " << cut << ", into an empty state";
  }
}

TEST(ReduceRules, ArgExtremeKeepsTheFirstIndexAcrossMerges) {
  expect_first_index<true>({1, 5, 2, 5, 5}, 1);
  expect_first_index<false>({4, 0, 0, 3, 0}, 1);
  expect_first_index<true>({1, kNaN, 9, kNaN}, 1);
  expect_first_index<false>({1, 9, -kInf, kNaN, -kInf}, 3);
  expect_first_index<true>({-kInf, -kInf}, 0);
}

// Three-element chunks fed with Welford's update, then merged left to right.
Moments<double> chunked_moments(const std::vector<double>& v) {
  const auto div = [](double a, double b) { return a / b; };
  Moments<double> total{0, 0, 0};
  for (size_t b = 0; b < v.size(); b += 3) {
    Moments<double> part{0, 0, 0};
    for (size_t i = b; i < v.size() && i < b + 3; ++i) part = moments_add(part, v[i], div);
    total = moments_merge(total, part);
  }
  return moments_merge(total, Moments<double>{0, 0, 0});  // an empty side changes nothing
}

TEST(ReduceRules, WelfordAndChanMatchTwoPass) {
  std::vector<double> v;
  for (int i = 0; i < 20; ++i) v.push_back(1e3 + std::sin(1.7 * i) * (i % 5 + 1));
  double mean = 0, m2 = 0;
  for (double x : v) mean += x;
  mean /= double(v.size());
  for (double x : v) m2 += (x - mean) * (x - mean);

  const Moments<double> w = chunked_moments(v);
  EXPECT_EQ(w.n, double(v.size()));
  EXPECT_NEAR(w.mean, mean, 1e-12 * std::fabs(mean));
  EXPECT_NEAR(w.m2, m2, 1e-9 * m2);

  // From deviations around a centre that is not the mean.
  double d1 = 0, d2 = 0;
  for (double x : v) d1 += x - 1e3, d2 += (x - 1e3) * (x - 1e3);
  const Moments<double> d = moments_from_deviations(double(v.size()), 1e3, d1, d2);
  EXPECT_NEAR(d.mean, mean, 1e-12 * std::fabs(mean));
  EXPECT_NEAR(d.m2, m2, 1e-9 * m2);

  EXPECT_NEAR(variance_from_m2(m2, double(v.size()) - 1, true), m2 / double(v.size() - 1),
              1e-15 * m2);
  EXPECT_TRUE(std::isnan(variance_from_m2(m2, 0.0, false)));
  EXPECT_EQ(variance_from_m2(-1e-18, 4.0, true), 0.0);  // M2 rounded below zero
}

// An empty side merges as nothing, also when the other side's mean squared overflows.
TEST(ReduceRules, ChanMergeWithAnEmptySideKeepsHugeMeans) {
  const Moments<double> empty{0, 0, 0}, big{3, 1e200, 2};
  for (const Moments<double>& m : {moments_merge(empty, big), moments_merge(big, empty)}) {
    EXPECT_EQ(m.n, 3);
    EXPECT_EQ(m.mean, 1e200);
    EXPECT_EQ(m.m2, 2);
  }
  const Moments<float> fe{0, 0, 0}, fb{2, 1e20f, 0.5f};
  const Moments<float> f = moments_merge(fb, fe);
  EXPECT_EQ(f.mean, 1e20f);
  EXPECT_EQ(f.m2, 0.5f);
}

struct Lse {
  LogSumExp<double> s{-kInf, 0};
  bool nan = false, pos_inf = false;
};

Lse lse_of(const std::vector<double>& v, size_t b, size_t e) {
  Lse r;
  for (size_t i = b; i < e; ++i) {
    r.s = lse_add(r.s, v[i]);
    r.nan = r.nan || std::isnan(v[i]);
    r.pos_inf = r.pos_inf || v[i] == kInf;
  }
  return r;
}

double result_of(const Lse& r) {
  return lse_result(
      r.s, [&] { return r.pos_inf; }, [&] { return r.nan; });
}

// The online result, and the merge of the two parts for every split point.
void expect_lse(const std::vector<double>& v, double want) {
  for (size_t cut = 0; cut <= v.size(); ++cut) {
    const Lse lo = lse_of(v, 0, cut), hi = lse_of(v, cut, v.size());
    Lse m = lo;
    m.s = lse_merge(lo.s, hi.s);
    m.nan = lo.nan || hi.nan;
    m.pos_inf = lo.pos_inf || hi.pos_inf;
    const double got = result_of(m);
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(got)) << "cut " << cut;
    } else if (std::isinf(want)) {
      EXPECT_EQ(got, want) << "cut " << cut;
    } else {
      EXPECT_NEAR(got, want, 1e-14 * std::fabs(want)) << "cut " << cut;
    }
  }
}

TEST(ReduceRules, LogSumExpGuards) {
  const double e12 = std::log(std::exp(1.0) + std::exp(2.0));
  expect_lse({1, 2}, e12);
  expect_lse({-kInf, 1, -kInf, 2}, e12);           // -inf adds nothing
  expect_lse({1000, 1000}, 1000 + std::log(2.0));  // rescaled, no overflow
  expect_lse({}, -kInf);
  expect_lse({-kInf, -kInf}, -kInf);
  expect_lse({1, kInf, 2}, kInf);
  expect_lse({1, kInf, kNaN}, kNaN);  // NaN wins over +inf
  expect_lse({kNaN, -kInf}, kNaN);

  // softmax's shift and sum: NaN sum beside a shift that is not finite.
  EXPECT_EQ(lse_flagged(
                3.0, [] { return true; }, [] { return false; }),
            kInf);
  EXPECT_TRUE(std::isnan(lse_shifted_sum(kInf, 2.0)));
  EXPECT_TRUE(std::isnan(lse_shifted_sum(-kInf, 0.0)));
  EXPECT_EQ(lse_shifted_sum(1.5, 2.0), 2.0);
}

TEST(ReduceRules, MeanAndTruth) {
  EXPECT_EQ(mean_of(6.0, 4.0), 1.5);
  EXPECT_TRUE(std::isnan(mean_of(0.0, 0.0)));
  EXPECT_TRUE(reduce_truth(kNaN));
  EXPECT_TRUE(reduce_truth(-0.5));
  EXPECT_FALSE(reduce_truth(-0.0));
}

}  // namespace
}  // namespace numr::math
