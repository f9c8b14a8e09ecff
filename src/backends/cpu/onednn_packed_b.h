// The right operand of a oneDNN matmul, repacked once per product into the layout its
// kernel reads. Given B in a plain (row- or column-major) layout, oneDNN's brgemm kernels
// copy it into a blocked layout inside every call, so a product that numr's pool splits
// into row blocks repacks the whole of B once per block. Packed once, every block reads it
// as it is. The reorder runs on one thread while the others wait, so for a small B it
// costs more than it saves: hence kMinBytes.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include <cstdint>

#include "backends/cpu/gemm_support.h"

namespace numr::cpu {

class PackedB {
 public:
  // Worth doing when at least kMinCalls calls of one product read the whole of B and B has
  // at least packed_b_min_bytes() (kMinBytes unless a test set it).
  static constexpr int64_t kMinCalls = 2;
  static constexpr int64_t kMinBytes = int64_t(4) << 20;
  static bool worth_it(int64_t calls, int64_t b_bytes);

  // The descriptor to create a primitive with so that oneDNN picks B's layout.
  static dnnl::memory::desc any_layout(const dnnl::memory::desc& plain) {
    return dnnl::memory::desc(plain.dims(), plain.data_type(), dnnl::memory::format_tag::any);
  }
  // A 3-D descriptor of batch 1 as a 2-D one. With 3-D descriptors oneDNN keeps B's plain
  // layout, so a primitive that is to pick B's layout is made with 2-D ones.
  static dnnl::memory::desc two_d(const dnnl::memory::desc& d) {
    const dnnl::memory::dims dims = d.dims();
    return d.reshape({dims[1], dims[2]});
  }

  // Reorders B (descriptor `plain`, at `data`) into `layout` (a primitive's weights
  // descriptor) in `buffer`, on the calling thread. Does nothing when the two layouts are
  // the same: the primitive then reads B in place.
  void pack(const dnnl::memory::desc& plain, const void* data, const dnnl::memory::desc& layout,
            ScratchBuffer& buffer);

  bool active() const { return data_ != nullptr; }
  // Whether a primitive whose weights descriptor is `layout` can read the packed B.
  bool fits(const dnnl::memory::desc& layout) const { return active() && layout == layout_; }
  void* data() const { return data_; }

 private:
  dnnl::memory::desc layout_;
  void* data_ = nullptr;
};

// Tests: how many times B was packed (process-wide), and the size from which it is
// (so that products small enough for the float64 reference take this path too).
int64_t packed_b_count();
void set_packed_b_min_bytes_for_testing(int64_t bytes);

}  // namespace numr::cpu
