// The CUDA driver, loaded with dlopen at run time so numr needs no CUDA at build or link
// time. The library is libcuda.so.1, or the file named by the environment variable
// NUMR_CUDA_DRIVER (used to select a driver explicitly and by tests to provoke failures).
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "backends/cuda/driver_api.h"

namespace numr::cuda {

// The driver's entry points, all resolved and cuInit(0) done.
struct Driver {
  std::string path;  // what was passed to dlopen
  void* library = nullptr;
  int version = 0;       // cuDriverGetVersion: 13000 for CUDA 13.0
  int device_count = 0;  // cuDeviceGetCount after cuInit

  PfnGetErrorString get_error_string = nullptr;
  PfnGetErrorName get_error_name = nullptr;
  PfnInit init = nullptr;
  PfnDriverGetVersion driver_get_version = nullptr;
  PfnDeviceGetCount device_get_count = nullptr;
  PfnDeviceGet device_get = nullptr;
  PfnDeviceGetName device_get_name = nullptr;
  PfnDeviceGetAttribute device_get_attribute = nullptr;
  PfnDeviceTotalMem device_total_mem = nullptr;
  PfnDeviceGetDefaultMemPool device_get_default_mem_pool = nullptr;
  PfnDevicePrimaryCtxRetain device_primary_ctx_retain = nullptr;
  PfnCtxSetCurrent ctx_set_current = nullptr;
  PfnMemGetInfo mem_get_info = nullptr;
  PfnStreamCreate stream_create = nullptr;
  PfnStreamSynchronize stream_synchronize = nullptr;
  PfnMemAllocAsync mem_alloc_async = nullptr;
  PfnMemFreeAsync mem_free_async = nullptr;
  PfnMemPoolSetAttribute mem_pool_set_attribute = nullptr;
  PfnMemPoolGetAttribute mem_pool_get_attribute = nullptr;
  PfnMemPoolTrimTo mem_pool_trim_to = nullptr;
  PfnMemcpyHtoDAsync memcpy_htod_async = nullptr;
  PfnMemcpyDtoHAsync memcpy_dtoh_async = nullptr;
  PfnMemcpyDtoDAsync memcpy_dtod_async = nullptr;
  PfnMemsetD8Async memset_d8_async = nullptr;
  PfnModuleLoadDataEx module_load_data_ex = nullptr;
  PfnModuleGetFunction module_get_function = nullptr;
  PfnModuleUnload module_unload = nullptr;
  PfnFuncSetAttribute func_set_attribute = nullptr;
  PfnFuncGetAttribute func_get_attribute = nullptr;
  PfnLaunchKernel launch_kernel = nullptr;
  PfnEventCreate event_create = nullptr;
  PfnEventRecord event_record = nullptr;
  PfnEventSynchronize event_synchronize = nullptr;
  PfnEventElapsedTime event_elapsed_time = nullptr;
  PfnEventDestroy event_destroy = nullptr;
  PfnEventQuery event_query = nullptr;
  PfnStreamWaitEvent stream_wait_event = nullptr;
  PfnStreamDestroy stream_destroy = nullptr;

  // Optional entry points: nullptr when the driver lacks them (users check first).
  PfnTensorMapEncodeTiled tensor_map_encode_tiled = nullptr;  // CUDA 12.0 and newer
};

// The process's driver, loaded and initialised on first use. Throws BackendUnavailable
// ("[cuda] libcuda.so.1 could not be loaded (...)", "[cuda] cuInit failed: ...") when it
// cannot be used. A failure is remembered for the path it happened with; a different
// NUMR_CUDA_DRIVER is tried afresh. Once loaded, the driver stays for the process.
const Driver& driver();
// The same without throwing: nullptr, with the reason in *reason (when given).
const Driver* try_driver(std::string* reason = nullptr);
// The library path driver() uses now: NUMR_CUDA_DRIVER if set and non-empty, else
// "libcuda.so.1".
std::string driver_path();

// Loads and initialises the driver at `path` without touching the process's driver (for
// tests). Throws BackendUnavailable naming the reason. A library that loads is never
// unloaded: unloading the CUDA driver while a process runs is not supported.
std::unique_ptr<Driver> load_driver(const std::string& path);

// "CUDA_ERROR_OUT_OF_MEMORY: out of memory", falling back to the number when the driver
// has no name for it.
std::string error_text(const Driver& d, CUresult r);
std::string error_text(CUresult r);

// Throws for a failed call: OutOfMemory for CUDA_ERROR_OUT_OF_MEMORY, BackendError
// otherwise, with the message "[cuda] <call>: <error_text>".
void check(CUresult r, std::string_view call);
[[noreturn]] void throw_error(CUresult r, std::string_view call);

}  // namespace numr::cuda
