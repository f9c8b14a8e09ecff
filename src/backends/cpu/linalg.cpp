// The CPU's linalg kernels: LAPACK from OpenBLAS, called through its Fortran symbols
// (column-major, arguments by pointer). Small matrices of a batch run over numr's pool,
// one matrix per task; large ones one after another, each using the BLAS's threads.
#include <algorithm>
#include <climits>
#include <complex>
#include <cstring>
#include <type_traits>
#include <vector>

#include "backends/cpu/blas_threads.h"
#include "core/linalg_backend.h"
#include "core/real_of.h"
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
void sgeev_(const char* jobvl, const char* jobvr, const int* n, float* a, const int* lda, float* wr,
            float* wi, float* vl, const int* ldvl, float* vr, const int* ldvr, float* work,
            const int* lwork, int* info);
void dgeev_(const char* jobvl, const char* jobvr, const int* n, double* a, const int* lda,
            double* wr, double* wi, double* vl, const int* ldvl, double* vr, const int* ldvr,
            double* work, const int* lwork, int* info);
// The complex routines take std::complex<T>* where LAPACK has COMPLEX / COMPLEX*16: the
// same layout (an array of two T).
using c32 = std::complex<float>;
using c64 = std::complex<double>;
void cpotrf_(const char* uplo, const int* n, c32* a, const int* lda, int* info);
void zpotrf_(const char* uplo, const int* n, c64* a, const int* lda, int* info);
void cgetrf_(const int* m, const int* n, c32* a, const int* lda, int* ipiv, int* info);
void zgetrf_(const int* m, const int* n, c64* a, const int* lda, int* ipiv, int* info);
void cgetrs_(const char* trans, const int* n, const int* nrhs, const c32* a, const int* lda,
             const int* ipiv, c32* b, const int* ldb, int* info);
void zgetrs_(const char* trans, const int* n, const int* nrhs, const c64* a, const int* lda,
             const int* ipiv, c64* b, const int* ldb, int* info);
void ctrsm_(const char* side, const char* uplo, const char* transa, const char* diag, const int* m,
            const int* n, const c32* alpha, const c32* a, const int* lda, c32* b, const int* ldb);
void ztrsm_(const char* side, const char* uplo, const char* transa, const char* diag, const int* m,
            const int* n, const c64* alpha, const c64* a, const int* lda, c64* b, const int* ldb);
void cgeqrf_(const int* m, const int* n, c32* a, const int* lda, c32* tau, c32* work,
             const int* lwork, int* info);
void zgeqrf_(const int* m, const int* n, c64* a, const int* lda, c64* tau, c64* work,
             const int* lwork, int* info);
void cungqr_(const int* m, const int* n, const int* k, c32* a, const int* lda, const c32* tau,
             c32* work, const int* lwork, int* info);
void zungqr_(const int* m, const int* n, const int* k, c64* a, const int* lda, const c64* tau,
             c64* work, const int* lwork, int* info);
void cheevd_(const char* jobz, const char* uplo, const int* n, c32* a, const int* lda, float* w,
             c32* work, const int* lwork, float* rwork, const int* lrwork, int* iwork,
             const int* liwork, int* info);
void zheevd_(const char* jobz, const char* uplo, const int* n, c64* a, const int* lda, double* w,
             c64* work, const int* lwork, double* rwork, const int* lrwork, int* iwork,
             const int* liwork, int* info);
void cgesdd_(const char* jobz, const int* m, const int* n, c32* a, const int* lda, float* s, c32* u,
             const int* ldu, c32* vt, const int* ldvt, c32* work, const int* lwork, float* rwork,
             int* iwork, int* info);
void zgesdd_(const char* jobz, const int* m, const int* n, c64* a, const int* lda, double* s,
             c64* u, const int* ldu, c64* vt, const int* ldvt, c64* work, const int* lwork,
             double* rwork, int* iwork, int* info);
void cgeev_(const char* jobvl, const char* jobvr, const int* n, c32* a, const int* lda, c32* w,
            c32* vl, const int* ldvl, c32* vr, const int* ldvr, c32* work, const int* lwork,
            float* rwork, int* info);
