#include "backends/webgpu/webgpu_backend.h"

#include <algorithm>
#include <iterator>

#include "backends/webgpu/context.h"
#include "backends/webgpu/kernels.h"
#include "backends/webgpu/shader.h"
#include "numr/op_info.h"

namespace numr::webgpu {

std::string WebGpuBackend::name() const { return "webgpu:0 (" + ctx_.adapter_name() + ")"; }

namespace {

// The composed ops with WebGPU kernels, at F32, F16 and BF16.
constexpr OpId kKernels[] = {
    OpId::matmul,
    OpId::matmul_bias_activation,
    OpId::matmul_bias_residual,
    OpId::matmul_bias_activation_bwd,
    OpId::bias_activation_bwd,
    OpId::softmax,
    OpId::log_softmax,
};

// The composed ops with WebGPU kernels in every dtype the op takes and the backend holds.
// unique and unique_with_counts are built from sort on every backend.
constexpr OpId kSortKernels[] = {OpId::sort, OpId::argsort, OpId::topk, OpId::searchsorted};

// The ops that run index_gather and index_scatter, in every dtype they take: index_select,
// take, embedding_lookup, gather_nd, masked_select and nonzero reach index_gather through
// gather's OpId; index_put, put and bincount reach index_scatter through scatter's or
// scatter_reduce's.
constexpr OpId kIndexKernels[] = {OpId::gather, OpId::scatter, OpId::scatter_reduce};

}  // namespace

// The required core, the fused gates (kernels through the formulas), kKernels,
// kSortKernels and kIndexKernels; every other composed op runs as its composition.
bool WebGpuBackend::supports(OpId op, DType t) const {
  if (std::find(std::begin(kKernels), std::end(kKernels), op) != std::end(kKernels))
    return t == DType::F32 || t == DType::F16 || t == DType::BF16;
  if (std::find(std::begin(kSortKernels), std::end(kSortKernels), op) != std::end(kSortKernels))
    return dtype_supported(t) && op_accepts(op, t);
  if (std::find(std::begin(kIndexKernels), std::end(kIndexKernels), op) != std::end(kIndexKernels))
    return dtype_supported(t) && op_accepts(op, t);
  if (is_complex(t) && complex_elementwise_op(op)) return false;  // run on the parts
  return dtype_supported(t) && has_listed_kernel(op, {});
}

bool WebGpuBackend::supports_dtype(DType t) const { return dtype_supported(t); }

void* WebGpuBackend::allocate(size_t nbytes) { return ctx_.allocate(nbytes); }
void WebGpuBackend::deallocate(void* handle) noexcept {
  ctx_.deallocate(static_cast<Buffer*>(handle));
}
void WebGpuBackend::copy_from_host(void* dst_handle, size_t dst_offset_bytes, const void* src,
                                   size_t nbytes) {
  ctx_.write(static_cast<Buffer*>(dst_handle), dst_offset_bytes, src, nbytes);
}
void WebGpuBackend::copy_to_host(void* dst, const void* src_handle, size_t src_offset_bytes,
                                 size_t nbytes) {
  ctx_.read(dst, static_cast<const Buffer*>(src_handle), src_offset_bytes, nbytes);
}
void WebGpuBackend::synchronize() { ctx_.synchronize(); }
void WebGpuBackend::fill_bytes(void* handle, size_t nbytes, uint8_t value) {
  ctx_.fill_bytes(static_cast<Buffer*>(handle), nbytes, value);
}

void WebGpuBackend::elementwise(const ElementwiseCall& call) { run_elementwise(ctx_, call); }
void WebGpuBackend::reduce(const ReduceCall& call) { run_reduce(ctx_, call); }
void WebGpuBackend::copy(const CopyCall& call) { run_copy(ctx_, call); }
void WebGpuBackend::fill(const FillCall& call) { run_fill(ctx_, call); }
void WebGpuBackend::sequence(const SequenceCall& call) { run_sequence(ctx_, call); }
void WebGpuBackend::random(const RandomCall& call) { run_random(ctx_, call); }
void WebGpuBackend::matmul(const MatmulCall& call) { run_matmul(ctx_, call); }
void WebGpuBackend::matmul_epilogue(const GemmEpilogueCall& call) {
  run_matmul_epilogue(ctx_, call);
}
void WebGpuBackend::bias_activation_bwd(const BiasActBwdCall& call) {
  run_bias_activation_bwd(ctx_, call);
}
void WebGpuBackend::sort_rows(const SortCall& call) { run_sort_rows(ctx_, call); }
void WebGpuBackend::search_sorted(const SearchSortedCall& call) { run_search_sorted(ctx_, call); }
void WebGpuBackend::index_gather(const GatherCall& call) { run_index_gather(ctx_, call); }
void WebGpuBackend::index_scatter(const ScatterCall& call) { run_index_scatter(ctx_, call); }
void WebGpuBackend::along_axis(const AxisCall& call) { run_along_axis(ctx_, call); }

Backend& webgpu_backend(int index) {
  Context& ctx = Context::get(index);
  static WebGpuBackend backend(ctx);
  return backend;
}

int webgpu_device_count() { return Context::count(); }

}  // namespace numr::webgpu
