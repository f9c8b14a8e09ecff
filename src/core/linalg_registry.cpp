// Which backends have linalg kernels: one row per device type that has them; the others
// get the kernels composed from Tensor ops.
#include <atomic>

#include "core/linalg_backend.h"

namespace numr {
namespace {

struct LinalgEntry {
  DeviceType type;
  LinalgKernels& (*get)();
};

constexpr LinalgEntry kLinalgTable[] = {
    {DeviceType::Cpu, &cpu_linalg_kernels},
    {DeviceType::Cuda, &cuda_linalg_kernels},
};

std::atomic<bool> g_composed_everywhere{false};

}  // namespace

LinalgKernels* linalg_kernels_for(Device device) {
  if (g_composed_everywhere.load(std::memory_order_relaxed)) return &composed_linalg_kernels();
  for (const LinalgEntry& e : kLinalgTable)
    if (e.type == device.type) return &e.get();
  return &composed_linalg_kernels();
}

void set_composed_linalg_for_testing(bool on) {
  g_composed_everywhere.store(on, std::memory_order_relaxed);
}

}  // namespace numr
