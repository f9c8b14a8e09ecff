// The CUDA runtime layer: driver loading and its failure messages, devices, the caching
// allocator, PTX modules and the kernel cache, launches, events and cuBLASLt. Tests that
// need a GPU skip, saying why, on machines without one.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "backends/cuda/allocator.h"
#include "backends/cuda/context.h"
#include "backends/cuda/cublaslt.h"
#include "backends/cuda/cublaslt_matmul.h"
#include "backends/cuda/cuda_backend.h"
#include "backends/cuda/driver.h"
#include "backends/cuda/event.h"
#include "backends/cuda/launch.h"
#include "backends/cuda/module.h"
#include "core/backend.h"
#include "numr/numr.h"
#include "support/cuda_test.h"

#if defined(NUMR_TEST_CUDA_HEADERS)
#include <cublasLt.h>
#include <cuda.h>

#include <cstddef>
#endif

namespace {

using namespace numr;
namespace cu = numr::cuda;

// The first CUDA device, or nullptr with the reason it cannot be used.
cu::CudaDevice* gpu(std::string* reason) { return numr::test::first_cuda_device(reason); }

#define REQUIRE_GPU(dev)                                         \
  std::string no_gpu_reason_;                                    \
  cu::CudaDevice* dev = gpu(&no_gpu_reason_);                    \
  if (!dev) {                                                    \
    GTEST_SKIP() << "no usable CUDA device: " << no_gpu_reason_; \
  }

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// Sets an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    setenv(name, value, 1);
  }
  ~ScopedEnv() {
    if (old_.empty())
      unsetenv(name_);
    else
      setenv(name_, old_.c_str(), 1);
  }

 private:
  const char* name_;
  std::string old_;
};

// PTX header for the device: the newest ISA its driver takes, and its own architecture.
std::string ptx_header(const cu::CudaDevice& dev) {
  return ".version " + dev.props().ptx_version() + "\n.target " + dev.props().ptx_target() +
         "\n.address_size 64\n";
}

// data[i] += 1 for i < n; one thread per element.
std::string add_one_ptx(const cu::CudaDevice& dev, const std::string& increment = "0f3F800000") {
  return ptx_header(dev) + R"(
.visible .entry add_one(
  .param .u64 p_data,
  .param .u64 p_n
)
{
  .reg .pred %p<2>;
  .reg .b32 %r<5>;
  .reg .b64 %rd<7>;
  .reg .f32 %f<3>;

  ld.param.u64 %rd1, [p_data];
  ld.param.u64 %rd2, [p_n];
  mov.u32 %r1, %ctaid.x;
  mov.u32 %r2, %ntid.x;
  mov.u32 %r3, %tid.x;
  mad.lo.u32 %r4, %r1, %r2, %r3;
  cvt.u64.u32 %rd3, %r4;
  setp.ge.u64 %p1, %rd3, %rd2;
  @%p1 bra DONE;
  cvta.to.global.u64 %rd4, %rd1;
  shl.b64 %rd5, %rd3, 2;
  add.s64 %rd6, %rd4, %rd5;
  ld.global.f32 %f1, [%rd6];
  add.f32 %f2, %f1, )" +
         increment + R"(;
  st.global.f32 [%rd6], %f2;
DONE:
  ret;
}
)";
}

// out[t] = 2 * in[t] for one block, staged through dynamic shared memory at byte offset
// `skip`, so the end of a large dynamic allocation is really used.
std::string shared_twice_ptx(const cu::CudaDevice& dev) {
  return ptx_header(dev) + R"(
.extern .shared .align 16 .b8 smem[];

.visible .entry shared_twice(
  .param .u64 p_out,
  .param .u64 p_in,
  .param .u32 p_skip
)
{
  .reg .b32 %r<7>;
  .reg .b64 %rd<8>;
  .reg .f32 %f<4>;

  ld.param.u64 %rd1, [p_out];
  ld.param.u64 %rd2, [p_in];
  ld.param.u32 %r1, [p_skip];
  mov.u32 %r2, %tid.x;
  cvta.to.global.u64 %rd3, %rd2;
  mul.wide.u32 %rd4, %r2, 4;
  add.s64 %rd5, %rd3, %rd4;
  ld.global.f32 %f1, [%rd5];
  shl.b32 %r3, %r2, 2;
  add.u32 %r4, %r3, %r1;
  mov.u32 %r5, smem;
  add.u32 %r6, %r5, %r4;
  st.shared.f32 [%r6], %f1;
  bar.sync 0;
  ld.shared.f32 %f2, [%r6];
  add.f32 %f3, %f2, %f2;
  cvta.to.global.u64 %rd6, %rd1;
  add.s64 %rd7, %rd6, %rd4;
  st.global.f32 [%rd7], %f3;
  ret;
}
)";
}

cu::CUdeviceptr dptr(const void* p) { return cu::CUdeviceptr(reinterpret_cast<uintptr_t>(p)); }

// ---------------------------------------------------------------------------------------
// Without a GPU

TEST(CudaRuntime, AbiMatchesOfficialHeaders) {
#if defined(NUMR_TEST_CUDA_HEADERS)
  SUCCEED() << "checked at compile time against " << NUMR_TEST_CUDA_INCLUDE_DIR;
#else
  GTEST_SKIP() << "no CUDA headers at " << NUMR_TEST_CUDA_INCLUDE_DIR
               << " when this test was built (set NUMR_CUDA_INCLUDE_DIR); the declarations in "
                  "src/backends/cuda/*_api.h were not checked against them";
#endif
}

TEST(CudaRuntime, PtxIsaFollowsTheDriverVersion) {
  using P = std::pair<int, int>;
  EXPECT_EQ(cu::ptx_isa_for_driver(11080), P(7, 8));
  EXPECT_EQ(cu::ptx_isa_for_driver(12000), P(8, 0));
  EXPECT_EQ(cu::ptx_isa_for_driver(12040), P(8, 4));
  EXPECT_EQ(cu::ptx_isa_for_driver(12060), P(8, 5));
  EXPECT_EQ(cu::ptx_isa_for_driver(12080), P(8, 7));
  EXPECT_EQ(cu::ptx_isa_for_driver(12090), P(8, 8));
  EXPECT_EQ(cu::ptx_isa_for_driver(13000), P(9, 0));
  EXPECT_EQ(cu::ptx_isa_for_driver(13010), P(9, 1));
  EXPECT_EQ(cu::ptx_isa_for_driver(13020), P(9, 1));  // newer than the table: its newest
  EXPECT_EQ(cu::ptx_isa_for_driver(14000), P(9, 1));
}

