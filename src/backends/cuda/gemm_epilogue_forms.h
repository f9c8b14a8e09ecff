// Which way run_matmul_epilogue (gemm_epilogue.cpp, whose opening table says why) computes
// a call: "direct" forms, where cuBLASLt writes D in the output dtype with one of its
// epilogues and the elementwise pass may finish it, and, for F16/BF16, the "staged" path,
// where cuBLASLt writes the unrounded f32 product and the pass does everything else.
#pragma once

#include <vector>

#include "backends/cuda/cublaslt_api.h"
#include "numr/dtype.h"
#include "numr/ops.h"

namespace numr::cuda {

// One direct way: a cuBLASLt call, then optionally the pass.
struct EpilogueForm {
  cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;
  bool gemm_to_pre = false;  // D = pre (else out)
  bool residual_c = false;   // the residual is C, beta = 1
  bool pass = false;         // then out = act(D (+ bias)) (+ residual)
  bool pass_bias = false;    // the pass adds the bias (the GEMM did not)
  friend bool operator==(const EpilogueForm&, const EpilogueForm&) = default;
};

// The direct forms whose result is numr's, best first; the caller takes the first one
// cuBLASLt has an algorithm for. F32 and F64 always have one (the last needs no epilogue).
// F16 and BF16 have none: they are always staged (gemm_epilogue.cpp says why).
std::vector<EpilogueForm> direct_epilogue_forms(DType dt, Activation act, bool has_pre,
                                                bool has_residual);

}  // namespace numr::cuda
