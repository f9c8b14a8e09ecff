// Kernels of bias_activation_bwd over contiguous [rows, N] tensors: grad_pre = grad *
// finite_or_zero(act'(saved)) and d_bias = Σ_rows grad_pre, in one pass over grad and saved.
//
// Main kernel, block (32 lanes, kBiasSlices warps), grid (column tiles, row splits).
// Parameters: grad, saved, grad_pre, d_bias, partials (u64), rows, N, rows_per_split (u64).
// A column tile is 32 * vec columns: lane t takes columns [t * vec, (t + 1) * vec) of it,
// with 16-byte vectors when vec > 1 (N a multiple of vec, every tensor 16-byte aligned), so
// each warp reads one contiguous run of a row per load. Warp w walks rows w, w + 8, ...
// of the split, two rows in flight at a time, writing grad_pre and summing in f32
// (F32/F16/BF16) or f64; the warps' sums merge through shared memory in a fixed order.
// With one split the sum goes to d_bias, otherwise to partials[split * N + column] and the
// bias-sum kernel adds the splits of each column in f64, in a fixed order: block (32 lanes,
// kBiasSlices warps), grid (column tiles of 32); warp w takes splits w, w + 8, ... and
// warp 0 adds the warps' sums. Parameters: partials, d_bias (u64), N, splits (u64).
#pragma once

#include <string>

#include "backends/cuda/module.h"
#include "codegen/ptx/types.h"
#include "numr/dtype.h"
#include "numr/ops.h"

namespace numr::cuda {

inline constexpr int kBiasCols = 32;
inline constexpr int kBiasSlices = 8;

struct BiasActBwdKernelConfig {
  DType dtype = DType::F32;
  Activation act = Activation::None;
  // act' from the pre-activation (true), or from the activation's output.
  bool from_pre = true;
  int vec = 1;  // columns per lane: 1 or vector_width(dtype)

  // Relu, Sigmoid and Tanh have a derivative in terms of their output (None trivially);
  // Gelu and Silu always take the pre-activation.
  bool output_determines_derivative() const {
    return act == Activation::Relu || act == Activation::Sigmoid || act == Activation::Tanh;
  }
  std::string name() const;
};

GeneratedKernel generate_bias_act_bwd_kernel(const BiasActBwdKernelConfig& cfg,
                                             const ptx::Target& target);
// The second pass over the per-split column sums (stored in the accumulation type of
// `dtype`), writing d_bias as `dtype`.
GeneratedKernel generate_bias_sum_kernel(DType dtype, const ptx::Target& target);
std::string bias_sum_kernel_name(DType dtype);

}  // namespace numr::cuda
