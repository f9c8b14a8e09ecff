#include "backends/cuda/driver.h"

#include <dlfcn.h>

#include <atomic>
#include <cstdlib>
#include <initializer_list>
#include <mutex>

#include "core/op_scope.h"
#include "numr/error.h"

namespace numr::cuda {
namespace {

// dlsym for the first of `names` the library has. Several names cover entry points that
// gained a versioned symbol (cuEventElapsedTime_v2 in CUDA 12.8) while older drivers only
// have the original one.
template <class Fn>
void resolve(void* lib, const std::string& path, Fn& out,
             std::initializer_list<const char*> names) {
  for (const char* name : names) {
    if (void* sym = dlsym(lib, name)) {
      out = reinterpret_cast<Fn>(sym);
      return;
    }
  }
  fail<BackendUnavailable>("cuda", path, " has no entry point ", *names.begin(),
                           " (the NVIDIA driver is too old: numr needs CUDA 11.2 or newer)");
}

// dlsym for an entry point numr can do without: out stays nullptr when it is missing.
template <class Fn>
void resolve_optional(void* lib, Fn& out, const char* name) {
  out = reinterpret_cast<Fn>(dlsym(lib, name));
}

void resolve_all(Driver& d) {
  void* l = d.library;
  const std::string& p = d.path;
  resolve(l, p, d.get_error_string, {"cuGetErrorString"});
  resolve(l, p, d.get_error_name, {"cuGetErrorName"});
  resolve(l, p, d.init, {"cuInit"});
  resolve(l, p, d.driver_get_version, {"cuDriverGetVersion"});
  resolve(l, p, d.device_get_count, {"cuDeviceGetCount"});
  resolve(l, p, d.device_get, {"cuDeviceGet"});
  resolve(l, p, d.device_get_name, {"cuDeviceGetName"});
  resolve(l, p, d.device_get_attribute, {"cuDeviceGetAttribute"});
  resolve(l, p, d.device_total_mem, {"cuDeviceTotalMem_v2"});
  resolve(l, p, d.device_get_default_mem_pool, {"cuDeviceGetDefaultMemPool"});
  resolve(l, p, d.device_primary_ctx_retain, {"cuDevicePrimaryCtxRetain"});
  resolve(l, p, d.ctx_set_current, {"cuCtxSetCurrent"});
  resolve(l, p, d.mem_get_info, {"cuMemGetInfo_v2"});
  resolve(l, p, d.stream_create, {"cuStreamCreate"});
  resolve(l, p, d.stream_synchronize, {"cuStreamSynchronize"});
  resolve(l, p, d.mem_alloc_async, {"cuMemAllocAsync"});
  resolve(l, p, d.mem_free_async, {"cuMemFreeAsync"});
  resolve(l, p, d.mem_pool_set_attribute, {"cuMemPoolSetAttribute"});
  resolve(l, p, d.mem_pool_get_attribute, {"cuMemPoolGetAttribute"});
  resolve(l, p, d.mem_pool_trim_to, {"cuMemPoolTrimTo"});
  resolve(l, p, d.memcpy_htod_async, {"cuMemcpyHtoDAsync_v2"});
  resolve(l, p, d.memcpy_dtoh_async, {"cuMemcpyDtoHAsync_v2"});
  resolve(l, p, d.memcpy_dtod_async, {"cuMemcpyDtoDAsync_v2"});
  resolve(l, p, d.memset_d8_async, {"cuMemsetD8Async"});
  resolve(l, p, d.module_load_data_ex, {"cuModuleLoadDataEx"});
  resolve(l, p, d.module_get_function, {"cuModuleGetFunction"});
  resolve(l, p, d.module_unload, {"cuModuleUnload"});
  resolve(l, p, d.func_set_attribute, {"cuFuncSetAttribute"});
  resolve(l, p, d.func_get_attribute, {"cuFuncGetAttribute"});
  resolve(l, p, d.launch_kernel, {"cuLaunchKernel"});
  resolve(l, p, d.event_create, {"cuEventCreate"});
  resolve(l, p, d.event_record, {"cuEventRecord"});
  resolve(l, p, d.event_synchronize, {"cuEventSynchronize"});
  resolve(l, p, d.event_elapsed_time, {"cuEventElapsedTime_v2", "cuEventElapsedTime"});
  resolve(l, p, d.event_destroy, {"cuEventDestroy_v2"});
  resolve(l, p, d.event_query, {"cuEventQuery"});
  resolve(l, p, d.stream_wait_event, {"cuStreamWaitEvent"});
  resolve(l, p, d.stream_destroy, {"cuStreamDestroy_v2"});
  resolve_optional(l, d.tensor_map_encode_tiled, "cuTensorMapEncodeTiled");
}

// Names for the codes numr expects to meet before the driver can name them itself (the
// toolkit's stub library, for one, names nothing).
const char* known_name(CUresult r) {
  switch (r) {
    case CUDA_SUCCESS: return "CUDA_SUCCESS";
    case CUDA_ERROR_INVALID_VALUE: return "CUDA_ERROR_INVALID_VALUE";
    case CUDA_ERROR_OUT_OF_MEMORY: return "CUDA_ERROR_OUT_OF_MEMORY";
    case CUDA_ERROR_NOT_INITIALIZED: return "CUDA_ERROR_NOT_INITIALIZED";
    case CUDA_ERROR_DEINITIALIZED: return "CUDA_ERROR_DEINITIALIZED";
    case CUDA_ERROR_STUB_LIBRARY: return "CUDA_ERROR_STUB_LIBRARY";
    case CUDA_ERROR_NO_DEVICE: return "CUDA_ERROR_NO_DEVICE";
    case CUDA_ERROR_INVALID_DEVICE: return "CUDA_ERROR_INVALID_DEVICE";
    case CUDA_ERROR_INVALID_PTX: return "CUDA_ERROR_INVALID_PTX";
    case CUDA_ERROR_UNSUPPORTED_PTX_VERSION: return "CUDA_ERROR_UNSUPPORTED_PTX_VERSION";
    case CUDA_ERROR_NOT_READY: return "CUDA_ERROR_NOT_READY";
  }
  return nullptr;
}

// The process's driver. `loaded` is set once and never cleared; `failed_path` and
// `failure` remember the last failure so a missing driver costs one dlopen, not one per call.
struct DriverState {
  std::mutex mu;
  std::atomic<const Driver*> loaded{nullptr};
  std::string failed_path;
  std::string failure;
};

DriverState& state() {
  // Never destroyed: tensors freed by static destructors at exit still reach the driver.
  static DriverState* s = new DriverState;
  return *s;
}

}  // namespace

std::string driver_path() {
  const char* env = std::getenv("NUMR_CUDA_DRIVER");
  return env && *env ? std::string(env) : std::string("libcuda.so.1");
}

std::unique_ptr<Driver> load_driver(const std::string& path) {
  dlerror();  // clear a stale message
  void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char* why = dlerror();
    fail<BackendUnavailable>("cuda", path, " could not be loaded (", why ? why : "unknown error",
                             "); install the NVIDIA driver, or set NUMR_CUDA_DRIVER to its "
                             "libcuda.so.1");
  }
  auto d = std::make_unique<Driver>();
  d->path = path;
  d->library = lib;
  try {
    resolve_all(*d);
    const CUresult r = d->init(0);
    if (r == CUDA_ERROR_STUB_LIBRARY)
      fail<BackendUnavailable>("cuda", "cuInit failed: ", error_text(*d, r), " (", path,
                               " is the CUDA toolkit's stub library, not the NVIDIA driver)");
    if (r != CUDA_SUCCESS) fail<BackendUnavailable>("cuda", "cuInit failed: ", error_text(*d, r));
    if (const CUresult v = d->driver_get_version(&d->version); v != CUDA_SUCCESS)
      fail<BackendUnavailable>("cuda", "cuDriverGetVersion failed: ", error_text(*d, v));
    if (const CUresult c = d->device_get_count(&d->device_count); c != CUDA_SUCCESS)
      fail<BackendUnavailable>("cuda", "cuDeviceGetCount failed: ", error_text(*d, c));
  } catch (...) {
    // Nothing of this library is in use yet, so it can go (and a stub library that was
    // loaded by path no longer stands in for the real libcuda.so.1).
    dlclose(lib);
    throw;
  }
  return d;
}

