// Every kernel configuration the CUDA backend can generate, so that the tests can run the
// PTX of each through ptxas for every target numr supports, with no GPU. Each family's
// generator file defines its own list; all_kernels joins them.
#pragma once

#include <vector>

#include "backends/cuda/module.h"
#include "codegen/ptx/types.h"

namespace numr::cuda {

std::vector<GeneratedKernel> elementwise_kernels(
    const ptx::Target& target);  // + copy, fill, sequence, random
std::vector<GeneratedKernel> reduce_kernels(
    const ptx::Target& target);  // + along_axis, bias_activation_bwd
std::vector<GeneratedKernel> epilogue_kernels(
    const ptx::Target& target);  // fused GEMM epilogue passes
std::vector<GeneratedKernel> norm_kernels(
    const ptx::Target& target);  // rms_norm, layer_norm: forward and backward
std::vector<GeneratedKernel> index_kernels(
    const ptx::Target& target);  // index_gather, index_scatter
std::vector<GeneratedKernel> attention_kernels(
    const ptx::Target& target);  // scaled_dot_product_attention: forward and backward

std::vector<GeneratedKernel> sort_kernels(const ptx::Target& target);  // sort_rows, search_sorted

std::vector<GeneratedKernel> all_kernels(const ptx::Target& target);

}  // namespace numr::cuda
