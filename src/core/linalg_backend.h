// The optional linear-algebra family: the per-matrix factorizations and solves that the
// front ends of numr::linalg (src/ops/linalg.cpp) build every other op from. It sits beside
// Backend in a table of its own (linalg_kernels_for), so a backend gains it by adding one
// row; a backend without a row gets the kernels composed from Tensor ops
// (composed_linalg_kernels), which run on its device with no trip through the host.
//
// Every matrix in a LinalgCall is column-major (Fortran order, as LAPACK and cuSOLVER take
// it), contiguous, and the batch elements follow one another: matrix i of a [rows, cols]
// operand starts at element i * rows * cols. The front ends make that layout with
// transpose + contiguous and read the results back the same way.
//
// Complex matrices (LinalgCall::complex) arrive as the real views of their storage
// (view_as_real): each element an interleaved (re, im) pair of `dtype`, which is LAPACK's and
// cuSOLVER's complex layout. Their TensorRef is the real view's (dtype F32/F64, a last dim
// of 2, offset counted in reals); the element counts above are of complex pairs.
#pragma once

#include <cstdint>

#include "core/backend.h"

namespace numr {

enum class LinalgKernel : uint8_t {
  // a [n, n] in place: its `upper` (else lower) triangle becomes the Cholesky factor; the
  // other triangle is left as it was. info[i] = k > 0: the leading minor of order k of
  // matrix i is not positive-definite.
  cholesky,
  // a [m, n] in place: L (unit diagonal, below) and U of P A = L U, partial pivoting;
  // pivots [batch, min(m, n)] I32, 1-based (row i was swapped with row pivots[i]); info[i] =
  // k > 0: U[k-1, k-1] is exactly zero. with_perm: also perm [batch, m] I64 (I32 on a backend
  // without I64), the rows of a in the order of P^T a (row i of P^T a is row perm[i] of a).
  lu_factor,
  // b [n, k] in place becomes A^-1 b from a = the lu_factor result [n, n] and its pivots.
  lu_solve,
  // b in place becomes A^-1 b (left: b [n, k]) or b A^-1 (else: b [k, n]) where A is the
  // `upper` (else lower) triangle of a [n, n], with ones on the diagonal if unitriangular.
  triangular_solve,
  // a [m, n] (destroyed); q [m, q_cols] (q_cols = m if complete, else min(m, n)), unless
  // !with_q; r [r_rows, n] (r_rows = q_cols): the upper trapezoid of R; the entries below
  // its diagonal are unspecified (the front end clears them).
  qr,
  // a [n, n] symmetric, its `upper` (else lower) triangle read; w [batch, n] ascending;
  // with_vectors: a is overwritten by the orthonormal eigenvectors (column j with w[j]).
  // info[i] > 0: the iteration did not converge.
  eigh,
  // a [m, n] (destroyed); s [batch, min(m, n)] descending; with_vectors: u [m, u_cols] and
  // vt [vt_rows, n] (u_cols = vt_rows = min(m, n), or m and n when complete). info[i] > 0:
  // no convergence.
  svd,
  // a [n, n] (destroyed), general (not symmetric); w [batch, n] complex eigenvalues, always
  // complex pairs whether a is or not; with_vectors: u [n, n] complex right eigenvectors
  // (column j with w[j]), each of unit 2-norm as LAPACK's geev leaves them. Eigenvalues come
  // in no particular order. info[i] > 0: the QR algorithm did not converge.
  eig,
};

struct LinalgCall {
  LinalgKernel kernel = LinalgKernel::cholesky;
  DType dtype = DType::F64;  // of every floating operand
  Device device = Device::cpu();  // where every operand lives
  int64_t batch = 0, m = 0, n = 0, k = 0;
  TensorRef a, b, q, r, w, u, vt, pivots, perm, info;  // those the kernel uses; info I32 [batch]
  bool upper = false, left = true, unitriangular = false, complete = false, with_q = true,
       with_vectors = true, with_perm = false;
  // Every floating operand but the real results w of eigh and svd (eigenvalues, singular
  // values) is complex: pairs of `dtype` (which stays F32 or F64). The Hermitian kernels
  // then read a's triangle as Hermitian (cholesky, eigh), Q and U are unitary, vt is Vᴴ.
  // supports() is asked with the complex dtype (Complex64 or Complex128) for these calls.
  bool complex = false;
};

class LinalgKernels {
 public:
  virtual ~LinalgKernels() = default;
  // t: F32 or F64, or Complex64 / Complex128 for a call with `complex` set.
  virtual bool supports(LinalgKernel kernel, DType t) const = 0;
  virtual void run(const LinalgCall& call) = 0;
};

// The linalg kernels of the backend on `device`: its row's, else the composed ones.
LinalgKernels* linalg_kernels_for(Device device);

// The CPU's (LAPACK through OpenBLAS), src/backends/cpu/linalg.cpp.
LinalgKernels& cpu_linalg_kernels();
// CUDA's (cuSOLVER and cuBLAS loaded at run time), src/backends/cuda/linalg.cpp.
LinalgKernels& cuda_linalg_kernels();
// Composed from Tensor ops (src/ops/linalg_composed.cpp): every backend without a row.
LinalgKernels& composed_linalg_kernels();
// Test support: while on, every device runs the composed kernels where they support the call.
void set_composed_linalg_for_testing(bool on);

}  // namespace numr
