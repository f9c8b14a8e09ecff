// WebGPU's F32 division: WGSL promises x / y to 2.5 ulp and only for |y| in [2^-126, 2^126],
// so the backend's division rounds as IEEE division does and keeps its range (numr_f32_div).
// Every quotient must carry the CPU's bits, except below 2^-126, where a device may flush.
// Skips, naming the reason, without WebGPU.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "numr/numr.h"
#include "support/webgpu_device.h"

namespace numr {
namespace {

// Fails (at most five times) where x / y on WebGPU differs from the CPU's bits.
void expect_quotients_match(const std::vector<float>& x, const std::vector<float>& y,
                            const char* what) {
  const int64_t n = int64_t(x.size());
  const Tensor a = Tensor::from_vector(x, {n}), b = Tensor::from_vector(y, {n});
  const std::vector<float> cpu = (a / b).to_vector<float>();
  const std::vector<float> gpu =
      (a.to(Device::webgpu(0)) / b.to(Device::webgpu(0))).to(Device::cpu()).to_vector<float>();
  int failures = 0;
  for (int64_t i = 0; i < n && failures < 5; ++i) {
    const bool tiny =
        std::fabs(cpu[size_t(i)]) < 0x1p-126f && std::fabs(gpu[size_t(i)]) < 0x1p-126f;
    const bool same = std::isnan(cpu[size_t(i)]) ? std::isnan(gpu[size_t(i)])
                                                 : std::bit_cast<uint32_t>(cpu[size_t(i)]) ==
                                                       std::bit_cast<uint32_t>(gpu[size_t(i)]);
    if (!same && !tiny) {
      ++failures;
      ADD_FAILURE() << what << ": " << x[size_t(i)] << " / " << y[size_t(i)] << " is "
                    << gpu[size_t(i)] << " on WebGPU, " << cpu[size_t(i)] << " on the CPU";
    }
  }
}

// Random signs, significands and exponents in [lo, hi].
std::vector<float> random_floats(size_t n, int lo, int hi, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> mant(1.0f, 2.0f);
  std::uniform_int_distribution<int> exp(lo, hi);
  std::vector<float> v(n);
  for (float& f : v) f = std::ldexp(mant(rng), exp(rng)) * (rng() & 1 ? -1.0f : 1.0f);
  return v;
}

TEST(WebGpuDivision, QuotientsAreCorrectlyRounded) {
  std::string why;
  if (!test::usable_webgpu(&why)) GTEST_SKIP() << "no usable WebGPU device: " << why;
  const size_t n = size_t(1) << 18;
  expect_quotients_match(random_floats(n, -60, 60, 1), random_floats(n, -60, 60, 2), "random");
  // Quotients from overflow to below the normal range, from operands across it.
  expect_quotients_match(random_floats(n, -126, 127, 6), random_floats(n, -126, 127, 7), "wide");
  // Means: sums over small counts, where an ulp off shows as a scatter mean unlike the CPU's.
  std::vector<float> counts(n);
  for (size_t i = 0; i < n; ++i) counts[i] = float(1 + i % 97);
  expect_quotients_match(random_floats(n, -4, 4, 3), counts, "counts");
}

TEST(WebGpuDivision, DivisorsBeyondTwoTo126KeepTheQuotient) {
  std::string why;
  if (!test::usable_webgpu(&why)) GTEST_SKIP() << "no usable WebGPU device: " << why;
  const size_t n = size_t(1) << 16;
  // 1 / y is subnormal here, so a reciprocal-based division on a flushing device gives 0;
  // silu(x) = x / (1 + exp(-x)) divides so for x below -87.3.
  expect_quotients_match(random_floats(n, 0, 100, 4), random_floats(n, 126, 127, 5), "large y");
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float max = std::numeric_limits<float>::max();
  expect_quotients_match({1, -1, 0, inf, 1, inf, nan, 1, max, 3e38f, -87.5f},
                         {0, 0, 0, 1, inf, inf, 1, nan, 3e38f, max, 1.0129e38f}, "edges");
}

}  // namespace
}  // namespace numr
