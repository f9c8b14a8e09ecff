// CUDA's linalg kernels: cuSOLVER's dense routines and cuBLAS, loaded at run time
// (solver_api.h), on numr's stream of the device. Batches of small matrices go through the
// batched routines (one launch for the whole batch: potrfBatched, cuBLAS getrf/getrs/trsm
// Batched, the Jacobi syevj/gesvdj Batched); larger matrices, and kernels without a batched
// form, run one matrix after another.
#include <algorithm>
#include <climits>
#include <complex>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <type_traits>
#include <vector>

#include "backends/cuda/allocator.h"
#include "backends/cuda/context.h"
#include "backends/cuda/solver_api.h"
#include "core/linalg_backend.h"
#include "core/op_scope.h"
#include "numr/error.h"

namespace numr {
namespace {

using namespace cuda;

// The largest matrices that take the batched paths: beyond these the per-matrix routines
// (blocked, using the whole GPU for one matrix) are faster, and the Jacobi batched routines
// accept at most 32.
constexpr int64_t kBatchedLu = 64, kBatchedTrsm = 64, kBatchedJacobi = 32;

struct Handles {
  SolverHandle solver = nullptr;
  BlasHandle blas = nullptr;
  JacobiParams syevj = nullptr, gesvdj = nullptr;
  void* params = nullptr;  // cusolverDnParams_t of the 64-bit API (Xgeev)
};

// A device buffer released when it goes out of scope (the free is ordered on the stream).
class DeviceBuffer {
 public:
  DeviceBuffer(CudaDevice& dev, size_t bytes)
      : dev_(dev), ptr_(dev.allocator().allocate(std::max<size_t>(bytes, 16))) {}
  ~DeviceBuffer() { dev_.allocator().deallocate(ptr_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  template <class T>
  T* as() const {
    return static_cast<T*>(ptr_);
  }

 private:
  CudaDevice& dev_;
  void* ptr_;
};

// An operand's first element: a complex operand's ref is its real view, whose offset counts
// reals (LinalgCall::complex).
template <class T>
T* ptr(const TensorRef& r) {
  return reinterpret_cast<T*>(static_cast<real_of<T>*>(r.base) + r.offset);
}

int ld(int64_t rows) { return int(std::max<int64_t>(rows, 1)); }

// A [batch, cols, rows] view of column-major matrices of T at `base`: column j of matrix b
// starts at b * batch_stride + j * col_stride (in elements of T). Complex T is seen as
// its real pairs, [batch, cols, rows, 2], which the backend's copy moves like any reals.
template <class T>
TensorRef matrices(T* base, int64_t batch, int64_t cols, int64_t rows, int64_t batch_stride,
                   int64_t col_stride, int64_t row_stride = 1) {
  using R = real_of<T>;
  constexpr int64_t w = sizeof(T) / sizeof(R);
  TensorRef r;
  r.base = base;
  r.dtype = std::is_same_v<R, double> ? DType::F64 : DType::F32;
  r.shape = Shape{batch, cols, rows};
  r.strides = Strides{batch_stride * w, col_stride * w, row_stride * w};
  if (w == 2) {
    r.shape.push_back(2);
    r.strides.push_back(1);
  }
  return r;
}

class Runner {
 public:
  Runner(CudaDevice& dev, Handles& h) : dev_(dev), h_(h), be_(backend_for(dev.device())) {}

  template <class T>
  void run(const LinalgCall& c) {
    const SolverFns<T>& f = solver_libs().fns<T>();
    switch (c.kernel) {
      case LinalgKernel::cholesky: return cholesky<T>(f, c);
      case LinalgKernel::lu_factor: return lu_factor<T>(f, c);
      case LinalgKernel::lu_solve: return lu_solve<T>(f, c);
      case LinalgKernel::triangular_solve: return triangular_solve<T>(f, c);
      case LinalgKernel::qr: return qr<T>(f, c);
      case LinalgKernel::eigh: return eigh<T>(f, c);
      case LinalgKernel::svd: return svd<T>(f, c);
      case LinalgKernel::eig: return eig<real_of<T>>(c);
    }
  }

 private:
  // The addresses base + i * stride, i < batch, for the batched routines: written on the
  // device as an I64 sequence (exact: addresses are below 2^53), so no host round trip.
  template <class T>
  std::unique_ptr<DeviceBuffer> pointers(T* base, int64_t stride, int64_t batch) {
    auto buf = std::make_unique<DeviceBuffer>(dev_, size_t(batch) * sizeof(T*));
    SequenceCall seq;
    seq.out.base = buf->template as<void>();
    seq.out.dtype = DType::I64;
    seq.out.shape = Shape{batch};
    seq.out.strides = Strides{1};
    seq.start = double(reinterpret_cast<uintptr_t>(base));
    seq.step = double(stride) * double(sizeof(T));
    seq.end = seq.start + seq.step * double(batch);
    be_.sequence(seq);
    return buf;
  }

  void copy(const TensorRef& src, const TensorRef& dst) { be_.copy(CopyCall{src, dst}); }

  template <class T>
  void cholesky(const SolverFns<T>& f, const LinalgCall& c) {
    const int n = int(c.n), lda = ld(c.n);
    const int uplo = c.upper ? kFillUpper : kFillLower;
    T* a = ptr<T>(c.a);
    int* info = ptr<int>(c.info);
    if (c.batch > 1 && !c.upper) {
      auto arr = pointers(a, c.n * c.n, c.batch);
      check_solver(
          f.potrf_batched(h_.solver, uplo, n, arr->template as<T*>(), lda, info, int(c.batch)),
          "cusolverDnXpotrfBatched");
      return;
    }
    int lwork = 0;
    check_solver(f.potrf_buffer(h_.solver, uplo, n, a, lda, &lwork), "cusolverDnXpotrf_bufferSize");
    DeviceBuffer work(dev_, sizeof(T) * size_t(std::max(lwork, 1)));
    for (int64_t i = 0; i < c.batch; ++i)
      check_solver(
          f.potrf(h_.solver, uplo, n, a + i * c.n * c.n, lda, work.as<T>(), lwork, info + i),
          "cusolverDnXpotrf");
  }

  template <class T>
  void lu_factor(const SolverFns<T>& f, const LinalgCall& c) {
    const int m = int(c.m), n = int(c.n), lda = ld(c.m);
    const int64_t k = std::min(c.m, c.n);
    T* a = ptr<T>(c.a);
    int *piv = ptr<int>(c.pivots), *info = ptr<int>(c.info);
    if (c.m == c.n && c.batch > 1 && c.n <= kBatchedLu) {
      auto arr = pointers(a, c.n * c.n, c.batch);
      check_blas(f.getrf_batched(h_.blas, n, arr->template as<T*>(), lda, piv, info, int(c.batch)),
                 "cublasXgetrfBatched");
    } else {
      int lwork = 0;
      check_solver(f.getrf_buffer(h_.solver, m, n, a, lda, &lwork), "cusolverDnXgetrf_bufferSize");
      DeviceBuffer work(dev_, sizeof(T) * size_t(std::max(lwork, 1)));
      for (int64_t i = 0; i < c.batch; ++i)
        check_solver(
            f.getrf(h_.solver, m, n, a + i * c.m * c.n, lda, work.as<T>(), piv + i * k, info + i),
            "cusolverDnXgetrf");
    }
    if (!c.with_perm) return;
    // The row order is a sequential product of the swaps: computed on the host.
    std::vector<int> hp(size_t(c.batch * k));
    be_.copy_to_host(hp.data(), piv, 0, hp.size() * sizeof(int));
    std::vector<int64_t> perm(size_t(c.batch * c.m));
    for (int64_t i = 0; i < c.batch; ++i) {
      int64_t* p = perm.data() + i * c.m;
      for (int64_t r = 0; r < c.m; ++r) p[r] = r;
      for (int64_t r = 0; r < k; ++r) std::swap(p[r], p[hp[size_t(i * k + r)] - 1]);
    }
    be_.copy_from_host(c.perm.base, size_t(c.perm.offset) * sizeof(int64_t), perm.data(),
                       perm.size() * sizeof(int64_t));
  }

  template <class T>
  void lu_solve(const SolverFns<T>& f, const LinalgCall& c) {
    const int n = int(c.n), k = int(c.k), lda = ld(c.n);
    T* a = ptr<T>(c.a);
    T* b = ptr<T>(c.b);
    const int* piv = ptr<int>(c.pivots);
    if (c.n == 0 || c.k == 0) return;
    if (c.batch > 1 && c.n <= kBatchedLu) {
      auto aa = pointers(a, c.n * c.n, c.batch);
      auto ba = pointers(b, c.n * c.k, c.batch);
      int host_info = 0;
      check_blas(f.getrs_batched(h_.blas, kOpN, n, k, aa->template as<const T*>(), lda, piv,
                                 ba->template as<T*>(), lda, &host_info, int(c.batch)),
                 "cublasXgetrsBatched");
      return;
    }
    DeviceBuffer info(dev_, sizeof(int));
    for (int64_t i = 0; i < c.batch; ++i)
      check_solver(f.getrs(h_.solver, kOpN, n, k, a + i * c.n * c.n, lda, piv + i * c.n,
                           b + i * c.n * c.k, lda, info.as<int>()),
                   "cusolverDnXgetrs");
  }

  template <class T>
  void triangular_solve(const SolverFns<T>& f, const LinalgCall& c) {
    const int rows = int(c.left ? c.n : c.k), cols = int(c.left ? c.k : c.n);
    const int lda = ld(c.n), ldb = ld(rows);
    if (rows == 0 || cols == 0) return;
    T* a = ptr<T>(c.a);
    T* b = ptr<T>(c.b);
    const int side = c.left ? kSideLeft : kSideRight, uplo = c.upper ? kFillUpper : kFillLower;
    const int diag = c.unitriangular ? kDiagUnit : kDiagNonUnit;
    const T one = T(1);
    if (c.batch > 1 && c.n <= kBatchedTrsm) {
      auto aa = pointers(a, c.n * c.n, c.batch);
      auto ba = pointers(b, c.n * c.k, c.batch);
      check_blas(f.trsm_batched(h_.blas, side, uplo, kOpN, diag, rows, cols, &one,
                                aa->template as<const T*>(), lda, ba->template as<T*>(), ldb,
                                int(c.batch)),
                 "cublasXtrsmBatched");
      return;
    }
    for (int64_t i = 0; i < c.batch; ++i)
      check_blas(f.trsm(h_.blas, side, uplo, kOpN, diag, rows, cols, &one, a + i * c.n * c.n, lda,
                        b + i * c.n * c.k, ldb),
                 "cublasXtrsm");
  }

  // Factors a copy of each matrix [m, max(q_cols, n)] wide, so orgqr can build a complete Q
  // wider than A in place. R's entries below the diagonal are left unspecified (LinalgCall).
  template <class T>
  void qr(const SolverFns<T>& f, const LinalgCall& c) {
    const int m = int(c.m), n = int(c.n), k = int(std::min(c.m, c.n)), lda = ld(c.m);
    const int q_cols = c.complete ? m : k, r_rows = q_cols;
    const int qa_cols = std::max(q_cols, n);
    const int64_t stride = c.m * qa_cols;
    DeviceBuffer buf(dev_, sizeof(T) * size_t(c.batch * stride));
    DeviceBuffer tau(dev_, sizeof(T) * size_t(c.batch * std::max(k, 1)));
    DeviceBuffer info(dev_, sizeof(int));
    copy(matrices(ptr<T>(c.a), c.batch, c.n, c.m, c.m * c.n, c.m),
         matrices(buf.as<T>(), c.batch, c.n, c.m, stride, c.m));
    int lwork = 0, lwork_q = 0;
    check_solver(f.geqrf_buffer(h_.solver, m, n, buf.as<T>(), lda, &lwork),
                 "cusolverDnXgeqrf_bufferSize");
    if (c.with_q && q_cols > 0)
      check_solver(f.orgqr_buffer(h_.solver, m, q_cols, k, buf.as<T>(), lda, tau.as<T>(), &lwork_q),
                   "cusolverDnXorgqr_bufferSize");
    DeviceBuffer work(dev_, sizeof(T) * size_t(std::max({lwork, lwork_q, 1})));
    const int lw = std::max({lwork, lwork_q, 1});
    if (c.batch > 1 && c.m >= c.n && c.n <= kBatchedLu) {
      auto aa = pointers(buf.as<T>(), stride, c.batch);
      auto ta = pointers(tau.as<T>(), k, c.batch);
      int host_info = 0;
      check_blas(f.geqrf_batched(h_.blas, m, n, aa->template as<T*>(), lda, ta->template as<T*>(),
                                 &host_info, int(c.batch)),
                 "cublasXgeqrfBatched");
    } else {
      for (int64_t i = 0; i < c.batch; ++i)
        check_solver(f.geqrf(h_.solver, m, n, buf.as<T>() + i * stride, lda, tau.as<T>() + i * k,
                             work.as<T>(), lw, info.as<int>()),
                     "cusolverDnXgeqrf");
    }
    copy(matrices(buf.as<T>(), c.batch, c.n, r_rows, stride, c.m),
         matrices(ptr<T>(c.r), c.batch, c.n, r_rows, c.n * r_rows, r_rows));
    if (!c.with_q || q_cols == 0) return;
    for (int64_t i = 0; i < c.batch; ++i)
      check_solver(f.orgqr(h_.solver, m, q_cols, k, buf.as<T>() + i * stride, lda,
                           tau.as<T>() + i * k, work.as<T>(), lw, info.as<int>()),
                   "cusolverDnXorgqr");
    copy(matrices(buf.as<T>(), c.batch, q_cols, c.m, stride, c.m),
         matrices(ptr<T>(c.q), c.batch, q_cols, c.m, c.m * q_cols, c.m));
  }

  template <class T>
  void eigh(const SolverFns<T>& f, const LinalgCall& c) {
    const int n = int(c.n), lda = ld(c.n);
    const int jobz = c.with_vectors ? kEigVector : kEigNoVector;
    const int uplo = c.upper ? kFillUpper : kFillLower;
    T* a = ptr<T>(c.a);
    real_of<T>* w = ptr<real_of<T>>(c.w);
    int* info = ptr<int>(c.info);
    int lwork = 0;
    if (c.batch > 1 && c.n <= kBatchedJacobi) {
      check_solver(f.syevj_batched_buffer(h_.solver, jobz, uplo, n, a, lda, w, &lwork, h_.syevj,
                                          int(c.batch)),
                   "cusolverDnXsyevjBatched_bufferSize");
      DeviceBuffer work(dev_, sizeof(T) * size_t(std::max(lwork, 1)));
      check_solver(f.syevj_batched(h_.solver, jobz, uplo, n, a, lda, w, work.as<T>(), lwork, info,
                                   h_.syevj, int(c.batch)),
                   "cusolverDnXsyevjBatched");
      return;
    }
    check_solver(f.syevd_buffer(h_.solver, jobz, uplo, n, a, lda, w, &lwork),
                 "cusolverDnXsyevd_bufferSize");
    DeviceBuffer work(dev_, sizeof(T) * size_t(std::max(lwork, 1)));
    for (int64_t i = 0; i < c.batch; ++i)
      check_solver(f.syevd(h_.solver, jobz, uplo, n, a + i * c.n * c.n, lda, w + i * c.n,
                           work.as<T>(), lwork, info + i),
                   "cusolverDnXsyevd");
  }

  // Jacobi SVD (gesvdj) returns V, which is transposed into vt by one strided copy.
  template <class T>
  void svd(const SolverFns<T>& f, const LinalgCall& c) {
    const int m = int(c.m), n = int(c.n), k = int(std::min(c.m, c.n)), lda = ld(c.m);
    const int jobz = c.with_vectors ? kEigVector : kEigNoVector;
    const int u_cols = c.complete ? m : k, vt_rows = c.complete ? n : k;
    T* a = ptr<T>(c.a);
    real_of<T>* s = ptr<real_of<T>>(c.w);
    int* info = ptr<int>(c.info);
    const bool batched = c.batch > 1 && c.m <= kBatchedJacobi && c.n <= kBatchedJacobi;
    // The batched routine always makes full U [m, m] and V [n, n]; the single one makes
    // U [m, u_cols] and V [n, vt_rows].
    const int64_t uc = batched ? c.m : u_cols, vc = batched ? c.n : vt_rows;
    const bool u_direct = uc == u_cols;
    std::unique_ptr<DeviceBuffer> u_buf, v_buf;
    T* u = nullptr;
    T* v = nullptr;
    // U and V are passed even when only S is asked for: gesvdj reads them regardless.
    if (c.with_vectors && u_direct) {
      u = ptr<T>(c.u);
    } else {
      u_buf = std::make_unique<DeviceBuffer>(dev_, sizeof(T) * size_t(c.batch * c.m * uc));
      u = u_buf->as<T>();
    }
    v_buf = std::make_unique<DeviceBuffer>(dev_, sizeof(T) * size_t(c.batch * c.n * vc));
    v = v_buf->as<T>();
    const int ldu = ld(c.m), ldv = ld(c.n);
    int lwork = 0;
    if (batched) {
      check_solver(f.gesvdj_batched_buffer(h_.solver, jobz, m, n, a, lda, s, u, ldu, v, ldv, &lwork,
                                           h_.gesvdj, int(c.batch)),
                   "cusolverDnXgesvdjBatched_bufferSize");
      DeviceBuffer work(dev_, sizeof(T) * size_t(std::max(lwork, 1)));
      check_solver(f.gesvdj_batched(h_.solver, jobz, m, n, a, lda, s, u, ldu, v, ldv, work.as<T>(),
                                    lwork, info, h_.gesvdj, int(c.batch)),
                   "cusolverDnXgesvdjBatched");
    } else {
      const int econ = c.complete ? 0 : 1;
      check_solver(f.gesvdj_buffer(h_.solver, jobz, econ, m, n, a, lda, s, u, ldu, v, ldv, &lwork,
                                   h_.gesvdj),
                   "cusolverDnXgesvdj_bufferSize");
      DeviceBuffer work(dev_, sizeof(T) * size_t(std::max(lwork, 1)));
      for (int64_t i = 0; i < c.batch; ++i)
        check_solver(f.gesvdj(h_.solver, jobz, econ, m, n, a + i * c.m * c.n, lda, s + i * k,
                              u + i * c.m * uc, ldu, v + i * c.n * vc, ldv, work.as<T>(), lwork,
                              info + i, h_.gesvdj),
                     "cusolverDnXgesvdj");
    }
    if (!c.with_vectors) return;
    if (!u_direct)  // the first u_cols columns of each full U
      copy(matrices(u, c.batch, u_cols, c.m, c.m * uc, c.m),
           matrices(ptr<T>(c.u), c.batch, u_cols, c.m, c.m * u_cols, c.m));
    // vt[r, j] = v[j, r] (conjugated when complex): walk vt as [batch, j < n, r < vt_rows].
    const TensorRef v_t = matrices(v, c.batch, c.n, vt_rows, c.n * vc, 1, c.n);
    const TensorRef vt = matrices(ptr<T>(c.vt), c.batch, c.n, vt_rows, vt_rows * c.n, vt_rows);
    if constexpr (std::is_same_v<T, real_of<T>>) {
      copy(v_t, vt);
    } else {
      // (re, im) * (1, -1): an elementwise product with a broadcast pair.
      using R = real_of<T>;
      const R signs[2] = {R(1), R(-1)};
      DeviceBuffer sign(dev_, sizeof(signs));
      be_.copy_from_host(sign.as<void>(), 0, signs, sizeof(signs));
      ElementwiseCall e;
      e.op = OpId::mul;
      e.out = vt;
      e.n_in = 2;
      e.in[0] = v_t;
      e.in[1] = vt;
      e.in[1].base = sign.as<void>();
      e.in[1].strides = Strides{0, 0, 0, 1};
      be_.elementwise(e);
    }
  }

  // The general eigenproblem through cusolverDnXgeev, always in complex arithmetic: a real
  // matrix is first widened to complex (zero imaginary parts), so eigenvalues and
  // eigenvectors come out complex as the contract asks.
  template <class R>
  void eig(const LinalgCall& c) {
    using C = std::complex<R>;
    const SolverLibs& l = solver_libs();
    if (!l.geev)
      fail<BackendLimitation>(current_op("linalg.eig"),
                              "this cuSOLVER has no cusolverDnXgeev (CUDA 12.6 or later has it)");
    const int64_t n = c.n, nn = n * n;
    std::unique_ptr<DeviceBuffer> a_buf, vr_buf;
    C* a = nullptr;
    if (c.complex) {
      a = ptr<C>(c.a);
    } else {
      a_buf = std::make_unique<DeviceBuffer>(dev_, sizeof(C) * size_t(c.batch * nn));
      a = a_buf->as<C>();
      TensorRef re = matrices(a, c.batch, n, n, nn, n), im = re;
      re.shape.back() = 1;
      im.shape.back() = 1;
      im.offset = 1;
      TensorRef src = matrices(ptr<R>(c.a), c.batch, n, n, nn, n);
      src.shape.push_back(1);
      src.strides.push_back(1);
      copy(src, re);
      FillCall zero;
      zero.dst = im;
      be_.fill(zero);
    }
    C* w = ptr<C>(c.w);
    C* vr = nullptr;
    if (c.with_vectors) {
      vr = ptr<C>(c.u);
    } else {  // not written, but the routine wants an array
      vr_buf = std::make_unique<DeviceBuffer>(dev_, sizeof(C) * size_t(nn));
      vr = vr_buf->as<C>();
    }
    const int jobvr = c.with_vectors ? kEigVector : kEigNoVector;
    const int t = sizeof(R) == 8 ? kCudaC64F : kCudaC32F;
    const int64_t lda = ld(n);
    size_t dev_bytes = 0, host_bytes = 0;
    check_solver(l.geev_buffer(h_.solver, h_.params, kEigNoVector, jobvr, n, t, a, lda, t, w, t, vr,
                               lda, t, vr, lda, t, &dev_bytes, &host_bytes),
                 "cusolverDnXgeev_bufferSize");
    DeviceBuffer work(dev_, dev_bytes);
    std::vector<char> host(std::max<size_t>(host_bytes, 1));
    int* info = ptr<int>(c.info);
    for (int64_t i = 0; i < c.batch; ++i) {
      C* vri = c.with_vectors ? vr + i * nn : vr;
      check_solver(l.geev(h_.solver, h_.params, kEigNoVector, jobvr, n, t, a + i * nn, lda, t,
                          w + i * n, t, vri, lda, t, vri, lda, t, work.as<void>(), dev_bytes,
                          host.data(), host_bytes, info + i),
                   "cusolverDnXgeev");
    }
  }

  CudaDevice& dev_;
  Handles& h_;
  Backend& be_;
};

class CudaLinalg final : public LinalgKernels {
 public:
  bool supports(LinalgKernel k, DType t) const override {
    if (t != DType::F32 && t != DType::F64 && t != DType::Complex64 && t != DType::Complex128)
      return false;
    // Without the libraries run() says why; without Xgeev, eig is missing.
    const SolverLibs* l = try_solver_libs();
    return k != LinalgKernel::eig || !l || l->geev;
  }

  void run(const LinalgCall& c) override {
    if (c.m > INT_MAX || c.n > INT_MAX || c.k > INT_MAX || c.batch > INT_MAX)
      fail<BackendLimitation>(current_op("linalg"), "dims beyond cuSOLVER's 32-bit range: m ", c.m,
                              ", n ", c.n, ", k ", c.k, ", batch ", c.batch);
    if (c.batch == 0) return;
    CudaDevice& dev = cuda_device(c.device.index);
    dev.make_current();
    std::lock_guard<std::mutex> lock(mu_);
    Runner r(dev, handles(dev));
    const bool dbl = c.dtype == DType::F64;
    if (c.complex && c.kernel != LinalgKernel::eig)
      dbl ? r.run<std::complex<double>>(c) : r.run<std::complex<float>>(c);
    else
      dbl ? r.run<double>(c) : r.run<float>(c);
  }

 private:
  Handles& handles(CudaDevice& dev) {
    auto it = handles_.find(dev.index());
    if (it != handles_.end()) return it->second;
    const SolverLibs& l = solver_libs();
    Handles h;
    check_solver(l.create(&h.solver), "cusolverDnCreate");
    check_solver(l.set_stream(h.solver, dev.stream()), "cusolverDnSetStream");
    check_blas(l.blas_create(&h.blas), "cublasCreate");
    check_blas(l.blas_set_stream(h.blas, dev.stream()), "cublasSetStream");
    check_solver(l.create_syevj_info(&h.syevj), "cusolverDnCreateSyevjInfo");
    check_solver(l.create_gesvdj_info(&h.gesvdj), "cusolverDnCreateGesvdjInfo");
    if (l.create_params) check_solver(l.create_params(&h.params), "cusolverDnCreateParams");
    return handles_.emplace(dev.index(), h).first->second;
  }

  std::mutex mu_;
  std::map<int, Handles> handles_;  // kept for the process's lifetime, like the libraries
};

}  // namespace

LinalgKernels& cuda_linalg_kernels() {
  static CudaLinalg* k = new CudaLinalg;  // never destroyed: handles outlive static teardown
  return *k;
}

}  // namespace numr
