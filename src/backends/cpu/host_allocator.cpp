#include "backends/cpu/host_allocator.h"

#include <sys/mman.h>

#include <bit>
#include <cstdlib>

#include "core/op_scope.h"
#include "numr/error.h"

namespace numr::cpu {
namespace {
constexpr size_t kLargeBlock = size_t(1) << 20;
}

HostAllocator& HostAllocator::instance() {
  static HostAllocator a;
  return a;
}

HostAllocator::HostAllocator() {
  long mb = 2048;
  if (const char* env = std::getenv("NUMR_CPU_CACHE_MB")) mb = std::atol(env);
  limit_bytes_ = mb > 0 ? size_t(mb) << 20 : 0;
}

size_t HostAllocator::size_class(size_t nbytes) {
  // Four classes per power of two: at most 25% unused.
  const int top = std::bit_width(nbytes) - 1;
  const size_t step = size_t(1) << (top - 2);
  return (nbytes + step - 1) / step * step;
}

void* HostAllocator::map_block(size_t bytes) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return nullptr;
  madvise(p, bytes, MADV_HUGEPAGE);  // advisory: ignored where huge pages are off
  return p;
}

void* HostAllocator::allocate(size_t nbytes) {
  if (nbytes < kLargeBlock) {
    void* p = std::aligned_alloc(64, (std::max<size_t>(nbytes, 1) + 63) / 64 * 64);
    if (!p)
      fail<OutOfMemory>(current_op("allocate"), "cannot allocate ", nbytes, " bytes on the CPU");
    return p;
  }
  const size_t bytes = size_class(nbytes);
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = cached_.find(bytes);
    if (it != cached_.end()) {
      void* p = it->second;
      cached_.erase(it);
      cached_bytes_ -= bytes;
      live_.emplace(p, bytes);
      return p;
    }
  }
  void* p = map_block(bytes);
  if (!p) {
    release_cached();
    p = map_block(bytes);
  }
  if (!p)
    fail<OutOfMemory>(current_op("allocate"), "cannot allocate ", nbytes, " bytes on the CPU");
  std::lock_guard<std::mutex> lock(mu_);
  live_.emplace(p, bytes);
  return p;
}

void HostAllocator::deallocate(void* p) noexcept {
  if (!p) return;
  size_t bytes = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = live_.find(p);
    if (it == live_.end()) {
      std::free(p);  // a small block
      return;
    }
    bytes = it->second;
    live_.erase(it);
    if (cached_bytes_ + bytes <= limit_bytes_) {
      cached_.emplace(bytes, p);
      cached_bytes_ += bytes;
      return;
    }
  }
  munmap(p, bytes);
}

void HostAllocator::release_cached() noexcept {
  std::multimap<size_t, void*> blocks;
  {
    std::lock_guard<std::mutex> lock(mu_);
    blocks.swap(cached_);
    cached_bytes_ = 0;
  }
  for (auto& [bytes, p] : blocks) munmap(p, bytes);
}

size_t HostAllocator::cached_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return cached_bytes_;
}

}  // namespace numr::cpu
