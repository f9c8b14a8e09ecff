#include "numr/device.h"

#include <atomic>
#include <climits>
#include <string>

#include "backends/cuda/context.h"
#include "backends/cuda/cuda_backend.h"
#include "core/backend.h"
#include "core/thread_count.h"
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
  const bool known = kind == "cpu" || kind == "cuda" || kind == "webgpu";
  int index = 0;
  if (known && colon != std::string::npos) {
    // Decimal digits only: no sign, space or other text std::stoi would let through.
    const std::string digits = text.substr(colon + 1);
    bool ok = !digits.empty();
    for (size_t i = 0; ok && i < digits.size(); ++i) {
      const char c = digits[i];
      ok = c >= '0' && c <= '9' && index <= (INT_MAX - (c - '0')) / 10;
      if (ok) index = index * 10 + (c - '0');
    }
    if (kind == "cpu" && index != 0) ok = false;  // the one CPU device is cpu:0
    if (!ok) fail<InvalidArgument>("parse_device", "bad device index in '", text, "'");
  }
  if (kind == "cpu") return Device::cpu();
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

void synchronize(Device device) {
  const OpScope scope("synchronize");
  backend_for(device).synchronize();
}

namespace {
std::atomic<bool> g_allow_tf32{false};
}
void set_allow_tf32(bool allow) { g_allow_tf32.store(allow, std::memory_order_relaxed); }
bool allow_tf32() { return g_allow_tf32.load(std::memory_order_relaxed); }

void set_num_threads(int n) {
  if (n < 1 || n > kMaxNumThreads)
    fail<InvalidArgument>("set_num_threads", "thread count must be in [1, ", kMaxNumThreads,
                          "], got ", n);
  ThreadPool::instance().resize(n);
}
int num_threads() { return ThreadPool::instance().size(); }

}  // namespace numr
