#include "backends/webgpu/context.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <iterator>

#include "core/op_scope.h"
#include "numr/error.h"

namespace numr::webgpu {

namespace {

// Dispatches and copies recorded per submit, and the parameter words each encoder holds.
constexpr int kMaxRecorded = 64;
constexpr uint64_t kArenaWords = uint64_t(1) << 14;

WGPUStringView view(const char* s) { return WGPUStringView{s, kStrlen}; }
std::string text(WGPUStringView v) {
  if (!v.data) return {};
  return v.length == kStrlen ? std::string(v.data) : std::string(v.data, v.length);
}
constexpr uint64_t round_up(uint64_t x, uint64_t a) { return (x + a - 1) / a * a; }

const char* backend_name(uint32_t b) {
  static const char* names[] = {"Undefined", "Null",   "WebGPU", "D3D11",   "D3D12",
                                "Metal",     "Vulkan", "OpenGL", "OpenGLES"};
  return b < 9 ? names[b] : "unknown";
}
const char* adapter_type_name(uint32_t t) {
  static const char* names[] = {"?", "discrete GPU", "integrated GPU", "CPU", "unknown"};
  return t < 5 ? names[t] : "unknown";
}

// Longest a single wait may take before it is an error (NUMR_WEBGPU_TIMEOUT_S, seconds).
double wait_limit_s() {
  static const double s = [] {
    const char* env = std::getenv("NUMR_WEBGPU_TIMEOUT_S");
    const double v = env ? std::atof(env) : 0.0;
    return v > 0 ? v : 300.0;
  }();
  return s;
}

struct AdapterReply {
  uint32_t status = 0;
  WGPUAdapter adapter = nullptr;
  std::string message;
};
void on_adapter(uint32_t status, WGPUAdapter a, WGPUStringView msg, void* u1, void*) {
  auto* r = static_cast<AdapterReply*>(u1);
  r->status = status;
  r->adapter = a;
  r->message = text(msg);
}
struct DeviceReply {
  uint32_t status = 0;
  WGPUDevice device = nullptr;
  std::string message;
};
void on_device(uint32_t status, WGPUDevice d, WGPUStringView msg, void* u1, void*) {
  auto* r = static_cast<DeviceReply*>(u1);
  r->status = status;
  r->device = d;
  r->message = text(msg);
}
struct StatusReply {
  uint32_t status = 0, type = 0;
  std::string message;
};
void on_status(uint32_t status, WGPUStringView msg, void* u1, void*) {
  auto* r = static_cast<StatusReply*>(u1);
  r->status = status;
  r->message = text(msg);
}
void on_pop(uint32_t status, uint32_t type, WGPUStringView msg, void* u1, void*) {
  auto* r = static_cast<StatusReply*>(u1);
  r->status = status;
  r->type = type;
  r->message = text(msg);
}
void on_uncaptured(const WGPUDevice*, uint32_t, WGPUStringView msg, void* u1, void*) {
  static_cast<Context*>(u1)->on_error(text(msg));
}
// Reasons 2 (destroyed) and 3 (callback cancelled) are numr's own shutdown.
void on_device_lost(const WGPUDevice*, uint32_t reason, WGPUStringView msg, void* u1, void*) {
  if (reason != 2 && reason != 3) static_cast<Context*>(u1)->on_lost(text(msg));
}

template <class F>
WGPUCallbackInfo callback(F* fn, void* data) {
  return WGPUCallbackInfo{nullptr, kCallbackModeWaitAnyOnly, reinterpret_cast<void*>(fn), data,
                          nullptr};
}

// The context of webgpu:0 or why there is none.
struct Made {
  std::unique_ptr<Context> ctx;
  std::string error;
};

}  // namespace

Context::Context(const Api& api, WGPUInstance instance) : api_(api), instance_(instance) {}

Context& Context::get(int index) {
  static Made made = []() -> Made {
    Made m;
    try {
      const Api& a = webgpu::api();
      // Timed waits must be enabled when the instance is made: every wait numr does is bounded.
      WGPUInstance inst = nullptr;
      if (a.variant == AbiVariant::Dawn) {
        WGPUDawnInstanceDescriptor d{};
        d.capabilities.timedWaitAnyEnable = 1;
        d.capabilities.timedWaitAnyMaxCount = 1;
        inst = a.wgpuCreateInstance(&d);
      } else {
        const uint32_t features[] = {kStdInstanceFeatureTimedWaitAny};
        WGPUStdInstanceDescriptor d{};
        d.requiredFeatureCount = 1;
        d.requiredFeatures = features;
        inst = a.wgpuCreateInstance(&d);
      }
      if (!inst) fail<BackendUnavailable>("webgpu", a.path, ": wgpuCreateInstance failed");
      m.ctx.reset(new Context(a, inst));
      m.ctx->open_adapter_and_device();
    } catch (const BackendUnavailable& e) {
      m.ctx.reset();
      m.error = e.what();
    }
    return m;
  }();
  if (!made.ctx) {
    // The saved message names the op that first tried; name the current one instead.
    std::string why = made.error;
    if (why.rfind('[', 0) == 0 && why.find("] ") != std::string::npos)
      why = why.substr(why.find("] ") + 2);
    fail<BackendUnavailable>(current_op("webgpu"), "webgpu:", index, " is unavailable: ", why);
  }
  if (index != 0)
    fail<BackendUnavailable>(current_op("webgpu"), "no WebGPU device ", index,
                             ": numr uses one adapter, webgpu:0");
  return *made.ctx;
}

int Context::count() noexcept {
  try {
    get(0);
    return 1;
  } catch (...) {
    return 0;
  }
}

void Context::open_adapter_and_device() {
  // Vulkan, asked for by name: left to choose, Dawn falls back to its Null backend when no
  // Vulkan driver qualifies, and the Null backend computes nothing.
  WGPURequestAdapterOptions opts{};
  opts.featureLevel = kFeatureLevelCore;
  opts.backendType = kBackendVulkan;
  AdapterReply ar;
  wait(api_.wgpuInstanceRequestAdapter(instance_, &opts, callback(&on_adapter, &ar)), "an adapter");
  if (ar.status != kStatusSuccess || !ar.adapter)
    fail<BackendUnavailable>("webgpu",
                             "no Vulkan adapter (is a Vulkan driver installed? "
                             "VK_ICD_FILENAMES selects one): ",
                             ar.message.empty() ? "none found" : ar.message);
  adapter_ = ar.adapter;
  WGPUAdapterInfo info{};
  if (api_.wgpuAdapterGetInfo(adapter_, &info) != kStatusSuccess)
    fail<BackendUnavailable>("webgpu", "wgpuAdapterGetInfo failed");
  backend_type_ = info.backendType;
  subgroup_min_ = info.subgroupMinSize;
  subgroup_max_ = info.subgroupMaxSize;
  adapter_name_ = text(info.device);
  if (adapter_name_.empty()) adapter_name_ = text(info.description);
  adapter_name_ += std::string(" [") + backend_name(info.backendType) + ", " +
                   adapter_type_name(info.adapterType) + "]";
  api_.wgpuAdapterInfoFreeMembers(info);
  if (backend_type_ == kBackendNull)
    fail<BackendUnavailable>("webgpu",
                             "the only adapter is Dawn's Null backend, which computes "
                             "nothing; install a Vulkan driver");
  if (backend_type_ != kBackendVulkan)
    fail<BackendUnavailable>("webgpu", "asked for Vulkan, got the ", backend_name(backend_type_),
                             " backend");
  if (api_.wgpuAdapterGetLimits(adapter_, &limits_) != kStatusSuccess)
    fail<BackendUnavailable>("webgpu", "wgpuAdapterGetLimits failed");
  limits_.nextInChain = nullptr;

  // The adapter's own limits (larger bindings than WebGPU's defaults).
  WGPUDeviceDescriptor dd{};
  dd.label = view("numr");
  dd.requiredLimits = &limits_;
  const uint32_t subgroups = api_.feature_subgroups();
  subgroups_ = api_.wgpuAdapterHasFeature(adapter_, subgroups) != 0;
  if (subgroups_) {
    dd.requiredFeatureCount = 1;
    dd.requiredFeatures = &subgroups;
  }
  dd.defaultQueue.label = view("numr");
  dd.deviceLostCallbackInfo =
      WGPUCallbackInfo{nullptr, kCallbackModeAllowSpontaneous,
                       reinterpret_cast<void*>(&on_device_lost), this, nullptr};
  dd.uncapturedErrorCallbackInfo = WGPUUncapturedErrorCallbackInfo{
      nullptr, reinterpret_cast<void*>(&on_uncaptured), this, nullptr};
  DeviceReply dr;
  wait(api_.wgpuAdapterRequestDevice(adapter_, &dd, callback(&on_device, &dr)), "the device");
  if (dr.status != kStatusSuccess || !dr.device)
    fail<BackendUnavailable>("webgpu", "requesting a device from ", adapter_name_,
                             " failed: ", dr.message);
  device_ = dr.device;
  queue_ = api_.wgpuDeviceGetQueue(device_);
}

Context::~Context() {
  // The process is ending: Dawn's own teardown order is not ours to rely on, so only the
  // device is destroyed (its buffers go with it).
  if (device_) {
    api_.wgpuDeviceDestroy(device_);
    return;
  }
  // Opening failed (no adapter, or no device): nothing else holds the instance, so it is
  // released here rather than left for the process's end.
  if (adapter_) api_.wgpuAdapterRelease(adapter_);
  if (instance_) api_.wgpuInstanceRelease(instance_);
}

void Context::on_error(const std::string& message) {
  std::lock_guard<std::mutex> lock(err_mu_);
  errors_.push_back(message);
}
void Context::on_lost(const std::string& message) {
  std::lock_guard<std::mutex> lock(err_mu_);
  lost_ = true;
  lost_message_ = message;
}

void Context::check_errors() {
  std::string msg;
  {
    std::lock_guard<std::mutex> lock(err_mu_);
    if (lost_) {
      msg = "the device was lost: " + lost_message_;
    } else if (!errors_.empty()) {
      msg = errors_.front();
      if (errors_.size() > 1) msg += " (and " + std::to_string(errors_.size() - 1) + " more)";
      errors_.clear();
    }
  }
  if (!msg.empty()) fail<BackendError>(current_op("webgpu"), "webgpu: ", msg);
}

void Context::wait(WGPUFuture f, const char* what) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  WGPUFutureWaitInfo info{f, 0};
  for (;;) {
    // Short slices: a wait without a timeout has been seen to hang under llvmpipe.
    const uint32_t st = api_.wgpuInstanceWaitAny(instance_, 1, &info, 50'000'000);
    if (st == kWaitStatusSuccess && info.completed) return;
    if (st != kWaitStatusSuccess && st != kWaitStatusTimedOut)
      fail<BackendError>(current_op("webgpu"), "webgpu: waiting for ", what,
                         " failed (wgpuInstanceWaitAny status ", st, ")");
    {
      std::lock_guard<std::mutex> lock(err_mu_);
      if (lost_)
        fail<BackendError>(current_op("webgpu"), "webgpu: the device was lost while waiting for ",
                           what, ": ", lost_message_);
    }
    const double s = std::chrono::duration<double>(Clock::now() - start).count();
    if (s > wait_limit_s())
      fail<BackendError>(current_op("webgpu"), "webgpu: timed out after ", int(s),
                         " s waiting for ", what, " (NUMR_WEBGPU_TIMEOUT_S sets the limit)");
  }
}

