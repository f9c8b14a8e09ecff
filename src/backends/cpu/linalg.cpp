// The CPU's linalg kernels: LAPACK from OpenBLAS, called through its Fortran symbols
// (column-major, arguments by pointer). Small matrices of a batch run over numr's pool,
// one matrix per task; large ones one after another, each using the BLAS's threads.
#include <algorithm>
#include <climits>
#include <cstring>
#include <vector>

#include "core/linalg_backend.h"
#include "core/thread_pool.h"
#include "numr/error.h"

extern "C" {
// LAPACK, as OpenBLAS exports it (integers are 32-bit: the LP64 interface).
void spotrf_(const char* uplo, const int* n, float* a, const int* lda, int* info);
void dpotrf_(const char* uplo, const int* n, double* a, const int* lda, int* info);
void sgetrf_(const int* m, const int* n, float* a, const int* lda, int* ipiv, int* info);
void dgetrf_(const int* m, const int* n, double* a, const int* lda, int* ipiv, int* info);
void sgetrs_(const char* trans, const int* n, const int* nrhs, const float* a, const int* lda,
             const int* ipiv, float* b, const int* ldb, int* info);
void dgetrs_(const char* trans, const int* n, const int* nrhs, const double* a, const int* lda,
             const int* ipiv, double* b, const int* ldb, int* info);
void strsm_(const char* side, const char* uplo, const char* transa, const char* diag, const int* m,
            const int* n, const float* alpha, const float* a, const int* lda, float* b,
            const int* ldb);
void dtrsm_(const char* side, const char* uplo, const char* transa, const char* diag, const int* m,
            const int* n, const double* alpha, const double* a, const int* lda, double* b,
            const int* ldb);
void sgeqrf_(const int* m, const int* n, float* a, const int* lda, float* tau, float* work,
             const int* lwork, int* info);
void dgeqrf_(const int* m, const int* n, double* a, const int* lda, double* tau, double* work,
             const int* lwork, int* info);
void sorgqr_(const int* m, const int* n, const int* k, float* a, const int* lda, const float* tau,
             float* work, const int* lwork, int* info);
void dorgqr_(const int* m, const int* n, const int* k, double* a, const int* lda, const double* tau,
             double* work, const int* lwork, int* info);
void ssyevd_(const char* jobz, const char* uplo, const int* n, float* a, const int* lda, float* w,
             float* work, const int* lwork, int* iwork, const int* liwork, int* info);
void dsyevd_(const char* jobz, const char* uplo, const int* n, double* a, const int* lda, double* w,
             double* work, const int* lwork, int* iwork, const int* liwork, int* info);
void sgesdd_(const char* jobz, const int* m, const int* n, float* a, const int* lda, float* s,
             float* u, const int* ldu, float* vt, const int* ldvt, float* work, const int* lwork,
             int* iwork, int* info);
void dgesdd_(const char* jobz, const int* m, const int* n, double* a, const int* lda, double* s,
             double* u, const int* ldu, double* vt, const int* ldvt, double* work, const int* lwork,
             int* iwork, int* info);
}

