// One WebGPU device: Dawn's instance, a Vulkan adapter (never the Null backend), the device
// and its queue. Memory comes from a caching allocator; uploads go through the queue,
// read-back through a reusable staging buffer; dispatches are recorded into one command
// encoder and submitted together (flush), with their parameters packed into one arena
// buffer per submit. Every wait is bounded. Validation errors and a lost device become
// BackendError carrying Dawn's message.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "backends/webgpu/loader.h"

namespace numr::webgpu {

// A device allocation: the handle numr's Storage holds.
struct Buffer {
  WGPUBuffer buffer = nullptr;
  uint64_t size = 0;   // bytes, a multiple of 4 and at least 4
  uint64_t bound = 0;  // bytes a dispatch binds: the request rounded up to 4
  // Recorded work has used it (as a binding or a copy's source): a queue write into it
  // waits for the queue first (Context::write).
  mutable bool used = false;
};

// A storage buffer bound to a dispatch, in binding order after the parameters (binding 0).
struct Binding {
  const Buffer* buffer;
  bool writable;
};

class Context {
 public:
  // The device of `index` (only 0 exists), made on first use; throws BackendUnavailable with
  // the reason when there is no library or no usable adapter.
  static Context& get(int index);
  // 1 when webgpu:0 can be made, else 0; never throws.
  static int count() noexcept;

  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  const Api& api() const { return api_; }
  const WGPULimits& limits() const { return limits_; }
  // "llvmpipe (LLVM 15.0.6, 256 bits) [Vulkan, CPU]"
  const std::string& adapter_name() const { return adapter_name_; }
  uint32_t adapter_backend() const { return backend_type_; }
  // Whether the device has WGSL's subgroups (requested when the adapter lists them), and the
  // subgroup sizes the adapter reports (a dispatch may see any power of two between them).
  bool has_subgroups() const { return subgroups_; }
  uint32_t subgroup_min_size() const { return subgroup_min_; }
  uint32_t subgroup_max_size() const { return subgroup_max_; }

  Buffer* allocate(size_t nbytes);
  void deallocate(Buffer* b) noexcept;
  void write(Buffer* dst, size_t offset, const void* src, size_t nbytes);
  void read(void* dst, const Buffer* src, size_t offset, size_t nbytes);
  void fill_bytes(Buffer* dst, size_t nbytes, uint8_t value);
  // Records a copy of nbytes from src at src_offset to dst at dst_offset, ordered with the
  // dispatches: offsets and size multiples of 4, src and dst different buffers.
  void copy(Buffer* dst, uint64_t dst_offset, const Buffer* src, uint64_t src_offset,
            uint64_t nbytes);

  // A compute pipeline from WGSL with entry point "main"; compile errors throw BackendError
  // with the compiler's message and the source.
  WGPUComputePipeline make_pipeline(const std::string& wgsl, const std::string& label);
  // Records a dispatch of `groups` workgroups (spread over x and y when beyond the
  // per-dimension limit; shaders fold them back with num_workgroups). params becomes
  // binding 0 (read-only array<u32>), the buffers bindings 1, 2, ...
  void dispatch(WGPUComputePipeline pipeline, std::span<const Binding> buffers,
                std::span<const uint32_t> params, uint64_t groups);
  // Submits what was recorded; waits for nothing.
  void flush();
  // Submits and waits until the queue is idle, then raises any error Dawn reported.
  void synchronize();

  // Throws BackendError when the device is lost or Dawn reported an error since the last check.
  void check_errors();

  // The callbacks' records (public for the C callbacks).
  void on_error(const std::string& message);
  void on_lost(const std::string& message);

 private:
  Context(const Api& api, WGPUInstance instance);
  void open_adapter_and_device();
  void wait(WGPUFuture f, const char* what);
  WGPUCommandEncoder encoder();
  // A new buffer; `mapped` creates it mapped for writing (size a multiple of 4).
  WGPUBuffer raw_buffer(uint64_t size, WGPUFlags usage, const char* label, bool mapped = false);

  const Api& api_;
  WGPUInstance instance_ = nullptr;
  WGPUAdapter adapter_ = nullptr;
  WGPUDevice device_ = nullptr;
  WGPUQueue queue_ = nullptr;
  WGPULimits limits_{};
  std::string adapter_name_;
  uint32_t backend_type_ = 0;
  bool subgroups_ = false;
  uint32_t subgroup_min_ = 0, subgroup_max_ = 0;

  std::recursive_mutex mu_;
  // Recorded work not yet submitted, and its parameters: arena_ is a new buffer for each
  // encoder, created mapped and filled from arena_host_ at flush, so no queue write ever
  // lands in parameters that earlier work may still be reading (see write()).
  WGPUCommandEncoder encoder_ = nullptr;
  int recorded_ = 0;
  std::vector<uint32_t> arena_host_;
  WGPUBuffer arena_ = nullptr;
  WGPUComputePipeline fill_pipeline_ = nullptr;
  // Read-back staging buffer, reused and grown as needed.
  WGPUBuffer staging_ = nullptr;
  uint64_t staging_size_ = 0;
  // Freed buffers, oldest first, and the same by size for reuse; cached_bytes_ is their
  // total. When a freed buffer would pass the limit, the oldest are released to make room,
  // so that buffers of sizes no longer in use cannot keep the current ones out of the cache.
  std::list<Buffer*> lru_;
  std::multimap<uint64_t, std::list<Buffer*>::iterator> free_;
  uint64_t cached_bytes_ = 0;
  void release_cached(std::multimap<uint64_t, std::list<Buffer*>::iterator>::iterator it);

  std::mutex err_mu_;
  std::vector<std::string> errors_;
  bool lost_ = false;
  std::string lost_message_;
};

}  // namespace numr::webgpu