WGPUBuffer Context::raw_buffer(uint64_t size, WGPUFlags usage, const char* label, bool mapped) {
  WGPUBufferDescriptor d{};
  d.label = view(label);
  d.usage = usage;
  d.size = size;
  d.mappedAtCreation = mapped;
  api_.wgpuDevicePushErrorScope(device_, kErrorFilterOutOfMemory);
  WGPUBuffer b = api_.wgpuDeviceCreateBuffer(device_, &d);
  StatusReply r;
  wait(api_.wgpuDevicePopErrorScope(device_, callback(&on_pop, &r)), "buffer creation");
  if (!b || r.type != kErrorTypeNoError) {
    if (b) api_.wgpuBufferRelease(b);
    fail<OutOfMemory>(current_op("webgpu"), "webgpu: cannot allocate ", size, " bytes",
                      r.message.empty() ? "" : ": ", r.message);
  }
  return b;
}

Buffer* Context::allocate(size_t nbytes) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  check_errors();
  const uint64_t size = round_up(std::max<uint64_t>(nbytes, 4), 256);
  if (size > limits_.maxBufferSize)
    fail<OutOfMemory>(current_op("webgpu"), "webgpu: ", nbytes, " bytes exceed the adapter's ",
                      "largest buffer (", limits_.maxBufferSize, " bytes)");
  // Reuse a cached buffer of the same size, or one at most twice as large.
  auto it = free_.lower_bound(size);
  const uint64_t bound = round_up(std::max<uint64_t>(nbytes, 4), 4);
  if (it != free_.end() && it->first <= 2 * size) {
    Buffer* b = *it->second;
    cached_bytes_ -= it->first;
    lru_.erase(it->second);
    free_.erase(it);
    b->bound = bound;
    return b;
  }
  const WGPUFlags usage = kBufferUsageStorage | kBufferUsageCopySrc | kBufferUsageCopyDst;
  WGPUBuffer raw;
  try {
    raw = raw_buffer(size, usage, "numr tensor");
  } catch (const OutOfMemory&) {
    // Give the cache back and try once more, once no queued or recorded work names it.
    synchronize();
    for (Buffer* b : lru_) {
      api_.wgpuBufferDestroy(b->buffer);
      api_.wgpuBufferRelease(b->buffer);
      delete b;
    }
    lru_.clear();
    free_.clear();
    cached_bytes_ = 0;
    raw = raw_buffer(size, usage, "numr tensor");
  }
  return new Buffer{raw, size, bound};
}

