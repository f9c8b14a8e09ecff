// The epilogue on numr's own GEMM (sm90_gemm.h) instead of cuBLASLt + the finishing pass,
// where that kernel applies: BF16, or F32 while TF32 products are allowed (allow_tf32()),
// with None, Relu, Gelu or Silu, no kept pre-activation and no residual,
// a dense row-major a (batch items stacked: one tall product) and one dense row-major b
// shared by every item, a device of compute capability 9.0, and shapes it tiles (rows %
// 128, n % 256, k % 64 for BF16 and % 32 for F32). Its epilogue runs on the f32
// accumulators in registers, so the output is written once and never read back. In BF16 its
// results equal the staged path's bit for bit (the same f32 formulas, one rounding), but
// for Gelu and Silu, whose quotients take one reciprocal per pair of values
// (sm90_gemm_activation.cpp): those may be one BF16 ulp away where the f32 value
// lies within a few f32 ulp of a rounding boundary (about 1 element in 10^4), and split
// tails (sm90_gemm.h). In TF32 the products are summed in another order than cuBLASLt's,
// the epilogue's formulas are the same.
// NUMR_CUDA_OWN_GEMM=0 in the environment turns it off (the staged path runs instead).
#pragma once

#include <cstdint>

#include "backends/cuda/context.h"
#include "core/backend.h"

namespace numr::cuda {

// Runs the call on the own GEMM and returns true, or returns false, having queued nothing,
// when it does not apply.
bool try_own_gemm_epilogue(CudaDevice& dev, const GemmEpilogueCall& call);

// Tests: how many calls the own GEMM has run (process-wide), and a switch (true: on where
// it applies, the default unless NUMR_CUDA_OWN_GEMM=0; false: never).
int64_t own_gemm_epilogue_calls();
void set_own_gemm_epilogue_for_testing(bool on);

}  // namespace numr::cuda
