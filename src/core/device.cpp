#include "numr/device.h"

#include <atomic>
#include <string>

#include "backends/cuda/context.h"
#include "backends/cuda/cuda_backend.h"
#include "core/backend.h"
#include "core/op_scope.h"
#include "core/thread_pool.h"
#include "numr/error.h"

namespace numr {

Backend& cpu_backend();  // backends/cpu/cpu_backend.cpp

std::string Device::str() const {
  switch (type) {
    case DeviceType::Cpu: return "cpu";
    case DeviceType::Cuda: return "cuda:" + std::to_string(index);
    case DeviceType::WebGpu: return "webgpu:" + std::to_string(index);
  }
  return "?";
}

Device parse_device(const std::string& text) {
  const auto colon = text.find(':');
  const std::string kind = text.substr(0, colon);
  int index = 0;
  if (colon != std::string::npos) {
    try {
      size_t used = 0;
      index = std::stoi(text.substr(colon + 1), &used);
      if (used != text.size() - colon - 1 || index < 0) throw std::invalid_argument(text);
    } catch (const std::exception&) {
      fail<InvalidArgument>("parse_device", "bad device index in '", text, "'");
    }
  }
  if (kind == "cpu" && index == 0) return Device::cpu();
  if (kind == "cuda") return Device::cuda(index);
  if (kind == "webgpu") return Device::webgpu(index);
  fail<InvalidArgument>("parse_device", "unknown device '", text,
                        "' (expected cpu, cuda[:N] or webgpu[:N])");
}

Backend& backend_for(Device device) {
  switch (device.type) {
    case DeviceType::Cpu:
      if (device.index != 0)
        fail<BackendUnavailable>(current_op("cpu"), "there is one CPU device, cpu:0");
      return cpu_backend();
    case DeviceType::Cuda:
      // Throws BackendUnavailable saying why: no driver, cuInit failed, or no such device.
      return cuda::cuda_backend(device.index);
    case DeviceType::WebGpu:
      fail<BackendUnavailable>(current_op("webgpu"),
                               "this build of numr has no WebGPU backend yet");
  }
  fail<BackendUnavailable>(current_op("device"), "unknown device type");
}

std::vector<Device> available_devices() {
  std::vector<Device> out{Device::cpu()};
  for (int i = 0, n = cuda::cuda_device_count(); i < n; ++i) out.push_back(Device::cuda(i));
  return out;
}

void synchronize(Device device) { backend_for(device).synchronize(); }

namespace {
std::atomic<bool> g_allow_tf32{false};
}
void set_allow_tf32(bool allow) { g_allow_tf32.store(allow, std::memory_order_relaxed); }
bool allow_tf32() { return g_allow_tf32.load(std::memory_order_relaxed); }

void set_num_threads(int n) {
  if (n < 1) fail<InvalidArgument>("set_num_threads", "thread count must be >= 1, got ", n);
  ThreadPool::instance().resize(n);
}
int num_threads() { return ThreadPool::instance().size(); }

}  // namespace numr