TEST(CudaRuntime, UnavailableDeviceNamesTheReason) {
  std::string reason;
  if (gpu(&reason)) {
    GTEST_SKIP() << "a CUDA device is usable here";
  }
  // The error names the op that needed the device.
  const std::pair<std::string, void (*)()> cases[] = {
      {"[empty] ", +[] { (void)Tensor::empty({4}, DType::F32, Device::cuda(0)); }},
      {"[zeros] ",
       +[] {
         (void)zeros({2, 2}, DType::F32, Device::cuda(0));
       }},
      {"[to_device] ", +[] { (void)Tensor::from_vector<float>({1.f}, {1}).to(Device::cuda(0)); }}};
  for (const auto& [prefix, make] : cases) {
    try {
      make();
      ADD_FAILURE() << "expected BackendUnavailable";
    } catch (const BackendUnavailable& e) {
      const std::string msg = e.what();
      EXPECT_EQ(msg.rfind(prefix, 0), 0u) << msg;
      EXPECT_TRUE(contains(msg, "could not be loaded") || contains(msg, "cuInit failed") ||
                  contains(msg, "no CUDA device"))
          << msg;
    }
  }
}

// The CPU and CUDA devices available_devices lists (a WebGPU device may follow them).
std::vector<Device> cpu_and_cuda_devices() {
  std::vector<Device> out;
  for (const Device d : available_devices())
    if (d.type != DeviceType::WebGpu) out.push_back(d);
  return out;
}

TEST(CudaRuntime, AvailableDevicesListTheUsableOnes) {
  const std::vector<Device> devices = cpu_and_cuda_devices();
  ASSERT_FALSE(devices.empty());
  EXPECT_EQ(devices.front(), Device::cpu());
  const int n = cu::cuda_device_count();
  std::vector<Device> expected{Device::cpu()};
  for (int i = 0; i < n; ++i) expected.push_back(Device::cuda(i));
  EXPECT_EQ(devices, expected);
  if (!cu::try_driver()) {
    EXPECT_EQ(devices, std::vector<Device>{Device::cpu()});
  }
}

TEST(CudaRuntime, DriverOverrideGivesTheDlopenError) {
  const std::string path = "/nonexistent/libcuda.so.1";
  try {
    cu::load_driver(path);
    ADD_FAILURE() << "expected BackendUnavailable";
  } catch (const BackendUnavailable& e) {
    EXPECT_TRUE(contains(e.what(), "[cuda] /nonexistent/libcuda.so.1 could not be loaded ("))
        << e.what();
    EXPECT_TRUE(contains(e.what(), "No such file")) << e.what();
  }

  ScopedEnv env("NUMR_CUDA_DRIVER", path.c_str());
  if (cu::try_driver()) {
    // The process loaded its driver before this test: the override applies only until then.
    SUCCEED() << "driver already loaded; NUMR_CUDA_DRIVER is read only before that";
    return;
  }
  try {
    (void)Tensor::empty({4}, DType::F32, Device::cuda(0));
    ADD_FAILURE() << "expected BackendUnavailable";
  } catch (const BackendUnavailable& e) {
    EXPECT_TRUE(contains(e.what(), path + " could not be loaded")) << e.what();
  }
  EXPECT_EQ(cpu_and_cuda_devices(), std::vector<Device>{Device::cpu()});
}

TEST(CudaRuntime, StubDriverFailsInCuInit) {
  const std::string stub = "/usr/local/cuda/lib64/stubs/libcuda.so";
  std::string reason;
  if (gpu(&reason)) {
    GTEST_SKIP() << "a real driver is in use here";
  }
  FILE* f = std::fopen(stub.c_str(), "rb");
  if (!f) {
    GTEST_SKIP() << "no toolkit stub at " << stub;
  }
  std::fclose(f);
  try {
    cu::load_driver(stub);
    ADD_FAILURE() << "the stub initialised";
  } catch (const BackendUnavailable& e) {
    EXPECT_TRUE(contains(e.what(), "[cuda] cuInit failed: ")) << e.what();
  }
}

TEST(CudaRuntime, CublasLtLoadsWhereInstalled) {
  std::string reason;
  const cu::CublasLt* lt = cu::try_cublaslt(&reason);
  if (!lt) {
    EXPECT_TRUE(contains(reason, "[cuda] cuBLASLt could not be loaded (")) << reason;
    GTEST_SKIP() << reason;
  }
  EXPECT_GE(lt->version, 120000u) << lt->path;
  EXPECT_TRUE(contains(cu::status_text(cu::CUBLAS_STATUS_NOT_SUPPORTED), "NOT_SUPPORTED"));
}

// ---------------------------------------------------------------------------------------
// With a GPU

TEST(CudaRuntime, DevicePropertiesAreSensible) {
  REQUIRE_GPU(dev);
  const cu::DeviceProperties& p = dev->props();
  EXPECT_FALSE(p.name.empty());
  EXPECT_GE(p.cc_major, 7);
  EXPECT_GT(p.sm_count, 0);
  EXPECT_EQ(p.warp_size, 32);
  EXPECT_GE(p.max_threads_per_block, 1024);
  EXPECT_EQ(p.max_shared_per_block, 48 * 1024);
  EXPECT_GE(p.max_shared_per_block_optin, p.max_shared_per_block);
  EXPECT_GT(p.total_memory, size_t(1) << 30);
  EXPECT_GE(p.ptx_isa_major, 7);
  EXPECT_EQ(backend_for(Device::cuda(0)).device(), Device::cuda(0));
  EXPECT_TRUE(contains(backend_for(Device::cuda(0)).name(), "cuda:0/sm_"))
      << backend_for(Device::cuda(0)).name();
  RecordProperty("device", p.name + " " + p.ptx_target() + ", PTX " + p.ptx_version());
}

