// Strided iteration for the CPU kernels: operands of one logical shape are described by
// their strides; adjacent dims that every operand walks contiguously are merged, so most
// calls become one long row.
#pragma once

#include <cstdint>
#include <initializer_list>

#include "numr/shape.h"

namespace numr::cpu {

struct LoopPlan {
  static constexpr int kMaxDims = 16;
  static constexpr int kMaxOps = 4;
  int ndim = 1;  // >= 1; dim ndim-1 is innermost
  int nops = 0;
  int64_t numel = 0;
  int64_t shape[kMaxDims] = {};
  int64_t strides[kMaxOps][kMaxDims] = {};
};

// Throws BackendLimitation (naming op) if more than kMaxDims dims remain after merging.
LoopPlan make_loop_plan(const char* op, const Shape& shape,
                        std::initializer_list<const Strides*> strides);

// The outer dim in which operand k is contiguous while its innermost dim is strided (not
// broadcast) and operand 0's is contiguous, as when a transposed view is read into a
// row-major result: along operand 0's rows each of operand k's reads touches a new cache
// line. -1 when there is none.
int transposed_dim(const LoopPlan& p, int k);

// Calls row(offsets, len) for each maximal run of the innermost dim inside the flat
// row-major index range [begin, end); offsets[k] is operand k's element offset of the run's
// first element.
template <class F>
inline void for_each_row(const LoopPlan& p, int64_t begin, int64_t end, F&& row) {
  if (begin >= end) return;
  const int nd = p.ndim, last = nd - 1;
  int64_t idx[LoopPlan::kMaxDims];
  int64_t rem = begin;
  for (int d = last; d >= 0; --d) {
    idx[d] = rem % p.shape[d];
    rem /= p.shape[d];
  }
  int64_t pos = begin;
  while (pos < end) {
    int64_t offs[LoopPlan::kMaxOps];
    for (int k = 0; k < p.nops; ++k) {
      int64_t o = 0;
      for (int d = 0; d < nd; ++d) o += idx[d] * p.strides[k][d];
      offs[k] = o;
    }
    const int64_t len = (p.shape[last] - idx[last]) < (end - pos) ? (p.shape[last] - idx[last])
                                                                 : (end - pos);
    row(static_cast<const int64_t*>(offs), len);
    pos += len;
    idx[last] += len;
    for (int d = last; d > 0 && idx[d] >= p.shape[d]; --d) {
      idx[d] = 0;
      ++idx[d - 1];
    }
  }
}

}  // namespace numr::cpu
