// The backend table: one row per device type this build has. A new backend adds a row.
#include <array>

#include "backends/cuda/context.h"
#include "backends/cuda/cuda_backend.h"
#include "backends/webgpu/webgpu_backend.h"
#include "core/backend.h"
#include "core/op_scope.h"
#include "numr/error.h"

namespace numr {

Backend& cpu_backend();  // backends/cpu/cpu_backend.cpp

namespace {

Backend& cpu_at(int index) {
  if (index != 0) fail<BackendUnavailable>(current_op("cpu"), "there is one CPU device, cpu:0");
  return cpu_backend();
}
int one() { return 1; }

constexpr std::array<BackendEntry, 3> kBackends = {{
    {DeviceType::Cpu, "cpu", cpu_at, one},
    {DeviceType::Cuda, "cuda", cuda::cuda_backend, cuda::cuda_device_count},
    {DeviceType::WebGpu, "webgpu", webgpu::webgpu_backend, webgpu::webgpu_device_count},
}};

}  // namespace

std::span<const BackendEntry> backend_table() { return kBackends; }

}  // namespace numr
