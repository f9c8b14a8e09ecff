// Host memory for CPU tensors. Blocks of 1 MiB and more come from mmap, ask for
// transparent huge pages, and are kept after they are freed (in size classes of four per
// power of two) for the next tensor of that class: a new large tensor would otherwise be
// faulted in 4 KiB at a time, which costs more than most ops that write it. Smaller
// blocks use aligned_alloc. The cache holds at most NUMR_CPU_CACHE_MB megabytes
// (default 2048; 0 disables it).
#pragma once

#include <cstddef>
#include <map>
#include <mutex>
#include <unordered_map>

namespace numr::cpu {

class HostAllocator {
 public:
  static HostAllocator& instance();

  void* allocate(size_t nbytes);  // 64-byte aligned; throws OutOfMemory
  void deallocate(void* p) noexcept;
  void release_cached() noexcept;  // unmaps every cached block
  size_t cached_bytes() const;

 private:
  HostAllocator();
  static size_t size_class(size_t nbytes);
  void* map_block(size_t bytes);

  mutable std::mutex mu_;
  std::unordered_map<void*, size_t> live_;  // large blocks in use -> their class size
  std::multimap<size_t, void*> cached_;     // freed large blocks by class size
  size_t cached_bytes_ = 0;
  size_t limit_bytes_;
};

// A kernel's scratch block from the HostAllocator, returned when it goes out of scope.
class HostScratch {
 public:
  explicit HostScratch(size_t nbytes) : p_(HostAllocator::instance().allocate(nbytes)) {}
  HostScratch(const HostScratch&) = delete;
  HostScratch& operator=(const HostScratch&) = delete;
  ~HostScratch() { HostAllocator::instance().deallocate(p_); }
  void* get() const { return p_; }

 private:
  void* p_;
};

}  // namespace numr::cpu
