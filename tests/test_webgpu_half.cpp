// WebGPU's F16 and BF16: 16-bit fields of u32 words, converted in the shader with integer
// arithmetic. Every F16 and BF16 value widens to the CPU's F32 bits, and F32 values at and
// beside every F16 rounding midpoint (ties, subnormals, overflow), plus random F32 bit
// patterns for BF16, narrow to the CPU's bits (NaN to a NaN: payloads are not specified).
// Contiguous F16/BF16 results, which the kernels write a word (two elements) at a time,
// at odd and even offsets and lengths, leave the neighbouring elements as they were.
// Skips, naming the reason, without WebGPU.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "core/backend.h"
#include "numr/numr.h"
#include "support/webgpu_device.h"

namespace numr {
namespace {

// The 16-bit patterns of a cast of x to H (f16 or bf16) on dev.
template <class H>
std::vector<uint16_t> narrowed_bits(const std::vector<float>& x, Device dev) {
  const Tensor t = Tensor::from_vector(x, {int64_t(x.size())}).to(dev).cast(dtype_of_v<H>);
  std::vector<uint16_t> out;
  for (H h : t.to(Device::cpu()).to_vector<H>()) out.push_back(h.bits);
  return out;
}

// The F32 bits of every 16-bit pattern of H, widened on dev.
template <class H>
std::vector<uint32_t> widened_bits(Device dev) {
  std::vector<H> all;
  for (uint32_t b = 0; b < 65536; ++b) all.push_back(H::from_bits(uint16_t(b)));
  const Tensor f = Tensor::from_vector(all, {65536}).to(dev).cast(DType::F32);
  std::vector<uint32_t> out;
  for (float v : f.to(Device::cpu()).to_vector<float>()) out.push_back(std::bit_cast<uint32_t>(v));
  return out;
}

template <class H>
void expect_widening_matches() {
  const std::vector<uint32_t> cpu = widened_bits<H>(Device::cpu());
  const std::vector<uint32_t> gpu = widened_bits<H>(Device::webgpu(0));
  int failures = 0;
  const auto nan = [](uint32_t b) { return (b & 0x7fffffffu) > 0x7f800000u; };
  for (size_t i = 0; i < cpu.size() && failures < 5; ++i)
    if (nan(cpu[i]) ? !nan(gpu[i]) : cpu[i] != gpu[i]) {
      ++failures;
      ADD_FAILURE() << dtype_name(dtype_of_v<H>) << " bits " << std::hex << i << ": cpu " << cpu[i]
                    << ", webgpu " << gpu[i];
    }
}

template <class H>
void expect_narrowing_matches(const std::vector<float>& x) {
  const std::vector<uint16_t> cpu = narrowed_bits<H>(x, Device::cpu());
  const std::vector<uint16_t> gpu = narrowed_bits<H>(x, Device::webgpu(0));
  int failures = 0;
  for (size_t i = 0; i < cpu.size() && failures < 5; ++i) {
    // Inputs below F32's normal range: a GPU may flush them (CUDA's does) to zero.
    if (x[i] != 0 && std::fabs(x[i]) < 0x1p-126f) continue;
    if (std::isnan(x[i]) ? !std::isnan(float(H::from_bits(gpu[i]))) : cpu[i] != gpu[i]) {
      ++failures;
      ADD_FAILURE() << dtype_name(dtype_of_v<H>) << " of " << std::hexfloat << x[i] << ": cpu "
                    << std::hex << cpu[i] << ", webgpu " << gpu[i];
    }
  }
}

TEST(WebGpuHalf, EveryValueWidensAsOnTheCpu) {
  std::string why;
  if (!test::usable_webgpu(&why)) GTEST_SKIP() << "no usable WebGPU device: " << why;
  expect_widening_matches<f16>();
  expect_widening_matches<bf16>();
}

TEST(WebGpuHalf, NarrowingRoundsAsOnTheCpu) {
  std::string why;
  if (!test::usable_webgpu(&why)) GTEST_SKIP() << "no usable WebGPU device: " << why;
  // F16: each finite value, the midpoint to the next one up and its two F32 neighbours.
  std::vector<float> x;
  for (uint32_t b = 0; b < 0x7c00; ++b) {
    const float lo = float(f16::from_bits(uint16_t(b)));
    const float hi = b + 1 == 0x7c00 ? 65536.0f : float(f16::from_bits(uint16_t(b + 1)));
    const float mid = lo + (hi - lo) / 2;
    for (float v : {lo, mid, std::nextafter(mid, 0.0f), std::nextafter(mid, 1e30f)}) {
      x.push_back(v);
      x.push_back(-v);
    }
  }
  for (float v : {1e30f, INFINITY, NAN, 0x1p-25f, 0x1.8p-25f, 0x1p-149f})
    for (float s : {1.0f, -1.0f}) x.push_back(s * v);
  // BF16: random bit patterns, and the ties of each of their upper halves.
  std::mt19937 rng(5);
  std::vector<float> y;
  for (int i = 0; i < 200000; ++i) {
    const uint32_t b = rng();
    y.push_back(std::bit_cast<float>(b));
    y.push_back(std::bit_cast<float>((b & 0xffff0000u) | 0x8000u));
  }
  expect_narrowing_matches<f16>(x);
  expect_narrowing_matches<bf16>(y);
}

// Products and sums written (out= forms) into views of every offset parity and length
// parity, and fresh results from inputs at odd offsets: the whole buffer against the CPU's,
// bit for bit (products of 16-bit values are exact in f32, and both round the f32 result
// once).
template <class H>
void expect_word_writes_match() {
  constexpr int64_t kLen = 1031;
  std::mt19937 rng(9);
  std::normal_distribution<float> d(0.0f, 3.0f);
  std::vector<float> a(kLen), b(kLen);
  for (float& v : a) v = d(rng);
  for (float& v : b) v = d(rng);
  const DType t = dtype_of_v<H>;
  const Tensor ca = Tensor::from_vector(a, {kLen}).cast(t);
  const Tensor cb = Tensor::from_vector(b, {kLen}).cast(t);
  const Tensor ga = ca.to(Device::webgpu(0)), gb = cb.to(Device::webgpu(0));
  auto bits = [](const Tensor& x) {
    std::vector<uint16_t> out;
    for (H h : x.to(Device::cpu()).contiguous().template to_vector<H>()) out.push_back(h.bits);
    return out;
  };
  for (int64_t off : {0, 1, 2, 3})
    for (int64_t len : {1, 2, 3, 4, 255, 256, 257, 1000}) {
      Tensor cpu = ca.clone(), gpu = ga.clone();
      Tensor cv = cpu.narrow(0, off, len), gv = gpu.narrow(0, off, len);
      mul(ca.narrow(0, 3 - off, len), cb.narrow(0, off, len), cv);
      mul(ga.narrow(0, 3 - off, len), gb.narrow(0, off, len), gv);
      Tensor cw = cpu.narrow(0, off + 1, len), gw = gpu.narrow(0, off + 1, len);
      add(ca.narrow(0, off, len), cb.narrow(0, 1, len), cw);
      add(ga.narrow(0, off, len), gb.narrow(0, 1, len), gw);
      EXPECT_EQ(bits(gpu), bits(cpu)) << dtype_name(t) << " offset " << off << " length " << len;
      const Tensor fresh_cpu = cpu.narrow(0, off, len) + cb.narrow(0, 1, len);
      const Tensor fresh_gpu = gpu.narrow(0, off, len) + gb.narrow(0, 1, len);
      EXPECT_EQ(bits(fresh_gpu), bits(fresh_cpu))
          << dtype_name(t) << " fresh, offset " << off << " length " << len;
    }
}

TEST(WebGpuHalf, ContiguousResultsKeepTheirNeighbours) {
  std::string why;
  if (!test::usable_webgpu(&why)) GTEST_SKIP() << "no usable WebGPU device: " << why;
  expect_word_writes_match<f16>();
  expect_word_writes_match<bf16>();
}

}  // namespace
}  // namespace numr
