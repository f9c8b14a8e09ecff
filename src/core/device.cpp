#include "numr/device.h"

#include <atomic>
#include <climits>
#include <string>

#include "core/backend.h"
#include "core/thread_count.h"
#include "core/op_scope.h"
#include "core/thread_pool.h"
#include "numr/error.h"

namespace numr {

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
  for (const BackendEntry& e : backend_table())
    if (e.type == device.type) return e.get(device.index);
  fail<BackendUnavailable>(current_op(device.type == DeviceType::WebGpu ? "webgpu" : "device"),
                           "this build of numr has no backend for ", device.str());
}

std::vector<Device> available_devices() {
  std::vector<Device> out;
  for (const BackendEntry& e : backend_table())
    for (int i = 0, n = e.count(); i < n; ++i) out.push_back(Device{e.type, i});
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
