// Kernels of the Scan (cumsum, cumprod) and Softmax (softmax, log_softmax) families along
// one axis of a contiguous [outer, n, inner] tensor. Parameters: in (u64), out (u64),
// outer, n, inner (u64).
//
// Softmax rows take two passes over a row: an online max and Σexp (logsumexp's reduction
// state, so NaN and ±inf follow the same rules), then the outputs. Scans of rows run a
// tile of 4 consecutive elements per thread: a sequential scan within the thread, a
// shuffle scan across the warp and, for block rows, across the warps through shared
// memory, with a running carry from tile to tile. Columns (inner > 1) give each thread one
// (outer, inner) line walked down n, so a warp reads consecutive addresses.
#pragma once

#include <cstdint>
#include <string>

#include "backends/cuda/module.h"
#include "codegen/ptx/types.h"
#include "numr/dtype.h"
#include "numr/op_info.h"

namespace numr::cuda {

inline constexpr int kAxisBlock = 256;
// Elements of a scan tile per thread.
inline constexpr int kScanItems = 4;

enum class AxisVariant : uint8_t {
  warp_rows,   // inner == 1: one warp per row
  block_rows,  // inner == 1: one block per row
  columns,     // inner > 1: one thread per (outer, inner) line
};

struct AxisKernelConfig {
  OpId op = OpId::softmax;
  DType dtype = DType::F32;
  AxisVariant variant = AxisVariant::block_rows;
  // Softmax rows: out is congruent to in modulo 16 bytes, so the outputs of an aligned
  // input vector are stored as one vector too.
  bool vector_store = false;

  bool uses_vector_store() const {
    return (op == OpId::softmax || op == OpId::log_softmax) && variant != AxisVariant::columns;
  }
  std::string name() const;
};

GeneratedKernel generate_axis_kernel(const AxisKernelConfig& cfg, const ptx::Target& target);

}  // namespace numr::cuda
