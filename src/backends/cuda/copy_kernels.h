// Kernels for copies with dtype conversion (any strides on both sides) and fills. A copy
// between equal dtypes moves the raw bits; otherwise the element loads into the source's
// compute type and is stored with element_io's rules, which are the CPU's conversion rules.
// A fill converts its double value into the destination dtype in the kernel, by the same
// rules, so no host conversion has to agree with them.
#pragma once

#include <string>

#include "backends/cuda/elementwise_map.h"

namespace numr::cuda {

struct CopyConfig {
  DType src = DType::F32, dst = DType::F32;
  MapShape shape;
};
std::string copy_key(const CopyConfig& c);
GeneratedKernel generate_copy(const CopyConfig& c, const ptx::Target& target);

// A same-dtype copy from a transposed layout: the source contiguous along the result's dim
// d and strided along its last, the result contiguous along its last. A block of 32 x 8
// threads moves a tile of 32 x 32 elements (64 x 64 with pairs) through shared memory,
// reading 32 consecutive source elements (or pairs) per warp and writing 32 consecutive
// result elements or pairs (the map kernel's
// reads along the result's rows touch a sector per element). Grid: x over the last dim's
// tiles, y over dim d's, z over a third dim (batch). Parameters, sizes and strides in
// elements as u64: src, dst, rows (dim d), cols (last dim), s_l (source stride along the
// last dim), d_d (result stride along d), s_b, d_b (the batch dim's strides).
struct TransposeCopyConfig {
  int elem_bytes = 4;  // 1, 2, 4 or 8: the bits are moved as they are
  // 2-byte elements two at a time (4-byte accesses) in tiles of 64 x 64: rows, cols, both
  // strides and the batch strides even, both addresses 4-byte aligned.
  bool pairs = false;
};
// The tile's side: 32 elements, 64 with pairs.
inline int transpose_copy_tile(const TransposeCopyConfig& c) { return c.pairs ? 64 : 32; }
std::string transpose_copy_key(const TransposeCopyConfig& c);
GeneratedKernel generate_transpose_copy(const TransposeCopyConfig& c, const ptx::Target& target);

// Parameter after the common ones: value (f64).
struct FillConfig {
  DType dst = DType::F32;
  MapShape shape;
};
std::string fill_key(const FillConfig& c);
GeneratedKernel generate_fill(const FillConfig& c, const ptx::Target& target);

}  // namespace numr::cuda
