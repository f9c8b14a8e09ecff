// The elementwise pass that finishes a GEMM epilogue (gemm_epilogue.cpp says when): over
// the contiguous [rows, n] result,
//   v = x (+ bias[col]);  pre = v (when write_pre);  out = act(v) (+ residual)
// computed in f32 (f64 for F64) with the formulas of math/elementwise.h, each stored value
// rounded once. x is what cuBLASLt wrote: in the output dtype (into pre, or into out
// itself: loads are plain, never through the read-only cache, so x may alias out), which
// for F16/BF16 happens only for a pre followed by None or Relu (exact from a rounded pre);
// otherwise for F16/BF16 the f32 accumulators in a staging buffer (x_f32), so that nothing
// is rounded to 16 bits before the bias, the activation and the residual are applied.
// Without x (K == 0) v is the bias alone.
//
// Every operand is contiguous; with vec > 1 each step handles the 16 bytes of output
// elements (ld/st.global.v4.b32; an f32 x takes two or four such loads), which needs every
// pointer 16-byte aligned and, with a bias, n a multiple of vec (a step never straddles
// two rows). The host picks vec accordingly.
#pragma once

#include <cstdint>
#include <string>

#include "backends/cuda/module.h"
#include "codegen/ptx/types.h"
#include "numr/dtype.h"
#include "numr/ops.h"

namespace numr::cuda {

class CudaDevice;

struct FinishConfig {
  DType dtype = DType::F32;
  Activation act = Activation::None;
  int vec = 1;  // 1, or 16 / dtype_size(dtype)
  bool has_x = true;
  bool x_f32 = false;  // x holds f32 accumulators (staged F16/BF16), else dtype elements
  bool has_bias = false;
  bool has_residual = false;
  bool write_pre = false;
  std::string name() const;  // also the kernel cache key
};

GeneratedKernel generate_finish(const FinishConfig& c, const ptx::Target& target);

// Device addresses (0 where the config has no such operand) and sizes.
struct FinishArgs {
  uint64_t out = 0, pre = 0, x = 0, bias = 0, residual = 0;
  int64_t total = 0;  // elements of out
  int64_t n = 0;      // columns (the bias's length)
};

// The widest vec the operands allow (see above).
int finish_vector_width(DType dt, const FinishConfig& c, const FinishArgs& a);

// Queues the pass on dev's stream (c.vec as chosen by finish_vector_width).
void launch_finish(CudaDevice& dev, const FinishConfig& c, const FinishArgs& a);

}  // namespace numr::cuda