void Context::deallocate(Buffer* b) noexcept {
  if (!b) return;
  std::lock_guard<std::recursive_mutex> lock(mu_);
  // Work recorded or queued with the buffer keeps its own reference, and any later use of a
  // reused buffer is ordered after it on the one queue.
  constexpr uint64_t kCacheLimit = uint64_t(1) << 30;
  if (b->size <= kCacheLimit) {
    // Make room by releasing the buffers freed longest ago: a new buffer costs the driver an
    // allocation and Dawn a clear, on every call of a loop whose sizes do not fit beside them.
    while (cached_bytes_ + b->size > kCacheLimit) {
      auto [lo, hi] = free_.equal_range((*lru_.begin())->size);
      while (lo != hi && lo->second != lru_.begin()) ++lo;
      release_cached(lo);
    }
    lru_.push_back(b);
    free_.emplace(b->size, std::prev(lru_.end()));
    cached_bytes_ += b->size;
    return;
  }
  // Released, not destroyed: work recorded but not yet submitted may still name it, and
  // holds its own reference until it has run.
  api_.wgpuBufferRelease(b->buffer);
  delete b;
}

void Context::release_cached(std::multimap<uint64_t, std::list<Buffer*>::iterator>::iterator it) {
  Buffer* b = *it->second;
  cached_bytes_ -= it->first;
  lru_.erase(it->second);
  free_.erase(it);
  // Released, not destroyed, as above: recorded work may still name it.
  api_.wgpuBufferRelease(b->buffer);
  delete b;
}