void zgeev_(const char* jobvl, const char* jobvr, const int* n, c64* a, const int* lda, c64* w,
            c64* vl, const int* ldvl, c64* vr, const int* ldvr, c64* work, const int* lwork,
            double* rwork, int* info);
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
void potrf(const char* u, const int* n, c32* a, const int* l, int* i) { cpotrf_(u, n, a, l, i); }
void potrf(const char* u, const int* n, c64* a, const int* l, int* i) { zpotrf_(u, n, a, l, i); }
void getrf(const int* m, const int* n, c32* a, const int* l, int* p, int* i) {
  cgetrf_(m, n, a, l, p, i);
}
void getrf(const int* m, const int* n, c64* a, const int* l, int* p, int* i) {
  zgetrf_(m, n, a, l, p, i);
}
void getrs(const int* n, const int* k, const c32* a, const int* l, const int* p, c32* b,
           const int* lb, int* i) {
  cgetrs_("N", n, k, a, l, p, b, lb, i);
}
void getrs(const int* n, const int* k, const c64* a, const int* l, const int* p, c64* b,
           const int* lb, int* i) {
  zgetrs_("N", n, k, a, l, p, b, lb, i);
}
void trsm(const char* s, const char* u, const char* d, const int* m, const int* n, const c32* a,
          const int* l, c32* b, const int* lb) {
  const c32 one = 1.0f;
  ctrsm_(s, u, "N", d, m, n, &one, a, l, b, lb);
}
void trsm(const char* s, const char* u, const char* d, const int* m, const int* n, const c64* a,
          const int* l, c64* b, const int* lb) {
  const c64 one = 1.0;
  ztrsm_(s, u, "N", d, m, n, &one, a, l, b, lb);
}
void geqrf(const int* m, const int* n, c32* a, const int* l, c32* t, c32* w, const int* lw,
           int* i) {
  cgeqrf_(m, n, a, l, t, w, lw, i);
}
void geqrf(const int* m, const int* n, c64* a, const int* l, c64* t, c64* w, const int* lw,
           int* i) {
  zgeqrf_(m, n, a, l, t, w, lw, i);
}
// Q of the complex QR is unitary: LAPACK's ungqr, the orgqr of complex matrices.
void orgqr(const int* m, const int* n, const int* k, c32* a, const int* l, const c32* t, c32* w,
           const int* lw, int* i) {
  cungqr_(m, n, k, a, l, t, w, lw, i);
}
void orgqr(const int* m, const int* n, const int* k, c64* a, const int* l, const c64* t, c64* w,
           const int* lw, int* i) {
  zungqr_(m, n, k, a, l, t, w, lw, i);
}
void heevd(const char* j, const char* u, const int* n, c32* a, const int* l, float* w, c32* wk,
           const int* lw, float* rw, const int* lrw, int* iw, const int* liw, int* i) {
  cheevd_(j, u, n, a, l, w, wk, lw, rw, lrw, iw, liw, i);
}
void heevd(const char* j, const char* u, const int* n, c64* a, const int* l, double* w, c64* wk,
           const int* lw, double* rw, const int* lrw, int* iw, const int* liw, int* i) {
  zheevd_(j, u, n, a, l, w, wk, lw, rw, lrw, iw, liw, i);
}
void gesdd(const char* j, const int* m, const int* n, c32* a, const int* l, float* s, c32* u,
           const int* lu, c32* vt, const int* lv, c32* w, const int* lw, float* rw, int* iw,
           int* i) {
  cgesdd_(j, m, n, a, l, s, u, lu, vt, lv, w, lw, rw, iw, i);
}
void gesdd(const char* j, const int* m, const int* n, c64* a, const int* l, double* s, c64* u,
           const int* lu, c64* vt, const int* lv, c64* w, const int* lw, double* rw, int* iw,
           int* i) {
  zgesdd_(j, m, n, a, l, s, u, lu, vt, lv, w, lw, rw, iw, i);
}
void geev(const char* jr, const int* n, float* a, const int* l, float* wr, float* wi, float* vr,
          const int* lv, float* w, const int* lw, int* i) {
  const int one = 1;
  sgeev_("N", jr, n, a, l, wr, wi, nullptr, &one, vr, lv, w, lw, i);
}
void geev(const char* jr, const int* n, double* a, const int* l, double* wr, double* wi, double* vr,
          const int* lv, double* w, const int* lw, int* i) {
  const int one = 1;
  dgeev_("N", jr, n, a, l, wr, wi, nullptr, &one, vr, lv, w, lw, i);
}
void geev(const char* jr, const int* n, c32* a, const int* l, c32* w, c32* vr, const int* lv,
          c32* wk, const int* lw, float* rw, int* i) {
  const int one = 1;
  cgeev_("N", jr, n, a, l, w, nullptr, &one, vr, lv, wk, lw, rw, i);
}
void geev(const char* jr, const int* n, c64* a, const int* l, c64* w, c64* vr, const int* lv,
          c64* wk, const int* lw, double* rw, int* i) {
  const int one = 1;
  zgeev_("N", jr, n, a, l, w, nullptr, &one, vr, lv, wk, lw, rw, i);
}

