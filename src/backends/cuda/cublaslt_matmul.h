// One cuBLASLt matmul, D = epilogue(alpha * op(A) @ op(B) + beta * C), described with plain
// structs and run on the device's stream with its workspace. cuBLASLt's layouts are
// column-major by default: numr's row-major X [r, c] is the column-major X^T [c, r] with
// ld = c, so a row-major D = A @ B is computed as the column-major D^T = B^T @ A^T, that is
// with (a, b) swapped, m = N, n = M, k = K. A bias per output column of the row-major D is
// then a bias per row of D^T, which is what the BIAS epilogues add.
#pragma once

#include <cstdint>
#include <optional>

#include "backends/cuda/cublaslt_api.h"

namespace numr::cuda {

class CudaDevice;

struct LtLayout {
  cudaDataType_t type = CUDA_R_32F;
  uint64_t rows = 0, cols = 0;
  int64_t ld = 0;
  cublasLtOrder_t order = CUBLASLT_ORDER_COL;
  int32_t batch_count = 1;
  int64_t batch_stride = 0;  // elements between consecutive matrices of a batch
};

struct LtMatmulDesc {
  cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
  cudaDataType_t scale_type = CUDA_R_32F;  // type of alpha and beta
  cublasOperation_t trans_a = CUBLAS_OP_N, trans_b = CUBLAS_OP_N;
  cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;
  // Bias input (BIAS epilogues) or bias-gradient output (BGRAD ones).
  const void* bias = nullptr;
  std::optional<cudaDataType_t> bias_type;  // unset: the library's default (D's type)
  int64_t bias_batch_stride = 0;
  // GELU_AUX / RELU_AUX output, DGELU / DRELU input.
  const void* aux = nullptr;
  int64_t aux_ld = 0;
  int64_t aux_batch_stride = 0;
  std::optional<cudaDataType_t> aux_type;
};

struct LtOperands {
  const void* a = nullptr;
  const void* b = nullptr;
  const void* c = nullptr;  // may equal d
  void* d = nullptr;
  const void* alpha = nullptr;  // host pointers of scale_type
  const void* beta = nullptr;
};

// The split-K reduction schemes the heuristic may pick for a D of type d under `compute`:
// all of them when D is as precise as the compute type; otherwise COMPUTE_TYPE only (and
// no split), since the others sum the partial products in D's type (a 16-bit D would be
// rounded once per partial sum, losing the digits an epilogue's bias or C can reveal).
uint32_t reduction_scheme_mask(cublasComputeType_t compute, cudaDataType_t d);

// Picks an algorithm with cublasLtMatmulAlgoGetHeuristic (within the device's workspace)
// and queues the matmul on dev's stream. Throws BackendLimitation when cuBLASLt has no
// algorithm for the combination, BackendError for other failures, BackendUnavailable when
// cuBLASLt cannot be loaded.
//
// The heuristic is told the real alignment of every pointer (A, B, C, D, bias, aux): by
// default it assumes 256-byte aligned matrices and may pick kernels that fail on a view
// that starts mid-allocation. It is also held to reduction_scheme_mask(desc.compute,
// d.type). Its answer is cached per device and configuration (every
// descriptor field, layout and pointer alignment), so repeated shapes skip the query.
void lt_matmul(CudaDevice& dev, const LtMatmulDesc& desc, const LtLayout& a, const LtLayout& b,
               const LtLayout& c, const LtLayout& d, const LtOperands& operands);

// lt_matmul, but returns false, having queued nothing, when cuBLASLt has no algorithm for
// the combination (so the caller can fall back to a simpler epilogue or aligned copies).
bool try_lt_matmul(CudaDevice& dev, const LtMatmulDesc& desc, const LtLayout& a, const LtLayout& b,
                   const LtLayout& c, const LtLayout& d, const LtOperands& operands);

}  // namespace numr::cuda