WGPUCommandEncoder Context::encoder() {
  if (!encoder_) encoder_ = api_.wgpuDeviceCreateCommandEncoder(device_, nullptr);
  return encoder_;
}

void Context::write(Buffer* dst, size_t offset, const void* src, size_t nbytes) {
  if (nbytes == 0) return;
  std::lock_guard<std::recursive_mutex> lock(mu_);
  // A queue write into a buffer that earlier work used waits until that work has finished:
  // on NVIDIA's Vulkan driver, writes issued while it ran were seen to lose words to it.
  // Work only recorded is submitted first either way, so it still reads the old contents.
  if (dst->used)
    synchronize();
  else
    flush();
  const uint64_t lo = offset / 4 * 4, hi = round_up(offset + nbytes, 4);
  if (lo == offset && hi == offset + nbytes) {
    api_.wgpuQueueWriteBuffer(queue_, dst->buffer, offset, src, nbytes);
  } else {
    // The queue writes whole words: merge the partial ones with the bytes already there.
    std::vector<uint8_t> words(hi - lo);
    read(words.data(), dst, lo, words.size());
    std::memcpy(words.data() + (offset - lo), src, nbytes);
    api_.wgpuQueueWriteBuffer(queue_, dst->buffer, lo, words.data(), words.size());
  }
  check_errors();
}