TEST(CudaRuntime, MissingDeviceNamesTheCount) {
  REQUIRE_GPU(dev);
  const int n = cu::cuda_device_count();
  try {
    (void)Tensor::empty({1}, DType::F32, Device::cuda(n));
    ADD_FAILURE() << "expected BackendUnavailable";
  } catch (const BackendUnavailable& e) {
    EXPECT_TRUE(contains(e.what(), "no CUDA device " + std::to_string(n) + ": this machine has " +
                                       std::to_string(n)))
        << e.what();
  }
}

TEST(CudaRuntime, HostRoundTripWithOffsets) {
  REQUIRE_GPU(dev);
  Backend& be = backend_for(Device::cuda(0));
  const size_t n = 4096;
  void* buf = be.allocate(n);
  ASSERT_NE(buf, nullptr);
  be.fill_bytes(buf, n, 0);
  std::vector<uint8_t> pattern(300);
  for (size_t i = 0; i < pattern.size(); ++i) pattern[i] = uint8_t(i * 7 + 1);
  be.copy_from_host(buf, 1000, pattern.data(), pattern.size());

  std::vector<uint8_t> all(n, 0xFF);
  be.copy_to_host(all.data(), buf, 0, n);
  for (size_t i = 0; i < n; ++i) {
    const uint8_t want = i >= 1000 && i < 1300 ? pattern[i - 1000] : 0;
    ASSERT_EQ(all[i], want) << "byte " << i;
  }
  std::vector<uint8_t> part(100, 0xFF);
  be.copy_to_host(part.data(), buf, 1050, part.size());
  for (size_t i = 0; i < part.size(); ++i) ASSERT_EQ(part[i], pattern[50 + i]) << i;
  be.deallocate(buf);
  be.deallocate(nullptr);
}

TEST(CudaRuntime, TensorsMoveBetweenCpuAndCuda) {
  REQUIRE_GPU(dev);
  std::vector<float> v(1000);
  for (size_t i = 0; i < v.size(); ++i) v[i] = float(i) * 0.5f - 3.f;
  const Tensor host = Tensor::from_vector(v, {10, 100});
  const Tensor on_gpu = host.to(Device::cuda(0));
  EXPECT_EQ(on_gpu.device(), Device::cuda(0));
  EXPECT_EQ(on_gpu.to_vector<float>(), v);
  const Tensor back = on_gpu.to(Device::cpu());
  EXPECT_EQ(back.device(), Device::cpu());
  EXPECT_EQ(back.to_vector<float>(), v);
  // A contiguous slice at an offset, a clone (device-to-device copy) and a scalar read.
  const Tensor rows = on_gpu.narrow(0, 3, 2);
  EXPECT_EQ(rows.to(Device::cpu()).to_vector<float>(),
            std::vector<float>(v.begin() + 300, v.begin() + 500));
  EXPECT_EQ(on_gpu.clone().to_vector<float>(), v);
  EXPECT_EQ(on_gpu.narrow(1, 7, 1).narrow(0, 2, 1).item<float>(), v[207]);
  const Tensor direct = Tensor::from_vector<double>({1.0, -2.0}, {2}, Device::cuda(0));
  EXPECT_EQ(direct.to_vector<double>(), (std::vector<double>{1.0, -2.0}));
}

TEST(CudaRuntime, UnwrittenOpFamiliesAreBackendLimitations) {
  REQUIRE_GPU(dev);
  const Tensor t = Tensor::from_vector<float>({1.f, 2.f, 3.f, 4.f}, {2, 2}, Device::cuda(0));
  try {
    (void)exp(t);
    SUCCEED() << "elementwise kernels exist now";
  } catch (const BackendLimitation& e) {
    EXPECT_TRUE(contains(e.what(), "not implemented on CUDA yet")) << e.what();
  }
  // A strided view needs the copy kernel; the contiguous case above did not.
  try {
    (void)t.transpose(0, 1).to(Device::cpu());
    SUCCEED() << "strided copies exist now";
  } catch (const BackendLimitation& e) {
    EXPECT_TRUE(contains(e.what(), "[copy] not implemented on CUDA yet")) << e.what();
  }
}

TEST(CudaRuntime, FillBytesSetsARange) {
  REQUIRE_GPU(dev);
  Backend& be = backend_for(Device::cuda(0));
  void* buf = be.allocate(1024);
  be.fill_bytes(buf, 1024, 0x11);
  be.fill_bytes(static_cast<char*>(buf) + 100, 200, 0xAB);
  std::vector<uint8_t> out(1024);
  be.copy_to_host(out.data(), buf, 0, out.size());
  for (size_t i = 0; i < out.size(); ++i) ASSERT_EQ(out[i], i >= 100 && i < 300 ? 0xAB : 0x11) << i;
  be.deallocate(buf);
}

TEST(CudaRuntime, AllocatorReusesFreedBlocks) {
  REQUIRE_GPU(dev);
  cu::CachingAllocator& alloc = dev->allocator();
  EXPECT_EQ(alloc.allocate(0), nullptr);
  const size_t n = size_t(64) << 20;
  void* a = alloc.allocate(n);
  const uint64_t reserved = alloc.reserved_bytes();
  EXPECT_GE(reserved, n);
  EXPECT_GE(alloc.used_bytes(), n);
  alloc.deallocate(a);
  dev->synchronize();
  // Freed blocks stay in the pool (release threshold raised): no new device memory.
  EXPECT_EQ(alloc.reserved_bytes(), reserved);
  void* b = alloc.allocate(n);
  EXPECT_EQ(alloc.reserved_bytes(), reserved);
  alloc.deallocate(b);
  dev->synchronize();
}

TEST(CudaRuntime, OutOfMemoryIsReported) {
  REQUIRE_GPU(dev);
  try {
    void* p = dev->allocator().allocate(dev->props().total_memory * 2);
    dev->allocator().deallocate(p);
    ADD_FAILURE() << "allocated twice the device's memory";
  } catch (const OutOfMemory& e) {
    EXPECT_EQ(std::string(e.what()).rfind("[cuda] cuMemAllocAsync: ", 0), 0u) << e.what();
  }
  void* p = dev->allocator().allocate(1024);  // still usable afterwards
  EXPECT_NE(p, nullptr);
  dev->allocator().deallocate(p);
}

