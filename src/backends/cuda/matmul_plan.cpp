#include "backends/cuda/matmul_plan.h"

#include <algorithm>
#include <atomic>

#include "backends/cuda/allocator.h"
#include "backends/cuda/context.h"
#include "backends/cuda/cublaslt_matmul.h"
#include "backends/cuda/driver.h"
#include "backends/cuda/ops.h"
#include "numr/device.h"
#include "numr/error.h"

namespace numr::cuda {
namespace {

std::atomic<uint64_t> g_operand_copies{0};

// Row-major dense (dims of extent 1 ignored): the layout a plain byte copy preserves.
bool is_dense(const TensorRef& t) {
  int64_t expected = 1;
  for (size_t i = t.shape.size(); i-- > 0;) {
    if (t.shape[i] == 1) continue;
    if (t.strides[i] != expected) return false;
    expected *= t.shape[i];
  }
  return true;
}

}  // namespace

DeviceTemp::DeviceTemp(CudaDevice& dev, size_t bytes)
    : dev_(dev), ptr_(dev.allocator().allocate(std::max<size_t>(bytes, 1))) {}

DeviceTemp::~DeviceTemp() { dev_.allocator().deallocate(ptr_); }

MatrixLayout lt_matrix_layout(int64_t rows, int64_t cols, int64_t rs, int64_t cs) {
  // A stride along a dim of extent 1 is never followed: give it a dense matrix's value.
  if (cols == 1) cs = 1;
  if (rows == 1) rs = cs == 1 ? cols : 1;
  if (cs == 1 && rs >= std::max<int64_t>(cols, 1)) return {true, false, rs};
  if (rs == 1 && cs >= std::max<int64_t>(rows, 1)) return {true, true, cs};
  return {};
}

uint64_t gemm_operand_copies() { return g_operand_copies.load(std::memory_order_relaxed); }

uint64_t operand_address(const void* base, int64_t offset, DType dt) {
  return uint64_t(reinterpret_cast<uintptr_t>(base)) + uint64_t(offset) * dtype_size(dt);
}

void copy_on_device(CudaDevice& dev, const TensorRef& src, const TensorRef& dst) {
  const int64_t n = src.numel();
  if (n == 0) return;
  if (src.dtype == dst.dtype && is_dense(src) && is_dense(dst)) {
    check(driver().memcpy_dtod_async(CUdeviceptr(operand_address(dst.base, dst.offset, dst.dtype)),
                                     CUdeviceptr(operand_address(src.base, src.offset, src.dtype)),
                                     size_t(n) * dtype_size(src.dtype), dev.stream()),
          "cuMemcpyDtoDAsync");
    return;
  }
  run_copy(dev, CopyCall{src, dst});
}

LtTypes lt_types(DType dt) {
  switch (dt) {
    case DType::F32:
      return {CUDA_R_32F, allow_tf32() ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F,
              CUDA_R_32F};
    case DType::F64: return {CUDA_R_64F, CUBLAS_COMPUTE_64F, CUDA_R_64F};
    case DType::F16: return {CUDA_R_16F, CUBLAS_COMPUTE_32F, CUDA_R_32F};
    case DType::BF16: return {CUDA_R_16BF, CUBLAS_COMPUTE_32F, CUDA_R_32F};
    default: break;
  }
  fail<UnsupportedDType>("matmul", "no CUDA matmul for ", dt, " (accepts F64 F32 F16 BF16)");
}

GemmPlan::GemmPlan(CudaDevice& dev, const TensorRef& ar, const TensorRef& br,
                   const Shape& batch_shape, bool copy_all) {
  const size_t nd = ar.shape.size();
  const size_t nb = batch_shape.size();
  m = ar.shape[nd - 2];
  k = ar.shape[nd - 1];
  n = br.shape[nd - 1];

  auto view_of = [&](const TensorRef& r) {
    const int64_t rows = r.shape[nd - 2], cols = r.shape[nd - 1];
    const MatrixLayout l = lt_matrix_layout(rows, cols, r.strides[nd - 2], r.strides[nd - 1]);
    bool direct = l.ok && !copy_all;
    for (size_t d = 0; d < nb && direct; ++d) direct = r.strides[d] >= 0 || r.shape[d] == 1;
    LtOperandView v;
    if (direct) {
      v.addr = operand_address(r.base, r.offset, r.dtype);
      v.col_major = l.col_major;
      v.ld = l.ld;
      v.batch_strides.assign(r.strides.begin(), r.strides.begin() + long(nb));
      for (size_t d = 0; d < nb; ++d)
        if (r.shape[d] == 1) v.batch_strides[d] = 0;
      return v;
    }
    // A dense row-major copy; a broadcast batch dim stays broadcast, so each distinct
    // matrix is copied once.
    TensorRef src = r;
    for (size_t d = 0; d < nb; ++d)
      if (r.strides[d] == 0) src.shape[d] = 1;
    TensorRef dst;
    dst.dtype = r.dtype;
    dst.shape = src.shape;
    dst.strides = contiguous_strides(src.shape);
    temps_.push_back(
        std::make_unique<DeviceTemp>(dev, size_t(shape_numel(src.shape)) * dtype_size(r.dtype)));
    dst.base = temps_.back()->get();
    copy_on_device(dev, src, dst);
    g_operand_copies.fetch_add(1, std::memory_order_relaxed);
    v.addr = operand_address(dst.base, 0, dst.dtype);
    v.col_major = false;
    v.ld = std::max<int64_t>(cols, 1);
    v.batch_strides.resize(nb);
    for (size_t d = 0; d < nb; ++d) v.batch_strides[d] = src.shape[d] == 1 ? 0 : dst.strides[d];
    return v;
  };
  a = view_of(ar);
  b = view_of(br);
  batch = plan_batch(batch_shape, a.batch_strides, b.batch_strides, m, n, a.col_major ? 0 : a.ld);
}

BatchPlan plan_batch(const Shape& batch, const std::vector<int64_t>& a_strides,
                     const std::vector<int64_t>& b_strides, int64_t m, int64_t n,
                     int64_t a_row_major_ld) {
  // The batch dims that matter (extent > 1), outermost first, with each operand's stride;
  // out (d) is contiguous.
  struct Dim {
    int64_t extent, a, b, d;
  };
  std::vector<Dim> dims;
  int64_t d_here = m * n;
  for (size_t i = batch.size(); i-- > 0;) {
    if (batch[i] != 1) dims.push_back({batch[i], a_strides[i], b_strides[i], d_here});
    d_here *= batch[i];
  }
  std::reverse(dims.begin(), dims.end());
  BatchPlan p;
  if (dims.empty()) return p;

  // Merge from the innermost dim outward while one stride per operand still describes the
  // items: the outer stride must be the inner one times the inner count.
  size_t first_inner = dims.size() - 1;
  p.inner_count = dims.back().extent;
  p.a_stride = dims.back().a;
  p.b_stride = dims.back().b;
  p.d_stride = dims.back().d;
  while (first_inner > 0) {
    const Dim& o = dims[first_inner - 1];
    if (o.a != p.a_stride * p.inner_count || o.b != p.b_stride * p.inner_count ||
        o.d != p.d_stride * p.inner_count)
      break;
    p.inner_count *= o.extent;
    --first_inner;
  }
  for (size_t i = 0; i < first_inner; ++i) {
    p.outer_extents.push_back(dims[i].extent);
    p.outer_a.push_back(dims[i].a);
    p.outer_b.push_back(dims[i].b);
    p.outer_d.push_back(dims[i].d);
  }

  // One b for every item and a stack of row-major a items: a single product with
  // inner_count * m rows, which runs far better than many short ones.
  p.rows_folded = p.outer_extents.empty() && p.inner_count > 1 && p.b_stride == 0 &&
                  a_row_major_ld > 0 && p.a_stride == m * a_row_major_ld;
  return p;
}

void BatchPlan::for_each_piece(const std::function<void(const GemmPiece&)>& f) const {
  if (rows_folded) {
    f(GemmPiece{0, 0, 0, 1});
    return;
  }
  std::vector<int64_t> idx(outer_extents.size(), 0);
  GemmPiece base;
  while (true) {
    for (int64_t c0 = 0; c0 < inner_count; c0 += kMaxBatchCount) {
      GemmPiece p = base;
      p.a_off += c0 * a_stride;
      p.b_off += c0 * b_stride;
      p.d_off += c0 * d_stride;
      p.count = std::min(kMaxBatchCount, inner_count - c0);
      f(p);
    }
    // Odometer over the looped dims, the last varying fastest.
    size_t d = idx.size();
    while (true) {
      if (d == 0) return;
      --d;
      base.a_off += outer_a[d];
      base.b_off += outer_b[d];
      base.d_off += outer_d[d];
      if (++idx[d] < outer_extents[d]) break;
      base.a_off -= outer_a[d] * outer_extents[d];
      base.b_off -= outer_b[d] * outer_extents[d];
      base.d_off -= outer_d[d] * outer_extents[d];
      idx[d] = 0;
    }
  }
}

LtShape describe_gemm(const LtTypes& types, int64_t rows, int64_t n, int64_t k,
                      const LtOperandView& a, const LtOperandView& b, const BatchPlan& batch,
                      int64_t count) {
  // Row-major D = A @ B is column-major D^T = B^T @ A^T (cublaslt_matmul.h): cuBLASLt's
  // A is our b, its B our a. A row-major [r, c] matrix is column-major [c, r] with the
  // same ld; a column-major one is itself, read transposed.
  LtShape s;
  s.desc.compute = types.compute;
  s.desc.scale_type = types.scale;
  s.a.type = s.b.type = s.d.type = types.data;
  if (b.col_major) {
    s.desc.trans_a = CUBLAS_OP_T;
    s.a.rows = uint64_t(k);
    s.a.cols = uint64_t(n);
  } else {
    s.a.rows = uint64_t(n);
    s.a.cols = uint64_t(k);
  }
  s.a.ld = b.ld;
  if (a.col_major) {
    s.desc.trans_b = CUBLAS_OP_T;
    s.b.rows = uint64_t(rows);
    s.b.cols = uint64_t(k);
  } else {
    s.b.rows = uint64_t(k);
    s.b.cols = uint64_t(rows);
  }
  s.b.ld = a.ld;
  s.d.rows = uint64_t(n);
  s.d.cols = uint64_t(rows);
  s.d.ld = n;
  if (count > 1) {
    s.a.batch_count = s.b.batch_count = s.d.batch_count = int32_t(count);
    s.a.batch_stride = batch.b_stride;
    s.b.batch_stride = batch.a_stride;
    s.d.batch_stride = batch.d_stride;
  }
  return s;
}

bool run_gemm_call(CudaDevice& dev, DType dt, const GemmPlan& plan, const GemmPiece& p,
                   int64_t rows, const GemmOutputs& out) {
  const LtTypes types = lt_types(dt);
  const int64_t es = int64_t(dtype_size(dt));
  const int64_t d_es = out.d_f32 ? int64_t(sizeof(float)) : es;
  // Host scalars of the scale type.
  const float one_f = 1.f, zero_f = 0.f;
  const double one_d = 1.0, zero_d = 0.0;
  const bool f64 = types.scale == CUDA_R_64F;
  const void* alpha = f64 ? static_cast<const void*>(&one_d) : &one_f;
  const void* beta = out.c ? alpha : (f64 ? static_cast<const void*>(&zero_d) : &zero_f);

  LtShape s = describe_gemm(types, rows, plan.n, plan.k, plan.a, plan.b, plan.batch, p.count);
  if (out.d_f32) s.d.type = CUDA_R_32F;
  s.desc.epilogue = out.epilogue;
  if (out.bias) s.desc.bias = reinterpret_cast<const void*>(out.bias);
  if (out.aux) {
    s.desc.aux = reinterpret_cast<const void*>(out.aux + uint64_t(p.d_off * es));
    s.desc.aux_ld = plan.n;
    if (p.count > 1) s.desc.aux_batch_stride = plan.batch.d_stride;
  }
  LtOperands ops;
  ops.a = reinterpret_cast<const void*>(plan.b.addr + uint64_t(p.b_off * es));
  ops.b = reinterpret_cast<const void*>(plan.a.addr + uint64_t(p.a_off * es));
  ops.d = reinterpret_cast<void*>(out.d + uint64_t(p.d_off * d_es));
  ops.c = out.c ? reinterpret_cast<const void*>(out.c + uint64_t(p.d_off * d_es)) : ops.d;
  ops.alpha = alpha;
  ops.beta = beta;
  return try_lt_matmul(dev, s.desc, s.a, s.b, s.d, s.d, ops);
}

bool run_gemm(CudaDevice& dev, DType dt, const GemmPlan& plan, const GemmOutputs& out) {
  bool ok = true;
  plan.batch.for_each_piece([&](const GemmPiece& p) {
    if (ok) ok = run_gemm_call(dev, dt, plan, p, plan.rows_per_call(), out);
  });
  return ok;
}

}  // namespace numr::cuda
