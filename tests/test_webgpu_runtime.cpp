// The WebGPU runtime: the adapter is a real Vulkan one (never Dawn's Null backend), the
// declared struct layouts read sane values from the loaded library, errors from Dawn
// become numr errors with its message, F64 (which WGSL lacks) is refused by name, memory
// round-trips through the staging buffers, and random draws equal the CPU's. Every test
// skips, naming the reason, where no WebGPU device is usable (no Dawn or no Vulkan driver:
// scripts/install-webgpu.sh, then source .deps/webgpu/env.sh).
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "backends/webgpu/context.h"
#include "backends/webgpu/shader.h"
#include "numr/numr.h"
#include "support/webgpu_device.h"

namespace numr {
namespace {

#define REQUIRE_WEBGPU()                                          \
  std::string why_;                                               \
  webgpu::Context* ctx_ = test::usable_webgpu(&why_);             \
  if (!ctx_) GTEST_SKIP() << "no usable WebGPU device: " << why_; \
  [[maybe_unused]] webgpu::Context& ctx = *ctx_

TEST(WebGpuRuntime, AdapterIsVulkanNotNull) {
  REQUIRE_WEBGPU();
  std::cout << "WebGPU adapter: " << ctx.adapter_name() << " (" << ctx.api().path << ")\n";
  if (ctx.has_subgroups())
    std::cout << "WebGPU subgroups: on, sizes " << ctx.subgroup_min_size() << ".."
              << ctx.subgroup_max_size() << "\n";
  else
    std::cout << "WebGPU subgroups: off (the adapter lacks them)\n";
  EXPECT_NE(ctx.adapter_backend(), uint32_t(webgpu::kBackendNull));
  EXPECT_EQ(ctx.adapter_backend(), uint32_t(webgpu::kBackendVulkan));
  EXPECT_EQ(ctx.adapter_name().find("[Null"), std::string::npos);
  // A test tier for one driver names it, so that it cannot pass on another by accident.
  if (const char* want = std::getenv("NUMR_TEST_WEBGPU_ADAPTER"); want && *want) {
    EXPECT_NE(ctx.adapter_name().find(want), std::string::npos)
        << "the tier expects an adapter named like " << want;
  }
  const std::vector<Device> devs = available_devices();
  EXPECT_NE(std::find(devs.begin(), devs.end(), Device::webgpu(0)), devs.end());
  EXPECT_NE(backend_for(Device::webgpu(0)).name().find(ctx.adapter_name()), std::string::npos);
}

// Fields read through our declarations of WGPULimits: with a wrong layout they would be
// garbage or out of order.
TEST(WebGpuRuntime, LimitsReadThroughOurLayoutsAreSane) {
  REQUIRE_WEBGPU();
  const WGPULimits& l = ctx.limits();
  EXPECT_GE(l.maxComputeInvocationsPerWorkgroup, webgpu::kWorkgroupSize);
  EXPECT_LE(l.maxComputeWorkgroupSizeX, l.maxComputeInvocationsPerWorkgroup);
  EXPECT_GE(l.maxComputeWorkgroupsPerDimension, 65535u);
  EXPECT_GE(l.maxStorageBuffersPerShaderStage, 8u);
  EXPECT_LE(l.maxStorageBufferBindingSize, l.maxBufferSize);
  EXPECT_GE(l.maxStorageBufferBindingSize, uint64_t(128) << 20);
  const uint32_t a = l.minStorageBufferOffsetAlignment;
  EXPECT_TRUE(a >= 4 && a <= 256 && (a & (a - 1)) == 0) << a;
  EXPECT_GE(l.maxBindGroups, 4u);
}

TEST(WebGpuRuntime, SecondDeviceIsUnavailableWithReason) {
  REQUIRE_WEBGPU();
  try {
    zeros({2}, DType::F32, Device::webgpu(1));
    FAIL() << "webgpu:1 should not exist";
  } catch (const BackendUnavailable& e) {
    EXPECT_EQ(std::string(e.what()).rfind("[zeros] ", 0), 0u) << e.what();
    EXPECT_NE(std::string(e.what()).find("webgpu:0"), std::string::npos) << e.what();
  }
}

TEST(WebGpuRuntime, F64IsRefusedByName) {
  REQUIRE_WEBGPU();
  const Device g = Device::webgpu(0);
  const Tensor d = Tensor::from_vector<double>({1.0, 2.0}, {2}).to(g);  // bytes move
  try {
    exp(d);
    FAIL() << "exp of F64 on webgpu should throw";
  } catch (const UnsupportedDType& e) {
    const std::string m = e.what();
    EXPECT_EQ(m.rfind("[exp] ", 0), 0u) << m;
    EXPECT_NE(m.find("webgpu"), std::string::npos) << m;
    EXPECT_NE(m.find("F64"), std::string::npos) << m;
  }
  EXPECT_THROW(zeros({3}, DType::F64, g), UnsupportedDType);
  EXPECT_THROW(Tensor::from_vector<float>({1.f}, {1}).to(g).cast(DType::F64), UnsupportedDType);
  EXPECT_FALSE(backend_for(g).supports_dtype(DType::F64));
  EXPECT_TRUE(backend_for(g).supports_dtype(DType::I64));  // word pairs (test_webgpu_i64.cpp)
  EXPECT_TRUE(backend_for(g).supports_dtype(DType::F32));
}

TEST(WebGpuRuntime, ShaderErrorsCarryTheCompilersMessage) {
  REQUIRE_WEBGPU();
  try {
    ctx.make_pipeline("fn main( {", "broken");
    FAIL() << "a broken shader should not compile";
  } catch (const BackendError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("broken"), std::string::npos) << m;
    EXPECT_NE(m.find("error"), std::string::npos) << m;  // Tint's diagnostic
  }
  // The device is still usable afterwards.
  const Tensor t = full({3}, 2.0, DType::F32, Device::webgpu(0));
  EXPECT_EQ(t.to(Device::cpu()).to_vector<float>(), (std::vector<float>{2.f, 2.f, 2.f}));
}

TEST(WebGpuRuntime, ValidationErrorsBecomeBackendError) {
  REQUIRE_WEBGPU();
  // A pipeline with one storage binding besides the parameters, given none: Dawn rejects
  // the bind group, and the error surfaces at the next check with Dawn's message.
  webgpu::Shader s;
  const std::string out = s.buffer(DType::F32, true);
  s.body().line(out + "[gi] = 1.0;");
  WGPUComputePipeline p = ctx.make_pipeline(s.finish(), "one_binding");
  const uint32_t params[] = {1};
  ctx.dispatch(p, {}, params, 1);
  try {
    ctx.synchronize();
    FAIL() << "a dispatch with a missing binding should fail";
  } catch (const BackendError& e) {
    EXPECT_NE(std::string(e.what()).find("webgpu: "), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(ctx.synchronize());  // the error was reported once
}

TEST(WebGpuRuntime, HostCopiesRoundTripAtAnyByteOffset) {
  REQUIRE_WEBGPU();
  webgpu::Buffer* b = ctx.allocate(37);
  std::vector<uint8_t> in(37), out(37, 0);
  for (size_t i = 0; i < in.size(); ++i) in[i] = uint8_t(i * 7 + 1);
  ctx.write(b, 0, in.data(), in.size());
  const uint8_t patch[3] = {200, 201, 202};
  ctx.write(b, 5, patch, 3);  // not word-aligned: merged with the bytes around it
  std::memcpy(in.data() + 5, patch, 3);
  ctx.read(out.data(), b, 0, out.size());
  EXPECT_EQ(out, in);
  uint8_t mid[4] = {};
  ctx.read(mid, b, 3, 4);
  EXPECT_EQ(0, std::memcmp(mid, in.data() + 3, 4));
  ctx.fill_bytes(b, 37, 0x5A);
  ctx.read(out.data(), b, 0, out.size());
  EXPECT_EQ(out, std::vector<uint8_t>(37, 0x5A));
  ctx.deallocate(b);
}

// A strided copy between views of one storage: the source is read from a copy, as WebGPU
// forbids binding a buffer writable and readable in one dispatch.
TEST(WebGpuRuntime, CopyWithinOneStorage) {
  REQUIRE_WEBGPU();
  const Device g = Device::webgpu(0);
  Tensor t = arange(0, 8, 1, DType::F32, g);
  t.narrow(0, 0, 4).copy_(t.narrow(0, 4, 4));
  EXPECT_EQ(t.to(Device::cpu()).to_vector<float>(), (std::vector<float>{4, 5, 6, 7, 4, 5, 6, 7}));
}

TEST(WebGpuRuntime, RandomDrawsEqualTheCpus) {
  REQUIRE_WEBGPU();
  const Device g = Device::webgpu(0);
  for (uint64_t seed : {0ull, 7ull, 0x123456789abcdefull}) {
    Generator a(seed), b(seed);
    a.set_offset(0xfffffff0ull);  // the counter carries into its high word mid-draw
    b.set_offset(0xfffffff0ull);
    EXPECT_EQ(rand({1000}, DType::F32, g, a).to(Device::cpu()).to_vector<float>(),
              rand({1000}, DType::F32, Device::cpu(), b).to_vector<float>());
    EXPECT_EQ(randn({257}, DType::F32, g, a).to(Device::cpu()).to_vector<float>(),
              randn({257}, DType::F32, Device::cpu(), b).to_vector<float>());
    EXPECT_EQ(randint(-5, 1000003, {999}, DType::I32, g, a).to(Device::cpu()).to_vector<int32_t>(),
              randint(-5, 1000003, {999}, DType::I32, Device::cpu(), b).to_vector<int32_t>());
    EXPECT_EQ(randint(-2147483647ll, 2147483647ll, {300}, DType::I32, g, a)
                  .to(Device::cpu())
                  .to_vector<int32_t>(),
              randint(-2147483647ll, 2147483647ll, {300}, DType::I32, Device::cpu(), b)
                  .to_vector<int32_t>());
    EXPECT_EQ(randint(0, 256, {77}, DType::U8, g, a).to(Device::cpu()).to_vector<uint8_t>(),
              randint(0, 256, {77}, DType::U8, Device::cpu(), b).to_vector<uint8_t>());
  }
}

// Many small ops recorded before one read: batched into few submits, parameters kept apart.
TEST(WebGpuRuntime, ManyDispatchesBeforeOneRead) {
  REQUIRE_WEBGPU();
  const Device g = Device::webgpu(0);
  Tensor x = zeros({5}, DType::F32, g);
  Tensor y = zeros({5}, DType::F32, Device::cpu());
  for (int i = 0; i < 150; ++i) {
    x = add_scalar(x, double(i % 7));
    y = add_scalar(y, double(i % 7));
  }
  EXPECT_EQ(x.to(Device::cpu()).to_vector<float>(), y.to_vector<float>());
}

// A temporary freed while work that reads it is recorded but not yet submitted, with the
// buffer cache full (so the buffer leaves the cache): the work still runs on it.
TEST(WebGpuRuntime, FreedBufferStaysValidForRecordedWork) {
  REQUIRE_WEBGPU();
  const Device g = Device::webgpu(0);
  {
    // 1 GiB of buffers freed together fills the cache.
    std::vector<Tensor> fill;
    for (int i = 0; i < 16; ++i) fill.push_back(Tensor::empty({int64_t(16) << 20}, DType::F32, g));
  }
  Tensor a = full({1000}, 2.0, DType::F32, g);
  Tensor r;
  {
    Tensor t = a * 3.0;
    r = t + 1.0;
  }
  const std::vector<float> got = r.to(Device::cpu()).to_vector<float>();
  EXPECT_EQ(got, std::vector<float>(1000, 7.0f));
}

// Uploads, chains of ops with temporaries freed while their work is recorded, and buffers
// of sizes no longer in use pushed out of the cache, interleaved: every result read at the
// end is what the CPU computes from the uploaded values.
TEST(WebGpuRuntime, ReusedBuffersHoldTheirOwnContents) {
  REQUIRE_WEBGPU();
  const Device g = Device::webgpu(0);
  const int64_t sizes[] = {65537, 1000, 300001, 131074, 7};
  std::vector<Tensor> gpu, cpu;
  for (int it = 0; it < 40; ++it) {
    const int64_t n = sizes[it % 5];
    std::vector<float> v(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) v[size_t(i)] = float((i * 7 + it * 13) % 1009) - 500.0f;
    const Tensor h = Tensor::from_vector(v, {n});
    gpu.push_back((h.to(g) * 2.0 + double(it)) / 3.0);
    cpu.push_back((h * 2.0 + double(it)) / 3.0);
    if (it % 8 == 7) {
      // 1.25 GiB freed at once: the cache releases older buffers to hold them.
      std::vector<Tensor> big;
      for (int k = 0; k < 5; ++k) big.push_back(Tensor::empty({int64_t(64) << 20}, DType::F32, g));
    }
    if (it % 3 == 2) gpu.back() = gpu.back() + gpu[size_t(it - 1)].max();
    if (it % 3 == 2) cpu.back() = cpu.back() + cpu[size_t(it - 1)].max();
  }
  for (size_t k = 0; k < gpu.size(); ++k)
    EXPECT_EQ(gpu[k].to(Device::cpu()).to_vector<float>(), cpu[k].to_vector<float>()) << k;
}

// Uploads into buffers that earlier work used (the cache hands them back, poisoned first as
// every test allocation is) keep every bit, as read back and as the next kernel sees them:
// on NVIDIA's Vulkan driver, queue writes into such buffers once left later work reading
// stale words.
TEST(WebGpuRuntime, UploadsIntoReusedBuffersKeepEveryBit) {
  REQUIRE_WEBGPU();
  const Device g = Device::webgpu(0);
  const int64_t n = 65537;
  for (uint32_t it = 0; it < 12; ++it) {
    std::vector<uint32_t> bits(static_cast<size_t>(n));
    for (size_t i = 0; i < bits.size(); ++i) {
      bits[i] = uint32_t(i) * 2654435761u + it * 40503u;
      // Normal values only: no NaN or Inf, and no subnormal, which a device may flush.
      if ((bits[i] & 0x7f800000u) == 0x7f800000u) bits[i] &= 0xbfffffffu;
      if ((bits[i] & 0x7f800000u) == 0) bits[i] |= 0x00800000u;
    }
    std::vector<float> v(bits.size());
    std::memcpy(v.data(), bits.data(), 4 * bits.size());
    const Tensor h = Tensor::from_vector(v, {n});
    const Tensor d = h.to(g);
    const Tensor back = d.to(Device::cpu());
    ASSERT_EQ(std::memcmp(back.to_vector<float>().data(), v.data(), 4 * v.size()), 0) << it;
    const std::vector<float> got = (-d).to(Device::cpu()).to_vector<float>();
    const std::vector<float> want = (-h).to_vector<float>();
    ASSERT_EQ(std::memcmp(got.data(), want.data(), 4 * want.size()), 0) << it;
  }
}

}  // namespace
}  // namespace numr
