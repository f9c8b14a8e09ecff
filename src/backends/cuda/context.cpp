#include "backends/cuda/context.h"

#include <cstdint>
#include <tuple>
#include <vector>

#include "backends/cuda/allocator.h"
#include "backends/cuda/cublaslt.h"
#include "backends/cuda/driver.h"
#include "backends/cuda/module.h"
#include "core/op_scope.h"
#include "numr/error.h"

namespace numr::cuda {

std::pair<int, int> ptx_isa_for_driver(int driver_version) {
  const int major = driver_version / 1000;
  const int minor = (driver_version % 1000) / 10;
  // From the PTX ISA release history: CUDA 11.x ships PTX 7.x, 12.0-12.5 ship 8.0-8.5,
  // 12.6 still 8.5, then 12.7 -> 8.6, 12.8 -> 8.7, 12.9 -> 8.8, 13.0 -> 9.0, 13.1 -> 9.1.
  if (major < 11) return {6, 4};  // older than numr supports; cuMemAllocAsync needs 11.2
  if (major == 11) return {7, minor};
  if (major == 12) {
    if (minor <= 5) return {8, minor};
    if (minor == 6) return {8, 5};
    return {8, minor - 1};
  }
  if (major == 13 && minor <= 1) return {9, minor};
  return {9, 1};
}

std::string DeviceProperties::ptx_target() const {
  return "sm_" + std::to_string(cc_major) + std::to_string(cc_minor);
}

std::string DeviceProperties::ptx_version() const {
  return std::to_string(ptx_isa_major) + "." + std::to_string(ptx_isa_minor);
}

namespace {

int attribute(const Driver& d, CUdevice dev, CUdevice_attribute a, const char* what) {
  int v = 0;
  check(d.device_get_attribute(&v, a, dev), std::string("cuDeviceGetAttribute(") + what + ")");
  return v;
}

}  // namespace

CudaDevice::CudaDevice(int index) : index_(index) {
  const Driver& d = driver();
  if (index < 0 || index >= d.device_count)
    fail<BackendUnavailable>(current_op("cuda"), "no CUDA device ", index, ": this machine has ",
                             d.device_count);
  check(d.device_get(&device_, index), "cuDeviceGet");
  // The primary context is the one the CUDA runtime (and so cuBLASLt) uses on this device;
  // sharing it lets their work and numr's see the same memory and stream.
  check(d.device_primary_ctx_retain(&context_, device_), "cuDevicePrimaryCtxRetain");
  make_current();

  char name[256] = {};
  check(d.device_get_name(name, int(sizeof(name)) - 1, device_), "cuDeviceGetName");
  props_.name = name;
  props_.cc_major = attribute(d, device_, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, "cc major");
  props_.cc_minor = attribute(d, device_, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, "cc minor");
  props_.sm_count = attribute(d, device_, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, "SM count");
  props_.warp_size = attribute(d, device_, CU_DEVICE_ATTRIBUTE_WARP_SIZE, "warp size");
  props_.max_threads_per_block =
      attribute(d, device_, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, "threads per block");
  props_.max_threads_per_sm =
      attribute(d, device_, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, "threads per SM");
  props_.max_shared_per_block =
      attribute(d, device_, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, "shared per block");
  props_.max_shared_per_block_optin = attribute(
      d, device_, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, "shared per block opt-in");
  props_.max_shared_per_sm = attribute(
      d, device_, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR, "shared per SM");
  props_.l2_bytes = attribute(d, device_, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, "L2 size");
  check(d.device_total_mem(&props_.total_memory, device_), "cuDeviceTotalMem");
  props_.driver_version = d.version;
  std::tie(props_.ptx_isa_major, props_.ptx_isa_minor) = ptx_isa_for_driver(d.version);

  if (!attribute(d, device_, CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, "memory pools"))
    fail<BackendUnavailable>(current_op("cuda"), "device ", index, " (", props_.name,
                             ") does not support stream-ordered allocation (cuMemAllocAsync)");

  // Non-blocking: numr's work never waits on, nor holds up, other libraries' work on the
  // legacy default stream. Ordering inside numr comes from using this one stream.
  check(d.stream_create(&stream_, CU_STREAM_NON_BLOCKING), "cuStreamCreate");

  // The device's default pool backs cuMemAllocAsync. By default it hands freed memory
  // back to the OS at every synchronisation; raising the release threshold keeps freed
  // blocks for reuse, which makes it a caching allocator.
  check(d.device_get_default_mem_pool(&pool_, device_), "cuDeviceGetDefaultMemPool");
  uint64_t keep_everything = UINT64_MAX;
  check(d.mem_pool_set_attribute(pool_, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &keep_everything),
        "cuMemPoolSetAttribute(RELEASE_THRESHOLD)");

  allocator_ = std::make_unique<CachingAllocator>(*this);
  kernels_ = std::make_unique<KernelCache>(*this);
}

CudaDevice::~CudaDevice() = default;

void CudaDevice::make_current() const {
  check(driver().ctx_set_current(context_), "cuCtxSetCurrent");
}

void CudaDevice::synchronize() const {
  make_current();
  check(driver().stream_synchronize(stream_), "cuStreamSynchronize");
}

CublasLtHandle& CudaDevice::cublaslt() {
  std::lock_guard lock(cublaslt_mu_);
  if (!cublaslt_) cublaslt_ = std::make_unique<CublasLtHandle>(*this);
  return *cublaslt_;
}

int cuda_device_count() {
  const Driver* d = try_driver();
  return d ? d->device_count : 0;
}

CudaDevice& cuda_device(int index) {
  // Devices live until the process ends and are never destroyed: freeing tensors from
  // static destructors at exit must still find them, and tearing down CUDA state while the
  // driver itself is being unloaded is not reliable.
  static std::mutex mu;
  static auto* devices = new std::vector<CudaDevice*>();
  const Driver& d = driver();
  if (index < 0 || index >= d.device_count)
    fail<BackendUnavailable>(current_op("cuda"), "no CUDA device ", index, ": this machine has ",
                             d.device_count);
  std::lock_guard lock(mu);
  if (devices->size() < size_t(d.device_count)) devices->resize(size_t(d.device_count), nullptr);
  CudaDevice*& slot = (*devices)[size_t(index)];
  if (!slot) slot = new CudaDevice(index);
  return *slot;
}

}  // namespace numr::cuda