void Context::read(void* dst, const Buffer* src, size_t offset, size_t nbytes) {
  if (nbytes == 0) return;
  std::lock_guard<std::recursive_mutex> lock(mu_);
  const uint64_t lo = offset / 4 * 4, hi = round_up(offset + nbytes, 4);
  if (staging_size_ < hi - lo) {
    if (staging_) api_.wgpuBufferRelease(staging_);
    staging_size_ = round_up(std::max<uint64_t>(hi - lo, uint64_t(1) << 16), 1 << 16);
    staging_ = raw_buffer(staging_size_, kBufferUsageMapRead | kBufferUsageCopyDst, "numr staging");
  }
  src->used = true;
  api_.wgpuCommandEncoderCopyBufferToBuffer(encoder(), src->buffer, lo, staging_, 0, hi - lo);
  ++recorded_;
  flush();
  StatusReply r;
  wait(
      api_.wgpuBufferMapAsync(staging_, kMapModeRead, 0, size_t(hi - lo), callback(&on_status, &r)),
      "read-back");
  check_errors();
  if (r.status != kMapAsyncStatusSuccess)
    fail<BackendError>(current_op("webgpu"),
                       "webgpu: mapping the read-back buffer failed: ", r.message);
  const void* p = api_.wgpuBufferGetConstMappedRange(staging_, 0, size_t(hi - lo));
  if (!p) {
    api_.wgpuBufferUnmap(staging_);
    fail<BackendError>(current_op("webgpu"), "webgpu: the read-back buffer has no mapped range");
  }
  std::memcpy(dst, static_cast<const uint8_t*>(p) + (offset - lo), nbytes);
  api_.wgpuBufferUnmap(staging_);
}

void Context::fill_bytes(Buffer* dst, size_t nbytes, uint8_t value) {
  if (nbytes == 0) return;
  std::lock_guard<std::recursive_mutex> lock(mu_);
  if (dst->bound > limits_.maxStorageBufferBindingSize) {
    // Beyond what one binding can reach: a queue write (which may wait, see write()).
    const std::vector<uint8_t> bytes(nbytes, value);
    write(dst, 0, bytes.data(), nbytes);
    return;
  }
  // A kernel rather than a queue write: it is ordered with the recorded work, so it never
  // waits for the queue (test builds fill every allocation so).
  if (!fill_pipeline_)
    fill_pipeline_ = make_pipeline(
        "var<private> numr_zero: u32;\n"
        "@group(0) @binding(0) var<storage, read> P: array<u32>;\n"
        "@group(0) @binding(1) var<storage, read_write> D: array<u32>;\n"
        "@compute @workgroup_size(256)\n"
        "fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wg: "
        "vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {\n"
        "  let i = (wg.x + wg.y * nwg.x) * 256u + lid;\n"
        "  if (i < P[0]) { D[i] = P[1]; }\n"
        "}\n",
        "fill_bytes");
  const uint64_t words = round_up(nbytes, 4) / 4;
  const uint32_t pattern = uint32_t(value) * 0x01010101u;
  const uint32_t params[] = {uint32_t(words), pattern};
  const Binding out{dst, true};
  dispatch(fill_pipeline_, std::span<const Binding>(&out, 1), params, (words + 255) / 256);
}

