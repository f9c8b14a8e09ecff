// Kernels of the Norm family (rms_norm, layer_norm) over contiguous [rows, d] tensors of one
// float dtype, statistics in reduce_acc_type (f32 for F32/F16/BF16, f64 for F64).
//
// Rows kernels (forward and the backward's d_x): a group per row, a warp (8 rows per block
// of kNormBlock threads) or the whole block, grid-stride over the rows. The group walks its
// row in memory once per pass, 16-byte vectors when vec > 1 (every tensor 16-byte aligned
// and d a multiple of the width), else single elements; later passes re-read the row from
// the cache. Row sums are combined over the group in a fixed order (shuffles, then the
// warps' sums in shared memory), so every thread holds the same value.
//   forward, rms:   Σx²; rstd = 1 / sqrt(Σx² / d + eps); out = x * rstd * w
//   forward, layer: mean = Σx / d; rstd = 1 / sqrt(Σ(x - mean)² / d + eps) (two passes,
//                   never E[x²] - E[x]²); out = (x - mean) * rstd * w + b
//   Parameters: x, weight, bias, out, mean, rstd (u64), rows, d (u64), eps (f64), residual,
//   sum (u64); bias and mean are unused by rms, mean and rstd unless stats, residual and sum
//   unless residual (the fused add-norms: the row is x + residual rounded to the dtype, written
//   to sum by a first pass, or from registers).
//   Rows that fit (norm_regs_capacity) with vec > 1 are read once, into registers, and the
//   passes run there (regs).
//   backward d_x:   xhat = (x - mean) * rstd, gw = g * w, a = Σ gw xhat / d,
//                   m = Σ gw / d (layer) or 0 (rms); d_x = (gw - xhat * a - m) * rstd
//   Parameters: grad, x, weight, mean, rstd, d_x, d_weight, d_bias, partials (u64), rows,
//   d (u64); the gradients of the weight and bias and partials only when fused.
//
// Fused backward rows: each group's g xhat and g (layer) also go to the group's region of
// dynamic shared memory, [Σ g xhat over d | Σ g over d] in the accumulation type (a region
// per warp, or one for a block, zeroed first). A thread always takes the same columns (unit
// u of every row is thread u mod group size), so no two threads touch one column. At the end
// the block adds its regions in order and writes d_weight and d_bias (a grid of one block)
// or its row of partials: [blocks, d] for d_weight, then [blocks, d] for d_bias, added by
// the bias-sum kernel. Shared bytes: regions * (1 or 2) * d * accumulation size.
//
// Columns kernel (the backward's d_weight = Σ_rows g xhat, d_bias = Σ_rows g): block
// (32 lanes, kNormColWarps warps), grid (column tiles of 32 * vec, row splits); warp w walks
// rows w, w + kNormColWarps, ... of its split, the warps' sums merge through shared memory
// in a fixed order. With one split the sums go to d_weight and d_bias in x's dtype,
// otherwise to partials (accumulation type): d_weight's at [split * d + column], d_bias's
// after them at [(splits + split) * d + column]; the bias-sum kernel (bias_act_bwd_kernels.h)
// then adds each column's splits in a fixed order. No atomics anywhere: deterministic.
//   Parameters: grad, x, mean, rstd, d_weight, d_bias, partials (u64), rows, d,
//   rows_per_split (u64).
#pragma once

#include <string>

#include "backends/cuda/module.h"
#include "codegen/ptx/types.h"
#include "numr/dtype.h"
#include "numr/op_info.h"

namespace numr::cuda {

inline constexpr int kNormBlock = 256;
inline constexpr int kNormColWarps = 8;

enum class NormKernel : uint8_t { forward, backward_rows, backward_columns };

struct NormKernelConfig {
  NormKernel kind = NormKernel::forward;
  OpId op = OpId::rms_norm;  // rms_norm or layer_norm
  DType dtype = DType::F32;
  bool block = false;     // rows kernels: a block per row (else a warp)
  int vec = 1;            // 1 or vector_width(dtype)
  bool stats = false;     // forward: writes mean (layer) and rstd
  bool fused = false;     // backward rows: also d_weight and d_bias (see above)
  bool regs = false;      // forward: the row held in registers (vec > 1, d <= norm_regs_capacity)
  bool residual = false;  // forward: normalises x + residual, also stored to sum

  bool centred() const { return op == OpId::layer_norm; }
  std::string name() const;
};

// 16-byte units per thread of the register forward: 32 elements (16 for F64).
int norm_reg_slots(DType d);
// The longest row the register forward holds: threads x slots x vector width.
int64_t norm_regs_capacity(DType d, bool block);

GeneratedKernel generate_norm_kernel(const NormKernelConfig& cfg, const ptx::Target& target);

}  // namespace numr::cuda