TEST(CudaRuntime, HandWrittenPtxKernelRuns) {
  REQUIRE_GPU(dev);
  const cu::Module module(*dev, add_one_ptx(*dev), "add_one test");
  const cu::CUfunction f = module.function("add_one");
  const uint64_t n = 1000;
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = float(i);
  Backend& be = backend_for(Device::cuda(0));
  void* buf = be.allocate(n * sizeof(float));
  be.copy_from_host(buf, 0, v.data(), n * sizeof(float));
  cu::LaunchConfig cfg;
  cfg.block.x = 256;
  cfg.grid.x = unsigned((n + 255) / 256);
  cu::launch_kernel(*dev, f, cfg, "add_one", dptr(buf), n);
  cu::launch_kernel(*dev, f, cfg, "add_one", dptr(buf), n);
  std::vector<float> out(n);
  be.copy_to_host(out.data(), buf, 0, n * sizeof(float));
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(out[i], float(i) + 2.f) << i;
  be.deallocate(buf);
}

TEST(CudaRuntime, LaunchRaisesTheDynamicSharedLimit) {
  REQUIRE_GPU(dev);
  const cu::Module module(*dev, shared_twice_ptx(*dev), "shared test");
  const cu::CUfunction f = module.function("shared_twice");
  const unsigned threads = 256;
  const unsigned shared = std::min(96u * 1024, unsigned(dev->props().max_shared_per_block_optin));
  ASSERT_GT(shared, 48u * 1024) << "the device cannot opt in to more than 48 KiB";
  Backend& be = backend_for(Device::cuda(0));
  std::vector<float> in(threads);
  for (unsigned i = 0; i < threads; ++i) in[i] = float(i) - 100.f;
  void* d_in = be.allocate(threads * 4);
  void* d_out = be.allocate(threads * 4);
  be.copy_from_host(d_in, 0, in.data(), threads * 4);
  cu::LaunchConfig cfg;
  cfg.block.x = threads;
  cfg.shared_bytes = shared;
  const uint32_t skip = shared - threads * 4;  // the last bytes of the allocation
  cu::launch_kernel(*dev, f, cfg, "shared_twice", dptr(d_out), dptr(d_in), skip);
  std::vector<float> out(threads);
  be.copy_to_host(out.data(), d_out, 0, threads * 4);
  for (unsigned i = 0; i < threads; ++i) ASSERT_EQ(out[i], 2.f * in[i]) << i;

  cfg.shared_bytes = unsigned(dev->props().max_shared_per_block_optin) + 1024;
  EXPECT_THROW(cu::launch_kernel(*dev, f, cfg, "shared_twice", dptr(d_out), dptr(d_in), skip),
               BackendLimitation);
  be.deallocate(d_in);
  be.deallocate(d_out);
}

TEST(CudaRuntime, BrokenPtxReportsTheJitLog) {
  REQUIRE_GPU(dev);
  try {
    cu::Module module(*dev, add_one_ptx(*dev, "%no_such_register"), "broken add_one");
    ADD_FAILURE() << "broken PTX loaded";
  } catch (const BackendError& e) {
    const std::string msg = e.what();
    RecordProperty("message", msg);
    EXPECT_EQ(msg.rfind("[cuda] cuModuleLoadDataEx (broken add_one): ", 0), 0u) << msg;
    EXPECT_TRUE(contains(msg, "JIT error log:\n")) << msg;
    EXPECT_TRUE(contains(msg, "no_such_register")) << msg;  // from the log or the quoted line
    EXPECT_TRUE(contains(msg, "ptxas")) << msg;
    EXPECT_TRUE(contains(msg, "PTX lines named in the log:")) << msg;
  }
}

TEST(CudaRuntime, KernelCacheBuildsEachKeyOnce) {
  REQUIRE_GPU(dev);
  cu::KernelCache& cache = dev->kernels();
  int builds = 0;
  auto gen = [&] {
    ++builds;
    return cu::GeneratedKernel{"add_one", add_one_ptx(*dev)};
  };
  const size_t before = cache.size();
  const cu::CUfunction f1 = cache.get_or_build("test/add_one/1", gen);
  const cu::CUfunction f2 = cache.get_or_build("test/add_one/1", gen);
  EXPECT_EQ(f1, f2);
  EXPECT_EQ(builds, 1);
  const cu::CUfunction f3 = cache.get_or_build("test/add_one/2", gen);
  EXPECT_NE(f3, f1);
  EXPECT_EQ(builds, 2);
  EXPECT_EQ(cache.size(), before + 2);

  // A failed build caches nothing; the next request builds again.
  EXPECT_THROW(cache.get_or_build("test/add_one/3",
                                  [&]() -> cu::GeneratedKernel {
                                    ++builds;
                                    return {"add_one", add_one_ptx(*dev, "%bad")};
                                  }),
               BackendError);
  EXPECT_EQ(cache.size(), before + 2);
  (void)cache.get_or_build("test/add_one/3", gen);
  EXPECT_EQ(builds, 4);
}

TEST(CudaRuntime, KernelCacheIsThreadSafe) {
  REQUIRE_GPU(dev);
  std::atomic<int> builds{0};
  std::vector<cu::CUfunction> got(8, nullptr);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < got.size(); ++t)
    threads.emplace_back([&, t] {
      got[t] = dev->kernels().get_or_build("test/add_one/threads", [&] {
        ++builds;
        return cu::GeneratedKernel{"add_one", add_one_ptx(*dev)};
      });
    });
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(builds.load(), 1);
  for (cu::CUfunction f : got) EXPECT_EQ(f, got[0]);
}

TEST(CudaRuntime, OtherThreadsUseTheDevice) {
  REQUIRE_GPU(dev);
  std::vector<float> out;
  std::thread worker([&] {
    const Tensor t = Tensor::from_vector<float>({1.f, 2.f, 3.f}, {3}, Device::cuda(0));
    out = t.to(Device::cpu()).to_vector<float>();
  });
  worker.join();
  EXPECT_EQ(out, (std::vector<float>{1.f, 2.f, 3.f}));
}

