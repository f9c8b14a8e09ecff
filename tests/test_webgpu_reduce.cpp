// The WebGPU reductions over long rows with few outputs, which run in two passes (chunks of
// each row to partial states, then each row's states merged): float sums against float64
// sums of the same values, and against the CPU bit for bit where the result does not
// depend on the order (max/min with and without NaN, argmax/argmin with ties and NaN in
// different chunks, any/all, integer sums that wrap, I64 sums past 2^32), on contiguous
// and strided inputs and on row lengths that leave a short last chunk. Every test skips,
// naming the reason, where no WebGPU device is usable.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "numr/numr.h"
#include "support/webgpu_device.h"

namespace numr {
namespace {

const Device kGpu = Device::webgpu(0);

std::vector<float> normals(size_t n, uint32_t seed) {
  std::mt19937 g(seed);
  std::normal_distribution<float> d(0.5f, 2.0f);
  std::vector<float> v(n);
  for (float& x : v) x = d(g);
  return v;
}

// Long rows: 3 x (2^20 + 12345) elements, a last chunk shorter than the others.
constexpr int64_t kRows = 3, kLen = (int64_t(1) << 20) + 12345;

TEST(WebGpuReduce, LongFloatSumsMatchFloat64) {
  NUMR_WEBGPU_OR_SKIP();
  const std::vector<float> v = normals(size_t(kRows * kLen), 7);
  const Tensor x = Tensor::from_vector(v, {kRows, kLen}, kGpu);
  // The f32 rounding error of any summation order of n terms is below n * eps * sum |x|;
  // a chunked tree of depth about log2(n) stays far below that: log2(n) + 16 (the terms
  // one invocation adds in turn) times eps per term.
  const double eps = std::numeric_limits<float>::epsilon();
  auto check = [&](const Tensor& got, const std::vector<std::pair<int64_t, int64_t>>& ranges) {
    const std::vector<float> g = got.to(Device::cpu()).contiguous().to_vector<float>();
    ASSERT_EQ(g.size(), ranges.size());
    for (size_t r = 0; r < ranges.size(); ++r) {
      double ref = 0, mag = 0;
      for (int64_t i = ranges[r].first; i < ranges[r].second; ++i) {
        ref += v[size_t(i)];
        mag += std::fabs(double(v[size_t(i)]));
      }
      const double n = double(ranges[r].second - ranges[r].first);
      EXPECT_LE(std::fabs(double(g[r]) - ref), (std::log2(n) + 16) * eps * mag)
          << "row " << r << ": " << g[r] << " against " << ref;
    }
  };
  check(sum(x).view({1}), {{0, kRows * kLen}});
  check(sum(x, {1}), {{0, kLen}, {kLen, 2 * kLen}, {2 * kLen, 3 * kLen}});
  // The rows of the transpose are the columns of [kLen, kRows]: a strided walk.
  std::vector<float> t(v.size());
  for (int64_t r = 0; r < kRows; ++r)
    for (int64_t i = 0; i < kLen; ++i) t[size_t(i * kRows + r)] = v[size_t(r * kLen + i)];
  const Tensor xt = Tensor::from_vector(t, {kLen, kRows}, kGpu).transpose(0, 1);
  check(sum(xt, {1}), {{0, kLen}, {kLen, 2 * kLen}, {2 * kLen, 3 * kLen}});
  // BF16 sums in f32 and rounds once: within half a BF16 ulp of the f32 sum, plus its error.
  const Tensor h = x.cast(DType::BF16);
  const std::vector<float> hv = h.cast(DType::F32).to(Device::cpu()).to_vector<float>();
  const float got = sum(h).cast(DType::F32).to(Device::cpu()).item<float>();
  double ref = 0, mag = 0;
  for (float f : hv) {
    ref += f;
    mag += std::fabs(double(f));
  }
  EXPECT_LE(std::fabs(double(got) - ref),
            std::ldexp(std::fabs(ref), -8) + (std::log2(double(hv.size())) + 16) * eps * mag)
      << got << " against " << ref;
}

// got and want equal element for element, NaN matching NaN.
void expect_same(const Tensor& got, const Tensor& want, const std::string& what) {
  const Tensor g = got.to(Device::cpu()).cast(DType::F64), w = want.cast(DType::F64);
  const std::vector<double> gv = g.to_vector<double>(), wv = w.to_vector<double>();
  ASSERT_EQ(gv.size(), wv.size()) << what;
  for (size_t i = 0; i < wv.size(); ++i) {
    if (std::isnan(wv[i])) {
      EXPECT_TRUE(std::isnan(gv[i])) << what << " element " << i << ": " << gv[i];
    } else {
      EXPECT_EQ(gv[i], wv[i]) << what << " element " << i;
    }
  }
}

TEST(WebGpuReduce, LongMaxMinArgAcrossChunksMatchCpu) {
  NUMR_WEBGPU_OR_SKIP();
  std::vector<float> v = normals(size_t(kRows * kLen), 11);
  // Row 0: the maximum and the minimum three times each, in chunks far apart.
  for (int64_t i : {int64_t(5000), int64_t(600000), kLen - 3}) {
    v[size_t(i)] = 100.0f;
    v[size_t(i + 1)] = -100.0f;
  }
  // Row 1: a NaN late in the row and one later still; row 2: no special values.
  v[size_t(kLen + 900001)] = std::numeric_limits<float>::quiet_NaN();
  v[size_t(kLen + kLen - 1)] = std::numeric_limits<float>::quiet_NaN();
  const Tensor c = Tensor::from_vector(v, {kRows, kLen});
  const Tensor g = c.to(kGpu);
  expect_same(max(g, {1}), max(c, {1}), "max");
  expect_same(min(g, {1}), min(c, {1}), "min");
  expect_same(argmax(g, 1), argmax(c, 1), "argmax");
  expect_same(argmin(g, 1), argmin(c, 1), "argmin");
  expect_same(max(g), max(c), "max of all");
  expect_same(argmax(g), argmax(c), "argmax of all");
  // Without the NaN rows, the whole-tensor argmin is row 0's first -100.
  const Tensor c0 = c.narrow(0, 0, 1);
  expect_same(argmin(c0.to(kGpu)), argmin(c0), "argmin of row 0");
  expect_same(argmax(g.narrow(0, 2, 1), 1), argmax(c.narrow(0, 2, 1), 1), "argmax of row 2");
}

TEST(WebGpuReduce, LongAnyAllAndIntegerSumsMatchCpu) {
  NUMR_WEBGPU_OR_SKIP();
  const size_t n = size_t(kRows * kLen);
  // One true element late in row 1, one false element late in row 2.
  std::vector<uint8_t> flags(n, 0);
  flags[size_t(kLen + 800000)] = 1;
  std::vector<uint8_t> ones(n, 1);
  ones[size_t(2 * kLen + kLen - 2)] = 0;
  for (DType t : {DType::Bool, DType::U8}) {
    const Tensor f = Tensor::from_vector(flags, {kRows, kLen}).cast(t);
    const Tensor o = Tensor::from_vector(ones, {kRows, kLen}).cast(t);
    expect_same(any(f.to(kGpu), {1}), any(f, {1}), "any");
    expect_same(all(o.to(kGpu), {1}), all(o, {1}), "all");
    expect_same(any(f.to(kGpu)), any(f), "any of all");
    expect_same(all(o.to(kGpu)), all(o), "all of all");
  }
  // Integer sums wrap, so every order gives the CPU's result; I64 sums pass 2^32.
  std::mt19937 gen(3);
  std::vector<int32_t> iv(n);
  for (int32_t& x : iv) x = int32_t(gen());
  const Tensor i32 = Tensor::from_vector(iv, {kRows, kLen});
  expect_same(sum(i32.to(kGpu), {1}), sum(i32, {1}), "I32 sum");
  expect_same(sum(i32.to(kGpu)), sum(i32), "I32 sum of all");
  const Tensor i64 = i32.cast(DType::I64);
  const Tensor s64 = sum(i64.to(kGpu), {1}).to(Device::cpu()), w64 = sum(i64, {1});
  EXPECT_EQ(s64.to_vector<int64_t>(), w64.to_vector<int64_t>());
  const Tensor big = i64.abs();
  EXPECT_EQ(sum(big.to(kGpu)).to(Device::cpu()).item<int64_t>(), sum(big).item<int64_t>());
}

}  // namespace
}  // namespace numr
