#include "backends/cpu/loop_plan.h"

#include "numr/error.h"

namespace numr::cpu {

LoopPlan make_loop_plan(const char* op, const Shape& shape,
                        std::initializer_list<const Strides*> strides) {
  LoopPlan p;
  p.nops = int(strides.size());
  p.numel = shape_numel(shape);
  // Keep non-unit dims, outermost first.
  int64_t sh[64];
  int64_t st[LoopPlan::kMaxOps][64];
  int n = 0;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    if (n == 64) fail<BackendLimitation>(op, "more than 64 non-unit dims");
    sh[n] = shape[d];
    int k = 0;
    for (const Strides* s : strides) st[k++][n] = (*s)[d];
    ++n;
  }
  // Merge dim i into the next inner one when every operand allows it.
  int m = 0;
  for (int d = 0; d < n; ++d) {
    if (m > 0) {
      bool merge = true;
      for (int k = 0; k < p.nops; ++k)
        if (st[k][m - 1] != st[k][d] * sh[d]) merge = false;
      if (merge) {
        sh[m - 1] *= sh[d];
        for (int k = 0; k < p.nops; ++k) st[k][m - 1] = st[k][d];
        continue;
      }
    }
    sh[m] = sh[d];
    for (int k = 0; k < p.nops; ++k) st[k][m] = st[k][d];
    ++m;
  }
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
    p.shape[d] = sh[d];
    for (int k = 0; k < p.nops; ++k) p.strides[k][d] = st[k][d];
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
