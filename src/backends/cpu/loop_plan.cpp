#include "backends/cpu/loop_plan.h"

#include "core/dim_merge.h"
#include "numr/error.h"

namespace numr::cpu {

LoopPlan make_loop_plan(const char* op, const Shape& shape,
                        std::initializer_list<const Strides*> strides) {
  LoopPlan p;
  p.nops = int(strides.size());
  p.numel = shape_numel(shape);
  const MergedDims merged = merge_dims(shape, std::span<const Strides* const>(strides));
  const int m = int(merged.extents.size());
  if (m > LoopPlan::kMaxDims)
    fail<BackendLimitation>(op, "the CPU kernels iterate at most ", LoopPlan::kMaxDims,
                            " non-mergeable dims, got ", m);
  if (m == 0) {
    p.ndim = 1;
    p.shape[0] = 1;
    for (int k = 0; k < p.nops; ++k) p.strides[k][0] = 1;
    return p;
  }
  p.ndim = m;
  for (int d = 0; d < m; ++d) {
    p.shape[d] = merged.extents[size_t(d)];
    for (int k = 0; k < p.nops; ++k) p.strides[k][d] = merged.strides[size_t(k)][size_t(d)];
  }
  return p;
}

int transposed_dim(const LoopPlan& p, int k) {
  const int last = p.ndim - 1;
  const int64_t s = p.strides[k][last];
  if (p.ndim < 2 || p.strides[0][last] != 1 || s == 1 || s == 0) return -1;
  for (int d = last - 1; d >= 0; --d)
    if (p.strides[k][d] == 1) return d;
  return -1;
}

}  // namespace numr::cpu
