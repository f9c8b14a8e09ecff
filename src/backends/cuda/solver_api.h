// The entry points of cuSOLVER's dense API and cuBLAS that numr's CUDA linalg kernels use,
// declared by hand (no CUDA headers at build time) and resolved with dlsym. Enumerations
// are passed as int with the values of cublas_api.h and cusolver_common.h.
#pragma once

#include <string>

namespace numr::cuda {

using SolverStatus = int;  // cusolverStatus_t and cublasStatus_t: 0 is success
using SolverHandle = void*;
using BlasHandle = void*;
using JacobiParams = void*;  // syevjInfo_t / gesvdjInfo_t

constexpr int kFillLower = 0, kFillUpper = 1;    // cublasFillMode_t
constexpr int kOpN = 0, kOpT = 1;                // cublasOperation_t
constexpr int kSideLeft = 0, kSideRight = 1;     // cublasSideMode_t
constexpr int kDiagNonUnit = 0, kDiagUnit = 1;   // cublasDiagType_t
constexpr int kEigNoVector = 0, kEigVector = 1;  // cusolverEigMode_t

// The typed entry points for one element type T (float or double).
template <class T>
struct SolverFns {
  SolverStatus (*potrf_buffer)(SolverHandle, int, int, T*, int, int*) = nullptr;
  SolverStatus (*potrf)(SolverHandle, int, int, T*, int, T*, int, int*) = nullptr;
  SolverStatus (*potrf_batched)(SolverHandle, int, int, T**, int, int*, int) = nullptr;
  SolverStatus (*getrf_buffer)(SolverHandle, int, int, T*, int, int*) = nullptr;
  SolverStatus (*getrf)(SolverHandle, int, int, T*, int, T*, int*, int*) = nullptr;
  SolverStatus (*getrs)(SolverHandle, int, int, int, const T*, int, const int*, T*, int,
                        int*) = nullptr;
  SolverStatus (*geqrf_buffer)(SolverHandle, int, int, T*, int, int*) = nullptr;
  SolverStatus (*geqrf)(SolverHandle, int, int, T*, int, T*, T*, int, int*) = nullptr;
  SolverStatus (*orgqr_buffer)(SolverHandle, int, int, int, const T*, int, const T*,
                               int*) = nullptr;
  SolverStatus (*orgqr)(SolverHandle, int, int, int, T*, int, const T*, T*, int, int*) = nullptr;
  SolverStatus (*syevd_buffer)(SolverHandle, int, int, int, const T*, int, const T*,
                               int*) = nullptr;
  SolverStatus (*syevd)(SolverHandle, int, int, int, T*, int, T*, T*, int, int*) = nullptr;
  SolverStatus (*syevj_batched_buffer)(SolverHandle, int, int, int, const T*, int, const T*, int*,
                                       JacobiParams, int) = nullptr;
  SolverStatus (*syevj_batched)(SolverHandle, int, int, int, T*, int, T*, T*, int, int*,
                                JacobiParams, int) = nullptr;
  SolverStatus (*gesvdj_buffer)(SolverHandle, int, int, int, int, const T*, int, const T*, const T*,
                                int, const T*, int, int*, JacobiParams) = nullptr;
  SolverStatus (*gesvdj)(SolverHandle, int, int, int, int, T*, int, T*, T*, int, T*, int, T*, int,
                         int*, JacobiParams) = nullptr;
  SolverStatus (*gesvdj_batched_buffer)(SolverHandle, int, int, int, const T*, int, const T*,
                                        const T*, int, const T*, int, int*, JacobiParams,
                                        int) = nullptr;
  SolverStatus (*gesvdj_batched)(SolverHandle, int, int, int, T*, int, T*, T*, int, T*, int, T*,
                                 int, int*, JacobiParams, int) = nullptr;
  // cuBLAS
  SolverStatus (*trsm)(BlasHandle, int, int, int, int, int, int, const T*, const T*, int, T*,
                       int) = nullptr;
  SolverStatus (*trsm_batched)(BlasHandle, int, int, int, int, int, int, const T*, const T* const*,
                               int, T* const*, int, int) = nullptr;
  SolverStatus (*getrf_batched)(BlasHandle, int, T* const*, int, int*, int*, int) = nullptr;
  SolverStatus (*getrs_batched)(BlasHandle, int, int, int, const T* const*, int, const int*,
                                T* const*, int, int*, int) = nullptr;
  SolverStatus (*geqrf_batched)(BlasHandle, int, int, T* const*, int, T* const*, int*,
                                int) = nullptr;
};

struct SolverLibs {
  std::string solver_path, blas_path;
  SolverStatus (*create)(SolverHandle*) = nullptr;
  SolverStatus (*set_stream)(SolverHandle, void*) = nullptr;
  SolverStatus (*create_syevj_info)(JacobiParams*) = nullptr;
  SolverStatus (*create_gesvdj_info)(JacobiParams*) = nullptr;
  SolverStatus (*blas_create)(BlasHandle*) = nullptr;
  SolverStatus (*blas_set_stream)(BlasHandle, void*) = nullptr;
  SolverFns<float> f32;
  SolverFns<double> f64;

  template <class T>
  const SolverFns<T>& fns() const {
    if constexpr (sizeof(T) == 4)
      return f32;
    else
      return f64;
  }
};

// cuSOLVER (libcusolver.so.12, .so.11, .so; NUMR_CUSOLVER) and cuBLAS (libcublas.so.13,
// .so.12, .so; NUMR_CUBLAS), loaded once; throws BackendUnavailable saying why they cannot be.
const SolverLibs& solver_libs();

// Throw BackendError (OutOfMemory for an allocation failure) naming `call` on a failed
// cuSOLVER or cuBLAS status.
void check_solver(SolverStatus s, const char* call);
void check_blas(SolverStatus s, const char* call);

}  // namespace numr::cuda
