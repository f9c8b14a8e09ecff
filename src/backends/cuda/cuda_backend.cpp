#include "backends/cuda/cuda_backend.h"

#include <cstdint>
#include <mutex>
#include <vector>

#include "backends/cuda/allocator.h"
#include "backends/cuda/context.h"
#include "backends/cuda/driver.h"
#include "backends/cuda/ops.h"

namespace numr::cuda {

namespace {

// The composed ops with CUDA kernels.
constexpr OpId kKernels[] = {
    OpId::mean,
    OpId::var,
    OpId::std,
    OpId::logsumexp,
    OpId::cumsum,
    OpId::cumprod,
    OpId::softmax,
    OpId::log_softmax,
    OpId::matmul,
    OpId::matmul_bias_activation,
    OpId::matmul_bias_residual,
    OpId::matmul_bias_activation_bwd,
    OpId::bias_activation_bwd,
    OpId::rms_norm,
    OpId::layer_norm,
    OpId::fused_add_rms_norm,
    OpId::fused_add_layer_norm,
    OpId::gather,
    OpId::scatter,
    OpId::scatter_reduce,
    OpId::sort,
    OpId::argsort,
    OpId::topk,
    OpId::searchsorted,
    OpId::scaled_dot_product_attention,  // F32, F16, BF16 (supports)
};

}  // namespace

bool CudaBackend::supports(OpId op, DType t) const {
  // The attention kernels compute in F32; F64 runs the composition.
  if (op == OpId::scaled_dot_product_attention && t == DType::F64) return false;
  // A Complex64 element moves as one 64-bit word; Complex128 runs on its parts.
  if (is_complex(t) && complex_elementwise_op(op)) return t == DType::Complex64;
  return op_accepts(op, t) && has_listed_kernel(op, kKernels);
}
namespace {

CUdeviceptr address(const void* handle, size_t offset_bytes) {
  return static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(handle)) + offset_bytes;
}

// Row-major dense: the layout a plain byte copy preserves.
bool is_dense(const TensorRef& t) {
  int64_t expected = 1;
  for (size_t i = t.shape.size(); i-- > 0;) {
    if (t.shape[i] == 1) continue;
    if (t.shape[i] == 0) return true;
    if (t.strides[i] != expected) return false;
    expected *= t.shape[i];
  }
  return true;
}

}  // namespace

Device CudaBackend::device() const { return dev_.device(); }

std::string CudaBackend::name() const {
  return dev_.device().str() + "/" + dev_.props().ptx_target() + " (" + dev_.props().name + ")";
}

void* CudaBackend::allocate(size_t nbytes) { return dev_.allocator().allocate(nbytes); }

void CudaBackend::deallocate(void* handle) noexcept { dev_.allocator().deallocate(handle); }

void CudaBackend::copy_from_host(void* dst_handle, size_t dst_offset_bytes, const void* src,
                                 size_t nbytes) {
  if (nbytes == 0) return;
  const Driver& d = driver();
  dev_.make_current();
  check(d.memcpy_htod_async(address(dst_handle, dst_offset_bytes), src, nbytes, dev_.stream()),
        "cuMemcpyHtoDAsync");
  // The caller may reuse `src` as soon as this returns.
  check(d.stream_synchronize(dev_.stream()), "cuStreamSynchronize");
}

void CudaBackend::copy_to_host(void* dst, const void* src_handle, size_t src_offset_bytes,
                               size_t nbytes) {
  if (nbytes == 0) return;
  const Driver& d = driver();
  dev_.make_current();
  check(d.memcpy_dtoh_async(dst, address(src_handle, src_offset_bytes), nbytes, dev_.stream()),
        "cuMemcpyDtoHAsync");
  check(d.stream_synchronize(dev_.stream()), "cuStreamSynchronize");
}

void CudaBackend::synchronize() { dev_.synchronize(); }

void CudaBackend::fill_bytes(void* handle, size_t nbytes, uint8_t value) {
  if (nbytes == 0) return;
  dev_.make_current();
  check(driver().memset_d8_async(address(handle, 0), value, nbytes, dev_.stream()),
        "cuMemsetD8Async");
}

void CudaBackend::elementwise(const ElementwiseCall& c) {
  dev_.make_current();
  run_elementwise(dev_, c);
}
void CudaBackend::reduce(const ReduceCall& c) {
  dev_.make_current();
  run_reduce(dev_, c);
}
void CudaBackend::along_axis(const AxisCall& c) {
  dev_.make_current();
  run_along_axis(dev_, c);
}
void CudaBackend::matmul(const MatmulCall& c) {
  dev_.make_current();
  run_matmul(dev_, c);
}
void CudaBackend::matmul_epilogue(const GemmEpilogueCall& c) {
  dev_.make_current();
  run_matmul_epilogue(dev_, c);
}
void CudaBackend::bias_activation_bwd(const BiasActBwdCall& c) {
  dev_.make_current();
  run_bias_activation_bwd(dev_, c);
}
void CudaBackend::row_norm(const RowNormCall& c) {
  dev_.make_current();
  run_row_norm(dev_, c);
}
void CudaBackend::row_norm_bwd(const RowNormBwdCall& c) {
  dev_.make_current();
  run_row_norm_bwd(dev_, c);
}
void CudaBackend::index_gather(const GatherCall& c) {
  dev_.make_current();
  run_index_gather(dev_, c);
}
void CudaBackend::index_scatter(const ScatterCall& c) {
  dev_.make_current();
  run_index_scatter(dev_, c);
}
void CudaBackend::attention(const AttentionCall& c) {
  dev_.make_current();
  run_attention(dev_, c);
}
void CudaBackend::attention_bwd(const AttentionBwdCall& c) {
  dev_.make_current();
  run_attention_bwd(dev_, c);
}

void CudaBackend::copy(const CopyCall& c) {
  dev_.make_current();
  const int64_t n = c.src.numel();
  if (n == 0) return;
  if (c.src.dtype == c.dst.dtype && is_dense(c.src) && is_dense(c.dst)) {
    const size_t elem = dtype_size(c.src.dtype);
    check(driver().memcpy_dtod_async(address(c.dst.base, size_t(c.dst.offset) * elem),
                                     address(c.src.base, size_t(c.src.offset) * elem),
                                     size_t(n) * elem, dev_.stream()),
          "cuMemcpyDtoDAsync");
    return;
  }
  run_copy(dev_, c);
}

void CudaBackend::fill(const FillCall& c) {
  dev_.make_current();
  run_fill(dev_, c);
}
void CudaBackend::sequence(const SequenceCall& c) {
  dev_.make_current();
  run_sequence(dev_, c);
}
void CudaBackend::random(const RandomCall& c) {
  dev_.make_current();
  run_random(dev_, c);
}

void CudaBackend::sort_rows(const SortCall& c) {
  dev_.make_current();
  run_sort_rows(dev_, c);
}
void CudaBackend::search_sorted(const SearchSortedCall& c) {
  dev_.make_current();
  run_search_sorted(dev_, c);
}

Backend& cuda_backend(int index) {
  // Like the devices they serve, backends live until the process ends (see cuda_device).
  static std::mutex mu;
  static auto* backends = new std::vector<CudaBackend*>();
  CudaDevice& dev = cuda_device(index);  // throws BackendUnavailable with the reason
  std::lock_guard lock(mu);
  if (backends->size() <= size_t(index)) backends->resize(size_t(index) + 1, nullptr);
  CudaBackend*& slot = (*backends)[size_t(index)];
  if (!slot) slot = new CudaBackend(dev);
  return *slot;
}

}  // namespace numr::cuda
