// Batched GEMM on the CPU. BF16 and F32 products go to oneDNN's matmul primitive
// (onednn_matmul.h), F16 too after widening to f32; F64 and products too small to repay
// oneDNN's per-call cost go to OpenBLAS. For the BLAS, a matrix whose last two dims are
// row- or column-major goes to sgemm/dgemm in place (NoTrans/Trans with its leading
// dimension); any other layout is packed first. F16/BF16 are widened to f32, multiplied by
// sgemm and narrowed back, as the dtype rules ask (half types compute in f32).
#include "backends/cpu/matmul.h"

#include <cblas.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <mutex>
#include <vector>

#include "backends/cpu/gemm_support.h"
#include "backends/cpu/kernels/kernels.h"
#include "backends/cpu/onednn_matmul.h"
#include "core/thread_pool.h"
#include "numr/error.h"

namespace numr::cpu {
namespace {

// OpenBLAS runs a GEMM on a single thread when M*N*K is at most this
// (SMP_THRESHOLD_MIN * GEMM_MULTITHREAD_THRESHOLD in its sources); batches of such small
// products are spread over numr's pool instead, one product per task.
constexpr double kBlasSingleThreadMnk = 65536.0 * 4.0;

// The BLAS threads follow numr::set_num_threads, so both pools never oversubscribe the
// cores together. Registered on first use rather than at load time, so loading the
// library starts no threads.
void follow_pool_threads() {
  static std::once_flag once;
  std::call_once(once, [] {
    ThreadPool::instance().set_resize_hook([](int n) { openblas_set_num_threads(n); });
  });
}

// How a [rows, cols] matrix with element strides (rs, cs) can be handed to a row-major
// BLAS call without copying.
struct Layout {
  bool direct = false;  // usable in place
  bool trans = false;   // stored as a row-major [cols, rows] matrix
  int64_t ld = 0;
};

Layout blas_layout(int64_t rows, int64_t cols, int64_t rs, int64_t cs) {
  // A stride along a dim of length 1 is never followed, so it constrains nothing.
  Layout l;
  if ((cs == 1 || cols == 1) && (rows == 1 || rs >= std::max<int64_t>(cols, 1)))
    l = {true, false, rows == 1 ? std::max<int64_t>(cols, 1) : rs};
  else if ((rs == 1 || rows == 1) && (cols == 1 || cs >= std::max<int64_t>(rows, 1)))
    l = {true, true, cols == 1 ? std::max<int64_t>(rows, 1) : cs};
  if (l.ld > INT_MAX) l = {};
  return l;
}

// One operand across the batch: the matrix shape and strides, and where each batch
// item's matrix starts.
struct Operand {
  const TensorRef* ref = nullptr;
  int64_t rows = 0, cols = 0, rs = 0, cs = 0;
  Layout layout;
  std::vector<int64_t> offsets;  // in elements, relative to ref->offset
  bool shared = true;            // every batch item reads the same matrix
};

Operand make_operand(const TensorRef& r, int64_t n_batch) {
  Operand op;
  op.ref = &r;
  const size_t nd = r.shape.size();
  op.rows = r.shape[nd - 2];
  op.cols = r.shape[nd - 1];
  op.rs = r.strides[nd - 2];
  op.cs = r.strides[nd - 1];
  op.layout = blas_layout(op.rows, op.cols, op.rs, op.cs);
  op.offsets.resize(size_t(n_batch));
  std::vector<int64_t> idx(nd - 2, 0);
  int64_t off = 0;
  for (int64_t i = 0; i < n_batch; ++i) {
    op.offsets[size_t(i)] = off;
    if (off != 0) op.shared = false;
    for (int64_t d = int64_t(nd) - 3; d >= 0; --d) {  // odometer over the batch dims
      off += r.strides[size_t(d)];
      if (++idx[size_t(d)] < r.shape[size_t(d)]) break;
      off -= r.strides[size_t(d)] * r.shape[size_t(d)];
      idx[size_t(d)] = 0;
    }
  }
  return op;
}

// A matrix ready for the BLAS: data in the compute dtype and its orientation.
struct Mat {
  const void* data = nullptr;
  bool trans = false;
  int ld = 1;
};

const char* element_ptr(const TensorRef& r, int64_t offset) {
  return static_cast<const char*>(r.base) + (r.offset + offset) * int64_t(dtype_size(r.dtype));
}

using Scratch = ScratchBuffer;

struct ThreadScratch {
  Scratch a, b, c;  // left operand, right operand, f32 result
  void trim() {
    a.trim();
    b.trim();
    c.trim();
  }
};
ThreadScratch& thread_scratch() {
  thread_local ThreadScratch s;
  return s;
}

// Copies `src` (any strides, any float dtype) into a contiguous buffer of dtype ct.
void* pack(const TensorRef& src, DType ct, Scratch& scratch) {
  TensorRef dst;
  dst.base = scratch.get(size_t(src.numel()) * dtype_size(ct));
  dst.dtype = ct;
  dst.shape = src.shape;
  dst.strides = contiguous_strides(src.shape);
  kernels().copy(CopyCall{src, dst});
  return dst.base;
}

Mat prepare(const Operand& op, int64_t offset, DType ct, Scratch& scratch) {
  const TensorRef& r = *op.ref;
  if (r.dtype == ct && op.layout.direct)
    return {element_ptr(r, offset), op.layout.trans, int(op.layout.ld)};
  // Keep the orientation whose rows have the smaller stride, so the copy reads along
  // memory (unit stride for a column-major half-precision operand).
  const bool trans = op.layout.direct ? op.layout.trans : std::abs(op.rs) < std::abs(op.cs);
  TensorRef src;
  src.base = r.base;
  src.offset = r.offset + offset;
  src.dtype = r.dtype;
  if (trans) {
    src.shape = {op.cols, op.rows};
    src.strides = {op.cs, op.rs};
  } else {
    src.shape = {op.rows, op.cols};
    src.strides = {op.rs, op.cs};
  }
  return {pack(src, ct, scratch), trans, int(std::max<int64_t>(1, trans ? op.rows : op.cols))};
}

void gemm(DType ct, const Mat& a, const Mat& b, int64_t m, int64_t n, int64_t k, void* c,
          int64_t ldc) {
  const CBLAS_TRANSPOSE ta = a.trans ? CblasTrans : CblasNoTrans;
  const CBLAS_TRANSPOSE tb = b.trans ? CblasTrans : CblasNoTrans;
  if (ct == DType::F64)
    cblas_dgemm(CblasRowMajor, ta, tb, int(m), int(n), int(k), 1.0,
                static_cast<const double*>(a.data), a.ld, static_cast<const double*>(b.data),
                b.ld, 0.0, static_cast<double*>(c), int(ldc));
  else
    cblas_sgemm(CblasRowMajor, ta, tb, int(m), int(n), int(k), 1.0f,
                static_cast<const float*>(a.data), a.ld, static_cast<const float*>(b.data),
                b.ld, 0.0f, static_cast<float*>(c), int(ldc));
}

// Products below kOnednnMinMacs multiply-adds (all batch items together) go to the BLAS:
// there oneDNN's fixed cost per call outweighs its faster kernels.
bool use_onednn(DType dt, int64_t n_batch, int64_t m, int64_t n, int64_t k) {
  if (dt == DType::F64) return false;  // oneDNN has no f64 matmul
  return double(n_batch) * double(m) * double(n) * double(k) >= kOnednnMinMacs;
}

// oneDNN's f16 matmul needs AVX512-FP16, which the CPUs this targets lack, so F16 is
// widened to f32 (each distinct matrix once; broadcast batch dims stay broadcast),
// multiplied by oneDNN's f32 kernel and narrowed back.
bool onednn_widened(const MatmulCall& call, ThreadScratch& scratch) {
  const size_t nd = call.out.shape.size();
  auto widen = [nd](const TensorRef& r, Scratch& buffer) {
    TensorRef src = r;
    for (size_t d = 0; d + 2 < nd; ++d)
      if (src.strides[d] == 0) src.shape[d] = 1;
    TensorRef dst;
    dst.dtype = DType::F32;
    dst.shape = src.shape;
    dst.strides = contiguous_strides(src.shape);
    dst.base = buffer.get(size_t(shape_numel(src.shape)) * sizeof(float));
    kernels().copy(CopyCall{src, dst});
    dst.shape = r.shape;
    for (size_t d = 0; d + 2 < nd; ++d)
      if (r.strides[d] == 0) dst.strides[d] = 0;
    return dst;
  };
  MatmulCall wide;
  wide.a = widen(call.a, scratch.a);
  wide.b = widen(call.b, scratch.b);
  wide.out.dtype = DType::F32;
  wide.out.shape = call.out.shape;
  wide.out.strides = contiguous_strides(call.out.shape);
  wide.out.base = scratch.c.get(size_t(call.out.numel()) * sizeof(float));
  if (!onednn_matmul(wide)) return false;
  const TensorRef& out = call.out;
  kernels().from_f32(static_cast<const float*>(wide.out.base),
                     static_cast<char*>(out.base) + out.offset * int64_t(dtype_size(out.dtype)),
                     out.dtype, out.numel());
  return true;
}

}  // namespace

void matmul(const MatmulCall& call) {
  const TensorRef& out = call.out;
  const size_t nd = out.shape.size();
  const int64_t m = out.shape[nd - 2], n = out.shape[nd - 1], k = call.a.shape[nd - 1];
  if (out.numel() == 0) return;
  if (k == 0) {
    kernels().fill(FillCall{out, 0.0});
    return;
  }
  {
    const int64_t n_batch = out.numel() / (m * n);
    ThreadScratch& scratch = thread_scratch();
    if (use_onednn(out.dtype, n_batch, m, n, k)) {
      const bool done = out.dtype == DType::F16 ? onednn_widened(call, scratch)
                                                : onednn_matmul(call);
      scratch.trim();
      if (done) return;
    }
  }
  if (m > INT_MAX || n > INT_MAX || k > INT_MAX)
    fail<BackendLimitation>("matmul", "dims beyond the BLAS's 32-bit range: [", m, ", ", k,
                            "] @ [", k, ", ", n, "]");
  follow_pool_threads();
  ThreadPool::instance().park();  // the BLAS's threads take the cores from here

  const DType dt = out.dtype;
  const DType ct = dt == DType::F64 ? DType::F64 : DType::F32;
  const int64_t n_batch = out.numel() / (m * n);
  Operand a = make_operand(call.a, n_batch);
  Operand b = make_operand(call.b, n_batch);

  // Half-precision results are computed into an f32 buffer and narrowed at the end.
  ThreadScratch& scratch = thread_scratch();
  void* c_base = dt == ct ? static_cast<char*>(out.base) + out.offset * int64_t(dtype_size(dt))
                          : scratch.c.get(size_t(out.numel()) * sizeof(float));
  const int64_t c_item = m * n * int64_t(dtype_size(ct));  // bytes per batch item

  if (n_batch > 1 && b.shared && n_batch * m <= INT_MAX) {
    // One right-hand matrix for every item: stack the items' rows into one tall GEMM,
    // which the BLAS runs far better than many short ones.
    Mat ma;
    const int64_t row_step = m * a.layout.ld;
    bool stacked = a.ref->dtype == ct && a.layout.direct && !a.layout.trans;
    for (int64_t i = 1; stacked && i < n_batch; ++i)
      stacked = a.offsets[size_t(i)] == a.offsets[0] + i * row_step;
    if (stacked) {
      ma = {element_ptr(*a.ref, a.offsets[0]), false, int(a.layout.ld)};
    } else {
      ma = {pack(*a.ref, ct, scratch.a), false, int(k)};
    }
    const Mat mb = prepare(b, b.offsets[0], ct, scratch.b);
    gemm(ct, ma, mb, n_batch * m, n, k, c_base, n);
  } else {
    auto run_items = [&](int64_t first, int64_t last) {
      ThreadScratch& ts = thread_scratch();
      Mat ma, mb;
      for (int64_t i = first; i < last; ++i) {
        // A matrix shared by every item is prepared once per task.
        if (i == first || !a.shared) ma = prepare(a, a.offsets[size_t(i)], ct, ts.a);
        if (i == first || !b.shared) mb = prepare(b, b.offsets[size_t(i)], ct, ts.b);
        gemm(ct, ma, mb, m, n, k, static_cast<char*>(c_base) + i * c_item, n);
      }
      ts.a.trim();  // not c: on the calling thread it holds the result
      ts.b.trim();
    };
    // Small products run single-threaded inside the BLAS, so the pool takes the batch;
    // large ones run one after another, each on all the BLAS threads.
    if (n_batch > 1 && double(m) * double(n) * double(k) <= kBlasSingleThreadMnk)
      ThreadPool::instance().parallel_for(n_batch, 1,
                                          [&](int64_t f, int64_t l) { run_items(f, l); });
    else
      run_items(0, n_batch);
  }

  if (dt != ct)
    kernels().from_f32(static_cast<const float*>(c_base),
                       static_cast<char*>(out.base) + out.offset * int64_t(dtype_size(dt)), dt,
                       out.numel());
  scratch.trim();
}

}  // namespace numr::cpu
