// Kernels of the Scan (cumsum, cumprod) and Softmax (softmax, log_softmax) families along
// one axis of a contiguous [outer, n, inner] tensor. Parameters: in (u64), out (u64),
// outer, n, inner (u64).
//
// Softmax rows whose input and output rows all start on 16-byte boundaries and that fit
// (softmax_regs_capacity) are held in registers: one pass of vector loads, a group max,
// exp(x - max) once per element, a group sum, one pass of vector stores. Other softmax rows
// take two passes over memory: an online max and Σexp (logsumexp's reduction state), then
// the outputs. Both follow logsumexp's rules for NaN and ±inf.
//
// Scans of rows run tiles of a few coalesced vectors per thread (16-byte vectors when every
// row is aligned, else single elements), all loaded before any is scanned: a scan within
// each vector, shuffle scans across the warp and, for block rows, across the warps through
// shared memory (one barrier per tile), with a running carry from tile to tile. Columns (inner > 1)
// give each thread one (outer, inner) line walked down n, so a warp reads consecutive addresses.
#pragma once

#include <cstdint>
#include <string>

#include "backends/cuda/module.h"
#include "codegen/ptx/types.h"
#include "numr/dtype.h"
#include "numr/op_info.h"

namespace numr::cuda {

inline constexpr int kAxisBlock = 256;

enum class AxisVariant : uint8_t {
  warp_rows,   // inner == 1: one warp per row
  block_rows,  // inner == 1: one block per row
  columns,     // inner > 1: one thread per (outer, inner) line
  warp_regs,   // softmax, inner == 1, aligned rows that fit: one warp per row, in registers
  block_regs,  // the same with one block per row
};

struct AxisKernelConfig {
  OpId op = OpId::softmax;
  DType dtype = DType::F32;
  AxisVariant variant = AxisVariant::block_rows;
  // Softmax rows (two-pass): out is congruent to in modulo 16 bytes, so the outputs of an
  // aligned input vector are stored as one vector too.
  bool vector_store = false;
  // Scan rows: every row of in and out starts on a 16-byte boundary (n * element size is a
  // multiple of 16), so tiles move as 16-byte vectors.
  bool aligned = false;

  bool uses_vector_store() const {
    return (op == OpId::softmax || op == OpId::log_softmax) &&
           (variant == AxisVariant::warp_rows || variant == AxisVariant::block_rows);
  }
  bool uses_aligned() const {
    return (op == OpId::cumsum || op == OpId::cumprod) &&
           (variant == AxisVariant::warp_rows || variant == AxisVariant::block_rows);
  }
  std::string name() const;
};

// 16-byte vectors per thread of the register softmax variants: 32 elements (16 for F64),
// few enough registers to keep occupancy.
int softmax_reg_slots(DType d);
// The longest row the register softmax variant holds: threads x slots x vector width.
int64_t softmax_regs_capacity(DType d, bool block);

GeneratedKernel generate_axis_kernel(const AxisKernelConfig& cfg, const ptx::Target& target);

}  // namespace numr::cuda
