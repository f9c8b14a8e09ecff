#include "backends/cuda/solver_api.h"

#include "backends/cuda/cuda_library.h"
#include "core/op_scope.h"
#include "numr/error.h"

namespace numr::cuda {
namespace {

// Resolves the S, D, C or Z form of each typed entry point.
template <class T>
bool resolve_typed(void* solver, void* blas, SolverFns<T>& f, std::string& missing) {
  constexpr bool cplx = !std::is_same_v<T, real_of<T>>;
  constexpr bool dbl = sizeof(real_of<T>) == 8;
  const char p = cplx ? (dbl ? 'Z' : 'C') : (dbl ? 'D' : 'S');
  auto dn = [&](auto& out, const char* rest) {
    return resolve_symbol(solver, out, (std::string("cusolverDn") + p + rest).c_str(), missing);
  };
  auto bl = [&](auto& out, const char* rest) {
    return resolve_symbol(blas, out, (std::string("cublas") + p + rest).c_str(), missing);
  };
  const char* qr_q = cplx ? "ungqr" : "orgqr";
  const char* ev = cplx ? "heevd" : "syevd";
  const char* evj = cplx ? "heevjBatched" : "syevjBatched";
  return dn(f.potrf_buffer, "potrf_bufferSize") && dn(f.potrf, "potrf") &&
         dn(f.potrf_batched, "potrfBatched") && dn(f.getrf_buffer, "getrf_bufferSize") &&
         dn(f.getrf, "getrf") && dn(f.getrs, "getrs") && dn(f.geqrf_buffer, "geqrf_bufferSize") &&
         dn(f.geqrf, "geqrf") && dn(f.orgqr_buffer, (std::string(qr_q) + "_bufferSize").c_str()) &&
         dn(f.orgqr, qr_q) && dn(f.syevd_buffer, (std::string(ev) + "_bufferSize").c_str()) &&
         dn(f.syevd, ev) &&
         dn(f.syevj_batched_buffer, (std::string(evj) + "_bufferSize").c_str()) &&
         dn(f.syevj_batched, evj) && dn(f.gesvdj_buffer, "gesvdj_bufferSize") &&
         dn(f.gesvdj, "gesvdj") && dn(f.gesvdj_batched_buffer, "gesvdjBatched_bufferSize") &&
         dn(f.gesvdj_batched, "gesvdjBatched") && bl(f.trsm, "trsm_v2") &&
         bl(f.trsm_batched, "trsmBatched") && bl(f.getrf_batched, "getrfBatched") &&
         bl(f.getrs_batched, "getrsBatched") && bl(f.geqrf_batched, "geqrfBatched");
}

struct Loaded {
  const SolverLibs* libs = nullptr;
  std::string failure;
};

Loaded load() {
  const OpenedLibrary solver = open_cuda_library(
      "NUMR_CUSOLVER", {"libcusolver.so.12", "libcusolver.so.11", "libcusolver.so"});
  if (!solver.handle)
    return {nullptr, "cuSOLVER could not be loaded (" + solver.failure +
                         "); install libcusolver (CUDA 12 or 13) or set NUMR_CUSOLVER to its "
                         "path"};
  const OpenedLibrary blas =
      open_cuda_library("NUMR_CUBLAS", {"libcublas.so.13", "libcublas.so.12", "libcublas.so"});
  if (!blas.handle)
    return {nullptr, "cuBLAS could not be loaded (" + blas.failure +
                         "); install libcublas (CUDA 12 or 13) or set NUMR_CUBLAS to its path"};
  auto* l = new SolverLibs;  // kept for the process's lifetime, like the libraries
  l->solver_path = solver.path;
  l->blas_path = blas.path;
  std::string missing;
  const bool ok =
      resolve_symbol(solver.handle, l->create, "cusolverDnCreate", missing) &&
      resolve_symbol(solver.handle, l->set_stream, "cusolverDnSetStream", missing) &&
      resolve_symbol(solver.handle, l->create_syevj_info, "cusolverDnCreateSyevjInfo", missing) &&
      resolve_symbol(solver.handle, l->create_gesvdj_info, "cusolverDnCreateGesvdjInfo", missing) &&
      resolve_symbol(blas.handle, l->blas_create, "cublasCreate_v2", missing) &&
      resolve_symbol(blas.handle, l->blas_set_stream, "cublasSetStream_v2", missing) &&
      resolve_typed(solver.handle, blas.handle, l->s, missing) &&
      resolve_typed(solver.handle, blas.handle, l->d, missing) &&
      resolve_typed(solver.handle, blas.handle, l->c, missing) &&
      resolve_typed(solver.handle, blas.handle, l->z, missing);
  if (!ok) {
    delete l;
    return {nullptr, solver.path + " or " + blas.path + " has no entry point " + missing};
  }
  std::string absent;  // the general eigenproblem is optional
  if (!(resolve_symbol(solver.handle, l->create_params, "cusolverDnCreateParams", absent) &&
        resolve_symbol(solver.handle, l->geev_buffer, "cusolverDnXgeev_bufferSize", absent) &&
        resolve_symbol(solver.handle, l->geev, "cusolverDnXgeev", absent)))
    l->geev = nullptr;
  return {l, {}};
}

const Loaded& loaded() {
  static const Loaded* l = new Loaded(load());  // decided once; never destroyed
  return *l;
}

}  // namespace

const SolverLibs* try_solver_libs() { return loaded().libs; }

const SolverLibs& solver_libs() {
  const Loaded& l = loaded();
  if (!l.libs) fail<BackendUnavailable>(current_op("linalg"), l.failure);
  return *l.libs;
}

void check_solver(SolverStatus s, const char* call) {
  if (s == 0) return;
  if (s == 2) fail<OutOfMemory>(current_op("linalg"), call, ": CUSOLVER_STATUS_ALLOC_FAILED");
  fail<BackendError>(current_op("linalg"), call, " failed with cusolverStatus ", s);
}

void check_blas(SolverStatus s, const char* call) {
  if (s == 0) return;
  if (s == 3) fail<OutOfMemory>(current_op("linalg"), call, ": CUBLAS_STATUS_ALLOC_FAILED");
  fail<BackendError>(current_op("linalg"), call, " failed with cublasStatus ", s);
}

}  // namespace numr::cuda
