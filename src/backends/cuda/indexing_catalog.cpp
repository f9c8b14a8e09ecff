// index_kernels(): every kernel configuration of index_gather and index_scatter, for
// assembling with ptxas in tests.
#include "backends/cuda/indexing_kernels.h"
#include "backends/cuda/kernel_catalog.h"

namespace numr::cuda {

std::vector<GeneratedKernel> index_kernels(const ptx::Target& target) {
  std::vector<GeneratedKernel> out;
  for (DType t : kAllDTypes) {
    out.push_back(generate_index_kernel({false, ScatterOp::Assign, t, t}, target));
    out.push_back(generate_index_kernel({true, ScatterOp::Assign, t, t}, target));
    if (t == DType::Bool) continue;
    // F16 and BF16 reduce into an F32 copy of out.
    const DType into = t == DType::F16 || t == DType::BF16 ? DType::F32 : t;
    for (ScatterOp op : {ScatterOp::Sum, ScatterOp::Prod, ScatterOp::Amax, ScatterOp::Amin})
      out.push_back(generate_index_kernel({true, op, into, t}, target));
  }
  return out;
}

}  // namespace numr::cuda
