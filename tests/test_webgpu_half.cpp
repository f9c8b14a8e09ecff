// WebGPU's F16 and BF16: 16-bit fields of u32 words, converted in the shader with integer
// arithmetic. Every F16 and BF16 value widens to the CPU's F32 bits, and F32 values at and
// beside every F16 rounding midpoint (ties, subnormals, overflow), plus random F32 bit
// patterns for BF16, narrow to the CPU's bits (NaN to a NaN: payloads are not specified).
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

}  // namespace
}  // namespace numr
