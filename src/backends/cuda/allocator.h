// Device memory for tensors: stream-ordered allocations (cuMemAllocAsync / cuMemFreeAsync)
// on the device's stream, from the device's default memory pool, whose release threshold
// CudaDevice raises so freed blocks stay in the pool for reuse instead of going back to the
// OS. Freeing is asynchronous: a block is reused only by work ordered after the free on the
// same stream, which is all of numr's work on the device.
#pragma once

#include <cstddef>
#include <cstdint>

namespace numr::cuda {

class CudaDevice;

class CachingAllocator {
 public:
  explicit CachingAllocator(CudaDevice& dev) : dev_(dev) {}

  // A device pointer to nbytes bytes (nullptr for 0 bytes). On CUDA_ERROR_OUT_OF_MEMORY it
  // waits for pending frees, hands the pool's cached blocks back and tries once more before
  // throwing OutOfMemory.
  void* allocate(size_t nbytes);
  // Queues the free on the device's stream; never throws (errors at process exit, when the
  // driver may already be shut down, are ignored).
  void deallocate(void* ptr) noexcept;

  // Bytes the pool holds from the device (in use plus cached), and bytes in use.
  uint64_t reserved_bytes() const;
  uint64_t used_bytes() const;
  // Waits for the stream and returns every cached block to the device.
  void release_cached();

 private:
  CudaDevice& dev_;
};

}  // namespace numr::cuda
