// Which backends have linalg kernels: one row per device type that has them.
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

}  // namespace

LinalgKernels* linalg_kernels_for(Device device) {
  for (const LinalgEntry& e : kLinalgTable)
    if (e.type == device.type) return &e.get();
  return nullptr;
}

}  // namespace numr