TEST(CudaRuntime, EventsMeasureElapsedTime) {
  REQUIRE_GPU(dev);
  Backend& be = backend_for(Device::cuda(0));
  const size_t n = size_t(256) << 20;
  void* buf = be.allocate(n);
  cu::Event start(*dev), stop(*dev);
  start.record();
  for (int i = 0; i < 4; ++i) be.fill_bytes(buf, n, uint8_t(i));
  stop.record();
  const float ms = stop.elapsed_ms_since(start);
  EXPECT_GT(ms, 0.f);
  EXPECT_LT(ms, 10000.f);
  be.deallocate(buf);
}

// Row-major D[M,N] = act(A[M,K] @ B[K,N] + bias[N]) through cuBLASLt, using the column-major
// view D^T = B^T A^T (see cublaslt_matmul.h).
void check_sgemm(cu::CudaDevice& dev, cu::cublasLtEpilogue_t epilogue) {
  const int64_t M = 33, K = 47, N = 21;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  std::vector<float> a(static_cast<size_t>(M * K)), b(static_cast<size_t>(K * N)),
      bias(static_cast<size_t>(N));
  for (float& x : a) x = u(rng);
  for (float& x : b) x = u(rng);
  for (float& x : bias) x = u(rng);
  const bool with_bias = epilogue != cu::CUBLASLT_EPILOGUE_DEFAULT;
  const bool relu = epilogue == cu::CUBLASLT_EPILOGUE_RELU_BIAS;

  const Tensor ta = Tensor::from_vector(a, {M, K}, Device::cuda(0));
  const Tensor tb = Tensor::from_vector(b, {K, N}, Device::cuda(0));
  const Tensor tbias = Tensor::from_vector(bias, {N}, Device::cuda(0));
  const Tensor td = Tensor::empty({M, N}, DType::F32, Device::cuda(0));

  cu::LtMatmulDesc desc;
  desc.epilogue = epilogue;
  if (with_bias) {
    desc.bias = tbias.storage()->handle();
    desc.bias_type = cu::CUDA_R_32F;
  }
  const cu::LtLayout la{cu::CUDA_R_32F, uint64_t(N), uint64_t(K), N};  // B^T: N x K
  const cu::LtLayout lb{cu::CUDA_R_32F, uint64_t(K), uint64_t(M), K};  // A^T: K x M
  const cu::LtLayout ld{cu::CUDA_R_32F, uint64_t(N), uint64_t(M), N};  // D^T: N x M
  const float alpha = 1.f, beta = 0.f;
  cu::LtOperands ops;
  ops.a = tb.storage()->handle();
  ops.b = ta.storage()->handle();
  ops.c = td.storage()->handle();
  ops.d = td.storage()->handle();
  ops.alpha = &alpha;
  ops.beta = &beta;
  cu::lt_matmul(dev, desc, la, lb, ld, ld, ops);

  const std::vector<float> got = td.to_vector<float>();
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double s = with_bias ? bias[size_t(j)] : 0.0, mag = std::abs(s);
      for (int64_t k = 0; k < K; ++k) {
        s += double(a[size_t(i * K + k)]) * b[size_t(k * N + j)];
        mag += std::abs(double(a[size_t(i * K + k)]) * b[size_t(k * N + j)]);
      }
      if (relu) s = std::max(s, 0.0);
      ASSERT_NEAR(got[size_t(i * N + j)], s, 1e-5 * mag + 1e-6) << i << ", " << j;
    }
}

TEST(CudaRuntime, CublasLtSgemmMatchesCpu) {
  REQUIRE_GPU(dev);
  std::string reason;
  if (!cu::try_cublaslt(&reason)) {
    GTEST_SKIP() << reason;
  }
  check_sgemm(*dev, cu::CUBLASLT_EPILOGUE_DEFAULT);
}

TEST(CudaRuntime, CublasLtBiasEpiloguesAddPerColumn) {
  REQUIRE_GPU(dev);
  std::string reason;
  if (!cu::try_cublaslt(&reason)) {
    GTEST_SKIP() << reason;
  }
  check_sgemm(*dev, cu::CUBLASLT_EPILOGUE_BIAS);
  check_sgemm(*dev, cu::CUBLASLT_EPILOGUE_RELU_BIAS);
}

// ---------------------------------------------------------------------------------------
// Our declarations against NVIDIA's headers (compile time).

