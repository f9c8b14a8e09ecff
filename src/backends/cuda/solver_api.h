// The entry points of cuSOLVER's dense API and cuBLAS that numr's CUDA linalg kernels use,
// declared by hand (no CUDA headers at build time) and resolved with dlsym. Enumerations
// are passed as int with the values of cublas_api.h and cusolver_common.h.
#pragma once

#include <complex>
#include <cstdint>
#include <string>
#include <type_traits>

#include "core/real_of.h"

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

// The typed entry points for one element type T (float, double, std::complex<float> or
// std::complex<double>, whose layouts are cuComplex's and cuDoubleComplex's); R is the
// real type of eigenvalues and singular values. For complex T the symmetric routines are
// the Hermitian ones (heevd, heevjBatched) and orgqr is ungqr.
template <class T, class R = real_of<T>>
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
  SolverStatus (*syevd_buffer)(SolverHandle, int, int, int, const T*, int, const R*,
                               int*) = nullptr;
  SolverStatus (*syevd)(SolverHandle, int, int, int, T*, int, R*, T*, int, int*) = nullptr;
  SolverStatus (*syevj_batched_buffer)(SolverHandle, int, int, int, const T*, int, const R*, int*,
                                       JacobiParams, int) = nullptr;
  SolverStatus (*syevj_batched)(SolverHandle, int, int, int, T*, int, R*, T*, int, int*,
                                JacobiParams, int) = nullptr;
  SolverStatus (*gesvdj_buffer)(SolverHandle, int, int, int, int, const T*, int, const R*, const T*,
                                int, const T*, int, int*, JacobiParams) = nullptr;
  SolverStatus (*gesvdj)(SolverHandle, int, int, int, int, T*, int, R*, T*, int, T*, int, T*, int,
                         int*, JacobiParams) = nullptr;
  SolverStatus (*gesvdj_batched_buffer)(SolverHandle, int, int, int, const T*, int, const R*,
                                        const T*, int, const T*, int, int*, JacobiParams,
                                        int) = nullptr;
  SolverStatus (*gesvdj_batched)(SolverHandle, int, int, int, T*, int, R*, T*, int, T*, int, T*,
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

// cusolverDnXgeev (cuSOLVER 11.7 and later, CUDA 12.6+): the general eigenproblem through
// the 64-bit API, with cudaDataType codes.
constexpr int kCudaC32F = 4, kCudaC64F = 5;
using GeevBufferFn = SolverStatus (*)(SolverHandle, void*, int, int, int64_t, int, const void*,
                                      int64_t, int, const void*, int, const void*, int64_t, int,
                                      const void*, int64_t, int, size_t*, size_t*);
using GeevFn = SolverStatus (*)(SolverHandle, void*, int, int, int64_t, int, void*, int64_t, int,
                                void*, int, void*, int64_t, int, void*, int64_t, int, void*, size_t,
                                void*, size_t, int*);

struct SolverLibs {
  std::string solver_path, blas_path;
  SolverStatus (*create)(SolverHandle*) = nullptr;
  SolverStatus (*set_stream)(SolverHandle, void*) = nullptr;
  SolverStatus (*create_syevj_info)(JacobiParams*) = nullptr;
  SolverStatus (*create_gesvdj_info)(JacobiParams*) = nullptr;
  SolverStatus (*blas_create)(BlasHandle*) = nullptr;
  SolverStatus (*blas_set_stream)(BlasHandle, void*) = nullptr;
  // Optional (null on an older cuSOLVER: eig is then a BackendLimitation).
  SolverStatus (*create_params)(void**) = nullptr;
  GeevBufferFn geev_buffer = nullptr;
  GeevFn geev = nullptr;
  SolverFns<float> s;
  SolverFns<double> d;
  SolverFns<std::complex<float>> c;
  SolverFns<std::complex<double>> z;

  template <class T>
  const SolverFns<T>& fns() const {
    if constexpr (std::is_same_v<T, float>)
      return s;
    else if constexpr (std::is_same_v<T, double>)
      return d;
    else if constexpr (std::is_same_v<T, std::complex<float>>)
      return c;
    else
      return z;
  }
};

// cuSOLVER (libcusolver.so.12, .so.11, .so; NUMR_CUSOLVER) and cuBLAS (libcublas.so.13,
// .so.12, .so; NUMR_CUBLAS), loaded once; throws BackendUnavailable saying why they cannot be.
const SolverLibs& solver_libs();
// The same, or nullptr when they cannot be loaded.
const SolverLibs* try_solver_libs();

// Throw BackendError (OutOfMemory for an allocation failure) naming `call` on a failed
// cuSOLVER or cuBLAS status.
void check_solver(SolverStatus s, const char* call);
void check_blas(SolverStatus s, const char* call);

}  // namespace numr::cuda