namespace numr {
namespace {

// One overload per element type, so the kernels below are written once.
void potrf(const char* u, const int* n, float* a, const int* l, int* i) { spotrf_(u, n, a, l, i); }
void potrf(const char* u, const int* n, double* a, const int* l, int* i) { dpotrf_(u, n, a, l, i); }
void getrf(const int* m, const int* n, float* a, const int* l, int* p, int* i) {
  sgetrf_(m, n, a, l, p, i);
}
void getrf(const int* m, const int* n, double* a, const int* l, int* p, int* i) {
  dgetrf_(m, n, a, l, p, i);
}
void getrs(const int* n, const int* k, const float* a, const int* l, const int* p, float* b,
           const int* lb, int* i) {
  sgetrs_("N", n, k, a, l, p, b, lb, i);
}
void getrs(const int* n, const int* k, const double* a, const int* l, const int* p, double* b,
           const int* lb, int* i) {
  dgetrs_("N", n, k, a, l, p, b, lb, i);
}
void trsm(const char* s, const char* u, const char* d, const int* m, const int* n, const float* a,
          const int* l, float* b, const int* lb) {
  const float one = 1.0f;
  strsm_(s, u, "N", d, m, n, &one, a, l, b, lb);
}
void trsm(const char* s, const char* u, const char* d, const int* m, const int* n, const double* a,
          const int* l, double* b, const int* lb) {
  const double one = 1.0;
  dtrsm_(s, u, "N", d, m, n, &one, a, l, b, lb);
}
void geqrf(const int* m, const int* n, float* a, const int* l, float* t, float* w, const int* lw,
           int* i) {
  sgeqrf_(m, n, a, l, t, w, lw, i);
}
void geqrf(const int* m, const int* n, double* a, const int* l, double* t, double* w, const int* lw,
           int* i) {
  dgeqrf_(m, n, a, l, t, w, lw, i);
}
void orgqr(const int* m, const int* n, const int* k, float* a, const int* l, const float* t,
           float* w, const int* lw, int* i) {
  sorgqr_(m, n, k, a, l, t, w, lw, i);
}
void orgqr(const int* m, const int* n, const int* k, double* a, const int* l, const double* t,
           double* w, const int* lw, int* i) {
  dorgqr_(m, n, k, a, l, t, w, lw, i);
}
void syevd(const char* j, const char* u, const int* n, float* a, const int* l, float* w, float* wk,
           const int* lw, int* iw, const int* liw, int* i) {
  ssyevd_(j, u, n, a, l, w, wk, lw, iw, liw, i);
}
void syevd(const char* j, const char* u, const int* n, double* a, const int* l, double* w,
           double* wk, const int* lw, int* iw, const int* liw, int* i) {
  dsyevd_(j, u, n, a, l, w, wk, lw, iw, liw, i);
}
void gesdd(const char* j, const int* m, const int* n, float* a, const int* l, float* s, float* u,
           const int* lu, float* vt, const int* lv, float* w, const int* lw, int* iw, int* i) {
  sgesdd_(j, m, n, a, l, s, u, lu, vt, lv, w, lw, iw, i);
}
void gesdd(const char* j, const int* m, const int* n, double* a, const int* l, double* s, double* u,
           const int* lu, double* vt, const int* lv, double* w, const int* lw, int* iw, int* i) {
  dgesdd_(j, m, n, a, l, s, u, lu, vt, lv, w, lw, iw, i);
}

template <class T>
T* ptr(const TensorRef& r) {
  return static_cast<T*>(r.base) + r.offset;
}

// LAPACK's leading dimension must be at least 1 even for an empty matrix.
int ld(int64_t rows) { return int(std::max<int64_t>(rows, 1)); }

// Runs f(i) for every matrix of the batch: spread over numr's pool when the matrices are
// small (the BLAS would run each on one thread anyway), else one after another.
template <class F>
void for_each_matrix(int64_t batch, int64_t elems, F&& f) {
  constexpr int64_t kSmall = 128 * 128;
  if (batch > 1 && elems <= kSmall) {
    ThreadPool::instance().parallel_for(batch, 1, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) f(i);
    });
  } else {
    ThreadPool::instance().park();  // the BLAS's threads take the cores from here
    for (int64_t i = 0; i < batch; ++i) f(i);
  }
}

void check_info(const char* routine, int info) {
  if (info < 0) fail<BackendError>("linalg", "LAPACK ", routine, " rejected argument ", -info);
}

template <class T>
void cholesky(const LinalgCall& c) {
  const int n = int(c.n), lda = ld(c.n);
  // Column-major `upper` is what LAPACK calls 'U'.
  const char* uplo = c.upper ? "U" : "L";
  T* a = ptr<T>(c.a);
  int* info = ptr<int>(c.info);
  for_each_matrix(c.batch, c.n * c.n, [&](int64_t i) {
    potrf(uplo, &n, a + i * c.n * c.n, &lda, &info[i]);
    check_info("potrf", info[i]);
  });
}

template <class T>
void lu_factor(const LinalgCall& c) {
  const int m = int(c.m), n = int(c.n), lda = ld(c.m);
  const int64_t k = std::min(c.m, c.n);
  T* a = ptr<T>(c.a);
  int *piv = ptr<int>(c.pivots), *info = ptr<int>(c.info);
  for_each_matrix(c.batch, c.m * c.n, [&](int64_t i) {
    getrf(&m, &n, a + i * c.m * c.n, &lda, piv + i * k, &info[i]);
    check_info("getrf", info[i]);
    if (!c.with_perm) return;
    // The swaps applied in order to the identity order of the rows.
    int64_t* p = ptr<int64_t>(c.perm) + i * c.m;
    for (int64_t r = 0; r < c.m; ++r) p[r] = r;
    for (int64_t r = 0; r < k; ++r) std::swap(p[r], p[piv[i * k + r] - 1]);
  });
}

