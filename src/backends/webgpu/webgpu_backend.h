// The Backend of the WebGPU device: memory through Context's caching allocator, host copies
// that complete before returning, the required core's families, matmul and the GEMM
// epilogues forward and backward (F32; the GEMMs also F16 and BF16), softmax and
// log_softmax (F32, F16, BF16), and sort, argsort, topk and searchsorted in every dtype it
// holds (kernels.h). Every other optional family and composed op runs as its composition
// (supports() says no).
#pragma once

#include <string>

#include "core/backend.h"

namespace numr::webgpu {

class Context;

class WebGpuBackend final : public Backend {
 public:
  explicit WebGpuBackend(Context& ctx) : ctx_(ctx) {}

  Device device() const override { return Device::webgpu(0); }
  std::string name() const override;  // "webgpu:0 (llvmpipe ... [Vulkan, CPU])"
  bool supports(OpId op, DType t) const override;
  bool supports_dtype(DType t) const override;
  Context& context() const { return ctx_; }

  void* allocate(size_t nbytes) override;
  void deallocate(void* handle) noexcept override;
  void copy_from_host(void* dst_handle, size_t dst_offset_bytes, const void* src,
                      size_t nbytes) override;
  void copy_to_host(void* dst, const void* src_handle, size_t src_offset_bytes,
                    size_t nbytes) override;
  void synchronize() override;
  void fill_bytes(void* handle, size_t nbytes, uint8_t value) override;

  void elementwise(const ElementwiseCall& call) override;
  void reduce(const ReduceCall& call) override;
  void copy(const CopyCall& call) override;
  void fill(const FillCall& call) override;
  void sequence(const SequenceCall& call) override;
  void random(const RandomCall& call) override;
  void matmul(const MatmulCall& call) override;
  void matmul_epilogue(const GemmEpilogueCall& call) override;
  void bias_activation_bwd(const BiasActBwdCall& call) override;
  void sort_rows(const SortCall& call) override;
  void search_sorted(const SearchSortedCall& call) override;
  void index_gather(const GatherCall& call) override;
  void index_scatter(const ScatterCall& call) override;
  void along_axis(const AxisCall& call) override;

 private:
  Context& ctx_;
};

// The backend of webgpu:index, made on first use; throws BackendUnavailable saying why.
Backend& webgpu_backend(int index);
// 1 when webgpu:0 is usable, else 0; never throws.
int webgpu_device_count();

}  // namespace numr::webgpu
