// attention_kernels(): every kernel configuration of scaled_dot_product_attention, for
// assembling with ptxas in tests.
#include "backends/cuda/attention_kernels.h"
#include "backends/cuda/kernel_catalog.h"

namespace numr::cuda {

std::vector<GeneratedKernel> attention_kernels(const ptx::Target& target) {
  std::vector<GeneratedKernel> out;
  for (AttentionKernel kind :
       {AttentionKernel::forward, AttentionKernel::backward_kv, AttentionKernel::backward_q})
    for (DType t : {DType::F32, DType::F16, DType::BF16})
      for (int dmax : {32, 64, 128, 256})
        out.push_back(generate_attention_kernel({kind, t, dmax}, target));
  for (DType t : {DType::F16, DType::BF16})
    for (int dmax : {32, 64, 128})
      out.push_back(generate_attention_kernel({AttentionKernel::forward, t, dmax, true}, target));
  return out;
}

}  // namespace numr::cuda
