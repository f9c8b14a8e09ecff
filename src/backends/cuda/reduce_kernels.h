// The Reduce-family kernels (sum mean max min prod any all argmax argmin var std
// logsumexp) and the configuration that names each one. The host side (reduce.cpp) picks a
// variant; the kernels take every size as a parameter.
//
// Common parameters (all variants but `partials`), in order:
//   in (u64: address of the view's first element), out (u64, contiguous), partials (u64:
//   per-block states when a row or column is split), K (u64 outputs), R (u64 elements per
//   output), correction (s64), chunk (u64: reduced elements per block when split),
//   keep_shape, keep_strides, red_shape, red_strides (by-value arrays of kMaxReduceDims
//   u64 / s64 entries: the collapsed kept and reduced dims, strides in elements).
// vec_columns: block (kColumnWidth, kColumnSlices), grid (column tiles of kColumnWidth *
//   vector_width(in) outputs, splits); every vector of adjacent outputs must lie in the
//   innermost kept dim and start on a 16-byte boundary.
// partials: partials, out, K, R, correction, splits (u64 states per output).
#pragma once

#include <cstdint>
#include <string>

#include "backends/cuda/module.h"
#include "codegen/ptx/types.h"
#include "numr/dtype.h"
#include "numr/op_info.h"

namespace numr::cuda {

// Collapsed kept or reduced dims a kernel can address.
inline constexpr int kMaxReduceDims = 6;
// Threads per block of every reduction kernel; columns use kColumnWidth x kColumnSlices.
inline constexpr int kReduceBlock = 256;
inline constexpr int kColumnWidth = 32;
inline constexpr int kColumnSlices = kReduceBlock / kColumnWidth;

enum class ReduceVariant : uint8_t {
  warp_rows,    // one warp per output (short rows); grid-stride over outputs
  block_rows,   // one block per output; grid-stride over outputs
  split_rows,   // grid (splits, K): block (c, k) reduces chunk c of output k into partials
  columns,      // thread per output (consecutive outputs adjacent in memory), 8 slices of
                // the reduced range per block; grid.y splits the range into partials
  partials,     // one warp per output merges its `splits` partial states in order
  vec_columns,  // columns with vector_width(in) adjacent outputs per thread, read as one
                // 16-byte vector per reduced element (the host checks the alignment)
};

// Unrolled reduced elements in flight per thread of vec_columns.
inline constexpr int kColumnUnroll = 4;
// vec_columns keeps vector_width(in) states per thread: at most 8 (no 8-bit dtypes), which
// bounds its registers and its shared memory (256 threads x 8 states of <= 16 bytes).
inline constexpr int kMaxColumnVector = 8;

struct ReduceKernelConfig {
  OpId op = OpId::sum;
  DType in = DType::F32;
  ReduceVariant variant = ReduceVariant::block_rows;
  // Rows: the reduced elements of an output are one contiguous run (vector loads).
  bool contiguous = true;
  int keep_dims = 1;  // collapsed kept dims, 1..kMaxReduceDims
  int red_dims = 1;   // collapsed reduced dims (1 when contiguous)

  DType out() const;
  // The entry point's name, unique per configuration (also the cache key).
  std::string name() const;
};

GeneratedKernel generate_reduce_kernel(const ReduceKernelConfig& cfg, const ptx::Target& target);

}  // namespace numr::cuda
