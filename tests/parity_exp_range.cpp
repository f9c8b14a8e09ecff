// exp and exp2 in F32 across their whole range, not only the parity harness's [-8, 8]: the
// CPU kernels evaluate them inline (range reduction, polynomial, scaling by 2^n), and the edges
// of that scaling are where such code goes wrong. Every result must lie within 2 ULP of
// the true value rounded to float, with the ULP of a subnormal result being 2^-149, and
// overflow, underflow to zero, infinities and NaN exactly as the true function gives them.
// The softmax, logsumexp and activation kernels use the same exp.
#include <gtest/gtest.h>

#include <cmath>
#include <initializer_list>
#include <limits>
#include <vector>

#include "numr/numr.h"

namespace numr {
namespace {

double ulp_of(float want) {
  const int e = want == 0 ? -126 : std::max(std::ilogb(want), -126);
  return std::ldexp(1.0, e - 23);
}

// Every x in `xs` against the true value: within 2 ULP, and 0, +inf, NaN as the true
// function gives them.
void check_range(const char* name, const std::vector<float>& xs, const std::vector<float>& got,
                 double (*truth_of)(double)) {
  ASSERT_EQ(got.size(), xs.size());
  int failures = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    const float x = xs[i], y = got[i];
    if (std::isnan(x)) {
      EXPECT_TRUE(std::isnan(y)) << name << "(NaN) = " << y;
      continue;
    }
    const double truth = truth_of(double(x));
    const float want = float(truth);
    if (std::isinf(want) || want == 0) {
      // The nearest float is +inf or 0; a result one subnormal unit from 0 is within the
      // bound too (the true value lies between 0 and the smallest subnormal).
      const bool ok = want == 0 ? (y >= 0 && double(y) <= 2 * ulp_of(0)) : y == want;
      if (!ok && ++failures <= 10)
        ADD_FAILURE() << name << "(" << std::hexfloat << x << ") = " << y << ", want " << want;
      continue;
    }
    const double err = std::fabs(double(y) - truth) / ulp_of(want);
    if (!(err <= 2.0) && ++failures <= 10)
      ADD_FAILURE() << name << "(" << std::hexfloat << x << ") = " << y << ", want " << want
                    << std::defaultfloat << " (" << err << " ULP)";
  }
  EXPECT_EQ(failures, 0) << name << ": of " << xs.size() << " values";
}

// Values from lo to hi in steps of `step`, 64 below and 128 above each edge, the special
// values, and one more so that the length is not a multiple of the vector width.
std::vector<float> sweep(double lo, double hi, double step, std::initializer_list<double> edges) {
  std::vector<float> xs;
  for (double x = lo; x <= hi; x += step) xs.push_back(float(x));
  for (const double edge : edges) {
    float x = float(edge);
    for (int i = 0; i < 64; ++i) x = std::nextafter(x, -1e9f);
    for (int i = 0; i < 128; ++i, x = std::nextafter(x, 1e9f)) xs.push_back(x);
  }
  const float inf = std::numeric_limits<float>::infinity();
  for (const float x : {0.0f, -0.0f, 1e-30f, -1e-30f, 1e-45f, inf, -inf, 1e30f, -1e30f,
                        std::numeric_limits<float>::quiet_NaN()})
    xs.push_back(x);
  xs.push_back(0.5f);
  return xs;
}

TEST(ParityExpRange, F32OverTheWholeRange) {
  // Around the thresholds: overflow (88.7228), the last normal result (-87.3365), the last
  // nonzero subnormal (-103.279) and rounding to zero (-103.972), and the clamps beyond.
  const std::vector<float> xs =
      sweep(-110.0, 95.0, 0.0137, {88.72283, -87.33655, -103.27893, -103.97208, 89.0, -104.0});
  const Tensor in = Tensor::from_vector(xs, {int64_t(xs.size())});
  check_range("exp", xs, exp(in).to_vector<float>(), [](double x) { return std::exp(x); });
}

// exp2 the same way (gelu's formula uses it): overflow at 128, the last normal result at
// -126, the last nonzero subnormal near -149.5, and the clamps at -151 and 129.
TEST(ParityExpRange, Exp2F32OverTheWholeRange) {
  const std::vector<float> xs =
      sweep(-160.0, 135.0, 0.0193, {128.0, -126.0, -149.0, -149.5, -150.0, 129.0, -151.0});
  const Tensor in = Tensor::from_vector(xs, {int64_t(xs.size())});
  check_range("exp2", xs, exp2(in).to_vector<float>(), [](double x) { return std::exp2(x); });
}

}  // namespace
}  // namespace numr
