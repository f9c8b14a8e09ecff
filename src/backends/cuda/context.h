// One CUDA device as numr uses it: the device's primary context (shared with the CUDA
// runtime, so libraries like cuBLASLt see the same context), one stream that every numr
// operation on the device is ordered on, the device's properties, a caching allocator, a
// kernel cache and, on first use, a cuBLASLt handle with its workspace.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "backends/cuda/driver_api.h"
#include "numr/device.h"

namespace numr::cuda {

class CachingAllocator;
class KernelCache;
struct CublasLtHandle;

struct DeviceProperties {
  std::string name;
  int cc_major = 0, cc_minor = 0;  // compute capability: 9.0 on an H100
  int sm_count = 0;
  int warp_size = 32;
  int max_threads_per_block = 0;
  int max_threads_per_sm = 0;
  int max_shared_per_block = 0;        // without opting in (48 KiB)
  int max_shared_per_block_optin = 0;  // the most a kernel may ask for with cuFuncSetAttribute
  int max_shared_per_sm = 0;
  int l2_bytes = 0;
  size_t total_memory = 0;
  int driver_version = 0;  // cuDriverGetVersion: 13000 for CUDA 13.0
  // The newest PTX ISA this driver compiles (`.version 9.0` for CUDA 13.0).
  int ptx_isa_major = 0, ptx_isa_minor = 0;

  std::string ptx_target() const;   // ".target" operand: "sm_90"
  std::string ptx_version() const;  // ".version" operand: "9.0"
};

// The newest PTX ISA a driver of this cuDriverGetVersion value JIT-compiles, as
// {major, minor}. Drivers newer than the table get the newest version it knows (a driver
// always accepts older PTX).
std::pair<int, int> ptx_isa_for_driver(int driver_version);

class CudaDevice {
 public:
  // Sets up device `index`; throws BackendUnavailable when it does not exist or cannot be
  // used. Use cuda_device(index), which makes each device once.
  explicit CudaDevice(int index);
  ~CudaDevice();
  CudaDevice(const CudaDevice&) = delete;
  CudaDevice& operator=(const CudaDevice&) = delete;

  int index() const { return index_; }
  Device device() const { return Device::cuda(index_); }
  const DeviceProperties& props() const { return props_; }
  CUdevice handle() const { return device_; }
  CUcontext context() const { return context_; }
  CUstream stream() const { return stream_; }
  CUmemoryPool pool() const { return pool_; }

  // Makes this device's context current on the calling thread. Every entry point calls it
  // first: CUDA contexts are per thread, and callers may switch devices or threads.
  void make_current() const;
  // Waits for all work queued on the device's stream; reports a kernel's fault here.
  void synchronize() const;

  CachingAllocator& allocator() { return *allocator_; }
  KernelCache& kernels() { return *kernels_; }
  // The cuBLASLt handle and workspace of this device, made on first use. Throws
  // BackendUnavailable when libcublasLt cannot be loaded.
  CublasLtHandle& cublaslt();

 private:
  int index_;
  CUdevice device_ = 0;
  CUcontext context_ = nullptr;
  CUstream stream_ = nullptr;
  CUmemoryPool pool_ = nullptr;
  DeviceProperties props_;
  std::unique_ptr<CachingAllocator> allocator_;
  std::unique_ptr<KernelCache> kernels_;
  std::mutex cublaslt_mu_;
  std::unique_ptr<CublasLtHandle> cublaslt_;
};

// The number of CUDA devices; 0 when the driver cannot be used.
int cuda_device_count();
// Device `index`, set up on first use (thread-safe). Throws BackendUnavailable naming the
// reason: the driver is missing, cuInit failed, or there is no such device.
CudaDevice& cuda_device(int index);

}  // namespace numr::cuda