template <class T>
void lu_solve(const LinalgCall& c) {
  const int n = int(c.n), k = int(c.k), lda = ld(c.n);
  const T* a = ptr<T>(c.a);
  T* b = ptr<T>(c.b);
  const int* piv = ptr<int>(c.pivots);
  for_each_matrix(c.batch, c.n * std::max(c.n, c.k), [&](int64_t i) {
    int info = 0;
    getrs(&n, &k, a + i * c.n * c.n, &lda, piv + i * c.n, b + i * c.n * c.k, &lda, &info);
    check_info("getrs", info);
  });
}

template <class T>
void triangular_solve(const LinalgCall& c) {
  // b is [n, k] (left) or [k, n] (right); LAPACK's m x n is b's rows x cols.
  const int rows = int(c.left ? c.n : c.k), cols = int(c.left ? c.k : c.n);
  const int lda = ld(c.n), ldb = ld(rows);
  const T* a = ptr<T>(c.a);
  T* b = ptr<T>(c.b);
  const char* side = c.left ? "L" : "R";
  const char* uplo = c.upper ? "U" : "L";
  const char* diag = c.unitriangular ? "U" : "N";
  if (rows == 0 || cols == 0) return;
  for_each_matrix(c.batch, c.n * std::max(c.n, c.k), [&](int64_t i) {
    trsm(side, uplo, diag, &rows, &cols, a + i * c.n * c.n, &lda, b + i * c.n * c.k, &ldb);
  });
}

template <class T>
void qr(const LinalgCall& c) {
  const int m = int(c.m), n = int(c.n), k = int(std::min(c.m, c.n)), lda = ld(c.m);
  const int q_cols = c.complete ? m : k;
  const int r_rows = q_cols;
  T* a = ptr<T>(c.a);
  T* q = c.with_q ? ptr<T>(c.q) : nullptr;
  T* r = ptr<T>(c.r);
  // Workspace sizes from a query; orgqr works on an [m, max(q_cols, n)] buffer when Q is
  // complete and wider than A.
  const int qa_cols = std::max(q_cols, n);
  int lwork = 1;
  {
    T wq = 0, wq2 = 0;
    int info = 0, neg = -1;
    std::vector<T> dummy(1);
    geqrf(&m, &n, dummy.data(), &lda, dummy.data(), &wq, &neg, &info);
    if (c.with_q && q_cols > 0)
      orgqr(&m, &q_cols, &k, dummy.data(), &lda, dummy.data(), &wq2, &neg, &info);
    lwork = std::max({1, int(wq), int(wq2), m, n});
  }
  for_each_matrix(c.batch, c.m * c.n, [&](int64_t i) {
    std::vector<T> work(static_cast<size_t>(lwork)), tau(static_cast<size_t>(std::max(k, 1)));
    std::vector<T> buf(size_t(c.m) * size_t(qa_cols));
    std::memcpy(buf.data(), a + i * c.m * c.n, sizeof(T) * size_t(c.m * c.n));
    int info = 0;
    if (k > 0) {
      geqrf(&m, &n, buf.data(), &lda, tau.data(), work.data(), &lwork, &info);
      check_info("geqrf", info);
    }
    T* ri = r + i * int64_t(r_rows) * c.n;
    for (int j = 0; j < n; ++j)
      for (int row = 0; row < r_rows; ++row)
        ri[int64_t(j) * r_rows + row] =
            row <= j ? buf[size_t(j) * size_t(c.m) + size_t(row)] : T(0);
    if (!c.with_q || q_cols == 0) return;
    if (k > 0) {
      orgqr(&m, &q_cols, &k, buf.data(), &lda, tau.data(), work.data(), &lwork, &info);
      check_info("orgqr", info);
    } else {  // A has no columns or no rows: Q is the identity
      std::fill(buf.begin(), buf.end(), T(0));
      for (int d = 0; d < std::min(m, q_cols); ++d) buf[size_t(d) * size_t(c.m) + size_t(d)] = T(1);
    }
    std::memcpy(q + i * c.m * q_cols, buf.data(), sizeof(T) * size_t(c.m) * size_t(q_cols));
  });
}

