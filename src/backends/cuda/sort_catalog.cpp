// sort_kernels(): every kernel configuration of sort_rows and search_sorted, for assembling
// with ptxas in tests.
#include "backends/cuda/kernel_catalog.h"
#include "backends/cuda/sort_kernels.h"

namespace numr::cuda {

std::vector<GeneratedKernel> sort_kernels(const ptx::Target& target) {
  std::vector<GeneratedKernel> out;
  for (DType t : kAllDTypes) {
    if (t == DType::Bool) continue;  // sort takes NUMERIC dtypes
    for (SortKernelKind k : {SortKernelKind::tile, SortKernelKind::split, SortKernelKind::merge,
                             SortKernelKind::search})
      out.push_back(generate_sort_kernel({k, t}, target));
  }
  return out;
}

}  // namespace numr::cuda
