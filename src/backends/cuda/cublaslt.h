// cuBLASLt, loaded with dlopen at run time: libcublasLt.so.13, falling back to .so.12 and
// .so, first on the loader's path and then under $CUDA_HOME/lib64, $CUDA_PATH/lib64 and
// /usr/local/cuda/lib64. The environment variable NUMR_CUBLASLT names a file to use instead.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "backends/cuda/cublaslt_api.h"

namespace numr::cuda {

class CudaDevice;

struct CublasLt {
  std::string path;  // the file that loaded
  void* library = nullptr;
  size_t version = 0;  // cublasLtGetVersion: 130000 + ... for 13.x

  PfnLtCreate create = nullptr;
  PfnLtDestroy destroy = nullptr;
  PfnLtGetVersion get_version = nullptr;
  PfnLtGetStatusName get_status_name = nullptr;
  PfnLtGetStatusString get_status_string = nullptr;
  PfnLtMatmulDescCreate matmul_desc_create = nullptr;
  PfnLtMatmulDescDestroy matmul_desc_destroy = nullptr;
  PfnLtMatmulDescSetAttribute matmul_desc_set_attribute = nullptr;
  PfnLtMatrixLayoutCreate matrix_layout_create = nullptr;
  PfnLtMatrixLayoutDestroy matrix_layout_destroy = nullptr;
  PfnLtMatrixLayoutSetAttribute matrix_layout_set_attribute = nullptr;
  PfnLtMatmulPreferenceCreate matmul_preference_create = nullptr;
  PfnLtMatmulPreferenceDestroy matmul_preference_destroy = nullptr;
  PfnLtMatmulPreferenceSetAttribute matmul_preference_set_attribute = nullptr;
  PfnLtMatmulAlgoGetHeuristic matmul_algo_get_heuristic = nullptr;
  PfnLtMatmul matmul = nullptr;
};

// The process's cuBLASLt, loaded on first use (the outcome, success or failure, is kept).
// Throws BackendUnavailable naming every file tried when none loads. Needs no GPU.
const CublasLt& cublaslt();
const CublasLt* try_cublaslt(std::string* reason = nullptr);

// "CUBLAS_STATUS_NOT_SUPPORTED: the functionality requested is not supported"
std::string status_text(cublasStatus_t s);
// Throws for a failed call: OutOfMemory for CUBLAS_STATUS_ALLOC_FAILED, BackendError
// otherwise, with the message "[cuda] <call>: <status_text>".
void check(cublasStatus_t s, std::string_view call);

// A device's cuBLASLt handle and the workspace its matmuls may use. Made by
// CudaDevice::cublaslt() (the handle binds to the device current at creation).
struct CublasLtHandle {
  static constexpr size_t kWorkspaceBytes = 32u << 20;  // what cuBLAS advises for Hopper

  explicit CublasLtHandle(CudaDevice& dev);
  ~CublasLtHandle();
  CublasLtHandle(const CublasLtHandle&) = delete;
  CublasLtHandle& operator=(const CublasLtHandle&) = delete;

  CudaDevice& dev;
  cublasLtHandle_t handle = nullptr;
  void* workspace = nullptr;
  size_t workspace_bytes = kWorkspaceBytes;
};

}  // namespace numr::cuda
