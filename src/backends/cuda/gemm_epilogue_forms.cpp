#include "backends/cuda/gemm_epilogue_forms.h"

namespace numr::cuda {

std::vector<EpilogueForm> direct_epilogue_forms(DType dt, Activation act, bool has_pre,
                                                bool has_residual) {
  // A 16-bit D comes out of cuBLASLt's epilogues with a @ b rounded to 16 bits before the
  // bias (or C) is added: on an H200, results near -bias kept only the rounding error of
  // a @ b (exact zeros), whatever the reduction scheme. So F16/BF16 never use them: the
  // staged path computes everything from the f32 product and rounds once.
  if (dtype_size(dt) == 2) return {};
  std::vector<EpilogueForm> forms;
  // Fully fused.
  if (act == Activation::None && !has_pre)
    forms.push_back({CUBLASLT_EPILOGUE_BIAS, false, has_residual, false, false});
  if (act == Activation::Relu && !has_pre && !has_residual)
    forms.push_back({CUBLASLT_EPILOGUE_RELU_BIAS, false, false, false, false});
  // Otherwise the pass runs anyway, and adds the bias too: cuBLASLt's BIAS epilogue slows
  // a TF32 GEMM by more than the pass costs. (D = pre when it is kept: cuBLASLt's Relu aux
  // is a bit mask.)
  forms.push_back({CUBLASLT_EPILOGUE_DEFAULT, has_pre, false, true, true});
  // The bias in the GEMM and the rest in the pass, should the plain GEMM have no algorithm.
  forms.push_back({CUBLASLT_EPILOGUE_BIAS, has_pre, false, true, false});
  return forms;
}

}  // namespace numr::cuda
