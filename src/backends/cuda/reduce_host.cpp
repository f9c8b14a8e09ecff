#include "backends/cuda/reduce_host.h"

#include <algorithm>

#include "backends/cuda/allocator.h"
#include "backends/cuda/context.h"

namespace numr::cuda {

ptx::Target device_target(const CudaDevice& dev) {
  const DeviceProperties& p = dev.props();
  return ptx::Target{.sm = p.cc_major * 10 + p.cc_minor,
                     .ptx_major = p.ptx_isa_major,
                     .ptx_minor = p.ptx_isa_minor};
}

CUfunction reduce_family_kernel(CudaDevice& dev, const std::string& name,
                                const std::function<GeneratedKernel(const ptx::Target&)>& gen) {
  return dev.kernels().get_or_build(name, [&] { return gen(device_target(dev)); });
}

Dims collapse_dims(const std::vector<int64_t>& shape, const std::vector<int64_t>& strides) {
  Dims d;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 1) continue;
    if (!d.shape.empty() && d.strides.back() == strides[i] * shape[i]) {
      d.shape.back() *= shape[i];
      d.strides.back() = strides[i];
      continue;
    }
    d.shape.push_back(shape[i]);
    d.strides.push_back(strides[i]);
  }
  if (d.shape.empty()) {
    d.shape.push_back(1);
    d.strides.push_back(1);
  }
  return d;
}

ScratchBuffer::ScratchBuffer(CudaDevice& dev, size_t bytes)
    : dev_(dev), ptr_(dev.allocator().allocate(bytes)) {}

ScratchBuffer::~ScratchBuffer() { dev_.allocator().deallocate(ptr_); }

uint64_t ScratchBuffer::address() const { return uint64_t(reinterpret_cast<uintptr_t>(ptr_)); }

uint64_t device_address(const void* base, int64_t offset, size_t element_size) {
  return uint64_t(reinterpret_cast<uintptr_t>(base)) + uint64_t(offset) * element_size;
}

unsigned grid_blocks(const CudaDevice& dev, int64_t work_blocks, int blocks_per_sm) {
  const int64_t full = int64_t(std::max(dev.props().sm_count, 1)) * blocks_per_sm;
  return unsigned(std::clamp<int64_t>(work_blocks, 1, full));
}

}  // namespace numr::cuda
