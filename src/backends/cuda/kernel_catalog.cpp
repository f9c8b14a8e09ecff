#include "backends/cuda/kernel_catalog.h"

#include <iterator>

namespace numr::cuda {

std::vector<GeneratedKernel> all_kernels(const ptx::Target& target) {
  std::vector<GeneratedKernel> out;
  for (auto* family : {&elementwise_kernels, &reduce_kernels, &epilogue_kernels, &norm_kernels,
                       &index_kernels, &sort_kernels, &attention_kernels}) {
    std::vector<GeneratedKernel> part = family(target);
    out.insert(out.end(), std::make_move_iterator(part.begin()),
               std::make_move_iterator(part.end()));
  }
  return out;
}

}  // namespace numr::cuda