const Driver* try_driver(std::string* reason) {
  DriverState& s = state();
  if (const Driver* d = s.loaded.load(std::memory_order_acquire)) return d;  // the common case
  std::lock_guard lock(s.mu);
  if (const Driver* d = s.loaded.load()) return d;
  const std::string path = driver_path();
  if (path != s.failed_path || s.failure.empty()) {
    try {
      const Driver* d = load_driver(path).release();
      s.loaded.store(d);
      s.failed_path.clear();
      s.failure.clear();
      return d;
    } catch (const BackendUnavailable& e) {
      s.failed_path = path;
      s.failure = e.what();
    }
  }
  if (reason) *reason = s.failure;
  return nullptr;
}

const Driver& driver() {
  std::string reason;
  if (const Driver* d = try_driver(&reason)) return *d;
  // The cached reason is "[cuda] ..."; the error names the op that needed the device.
  constexpr std::string_view cached = "[cuda] ";
  std::string_view body = reason;
  if (body.substr(0, cached.size()) == cached) body.remove_prefix(cached.size());
  throw BackendUnavailable(detail::message(current_op("cuda"), body));
}

std::string error_text(const Driver& d, CUresult r) {
  const char* name = nullptr;
  const char* text = nullptr;
  if (d.get_error_name && d.get_error_name(r, &name) != CUDA_SUCCESS) name = nullptr;
  if (d.get_error_string && d.get_error_string(r, &text) != CUDA_SUCCESS) text = nullptr;
  if (!name) name = known_name(r);
  std::string out = name ? name : "CUresult " + std::to_string(int(r));
  if (text) out += std::string(": ") + text;
  return out;
}

std::string error_text(CUresult r) {
  const Driver* d = state().loaded.load();
  if (d) return error_text(*d, r);
  const char* name = known_name(r);
  return name ? name : "CUresult " + std::to_string(int(r));
}

void throw_error(CUresult r, std::string_view call) {
  if (r == CUDA_ERROR_OUT_OF_MEMORY)
    fail<OutOfMemory>(current_op("cuda"), call, ": ", error_text(r));
  fail<BackendError>("cuda", call, ": ", error_text(r));
}

void check(CUresult r, std::string_view call) {
  if (r != CUDA_SUCCESS) throw_error(r, call);
}

}  // namespace numr::cuda