template <class T>
using real_t = real_of<T>;
template <class T>
constexpr bool kComplex = is_complex_type<T>;

// A workspace size LAPACK reported in the first element of work.
template <class T>
int work_size(T w) {
  return int(std::real(w));
}

// A complex operand's ref is its real view: base and offset count reals.
template <class T>
T* ptr(const TensorRef& r) {
  return reinterpret_cast<T*>(static_cast<real_t<T>*>(r.base) + r.offset);
}

// LAPACK's leading dimension must be at least 1 even for an empty matrix.
int ld(int64_t rows) { return int(std::max<int64_t>(rows, 1)); }

// Whether a routine may run on several threads at once. OpenBLAS's own C factorisations
// (potrf, getrf, getrs, trsm) may; the reference LAPACK it carries (geqrf, the
// divide-and-conquer syevd/heevd and gesdd, geev) is not reentrant everywhere, and 16 pool
// threads calling syevd or gesdd together crashed, even with OpenBLAS held to one thread.
enum class Reentrant : bool { no, yes };

// Runs f(i) for every matrix of the batch: spread over numr's pool when the matrices are
// small (the BLAS would run each on one thread anyway) and the routine is reentrant, else
// one after another.
template <class F>
void for_each_matrix(int64_t batch, int64_t elems, Reentrant reentrant, F&& f) {
  constexpr int64_t kSmall = 128 * 128;
  if (batch > 1 && elems <= kSmall && reentrant == Reentrant::yes) {
    const cpu::BlasSingleThreaded one_blas_thread;
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
  for_each_matrix(c.batch, c.n * c.n, Reentrant::yes, [&](int64_t i) {
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
  for_each_matrix(c.batch, c.m * c.n, Reentrant::yes, [&](int64_t i) {
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
  for_each_matrix(c.batch, c.n * std::max(c.n, c.k), Reentrant::yes, [&](int64_t i) {
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
  for_each_matrix(c.batch, c.n * std::max(c.n, c.k), Reentrant::yes, [&](int64_t i) {
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
    lwork = std::max({1, work_size(wq), work_size(wq2), m, n});
  }
  for_each_matrix(c.batch, c.m * c.n, Reentrant::no, [&](int64_t i) {
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
  using R = real_t<T>;
  const int n = int(c.n), lda = ld(c.n);
  const char* jobz = c.with_vectors ? "V" : "N";
  const char* uplo = c.upper ? "U" : "L";
  T* a = ptr<T>(c.a);
  R* w = ptr<R>(c.w);
  int* info = ptr<int>(c.info);
  int lwork = 1, lrwork = 1, liwork = 1;
  {
    T wq = 0, dummy = 0;
    R dw = 0, rwq = 0;
    int iwq = 0, neg = -1, qinfo = 0;
    if constexpr (kComplex<T>)
      heevd(jobz, uplo, &n, &dummy, &lda, &dw, &wq, &neg, &rwq, &neg, &iwq, &neg, &qinfo);
    else
      syevd(jobz, uplo, &n, &dummy, &lda, &dw, &wq, &neg, &iwq, &neg, &qinfo);
    lwork = std::max(1, work_size(wq));
    lrwork = std::max(1, int(rwq));
    liwork = std::max(1, iwq);
  }
  for_each_matrix(c.batch, c.n * c.n, Reentrant::no, [&](int64_t i) {
    std::vector<T> work(static_cast<size_t>(lwork));
    std::vector<int> iwork(static_cast<size_t>(liwork));
    if constexpr (kComplex<T>) {
      std::vector<R> rwork(static_cast<size_t>(lrwork));
      heevd(jobz, uplo, &n, a + i * c.n * c.n, &lda, w + i * c.n, work.data(), &lwork, rwork.data(),
            &lrwork, iwork.data(), &liwork, &info[i]);
      check_info("heevd", info[i]);
    } else {
      syevd(jobz, uplo, &n, a + i * c.n * c.n, &lda, w + i * c.n, work.data(), &lwork, iwork.data(),
            &liwork, &info[i]);
      check_info("syevd", info[i]);
    }
  });
}

template <class T>
void svd(const LinalgCall& c) {
  using R = real_t<T>;
  const int m = int(c.m), n = int(c.n), k = int(std::min(c.m, c.n)), lda = ld(c.m);
  const char* jobz = !c.with_vectors ? "N" : c.complete ? "A" : "S";
  const int u_cols = c.complete ? m : k, vt_rows = c.complete ? n : k;
  const int ldu = ld(m), ldvt = ld(vt_rows);
  T* a = ptr<T>(c.a);
  R* s = ptr<R>(c.w);
  T* u = c.with_vectors ? ptr<T>(c.u) : nullptr;
  T* vt = c.with_vectors ? ptr<T>(c.vt) : nullptr;
  int* info = ptr<int>(c.info);
  // The complex gesdd's real workspace, as its documentation sizes it.
  const int64_t mn = k, mx = std::max(m, n);
  const int64_t lrwork =
      !c.with_vectors ? 7 * mn : std::max(5 * mn * mn + 5 * mn, 2 * mx * mn + 2 * mn * mn + mn);
  int lwork = 1;
  {
    T wq = 0, dummy = 0;
    R rdummy = 0;
    int neg = -1, qinfo = 0, iw = 0;
    if constexpr (kComplex<T>)
      gesdd(jobz, &m, &n, &dummy, &lda, &rdummy, &dummy, &ldu, &dummy, &ldvt, &wq, &neg, &rdummy,
            &iw, &qinfo);
    else
      gesdd(jobz, &m, &n, &dummy, &lda, &dummy, &dummy, &ldu, &dummy, &ldvt, &wq, &neg, &iw,
            &qinfo);
    lwork = std::max(1, work_size(wq));
  }
  for_each_matrix(c.batch, c.m * c.n, Reentrant::no, [&](int64_t i) {
    std::vector<T> work(static_cast<size_t>(lwork));
    std::vector<int> iwork(size_t(8 * std::max(k, 1)));
    T dummy_u = 0, dummy_vt = 0;
    T* ui = u ? u + i * int64_t(m) * u_cols : &dummy_u;
    T* vti = vt ? vt + i * int64_t(vt_rows) * n : &dummy_vt;
    if constexpr (kComplex<T>) {
      std::vector<R> rwork(size_t(std::max<int64_t>(lrwork, 1)));
      gesdd(jobz, &m, &n, a + i * c.m * c.n, &lda, s + i * k, ui, &ldu, vti, &ldvt, work.data(),
            &lwork, rwork.data(), iwork.data(), &info[i]);
    } else {
      gesdd(jobz, &m, &n, a + i * c.m * c.n, &lda, s + i * k, ui, &ldu, vti, &ldvt, work.data(),
            &lwork, iwork.data(), &info[i]);
    }
    check_info("gesdd", info[i]);
  });
}

// geev on a real or complex T; the eigenvalues and vectors are written as complex pairs.
template <class T>
void eig(const LinalgCall& c) {
  using R = real_t<T>;
  using C = std::complex<R>;
  const int n = int(c.n), lda = ld(c.n);
  const char* jobvr = c.with_vectors ? "V" : "N";
  T* a = ptr<T>(c.a);
  C* w = ptr<C>(c.w);
  C* v = c.with_vectors ? ptr<C>(c.u) : nullptr;
  int* info = ptr<int>(c.info);
  int lwork = 1;
  {
    T wq = 0, dummy = 0;
    int neg = -1, qinfo = 0;
    if constexpr (kComplex<T>) {
      R rdummy = 0;
      geev(jobvr, &n, &dummy, &lda, &dummy, &dummy, &lda, &wq, &neg, &rdummy, &qinfo);
    } else {
      geev(jobvr, &n, &dummy, &lda, &dummy, &dummy, &dummy, &lda, &wq, &neg, &qinfo);
    }
    lwork = std::max(1, work_size(wq));
  }
  const size_t nn = size_t(c.n) * size_t(c.n);
  for_each_matrix(c.batch, c.n * c.n, Reentrant::no, [&](int64_t i) {
    std::vector<T> work(static_cast<size_t>(lwork));
    T* ai = a + i * c.n * c.n;
    C* wi = w + i * c.n;
    if constexpr (kComplex<T>) {
      std::vector<R> rwork(size_t(2 * std::max(n, 1)));
      std::vector<C> scratch(c.with_vectors ? 0 : 1);
      C* vi = v ? v + i * c.n * c.n : scratch.data();
      geev(jobvr, &n, ai, &lda, wi, vi, &lda, work.data(), &lwork, rwork.data(), &info[i]);
      check_info("geev", info[i]);
    } else {
      // The real geev gives a conjugate pair as columns j (real part) and j+1 (imaginary part)
      // of vr, the eigenvalue with positive imaginary part first.
      std::vector<R> re(size_t(std::max(n, 1))), im(size_t(std::max(n, 1)));
      std::vector<R> vr(c.with_vectors ? nn : 1);
      geev(jobvr, &n, ai, &lda, re.data(), im.data(), vr.data(), &lda, work.data(), &lwork,
           &info[i]);
      check_info("geev", info[i]);
      if (info[i] > 0) return;
      for (int j = 0; j < n; ++j) wi[j] = C(re[size_t(j)], im[size_t(j)]);
      if (!v) return;
      C* vi = v + i * c.n * c.n;
      for (int j = 0; j < n; ++j) {
        const R* col = vr.data() + size_t(j) * size_t(n);
        if (im[size_t(j)] == 0 || j + 1 == n) {
          for (int r = 0; r < n; ++r) vi[size_t(j) * size_t(n) + size_t(r)] = C(col[r], 0);
          continue;
        }
        const R* next = col + n;
        for (int r = 0; r < n; ++r) {
          vi[size_t(j) * size_t(n) + size_t(r)] = C(col[r], next[r]);
          vi[size_t(j + 1) * size_t(n) + size_t(r)] = C(col[r], -next[r]);
        }
        ++j;
      }
    }
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
    case LinalgKernel::eig: return eig<T>(c);
  }
}

class CpuLinalg final : public LinalgKernels {
 public:
  bool supports(LinalgKernel, DType t) const override {
    return t == DType::F32 || t == DType::F64 || t == DType::Complex64 || t == DType::Complex128;
  }
  void run(const LinalgCall& c) override {
    if (c.m > INT_MAX || c.n > INT_MAX || c.k > INT_MAX)
      fail<BackendLimitation>("linalg", "dims beyond LAPACK's 32-bit range: m ", c.m, ", n ", c.n,
                              ", k ", c.k);
    if (c.batch == 0) return;
    if (c.complex) {
      if (c.dtype == DType::F64)
        run_typed<std::complex<double>>(c);
      else
        run_typed<std::complex<float>>(c);
    } else if (c.dtype == DType::F64) {
      run_typed<double>(c);
    } else {
      run_typed<float>(c);
    }
  }
};

}  // namespace

LinalgKernels& cpu_linalg_kernels() {
  static CpuLinalg kernels;
  return kernels;
}

}  // namespace numr
