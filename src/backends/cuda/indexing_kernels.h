// Kernels of index_gather and index_scatter (core/backend.h) over [outer, n, inner] views
// with any strides, in elements (negative for flipped views, 0 for broadcast ones), and
// I64 indexes the front end has checked.
//
// gather: a thread per output element, grid-stride over outer * m * inner, moving each
// element's bits (no conversion). Parameters: x, index, out (u64); m, inner, total (u64);
// x's and index's strides (3 x s64 each).
//
// scatter: a thread per (o, i) column, walking j = 0, 1, ..., m - 1 in order. No two threads
// write one element and no atomics are used, so the result is the same on every run and
// Assign keeps the last j, as on the CPU; a column's updates are serial (m steps), the price
// of that determinism. Assign moves bits; the reductions combine in reduce_acc_type (f64,
// f32, s64: integer Sum and Prod wrap when stored) with the NaN-sticky max/min of
// math/reduce_rules.h. F16 and BF16 reductions are launched on an F32 copy of out, so they
// round once (src F16 or BF16, out F32). Parameters: out, index, src (u64); outer, m, inner (u64);
// out's, index's and src's strides (3 x s64 each).
#pragma once

#include <string>

#include "backends/cuda/module.h"
#include "codegen/ptx/types.h"
#include "core/backend.h"
#include "numr/dtype.h"

namespace numr::cuda {

inline constexpr int kIndexBlock = 256;

struct IndexKernelConfig {
  bool scatter = false;              // index_scatter, else index_gather
  ScatterOp op = ScatterOp::Assign;  // scatter only
  DType dtype = DType::F32;          // reductions: F64, F32, I64, I32 or U8
  // scatter's src: dtype, or F16/BF16 into an F32 out (their reductions).
  DType src = DType::F32;

  std::string name() const;
};

GeneratedKernel generate_index_kernel(const IndexKernelConfig& cfg, const ptx::Target& target);

}  // namespace numr::cuda
