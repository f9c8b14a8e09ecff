#include "numr/device.h"

#include <string>

#include "core/backend.h"
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
      if (device.index != 0) fail<BackendUnavailable>("cpu", "there is one CPU device, cpu:0");
      return cpu_backend();
    case DeviceType::Cuda:
      fail<BackendUnavailable>("cuda", "this build of numr has no CUDA backend yet");
    case DeviceType::WebGpu:
      fail<BackendUnavailable>("webgpu", "this build of numr has no WebGPU backend yet");
  }
  fail<BackendUnavailable>("device", "unknown device type");
}

std::vector<Device> available_devices() { return {Device::cpu()}; }

void set_num_threads(int n) {
  if (n < 1) fail<InvalidArgument>("set_num_threads", "thread count must be >= 1, got ", n);
  ThreadPool::instance().resize(n);
}
int num_threads() { return ThreadPool::instance().size(); }

}  // namespace numr
