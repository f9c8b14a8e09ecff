// exp in F32 across its whole range, not only the parity harness's [-8, 8]: the CPU
// kernels evaluate it inline (range reduction, polynomial, scaling by 2^n), and the edges
// of that scaling are where such code goes wrong. Every result must lie within 2 ULP of
// the true value rounded to float, with the ULP of a subnormal result being 2^-149, and
// overflow, underflow to zero, infinities and NaN exactly as the true function gives them.
// The softmax, logsumexp and activation kernels use the same exp.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "numr/numr.h"

namespace numr {
namespace {

double ulp_of(float want) {
  const int e = want == 0 ? -126 : std::max(std::ilogb(want), -126);
  return std::ldexp(1.0, e - 23);
}

TEST(ParityExpRange, F32OverTheWholeRange) {
  std::vector<float> xs;
  for (double x = -110.0; x <= 95.0; x += 0.0137) xs.push_back(float(x));
  // Around the thresholds: overflow (88.7228), the last normal result (-87.3365), the last
  // nonzero subnormal (-103.279) and rounding to zero (-103.972), and the clamps beyond.
  for (const double edge : {88.72283, -87.33655, -103.27893, -103.97208, 89.0, -104.0}) {
    float x = float(edge);
    for (int i = 0; i < 64; ++i) x = std::nextafter(x, -1e9f);
    for (int i = 0; i < 128; ++i, x = std::nextafter(x, 1e9f)) xs.push_back(x);
  }
  const float inf = std::numeric_limits<float>::infinity();
  for (const float x : {0.0f, -0.0f, 1e-30f, -1e-30f, 1e-45f, inf, -inf, 1e30f, -1e30f,
                        std::numeric_limits<float>::quiet_NaN()})
    xs.push_back(x);
  // Lengths that are not a multiple of the vector width exercise the tail path too.
  xs.push_back(0.5f);

  const Tensor in = Tensor::from_vector(xs, {int64_t(xs.size())});
  const std::vector<float> got = exp(in).to_vector<float>();
  ASSERT_EQ(got.size(), xs.size());
  int failures = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    const float x = xs[i], y = got[i];
    if (std::isnan(x)) {
      EXPECT_TRUE(std::isnan(y)) << "exp(NaN) = " << y;
      continue;
    }
    const double truth = std::exp(double(x));
    const float want = float(truth);
    if (std::isinf(want) || want == 0) {
      // The nearest float is +inf or 0; a result one subnormal unit from 0 is within the
      // bound too (the true value lies between 0 and the smallest subnormal).
      const bool ok = want == 0 ? (y >= 0 && double(y) <= 2 * ulp_of(0)) : y == want;
      if (!ok && ++failures <= 10)
        ADD_FAILURE() << "exp(" << std::hexfloat << x << ") = " << y << ", want " << want;
      continue;
    }
    const double err = std::fabs(double(y) - truth) / ulp_of(want);
    if (!(err <= 2.0) && ++failures <= 10)
      ADD_FAILURE() << "exp(" << std::hexfloat << x << ") = " << y << ", want " << want
                    << std::defaultfloat << " (" << err << " ULP)";
  }
  EXPECT_EQ(failures, 0) << "of " << xs.size() << " values";
}

}  // namespace
}  // namespace numr