void Context::copy(Buffer* dst, uint64_t dst_offset, const Buffer* src, uint64_t src_offset,
                   uint64_t nbytes) {
  if (nbytes == 0) return;
  std::lock_guard<std::recursive_mutex> lock(mu_);
  if (recorded_ >= kMaxRecorded) flush();
  src->used = true;
  dst->used = true;
  api_.wgpuCommandEncoderCopyBufferToBuffer(encoder(), src->buffer, src_offset, dst->buffer,
                                            dst_offset, nbytes);
  ++recorded_;
}

WGPUComputePipeline Context::make_pipeline(const std::string& wgsl, const std::string& label) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  check_errors();
  api_.wgpuDevicePushErrorScope(device_, kErrorFilterValidation);
  WGPUShaderSourceWGSL src{};
  src.chain.sType = kSTypeShaderSourceWGSL;
  src.code = WGPUStringView{wgsl.data(), wgsl.size()};
  WGPUShaderModuleDescriptor smd{};
  smd.nextInChain = &src.chain;
  smd.label = WGPUStringView{label.data(), label.size()};
  WGPUShaderModule module = api_.wgpuDeviceCreateShaderModule(device_, &smd);
  WGPUComputePipelineDescriptor cpd{};
  cpd.label = smd.label;
  cpd.compute.module = module;
  cpd.compute.entryPoint = view("main");
  WGPUComputePipeline p = api_.wgpuDeviceCreateComputePipeline(device_, &cpd);
  StatusReply r;
  wait(api_.wgpuDevicePopErrorScope(device_, callback(&on_pop, &r)), "pipeline creation");
  if (module) api_.wgpuShaderModuleRelease(module);
  if (!p || r.type != kErrorTypeNoError) {
    if (p) api_.wgpuComputePipelineRelease(p);
    fail<BackendError>(current_op("webgpu"), "webgpu: the shader ", label,
                       " does not compile: ", r.message, "\n", wgsl);
  }
  return p;
}

