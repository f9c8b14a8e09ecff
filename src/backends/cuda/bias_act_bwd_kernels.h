// Kernels of bias_activation_bwd over contiguous [rows, N] tensors: grad_pre = grad *
// finite_or_zero(act'(saved)) and d_bias = Σ_rows grad_pre, in one pass over grad and saved.
//
// Main kernel, block (32 columns, 8 row slices), grid (column tiles, row splits).
// Parameters: grad, saved, grad_pre, d_bias, partials (u64), rows, N, rows_per_split (u64).
// Each thread walks its column down its slice of the split, writing grad_pre and summing in
// f32 (F32/F16/BF16) or f64; the 8 slices merge through shared memory in a fixed order.
// With one split the sum goes to d_bias, otherwise to partials[split * N + column] and the
// bias-sum kernel (parameters: partials, d_bias (u64), N, splits (u64)) adds the splits of
// each column in order, in f64.
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
