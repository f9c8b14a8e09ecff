// Launching a kernel on a device's stream. Arguments are passed by address, one per PTX
// parameter, in order; each must have the parameter's exact size (device pointers as
// CUdeviceptr / uint64_t, sizes as the integer type the PTX declares).
#pragma once

#include <cstdint>
#include <string_view>
#include <type_traits>

#include "backends/cuda/driver_api.h"

namespace numr::cuda {

class CudaDevice;

struct Dim3 {
  unsigned x = 1, y = 1, z = 1;
};

struct LaunchConfig {
  Dim3 grid;
  Dim3 block;
  unsigned shared_bytes = 0;  // dynamic shared memory
};

// Blocks of `threads` for a one-pass kernel with `work` independent items, a thread per
// item: as many as that takes (at most 2^31 - 1, the grid's limit; threads loop past it).
// Many short-lived blocks keep more loads in flight than a grid capped near the SM count
// whose threads loop, which falls short of the copy bandwidth.
unsigned one_pass_blocks(int64_t work, unsigned threads);

// Queues `f` on dev's stream. Above 48 KiB of dynamic shared memory the kernel's limit is
// raised first (cuFuncSetAttribute); more than the device allows is a BackendLimitation.
// Launch errors throw BackendError naming the kernel and the configuration. Faults inside
// the kernel surface at the next synchronisation (set CUDA_LAUNCH_BLOCKING=1 to make every
// launch synchronous when hunting one).
void launch(CudaDevice& dev, CUfunction f, const LaunchConfig& cfg, void** params,
            std::string_view kernel_name);

// launch() with the parameters given as values: launch_kernel(dev, f, cfg, "add_one", ptr, n).
template <class... Args>
void launch_kernel(CudaDevice& dev, CUfunction f, const LaunchConfig& cfg,
                   std::string_view kernel_name, const Args&... args) {
  static_assert((std::is_trivially_copyable_v<Args> && ...),
                "kernel parameters are copied byte for byte");
  void* params[] = {const_cast<void*>(static_cast<const void*>(&args))..., nullptr};
  launch(dev, f, cfg, params, kernel_name);
}

}  // namespace numr::cuda
