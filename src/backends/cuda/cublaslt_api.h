// Our own declarations of the subset of cuBLASLt numr uses for GEMMs with epilogues,
// following cublasLt.h, cublas_api.h and library_types.h of CUDA 13.0 (also valid for
// cuBLASLt 12). tests/test_cuda_runtime.cpp checks every value and layout here against the
// official headers when they are present at build time.
#pragma once

#include <cstddef>
#include <cstdint>

#include "backends/cuda/driver_api.h"

namespace numr::cuda {

struct cublasLtContext;
using cublasLtHandle_t = cublasLtContext*;

// Semi-opaque descriptors: the sizes matter (the library may be handed caller-owned ones),
// the contents do not.
struct cublasLtMatrixLayoutOpaque_t {
  uint64_t data[8];
};
struct cublasLtMatmulAlgo_t {
  uint64_t data[8];
};
struct cublasLtMatmulDescOpaque_t {
  uint64_t data[32];
};
struct cublasLtMatmulPreferenceOpaque_t {
  uint64_t data[8];
};
using cublasLtMatrixLayout_t = cublasLtMatrixLayoutOpaque_t*;
using cublasLtMatmulDesc_t = cublasLtMatmulDescOpaque_t*;
using cublasLtMatmulPreference_t = cublasLtMatmulPreferenceOpaque_t*;

enum cublasStatus_t : int {
  CUBLAS_STATUS_SUCCESS = 0,
  CUBLAS_STATUS_NOT_INITIALIZED = 1,
  CUBLAS_STATUS_ALLOC_FAILED = 3,
  CUBLAS_STATUS_INVALID_VALUE = 7,
  CUBLAS_STATUS_ARCH_MISMATCH = 8,
  CUBLAS_STATUS_EXECUTION_FAILED = 13,
  CUBLAS_STATUS_NOT_SUPPORTED = 15,
};

enum cublasComputeType_t : int {
  CUBLAS_COMPUTE_32F = 68,
  CUBLAS_COMPUTE_64F = 70,
  CUBLAS_COMPUTE_32F_FAST_16F = 74,
  CUBLAS_COMPUTE_32F_FAST_16BF = 75,
  CUBLAS_COMPUTE_32F_FAST_TF32 = 77,
};

enum cudaDataType_t : int {
  CUDA_R_32F = 0,
  CUDA_R_64F = 1,
  CUDA_R_16F = 2,
  CUDA_R_16BF = 14,
};

enum cublasOperation_t : int {
  CUBLAS_OP_N = 0,
  CUBLAS_OP_T = 1,
};

enum cublasLtOrder_t : int {
  CUBLASLT_ORDER_COL = 0,
  CUBLASLT_ORDER_ROW = 1,
};

// Matrix layout attributes, with the value type each takes.
enum cublasLtMatrixLayoutAttribute_t : int {
  CUBLASLT_MATRIX_LAYOUT_TYPE = 0,                  // uint32_t (cudaDataType_t)
  CUBLASLT_MATRIX_LAYOUT_ORDER = 1,                 // int32_t (cublasLtOrder_t)
  CUBLASLT_MATRIX_LAYOUT_ROWS = 2,                  // uint64_t
  CUBLASLT_MATRIX_LAYOUT_COLS = 3,                  // uint64_t
  CUBLASLT_MATRIX_LAYOUT_LD = 4,                    // int64_t
  CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT = 5,           // int32_t
  CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET = 6,  // int64_t, in elements
};

// Matmul descriptor attributes, with the value type each takes.
enum cublasLtMatmulDescAttributes_t : int {
  CUBLASLT_MATMUL_DESC_COMPUTE_TYPE = 0,                // int32_t (cublasComputeType_t)
  CUBLASLT_MATMUL_DESC_SCALE_TYPE = 1,                  // int32_t (cudaDataType_t)
  CUBLASLT_MATMUL_DESC_POINTER_MODE = 2,                // int32_t
  CUBLASLT_MATMUL_DESC_TRANSA = 3,                      // int32_t (cublasOperation_t)
  CUBLASLT_MATMUL_DESC_TRANSB = 4,                      // int32_t (cublasOperation_t)
  CUBLASLT_MATMUL_DESC_EPILOGUE = 7,                    // uint32_t (cublasLtEpilogue_t)
  CUBLASLT_MATMUL_DESC_BIAS_POINTER = 8,                // const void* (void* for gradients)
  CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE = 10,          // int64_t
  CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER = 11,       // void* (const void* backward)
  CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD = 12,            // int64_t
  CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_BATCH_STRIDE = 13,  // int64_t
  CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_DATA_TYPE = 22,     // int32_t (cudaDataType_t)
  CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE = 26,             // int32_t (cudaDataType_t)
};

enum cublasLtMatmulPreferenceAttributes_t : int {
  CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES = 1,  // uint64_t
  // The split-K reduction schemes the heuristic may pick (cublasLtReductionScheme_t bits);
  // all of them unless set.
  CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK = 3,  // uint32_t
  // The alignment (bytes) the heuristic may assume for each matrix pointer; 256 unless set.
  CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES = 5,  // uint32_t
  CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES = 6,  // uint32_t
  CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES = 7,  // uint32_t
  CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES = 8,  // uint32_t
};

// How the partial dot products of a split-K algorithm are combined. NONE (no split) is
// not a bit and is always allowed; INPLACE accumulates in D itself, so in D's type, and
// OUTPUT_TYPE keeps the partial sums in D's type too: with a 16-bit D both round every
// partial sum, not just the result. COMPUTE_TYPE keeps them in the compute type.
enum cublasLtReductionScheme_t : int {
  CUBLASLT_REDUCTION_SCHEME_NONE = 0,
  CUBLASLT_REDUCTION_SCHEME_INPLACE = 1,
  CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE = 2,
  CUBLASLT_REDUCTION_SCHEME_OUTPUT_TYPE = 4,
  CUBLASLT_REDUCTION_SCHEME_MASK = 0x7,
};

// Epilogues (bit flags in the library; named combinations here). GELU is the tanh
// approximation. The *_AUX forms also store what the backward needs (the pre-activation
// for GELU, a bit mask for ReLU); the D* forms apply an activation's derivative from it;
// *BGRAD / BGRADA / BGRADB also reduce the bias gradient.
enum cublasLtEpilogue_t : uint32_t {
  CUBLASLT_EPILOGUE_DEFAULT = 1,
  CUBLASLT_EPILOGUE_RELU = 2,
  CUBLASLT_EPILOGUE_RELU_AUX = 2 | 128,
  CUBLASLT_EPILOGUE_BIAS = 4,
  CUBLASLT_EPILOGUE_RELU_BIAS = 2 | 4,
  CUBLASLT_EPILOGUE_RELU_AUX_BIAS = 2 | 128 | 4,
  CUBLASLT_EPILOGUE_DRELU = 8 | 128,
  CUBLASLT_EPILOGUE_DRELU_BGRAD = 8 | 128 | 16,
  CUBLASLT_EPILOGUE_GELU = 32,
  CUBLASLT_EPILOGUE_GELU_AUX = 32 | 128,
  CUBLASLT_EPILOGUE_GELU_BIAS = 32 | 4,
  CUBLASLT_EPILOGUE_GELU_AUX_BIAS = 32 | 128 | 4,
  CUBLASLT_EPILOGUE_DGELU = 64 | 128,
  CUBLASLT_EPILOGUE_DGELU_BGRAD = 64 | 128 | 16,
  CUBLASLT_EPILOGUE_BGRADA = 256,
  CUBLASLT_EPILOGUE_BGRADB = 512,
};

struct cublasLtMatmulHeuristicResult_t {
  cublasLtMatmulAlgo_t algo;
  size_t workspaceSize;
  cublasStatus_t state;
  float wavesCount;
  int reserved[4];
};

// Entry points (cudaStream_t is the driver's CUstream).
using PfnLtCreate = cublasStatus_t (*)(cublasLtHandle_t*);
using PfnLtDestroy = cublasStatus_t (*)(cublasLtHandle_t);
using PfnLtGetVersion = size_t (*)();
using PfnLtGetStatusName = const char* (*)(cublasStatus_t);
using PfnLtGetStatusString = const char* (*)(cublasStatus_t);
using PfnLtMatmulDescCreate = cublasStatus_t (*)(cublasLtMatmulDesc_t*, cublasComputeType_t,
                                                 cudaDataType_t);
using PfnLtMatmulDescDestroy = cublasStatus_t (*)(cublasLtMatmulDesc_t);
using PfnLtMatmulDescSetAttribute = cublasStatus_t (*)(cublasLtMatmulDesc_t,
                                                       cublasLtMatmulDescAttributes_t, const void*,
                                                       size_t);
using PfnLtMatrixLayoutCreate = cublasStatus_t (*)(cublasLtMatrixLayout_t*, cudaDataType_t,
                                                   uint64_t, uint64_t, int64_t);
using PfnLtMatrixLayoutDestroy = cublasStatus_t (*)(cublasLtMatrixLayout_t);
using PfnLtMatrixLayoutSetAttribute = cublasStatus_t (*)(cublasLtMatrixLayout_t,
                                                         cublasLtMatrixLayoutAttribute_t,
                                                         const void*, size_t);
using PfnLtMatmulPreferenceCreate = cublasStatus_t (*)(cublasLtMatmulPreference_t*);
using PfnLtMatmulPreferenceDestroy = cublasStatus_t (*)(cublasLtMatmulPreference_t);
using PfnLtMatmulPreferenceSetAttribute = cublasStatus_t (*)(cublasLtMatmulPreference_t,
                                                             cublasLtMatmulPreferenceAttributes_t,
                                                             const void*, size_t);
using PfnLtMatmulAlgoGetHeuristic =
    cublasStatus_t (*)(cublasLtHandle_t, cublasLtMatmulDesc_t, cublasLtMatrixLayout_t,
                       cublasLtMatrixLayout_t, cublasLtMatrixLayout_t, cublasLtMatrixLayout_t,
                       cublasLtMatmulPreference_t, int, cublasLtMatmulHeuristicResult_t*, int*);
using PfnLtMatmul = cublasStatus_t (*)(cublasLtHandle_t, cublasLtMatmulDesc_t, const void* alpha,
                                       const void* a, cublasLtMatrixLayout_t, const void* b,
                                       cublasLtMatrixLayout_t, const void* beta, const void* c,
                                       cublasLtMatrixLayout_t, void* d, cublasLtMatrixLayout_t,
                                       const cublasLtMatmulAlgo_t*, void* workspace,
                                       size_t workspace_bytes, CUstream stream);

}  // namespace numr::cuda
