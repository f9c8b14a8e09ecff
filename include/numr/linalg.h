// Linear algebra (DESIGN §10), batched over leading dims: a "matrix" argument is [.., m, n]
// and every op works on each matrix of the batch. F32 and F64; the LAPACK-backed
// factorizations and solves (cholesky, lu_factor, lu, solve_triangular, solve, inv, det,
// slogdet, qr, eigh, eigvalsh, svd, svdvals, eig, eigvals) and the compositions on them
// (matrix_rank, pinv, lstsq, matrix_norm, cond, vector_norm) also take Complex64 and
// Complex128 (cholesky and eigh then read a as Hermitian; eigenvalues, singular values and
// norms are real, det and slogdet's sign complex), and so do kron and matrix_exp. The Var
// forms take the same dtypes, with complex gradients as PyTorch's (dL/dx + i dL/dy).
// Contracts (errors, singular and non-definite input, layouts) in docs/semantics.md.
//
//   Tensor l = linalg::cholesky(a);            // a = l lᵀ
//   Tensor x = linalg::solve(a, b);            // a x = b
//   auto [w, v] = linalg::eigh(a);             // a = v diag(w) vᵀ, w ascending
//   Var d = linalg::det(av);                   // differentiable, to any order
//
// The factorizations run on a backend's linalg kernels (the CPU's are LAPACK); a backend
// without them raises BackendLimitation naming the op. kron, matrix_exp, vector_norm and
// the Frobenius matrix norm are compositions of other ops and run on every backend; the
// others are built from the factorizations (det from LU, pinv from the SVD, lstsq from QR).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "numr/autograd.h"
#include "numr/tensor.h"

