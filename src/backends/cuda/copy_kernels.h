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

// A copy from a transposed layout: the source contiguous along the result's dim d and
// strided along its last, the result contiguous along its last. A block of 32 x 8 threads
// moves a tile of 32 x 32 elements (64 x 64 with pairs) through shared memory, reading 32
// consecutive source elements (or pairs) per warp and writing 32 consecutive result
// elements or pairs (the map kernel's reads along the result's rows touch a sector per
// element). Between equal dtypes the bits move as they are (one kernel per element size);
// a cast converts each element as it leaves the tile, by generate_copy's rules. Grid: x
// over the last dim's tiles, y over dim d's, z over a third dim (batch). Parameters, sizes
// and strides in elements as u64: src, dst, rows (dim d), cols (last dim), s_l (source
// stride along the last dim), d_d (result stride along d), s_b, d_b (the batch dim's
// strides).
struct TransposeCopyConfig {
  DType src = DType::F32, dst = DType::F32;
  // Two elements at a time (accesses of twice the element size on either side) in tiles of
  // 64 x 64, for equal 2-byte dtypes and for casts between 2- and 4-byte dtypes with a
  // 2-byte side: rows, cols, both strides and the batch strides even, each address aligned
  // to two of its elements.
  bool pairs = false;
};
// The tile's side: 32 elements, 64 with pairs.
inline int transpose_copy_tile(const TransposeCopyConfig& c) { return c.pairs ? 64 : 32; }
// Whether pairs (above) are possible for these dtypes.
bool transpose_copy_pairs_possible(DType src, DType dst);
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
