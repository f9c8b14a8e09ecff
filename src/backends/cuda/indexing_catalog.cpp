// index_kernels(): every kernel configuration of index_gather and index_scatter, for
// assembling with ptxas in tests.
#include "backends/cuda/indexing_kernels.h"
#include "backends/cuda/kernel_catalog.h"

namespace numr::cuda {

std::vector<GeneratedKernel> index_kernels(const ptx::Target& target) {
  std::vector<GeneratedKernel> out;
  for (DType t : kAllDTypes) {
    out.push_back(generate_index_kernel({false, ScatterOp::Assign, t}, target));
    out.push_back(generate_index_kernel({true, ScatterOp::Assign, t}, target));
    if (t == DType::F16 || t == DType::BF16 || t == DType::Bool) continue;  // F32 copy; none
    for (ScatterOp op : {ScatterOp::Sum, ScatterOp::Prod, ScatterOp::Amax, ScatterOp::Amin})
      out.push_back(generate_index_kernel({true, op, t}, target));
  }
  return out;
}

}  // namespace numr::cuda
