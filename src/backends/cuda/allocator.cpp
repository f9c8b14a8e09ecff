#include "backends/cuda/allocator.h"

#include "backends/cuda/context.h"
#include "backends/cuda/driver.h"
#include "core/op_scope.h"
#include "numr/error.h"

namespace numr::cuda {

void* CachingAllocator::allocate(size_t nbytes) {
  if (nbytes == 0) return nullptr;
  const Driver& d = driver();
  dev_.make_current();
  CUdeviceptr ptr = 0;
  CUresult r = d.mem_alloc_async(&ptr, nbytes, dev_.stream());
  if (r == CUDA_ERROR_OUT_OF_MEMORY) {
    // The pool may hold enough memory in cached blocks that cannot serve this size, or in
    // frees still queued on the stream: finish those, return the cache, try again.
    release_cached();
    r = d.mem_alloc_async(&ptr, nbytes, dev_.stream());
  }
  if (r == CUDA_ERROR_OUT_OF_MEMORY) {
    size_t free_bytes = 0, total_bytes = 0;
    if (d.mem_get_info(&free_bytes, &total_bytes) != CUDA_SUCCESS) free_bytes = total_bytes = 0;
    fail<OutOfMemory>(current_op("cuda"), "cuMemAllocAsync: out of memory allocating ", nbytes,
                      " bytes on ", dev_.device().str(), " (", free_bytes, " of ", total_bytes,
                      " bytes of the device free)");
  }
  check(r, "cuMemAllocAsync");
  return reinterpret_cast<void*>(static_cast<uintptr_t>(ptr));
}

void CachingAllocator::deallocate(void* ptr) noexcept {
  if (!ptr) return;
  const Driver* d = try_driver();
  if (!d) return;
  if (d->ctx_set_current(dev_.context()) != CUDA_SUCCESS) return;
  (void)d->mem_free_async(static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(ptr)),
                          dev_.stream());
}

namespace {
uint64_t pool_value(CudaDevice& dev, CUmemPool_attribute a, const char* what) {
  dev.make_current();
  uint64_t v = 0;
  check(driver().mem_pool_get_attribute(dev.pool(), a, &v), what);
  return v;
}
}  // namespace

uint64_t CachingAllocator::reserved_bytes() const {
  return pool_value(dev_, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT,
                    "cuMemPoolGetAttribute(RESERVED_MEM_CURRENT)");
}

uint64_t CachingAllocator::used_bytes() const {
  return pool_value(dev_, CU_MEMPOOL_ATTR_USED_MEM_CURRENT,
                    "cuMemPoolGetAttribute(USED_MEM_CURRENT)");
}

void CachingAllocator::release_cached() {
  dev_.synchronize();
  check(driver().mem_pool_trim_to(dev_.pool(), 0), "cuMemPoolTrimTo");
}

}  // namespace numr::cuda
