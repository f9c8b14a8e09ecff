// PTX modules and the per-device kernel cache. PTX text is compiled by the driver's JIT
// (cuModuleLoadDataEx) for the device it is loaded on; its error and info logs are captured
// so a kernel that fails to compile says why.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "backends/cuda/driver_api.h"

namespace numr::cuda {

class CudaDevice;

// What a kernel generator produces: the entry point's name and the PTX text holding it.
struct GeneratedKernel {
  std::string name;
  std::string ptx;
};

// A loaded PTX module; unloaded on destruction.
class Module {
 public:
  // JIT-compiles `ptx` for `dev`. Throws BackendError "[cuda] cuModuleLoadDataEx (<label>):
  // <error>" followed by the JIT error log, the info log and the PTX lines the log names;
  // OutOfMemory when the driver runs out of memory.
  Module(CudaDevice& dev, const std::string& ptx, std::string_view label);
  ~Module();
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  // The entry point `name`; throws BackendError when the module has none.
  CUfunction function(const std::string& name) const;
  // The JIT's info log (register and shared-memory use when the driver reports it).
  const std::string& info_log() const { return info_log_; }

 private:
  CudaDevice& dev_;
  CUmodule module_ = nullptr;
  std::string info_log_;
};

// Kernels of one device by key. The key is built by the caller from the struct that
// configures the kernel (dtype, op, vector width, ...), so equal configurations share one
// compiled kernel. Thread-safe.
class KernelCache {
 public:
  explicit KernelCache(CudaDevice& dev);
  ~KernelCache();

  // The kernel for `key`: on the first request `generate` is called and its PTX loaded;
  // later requests return the same CUfunction without calling it. If generation or loading
  // throws, nothing is cached and the exception propagates.
  CUfunction get_or_build(const std::string& key, const std::function<GeneratedKernel()>& generate);
  size_t size() const;

 private:
  CudaDevice& dev_;
  // One lock for lookups and builds: a kernel is generated and compiled once even when
  // several threads ask for it together. Builds are rare (once per key per process), so
  // serialising them costs little.
  mutable std::mutex mu_;
  std::unordered_map<std::string, CUfunction> functions_;
  std::vector<std::unique_ptr<Module>> modules_;  // own the functions above
};

}  // namespace numr::cuda
