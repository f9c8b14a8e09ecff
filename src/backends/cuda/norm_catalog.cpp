// norm_kernels(): every kernel configuration of the Norm family, for assembling with
// ptxas in tests.
#include "backends/cuda/kernel_catalog.h"
#include "backends/cuda/norm_kernels.h"
#include "backends/cuda/reduce_codegen.h"

namespace numr::cuda {

std::vector<GeneratedKernel> norm_kernels(const ptx::Target& target) {
  std::vector<GeneratedKernel> out;
  for (OpId op : {OpId::rms_norm, OpId::layer_norm})
    for (DType t : {DType::F64, DType::F32, DType::F16, DType::BF16})
      for (int vec : {1, vector_width(t)}) {
        for (bool block : {false, true}) {
          for (bool stats : {false, true})
            for (bool regs : {false, true})
              for (bool residual : {false, true}) {
                if (regs && vec == 1) continue;
                NormKernelConfig cfg{NormKernel::forward, op, t, block, vec, stats};
                cfg.regs = regs;
                cfg.residual = residual;
                out.push_back(generate_norm_kernel(cfg, target));
              }
          for (bool fused : {false, true})
            out.push_back(generate_norm_kernel(
                {NormKernel::backward_rows, op, t, block, vec, false, fused}, target));
        }
        out.push_back(
            generate_norm_kernel({NormKernel::backward_columns, op, t, false, vec, false}, target));
      }
  return out;
}

}  // namespace numr::cuda