void Context::dispatch(WGPUComputePipeline pipeline, std::span<const Binding> buffers,
                       std::span<const uint32_t> params, uint64_t groups) {
  if (groups == 0) return;
  std::lock_guard<std::recursive_mutex> lock(mu_);
  const uint64_t max_x = limits_.maxComputeWorkgroupsPerDimension;
  const uint64_t gx = std::min(groups, max_x), gy = (groups + gx - 1) / gx;
  if (gy > max_x)
    fail<BackendLimitation>(current_op("webgpu"), "webgpu: ", groups,
                            " workgroups exceed the adapter's grid");
  // Parameters: a slot of the arena, aligned for a storage binding offset.
  const uint64_t align = std::max<uint32_t>(limits_.minStorageBufferOffsetAlignment, 4) / 4;
  // The parameters and a zero word after them, which shaders read as a zero their
  // compiler cannot fold (codegen/wgsl/value.h).
  const uint64_t words = params.size() + 1;
  if (words > kArenaWords)
    fail<BackendLimitation>(current_op("webgpu"), "webgpu: ", words, " parameter words exceed ",
                            kArenaWords);
  if (recorded_ >= kMaxRecorded || round_up(arena_host_.size(), align) + words > kArenaWords)
    flush();
  for (const Binding& b : buffers)
    if (b.buffer->bound > limits_.maxStorageBufferBindingSize)
      fail<BackendLimitation>(current_op("webgpu"), "webgpu: a tensor of ", b.buffer->bound,
                              " bytes exceeds the adapter's largest storage binding (",
                              limits_.maxStorageBufferBindingSize, " bytes)");
  // A buffer bound writable may be bound by no other binding: an input that shares one
  // with an output is read from a copy.
  std::vector<Buffer*> copies;
  std::vector<WGPUBindGroupEntry> entries(buffers.size() + 1);
  for (size_t i = 0; i < buffers.size(); ++i) {
    WGPUBuffer raw = buffers[i].buffer->buffer;
    bool aliased = false;
    for (size_t j = 0; j < buffers.size(); ++j)
      aliased |= j != i && buffers[j].buffer == buffers[i].buffer &&
                 (buffers[j].writable || buffers[i].writable);
    if (aliased && !buffers[i].writable) {
      Buffer* c = allocate(buffers[i].buffer->bound);
      api_.wgpuCommandEncoderCopyBufferToBuffer(encoder(), raw, 0, c->buffer, 0, c->bound);
      copies.push_back(c);
      raw = c->buffer;
    }
    entries[i + 1].binding = uint32_t(i + 1);
    entries[i + 1].buffer = raw;
    entries[i + 1].offset = 0;
    entries[i + 1].size = buffers[i].buffer->bound;
  }
  // The parameters, and the marks, only now: an allocation above may have submitted the
  // encoder (and its parameter buffer) to make room.
  if (!arena_) arena_ = raw_buffer(kArenaWords * 4, kBufferUsageStorage, "numr params", true);
  const uint64_t slot = round_up(arena_host_.size(), align);
  arena_host_.resize(slot + words, 0);
  std::copy(params.begin(), params.end(), arena_host_.begin() + long(slot));
  entries[0].binding = 0;
  entries[0].buffer = arena_;
  entries[0].offset = slot * 4;
  entries[0].size = words * 4;
  for (const Binding& b : buffers) b.buffer->used = true;
  for (Buffer* c : copies) c->used = true;
  WGPUBindGroupLayout layout = api_.wgpuComputePipelineGetBindGroupLayout(pipeline, 0);
  WGPUBindGroupDescriptor bgd{};
  bgd.layout = layout;
  bgd.entryCount = entries.size();
  bgd.entries = entries.data();
  WGPUBindGroup group = api_.wgpuDeviceCreateBindGroup(device_, &bgd);
  WGPUComputePassEncoder pass = api_.wgpuCommandEncoderBeginComputePass(encoder(), nullptr);
  api_.wgpuComputePassEncoderSetPipeline(pass, pipeline);
  api_.wgpuComputePassEncoderSetBindGroup(pass, 0, group, 0, nullptr);
  api_.wgpuComputePassEncoderDispatchWorkgroups(pass, uint32_t(gx), uint32_t(gy), 1);
  api_.wgpuComputePassEncoderEnd(pass);
  api_.wgpuComputePassEncoderRelease(pass);
  api_.wgpuBindGroupRelease(group);
  api_.wgpuBindGroupLayoutRelease(layout);
  for (Buffer* c : copies) deallocate(c);
  ++recorded_;
}

void Context::flush() {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  if (!encoder_) return;
  if (arena_) {
    if (void* p = api_.wgpuBufferGetMappedRange(arena_, 0, size_t(kArenaWords * 4)))
      std::memcpy(p, arena_host_.data(), arena_host_.size() * 4);
    api_.wgpuBufferUnmap(arena_);  // without a range Dawn reported why; check_errors raises it
  }
  WGPUCommandBuffer cb = api_.wgpuCommandEncoderFinish(encoder_, nullptr);
  api_.wgpuCommandEncoderRelease(encoder_);
  encoder_ = nullptr;
  recorded_ = 0;
  arena_host_.clear();
  if (cb) {
    api_.wgpuQueueSubmit(queue_, 1, &cb);
    api_.wgpuCommandBufferRelease(cb);
  }
  if (arena_) {
    api_.wgpuBufferRelease(arena_);  // the submitted work keeps it until it has run
    arena_ = nullptr;
  }
  check_errors();
}

void Context::synchronize() {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  flush();
  StatusReply r;
  wait(api_.wgpuQueueOnSubmittedWorkDone(queue_, callback(&on_status, &r)), "the queue");
  check_errors();
  if (r.status != kQueueWorkDoneStatusSuccess)
    fail<BackendError>(current_op("webgpu"), "webgpu: the queue did not finish: ", r.message);
}

}  // namespace numr::webgpu