template <class T>
void eigh(const LinalgCall& c) {
  const int n = int(c.n), lda = ld(c.n);
  const char* jobz = c.with_vectors ? "V" : "N";
  const char* uplo = c.upper ? "U" : "L";
  T* a = ptr<T>(c.a);
  T* w = ptr<T>(c.w);
  int* info = ptr<int>(c.info);
  int lwork = 1, liwork = 1;
  {
    T wq = 0, dummy = 0, dw = 0;
    int iwq = 0, neg = -1, qinfo = 0;
    syevd(jobz, uplo, &n, &dummy, &lda, &dw, &wq, &neg, &iwq, &neg, &qinfo);
    lwork = std::max(1, int(wq));
    liwork = std::max(1, iwq);
  }
  for_each_matrix(c.batch, c.n * c.n, [&](int64_t i) {
    std::vector<T> work(static_cast<size_t>(lwork));
    std::vector<int> iwork(static_cast<size_t>(liwork));
    syevd(jobz, uplo, &n, a + i * c.n * c.n, &lda, w + i * c.n, work.data(), &lwork, iwork.data(),
          &liwork, &info[i]);
    check_info("syevd", info[i]);
  });
}

template <class T>
void svd(const LinalgCall& c) {
  const int m = int(c.m), n = int(c.n), k = int(std::min(c.m, c.n)), lda = ld(c.m);
  const char* jobz = !c.with_vectors ? "N" : c.complete ? "A" : "S";
  const int u_cols = c.complete ? m : k, vt_rows = c.complete ? n : k;
  const int ldu = ld(m), ldvt = ld(vt_rows);
  T* a = ptr<T>(c.a);
  T* s = ptr<T>(c.w);
  T* u = c.with_vectors ? ptr<T>(c.u) : nullptr;
  T* vt = c.with_vectors ? ptr<T>(c.vt) : nullptr;
  int* info = ptr<int>(c.info);
  int lwork = 1;
  {
    T wq = 0, dummy = 0;
    int neg = -1, qinfo = 0, iw = 0;
    gesdd(jobz, &m, &n, &dummy, &lda, &dummy, &dummy, &ldu, &dummy, &ldvt, &wq, &neg, &iw, &qinfo);
    lwork = std::max(1, int(wq));
  }
  for_each_matrix(c.batch, c.m * c.n, [&](int64_t i) {
    std::vector<T> work(static_cast<size_t>(lwork));
    std::vector<int> iwork(size_t(8 * std::max(k, 1)));
    T dummy_u = 0, dummy_vt = 0;
    gesdd(jobz, &m, &n, a + i * c.m * c.n, &lda, s + i * k,
          u ? u + i * int64_t(m) * u_cols : &dummy_u, &ldu,
          vt ? vt + i * int64_t(vt_rows) * n : &dummy_vt, &ldvt, work.data(), &lwork, iwork.data(),
          &info[i]);
    check_info("gesdd", info[i]);
  });
}

template <class T>
void run_typed(const LinalgCall& c) {
  switch (c.kernel) {
    case LinalgKernel::cholesky: return cholesky<T>(c);
    case LinalgKernel::lu_factor: return lu_factor<T>(c);
    case LinalgKernel::lu_solve: return lu_solve<T>(c);
    case LinalgKernel::triangular_solve: return triangular_solve<T>(c);
    case LinalgKernel::qr: return qr<T>(c);
    case LinalgKernel::eigh: return eigh<T>(c);
    case LinalgKernel::svd: return svd<T>(c);
  }
}

class CpuLinalg final : public LinalgKernels {
 public:
  bool supports(LinalgKernel, DType t) const override { return t == DType::F32 || t == DType::F64; }
  void run(const LinalgCall& c) override {
    if (c.m > INT_MAX || c.n > INT_MAX || c.k > INT_MAX)
      fail<BackendLimitation>("linalg", "dims beyond LAPACK's 32-bit range: m ", c.m, ", n ", c.n,
                              ", k ", c.k);
    if (c.batch == 0) return;
    if (c.dtype == DType::F64)
      run_typed<double>(c);
    else
      run_typed<float>(c);
  }
};

}  // namespace

LinalgKernels& cpu_linalg_kernels() {
  static CpuLinalg kernels;
  return kernels;
}

}  // namespace numr
