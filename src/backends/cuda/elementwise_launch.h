// Host side of the map kernels (elementwise_map.h): merging the dims of the operands into
// the fewest that describe them, choosing the layout (vector width from the operands'
// dtypes and alignment), packing the kernel's parameters and launching it.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "backends/cuda/elementwise_map.h"
#include "core/backend.h"

namespace numr::cuda {

class CudaDevice;

// The kernel parameters after the common ones, as bytes at their natural size.
class KernelArgs {
 public:
  template <class T>
  void add(const T& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    std::vector<uint64_t> block((sizeof(T) + 7) / 8, 0);
    std::memcpy(block.data(), &v, sizeof(T));
    blocks_.push_back(std::move(block));
  }
  // One by-value array parameter of elements of type T.
  template <class T>
  void add_array(std::span<const T> v) {
    std::vector<uint64_t> block((v.size() * sizeof(T) + 7) / 8, 0);
    if (!v.empty()) std::memcpy(block.data(), v.data(), v.size() * sizeof(T));
    blocks_.push_back(std::move(block));
  }
  // Pointers to each parameter's bytes, in order (valid while this object lives).
  std::vector<void*> pointers() const;

 private:
  std::vector<std::vector<uint64_t>> blocks_;
};

// Where a map kernel runs: the layout, the element count, the merged extents and strides
// and the operands' first-element addresses (outputs first, then inputs).
struct MapPlan {
  MapShape shape;
  int64_t n = 0;
  std::vector<int64_t> extents;               // Strided: the merged shape
  std::vector<std::vector<int64_t>> strides;  // Strided: per operand, in elements
  std::vector<uint64_t> addresses;
};

// Plans a map over `shape` for outs (1 or 2) and ins (0..3), each with its strides.
// vector_ok: whether a vector step may be used for the contiguous layout (the kernel
// configuration must allow it). Throws BackendLimitation when more than kMapMaxRank dims
// remain after merging.
MapPlan plan_map(const char* op, const Shape& shape, std::span<const TensorRef* const> outs,
                 std::span<const TensorRef* const> ins, bool vector_ok = true);

// What the kernels of dev are generated for: its compute capability and the newest PTX ISA
// its driver compiles.
ptx::Target map_kernel_target(const CudaDevice& dev);

// Launches a kernel made by generate_map for plan with the extra parameters.
void launch_map(CudaDevice& dev, CUfunction f, const std::string& name, const MapPlan& plan,
                const KernelArgs& extra);

}  // namespace numr::cuda