namespace numr::linalg {

// ---- factorizations ----
// The Cholesky factor of the symmetric positive-definite a [.., n, n]: lower L with
// a = L Lᵀ, or (upper) U = Lᵀ with a = Uᵀ U. Reads only the triangle it returns; the other
// is zero in the result. Not positive-definite: InvalidArgument.
Tensor cholesky(const Tensor& a, bool upper = false);

struct LuFactor {
  Tensor LU;      // [.., m, n]: L below the diagonal (unit diagonal implied), U on and above
  Tensor pivots;  // [.., min(m, n)] I32, 1-based: row i was swapped with row pivots[i]
};
// P A = L U with partial pivoting (LAPACK getrf), for any m x n. A singular a is factored
// (U has a zero on its diagonal); no error.
LuFactor lu_factor(const Tensor& a);

struct Lu {
  Tensor P, L, U;  // P [.., m, m] permutation, L [.., m, k] unit lower, U [.., k, n]
};
// a = P L U (k = min(m, n)), as PyTorch's linalg.lu.
Lu lu(const Tensor& a);

struct Qr {
  Tensor Q, R;
};
// a [.., m, n] = Q R. mode "reduced": Q [.., m, k], R [.., k, n] (k = min(m, n));
// "complete": Q [.., m, m], R [.., m, n]; "r": R only ([.., k, n]), Q undefined.
Qr qr(const Tensor& a, std::string_view mode = "reduced");

struct Eigh {
  Tensor eigenvalues;   // [.., n], ascending
  Tensor eigenvectors;  // [.., n, n], column j for eigenvalue j, orthonormal
};
// The eigendecomposition of the symmetric a [.., n, n] from its lower triangle (as
// PyTorch's default UPLO="L"; the upper one is never read).
Eigh eigh(const Tensor& a);
Tensor eigvalsh(const Tensor& a);

struct Svd {
  Tensor U, S, Vh;
};
// a [.., m, n] = U diag(S) Vh, S [.., k] descending, k = min(m, n). full_matrices: U
// [.., m, m] and Vh [.., n, n]; else U [.., m, k] and Vh [.., k, n].
Svd svd(const Tensor& a, bool full_matrices = true);
Tensor svdvals(const Tensor& a);

struct Eig {
  Tensor eigenvalues;   // [.., n] complex, in no particular order
  Tensor eigenvectors;  // [.., n, n] complex, column j for eigenvalue j, each of unit norm
};
// The eigendecomposition a V = V diag(w) of a general square a [.., n, n], real or complex,
// as PyTorch's linalg.eig: results Complex64 for F32 / Complex64 input, Complex128 for F64 /
// Complex128 (LAPACK geev; the vectors as geev normalizes them: unit 2-norm, largest
// component real). NaN or infinity in a: InvalidArgument.
Eig eig(const Tensor& a);
Tensor eigvals(const Tensor& a);

// ---- solves and inverses ----
// The x of a x = b (left) or x a = b (right) for the triangular a [.., n, n] (its upper
// or lower triangle; unitriangular: ones on the diagonal, which is not read). b [.., n, k]
// (left) or [.., k, n]; batch dims broadcast. No check for a zero on the diagonal (as
// PyTorch): the result then has infinities or NaNs.
Tensor solve_triangular(const Tensor& a, const Tensor& b, bool upper, bool left = true,
                        bool unitriangular = false);
// The x of a x = b for square a [.., n, n]; b is [.., n, k], or a vector [.., n] when its
// dims are a's minus the last (or b is 1-D). Batch dims broadcast. Singular a (an exactly
// zero pivot): InvalidArgument.
Tensor solve(const Tensor& a, const Tensor& b);
// The inverse of square a; singular a: InvalidArgument.
Tensor inv(const Tensor& a);
// det(a) of square a, [..]; 0 for a singular matrix.
Tensor det(const Tensor& a);
struct Slogdet {
  Tensor sign;       // [..]: -1, 0 (singular) or 1
  Tensor logabsdet;  // [..]: log |det a|, -inf when singular
};
Slogdet slogdet(const Tensor& a);

// ---- compositions (every backend) ----
// The Kronecker product: a [.., p, q], b [.., r, s] -> [.., p r, q s] (batch dims broadcast).
Tensor kron(const Tensor& a, const Tensor& b);
// exp(a) = Σ aᵏ/k! of square a: scaling and squaring with a Taylor polynomial, matmuls only.
Tensor matrix_exp(const Tensor& a);

// ---- norms, and what is built on the SVD and QR ----
// ||x||_ord over dims (all when empty): ord inf/-inf max/min |x|, 0 the number of nonzeros,
// else (Σ |x|^ord)^(1/ord). Any floating dtype; a composition (every backend).
Tensor vector_norm(const Tensor& x, double ord = 2, const std::vector<int64_t>& dims = {},
                   bool keepdim = false);
// ord "fro" (a composition, every backend) or "nuc" (Σ singular values), [..].
Tensor matrix_norm(const Tensor& a, std::string_view ord = "fro", bool keepdim = false);
// ord 1 / -1 (max / min column sum of |a|), inf / -inf (rows), 2 / -2 (largest / smallest
// singular value).
Tensor matrix_norm(const Tensor& a, double ord, bool keepdim = false);
// cond_p(a) = ||a||_p ||a⁻¹||_p for square a; p 2 (the default) / -2 is s_max / s_min
// (s_min / s_max) of any a (about 1 / eps for a singular one); the other p invert a
// (singular: InvalidArgument).
Tensor cond(const Tensor& a, double p = 2);
Tensor cond(const Tensor& a, std::string_view p);
// The pseudo-inverse [.., n, m] through the SVD; singular values below max(m, n) eps s_max
// count as zero (PyTorch's default tolerance).
Tensor pinv(const Tensor& a);
// The number of singular values above max(m, n) eps s_max, I64 [..].
Tensor matrix_rank(const Tensor& a);
// The least-squares solution x of a x = b for full-rank a [.., m, n] (the minimum-norm one
// when m < n), b [.., m, k] or [.., m]; through QR (the "gels" driver below). Only the
// solution is returned; the overload with a driver gives PyTorch's four results.
Tensor lstsq(const Tensor& a, const Tensor& b);
struct Lstsq {
  Tensor solution;         // [.., n, k] (or [.., n] for a vector b)
  Tensor residuals;        // [.., k]: ||a x - b||² per column, when m > n and a has full rank
  Tensor rank;             // I64 [..] (gelsd)
  Tensor singular_values;  // [.., min(m, n)] (gelsd)
};
// torch.linalg.lstsq with a driver: "gels" (QR, a of full rank, as lstsq above) or "gelsd"
// (through the SVD: any rank, the minimum-norm solution; singular values at most rcond s_max
// count as zero, rcond defaulting to max(m, n) eps). A result the driver does not give is an
// empty [0] tensor: rank and singular_values for gels; residuals unless m > n and (gelsd)
// every matrix has full rank.
Lstsq lstsq(const Tensor& a, const Tensor& b, std::string_view driver,
            std::optional<double> rcond = std::nullopt);

// ---- Var forms: gradients as PyTorch defines them, written with Var ops ----
// Real or complex (complex gradients as PyTorch's, docs/semantics.md). cholesky takes a as
// Hermitian (the gradient is symmetric for real a; for complex a it is PyTorch's, Hermitian
// but for the imaginary part of its diagonal); eigh takes a as Hermitian, for distinct
// eigenvalues; svd for distinct nonzero singular values and a loss that does not depend on
// the signs (complex: phases) of singular vectors, eigh on those of eigenvectors (a complex
// loss that does is InvalidArgument at backward); qr for m >= n (reduced) and full-rank a.
Var cholesky(const Var& a, bool upper = false);
Var solve_triangular(const Var& a, const Var& b, bool upper, bool left = true,
                     bool unitriangular = false);
Var solve(const Var& a, const Var& b);
Var inv(const Var& a);
Var det(const Var& a);
struct SlogdetVar {
  Var sign;  // differentiable for complex a (its phase); a constant for real a
  Var logabsdet;
};
SlogdetVar slogdet(const Var& a);
struct EighVar {
  Var eigenvalues, eigenvectors;
};
EighVar eigh(const Var& a);
Var eigvalsh(const Var& a);
struct QrVar {
  Var Q, R;
};
// Differentiable for mode "reduced" with m >= n (else InvalidArgument when a requires grad).
QrVar qr(const Var& a, std::string_view mode = "reduced");
struct SvdVar {
  Var U, S, Vh;
};
// Differentiable for full_matrices = false, or square a (else InvalidArgument when a
// requires grad).
SvdVar svd(const Var& a, bool full_matrices = true);
Var svdvals(const Var& a);
// Forward only: a that requires grad is refused (InvalidArgument); see docs/semantics.md.
struct EigVar {
  Var eigenvalues, eigenvectors;
};
EigVar eig(const Var& a);
Var eigvals(const Var& a);
Var kron(const Var& a, const Var& b);
Var matrix_exp(const Var& a);
Var vector_norm(const Var& x, double ord = 2, const std::vector<int64_t>& dims = {},
                bool keepdim = false);
Var matrix_norm(const Var& a, std::string_view ord = "fro", bool keepdim = false);
Var matrix_norm(const Var& a, double ord, bool keepdim = false);
Var cond(const Var& a, double p = 2);
Var pinv(const Var& a);
Var lstsq(const Var& a, const Var& b);
struct LstsqVar {
  Var solution, residuals;
  Tensor rank;
  Var singular_values;
};
// Differentiable through the compositions (QR for gels, the SVD for gelsd: distinct nonzero
// singular values, as svd's gradient needs).
LstsqVar lstsq(const Var& a, const Var& b, std::string_view driver,
               std::optional<double> rcond = std::nullopt);

}  // namespace numr::linalg