#if defined(NUMR_TEST_CUDA_HEADERS)
namespace abi {

#define NUMR_SAME_VALUE(name) \
  static_assert(static_cast<long long>(cu::name) == static_cast<long long>(::name), #name)

NUMR_SAME_VALUE(CUDA_SUCCESS);
NUMR_SAME_VALUE(CUDA_ERROR_INVALID_VALUE);
NUMR_SAME_VALUE(CUDA_ERROR_OUT_OF_MEMORY);
NUMR_SAME_VALUE(CUDA_ERROR_NOT_INITIALIZED);
NUMR_SAME_VALUE(CUDA_ERROR_DEINITIALIZED);
NUMR_SAME_VALUE(CUDA_ERROR_STUB_LIBRARY);
NUMR_SAME_VALUE(CUDA_ERROR_NO_DEVICE);
NUMR_SAME_VALUE(CUDA_ERROR_INVALID_DEVICE);
NUMR_SAME_VALUE(CUDA_ERROR_INVALID_PTX);
NUMR_SAME_VALUE(CUDA_ERROR_UNSUPPORTED_PTX_VERSION);
NUMR_SAME_VALUE(CUDA_ERROR_NOT_READY);
NUMR_SAME_VALUE(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
NUMR_SAME_VALUE(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK);
NUMR_SAME_VALUE(CU_DEVICE_ATTRIBUTE_WARP_SIZE);
NUMR_SAME_VALUE(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
NUMR_SAME_VALUE(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
NUMR_SAME_VALUE(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR);
NUMR_SAME_VALUE(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
NUMR_SAME_VALUE(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
NUMR_SAME_VALUE(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR);
NUMR_SAME_VALUE(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
NUMR_SAME_VALUE(CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED);
NUMR_SAME_VALUE(CU_MEMPOOL_ATTR_RELEASE_THRESHOLD);
NUMR_SAME_VALUE(CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT);
NUMR_SAME_VALUE(CU_MEMPOOL_ATTR_USED_MEM_CURRENT);
NUMR_SAME_VALUE(CU_JIT_INFO_LOG_BUFFER);
NUMR_SAME_VALUE(CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES);
NUMR_SAME_VALUE(CU_JIT_ERROR_LOG_BUFFER);
NUMR_SAME_VALUE(CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES);
NUMR_SAME_VALUE(CU_JIT_LOG_VERBOSE);
NUMR_SAME_VALUE(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
NUMR_SAME_VALUE(CU_FUNC_ATTRIBUTE_NUM_REGS);
NUMR_SAME_VALUE(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES);
NUMR_SAME_VALUE(CU_STREAM_DEFAULT);
NUMR_SAME_VALUE(CU_STREAM_NON_BLOCKING);
NUMR_SAME_VALUE(CU_EVENT_DEFAULT);
NUMR_SAME_VALUE(CU_EVENT_BLOCKING_SYNC);
NUMR_SAME_VALUE(CU_EVENT_DISABLE_TIMING);

NUMR_SAME_VALUE(CUBLAS_STATUS_SUCCESS);
NUMR_SAME_VALUE(CUBLAS_STATUS_NOT_INITIALIZED);
NUMR_SAME_VALUE(CUBLAS_STATUS_ALLOC_FAILED);
NUMR_SAME_VALUE(CUBLAS_STATUS_INVALID_VALUE);
NUMR_SAME_VALUE(CUBLAS_STATUS_ARCH_MISMATCH);
NUMR_SAME_VALUE(CUBLAS_STATUS_EXECUTION_FAILED);
NUMR_SAME_VALUE(CUBLAS_STATUS_NOT_SUPPORTED);
NUMR_SAME_VALUE(CUBLAS_COMPUTE_32F);
NUMR_SAME_VALUE(CUBLAS_COMPUTE_64F);
NUMR_SAME_VALUE(CUBLAS_COMPUTE_32F_FAST_16F);
NUMR_SAME_VALUE(CUBLAS_COMPUTE_32F_FAST_16BF);
NUMR_SAME_VALUE(CUBLAS_COMPUTE_32F_FAST_TF32);
NUMR_SAME_VALUE(CUDA_R_32F);
NUMR_SAME_VALUE(CUDA_R_64F);
NUMR_SAME_VALUE(CUDA_R_16F);
NUMR_SAME_VALUE(CUDA_R_16BF);
NUMR_SAME_VALUE(CUBLAS_OP_N);
NUMR_SAME_VALUE(CUBLAS_OP_T);
NUMR_SAME_VALUE(CUBLASLT_ORDER_COL);
NUMR_SAME_VALUE(CUBLASLT_ORDER_ROW);
NUMR_SAME_VALUE(CUBLASLT_MATRIX_LAYOUT_TYPE);
NUMR_SAME_VALUE(CUBLASLT_MATRIX_LAYOUT_ORDER);
NUMR_SAME_VALUE(CUBLASLT_MATRIX_LAYOUT_ROWS);
NUMR_SAME_VALUE(CUBLASLT_MATRIX_LAYOUT_COLS);
NUMR_SAME_VALUE(CUBLASLT_MATRIX_LAYOUT_LD);
NUMR_SAME_VALUE(CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT);
NUMR_SAME_VALUE(CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET);
NUMR_SAME_VALUE(CUBLASLT_MATMUL_DESC_COMPUTE_TYPE);
NUMR_SAME_VALUE(CUBLASLT_MATMUL_DESC_SCALE_TYPE);
NUMR_SAME_VALUE(CUBLASLT_MATMUL_DESC_POINTER_MODE);
NUMR_SAME_VALUE(CUBLASLT_MATMUL_DESC_TRANSA);
NUMR_SAME_VALUE(CUBLASLT_MATMUL_DESC_TRANSB);
NUMR_SAME_VALUE(CUBLASLT_MATMUL_DESC_EPILOGUE);
NUMR_SAME_VALUE(CUBLASLT_MATMUL_DESC_BIAS_POINTER);
NUMR_SAME_VALUE(CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE);
NUMR_SAME_VALUE(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER);
NUMR_SAME_VALUE(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD);
NUMR_SAME_VALUE(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_BATCH_STRIDE);
NUMR_SAME_VALUE(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_DATA_TYPE);
NUMR_SAME_VALUE(CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE);
NUMR_SAME_VALUE(CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES);
NUMR_SAME_VALUE(CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK);
NUMR_SAME_VALUE(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES);
NUMR_SAME_VALUE(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES);
NUMR_SAME_VALUE(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES);
NUMR_SAME_VALUE(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES);
NUMR_SAME_VALUE(CUBLASLT_REDUCTION_SCHEME_NONE);
NUMR_SAME_VALUE(CUBLASLT_REDUCTION_SCHEME_INPLACE);
NUMR_SAME_VALUE(CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE);
NUMR_SAME_VALUE(CUBLASLT_REDUCTION_SCHEME_OUTPUT_TYPE);
NUMR_SAME_VALUE(CUBLASLT_REDUCTION_SCHEME_MASK);
NUMR_SAME_VALUE(CUBLASLT_EPILOGUE_DEFAULT);
NUMR_SAME_VALUE(CUBLASLT_EPILOGUE_RELU);
NUMR_SAME_VALUE(CUBLASLT_EPILOGUE_RELU_AUX);
NUMR_SAME_VALUE(CUBLASLT_EPILOGUE_BIAS);
NUMR_SAME_VALUE(CUBLASLT_EPILOGUE_RELU_BIAS);
NUMR_SAME_VALUE(CUBLASLT_EPILOGUE_RELU_AUX_BIAS);
NUMR_SAME_VALUE(CUBLASLT_EPILOGUE_DRELU);
NUMR_SAME_VALUE(CUBLASLT_EPILOGUE_DRELU_BGRAD);
NUMR_SAME_VALUE(CUBLASLT_EPILOGUE_GELU);
NUMR_SAME_VALUE(CUBLASLT_EPILOGUE_GELU_AUX);
NUMR_SAME_VALUE(CUBLASLT_EPILOGUE_GELU_BIAS);
NUMR_SAME_VALUE(CUBLASLT_EPILOGUE_GELU_AUX_BIAS);
NUMR_SAME_VALUE(CUBLASLT_EPILOGUE_DGELU);
NUMR_SAME_VALUE(CUBLASLT_EPILOGUE_DGELU_BGRAD);
NUMR_SAME_VALUE(CUBLASLT_EPILOGUE_BGRADA);
NUMR_SAME_VALUE(CUBLASLT_EPILOGUE_BGRADB);
NUMR_SAME_VALUE(CU_TENSOR_MAP_DATA_TYPE_UINT8);
NUMR_SAME_VALUE(CU_TENSOR_MAP_DATA_TYPE_FLOAT16);
NUMR_SAME_VALUE(CU_TENSOR_MAP_DATA_TYPE_FLOAT32);
NUMR_SAME_VALUE(CU_TENSOR_MAP_DATA_TYPE_BFLOAT16);
NUMR_SAME_VALUE(CU_TENSOR_MAP_INTERLEAVE_NONE);
NUMR_SAME_VALUE(CU_TENSOR_MAP_SWIZZLE_NONE);
NUMR_SAME_VALUE(CU_TENSOR_MAP_SWIZZLE_32B);
NUMR_SAME_VALUE(CU_TENSOR_MAP_SWIZZLE_64B);
NUMR_SAME_VALUE(CU_TENSOR_MAP_SWIZZLE_128B);
NUMR_SAME_VALUE(CU_TENSOR_MAP_L2_PROMOTION_NONE);
NUMR_SAME_VALUE(CU_TENSOR_MAP_L2_PROMOTION_L2_64B);
NUMR_SAME_VALUE(CU_TENSOR_MAP_L2_PROMOTION_L2_128B);
NUMR_SAME_VALUE(CU_TENSOR_MAP_L2_PROMOTION_L2_256B);
NUMR_SAME_VALUE(CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
NUMR_SAME_VALUE(CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA);
#undef NUMR_SAME_VALUE
// The tensor map's opaque words: as many as cuda.h's CU_TENSOR_MAP_NUM_QWORDS.
static_assert(sizeof(cu::CUtensorMap::opaque) == CU_TENSOR_MAP_NUM_QWORDS * sizeof(uint64_t),
              "CUtensorMap::opaque");

// Types: sizes and alignments (enums included: they are passed by value).
#define NUMR_SAME_TYPE(ours, theirs)                                                            \
  static_assert(sizeof(cu::ours) == sizeof(::theirs) && alignof(cu::ours) == alignof(::theirs), \
                #ours)
NUMR_SAME_TYPE(CUresult, CUresult);
NUMR_SAME_TYPE(CUdevice, CUdevice);
NUMR_SAME_TYPE(CUdeviceptr, CUdeviceptr);
NUMR_SAME_TYPE(CUdevice_attribute, CUdevice_attribute);
NUMR_SAME_TYPE(CUmemPool_attribute, CUmemPool_attribute);
NUMR_SAME_TYPE(CUjit_option, CUjit_option);
NUMR_SAME_TYPE(CUfunction_attribute, CUfunction_attribute);
NUMR_SAME_TYPE(cublasStatus_t, cublasStatus_t);
NUMR_SAME_TYPE(cublasComputeType_t, cublasComputeType_t);
NUMR_SAME_TYPE(cudaDataType_t, cudaDataType_t);
NUMR_SAME_TYPE(cublasOperation_t, cublasOperation_t);
NUMR_SAME_TYPE(cublasLtOrder_t, cublasLtOrder_t);
NUMR_SAME_TYPE(cublasLtEpilogue_t, cublasLtEpilogue_t);
NUMR_SAME_TYPE(cublasLtMatrixLayoutAttribute_t, cublasLtMatrixLayoutAttribute_t);
NUMR_SAME_TYPE(cublasLtMatmulDescAttributes_t, cublasLtMatmulDescAttributes_t);
NUMR_SAME_TYPE(cublasLtMatmulPreferenceAttributes_t, cublasLtMatmulPreferenceAttributes_t);
NUMR_SAME_TYPE(cublasLtReductionScheme_t, cublasLtReductionScheme_t);
NUMR_SAME_TYPE(cublasLtMatmulAlgo_t, cublasLtMatmulAlgo_t);
NUMR_SAME_TYPE(cublasLtMatrixLayoutOpaque_t, cublasLtMatrixLayoutOpaque_t);
NUMR_SAME_TYPE(cublasLtMatmulDescOpaque_t, cublasLtMatmulDescOpaque_t);
NUMR_SAME_TYPE(cublasLtMatmulPreferenceOpaque_t, cublasLtMatmulPreferenceOpaque_t);
NUMR_SAME_TYPE(cublasLtMatmulHeuristicResult_t, cublasLtMatmulHeuristicResult_t);
NUMR_SAME_TYPE(CUtensorMap, CUtensorMap);
NUMR_SAME_TYPE(CUtensorMapDataType, CUtensorMapDataType);
NUMR_SAME_TYPE(CUtensorMapInterleave, CUtensorMapInterleave);
NUMR_SAME_TYPE(CUtensorMapSwizzle, CUtensorMapSwizzle);
NUMR_SAME_TYPE(CUtensorMapL2promotion, CUtensorMapL2promotion);
NUMR_SAME_TYPE(CUtensorMapFloatOOBfill, CUtensorMapFloatOOBfill);
#undef NUMR_SAME_TYPE

#define NUMR_SAME_OFFSET(type, field) \
  static_assert(offsetof(cu::type, field) == offsetof(::type, field), #type "::" #field)
NUMR_SAME_OFFSET(cublasLtMatmulHeuristicResult_t, algo);
NUMR_SAME_OFFSET(cublasLtMatmulHeuristicResult_t, workspaceSize);
NUMR_SAME_OFFSET(cublasLtMatmulHeuristicResult_t, state);
NUMR_SAME_OFFSET(cublasLtMatmulHeuristicResult_t, wavesCount);
NUMR_SAME_OFFSET(cublasLtMatmulHeuristicResult_t, reserved);
#undef NUMR_SAME_OFFSET

// Entry points: same arity, and each parameter and the result of the same size. (Our enums
// are distinct types from NVIDIA's, so the types themselves cannot be compared.) The
// official names go through cuda.h's macros, so this also checks that the versioned
// symbols numr resolves (cuMemcpyHtoDAsync_v2, cuEventElapsedTime_v2, ...) are the ones
// the header binds.
template <class F>
struct Signature;
template <class R, class... A>
struct Signature<R (*)(A...)> {
  using Result = R;
  using Args = std::tuple<A...>;
  static constexpr size_t arity = sizeof...(A);
};

template <class Ours, class Theirs>
constexpr bool same_abi() {
  using O = Signature<Ours>;
  using T = Signature<Theirs>;
  if constexpr (O::arity != T::arity) {
    return false;
  } else {
    return sizeof(typename O::Result) ==
           sizeof(typename T::Result)&&[]<size_t... I>(std::index_sequence<I...>) {
      return ((sizeof(std::tuple_element_t<I, typename O::Args>) ==
               sizeof(std::tuple_element_t<I, typename T::Args>)) &&
              ...);
    }
    (std::make_index_sequence<O::arity>{});
  }
}

#define NUMR_SAME_FN(ours, theirs) static_assert(same_abi<cu::ours, decltype(&::theirs)>(), #theirs)
NUMR_SAME_FN(PfnGetErrorString, cuGetErrorString);
NUMR_SAME_FN(PfnGetErrorName, cuGetErrorName);
NUMR_SAME_FN(PfnInit, cuInit);
NUMR_SAME_FN(PfnDriverGetVersion, cuDriverGetVersion);
NUMR_SAME_FN(PfnDeviceGetCount, cuDeviceGetCount);
NUMR_SAME_FN(PfnDeviceGet, cuDeviceGet);
NUMR_SAME_FN(PfnDeviceGetName, cuDeviceGetName);
NUMR_SAME_FN(PfnDeviceGetAttribute, cuDeviceGetAttribute);
NUMR_SAME_FN(PfnDeviceTotalMem, cuDeviceTotalMem);
NUMR_SAME_FN(PfnDeviceGetDefaultMemPool, cuDeviceGetDefaultMemPool);
NUMR_SAME_FN(PfnDevicePrimaryCtxRetain, cuDevicePrimaryCtxRetain);
NUMR_SAME_FN(PfnCtxSetCurrent, cuCtxSetCurrent);
NUMR_SAME_FN(PfnMemGetInfo, cuMemGetInfo);
NUMR_SAME_FN(PfnStreamCreate, cuStreamCreate);
NUMR_SAME_FN(PfnStreamSynchronize, cuStreamSynchronize);
NUMR_SAME_FN(PfnMemAllocAsync, cuMemAllocAsync);
NUMR_SAME_FN(PfnMemFreeAsync, cuMemFreeAsync);
NUMR_SAME_FN(PfnMemPoolSetAttribute, cuMemPoolSetAttribute);
NUMR_SAME_FN(PfnMemPoolGetAttribute, cuMemPoolGetAttribute);
NUMR_SAME_FN(PfnMemPoolTrimTo, cuMemPoolTrimTo);
NUMR_SAME_FN(PfnMemcpyHtoDAsync, cuMemcpyHtoDAsync);
NUMR_SAME_FN(PfnMemcpyDtoHAsync, cuMemcpyDtoHAsync);
NUMR_SAME_FN(PfnMemcpyDtoDAsync, cuMemcpyDtoDAsync);
NUMR_SAME_FN(PfnMemsetD8Async, cuMemsetD8Async);
NUMR_SAME_FN(PfnModuleLoadDataEx, cuModuleLoadDataEx);
NUMR_SAME_FN(PfnModuleGetFunction, cuModuleGetFunction);
NUMR_SAME_FN(PfnModuleUnload, cuModuleUnload);
NUMR_SAME_FN(PfnFuncSetAttribute, cuFuncSetAttribute);
NUMR_SAME_FN(PfnFuncGetAttribute, cuFuncGetAttribute);
NUMR_SAME_FN(PfnLaunchKernel, cuLaunchKernel);
NUMR_SAME_FN(PfnEventCreate, cuEventCreate);
NUMR_SAME_FN(PfnEventRecord, cuEventRecord);
NUMR_SAME_FN(PfnEventSynchronize, cuEventSynchronize);
NUMR_SAME_FN(PfnEventElapsedTime, cuEventElapsedTime);
NUMR_SAME_FN(PfnEventDestroy, cuEventDestroy);
NUMR_SAME_FN(PfnEventQuery, cuEventQuery);
NUMR_SAME_FN(PfnStreamWaitEvent, cuStreamWaitEvent);
NUMR_SAME_FN(PfnStreamDestroy, cuStreamDestroy);
NUMR_SAME_FN(PfnTensorMapEncodeTiled, cuTensorMapEncodeTiled);
NUMR_SAME_FN(PfnLtCreate, cublasLtCreate);
NUMR_SAME_FN(PfnLtDestroy, cublasLtDestroy);
NUMR_SAME_FN(PfnLtGetVersion, cublasLtGetVersion);
NUMR_SAME_FN(PfnLtGetStatusName, cublasLtGetStatusName);
NUMR_SAME_FN(PfnLtGetStatusString, cublasLtGetStatusString);
NUMR_SAME_FN(PfnLtMatmulDescCreate, cublasLtMatmulDescCreate);
NUMR_SAME_FN(PfnLtMatmulDescDestroy, cublasLtMatmulDescDestroy);
NUMR_SAME_FN(PfnLtMatmulDescSetAttribute, cublasLtMatmulDescSetAttribute);
NUMR_SAME_FN(PfnLtMatrixLayoutCreate, cublasLtMatrixLayoutCreate);
NUMR_SAME_FN(PfnLtMatrixLayoutDestroy, cublasLtMatrixLayoutDestroy);
NUMR_SAME_FN(PfnLtMatrixLayoutSetAttribute, cublasLtMatrixLayoutSetAttribute);
NUMR_SAME_FN(PfnLtMatmulPreferenceCreate, cublasLtMatmulPreferenceCreate);
NUMR_SAME_FN(PfnLtMatmulPreferenceDestroy, cublasLtMatmulPreferenceDestroy);
NUMR_SAME_FN(PfnLtMatmulPreferenceSetAttribute, cublasLtMatmulPreferenceSetAttribute);
NUMR_SAME_FN(PfnLtMatmulAlgoGetHeuristic, cublasLtMatmulAlgoGetHeuristic);
NUMR_SAME_FN(PfnLtMatmul, cublasLtMatmul);
#undef NUMR_SAME_FN

}  // namespace abi
#endif

}  // namespace
