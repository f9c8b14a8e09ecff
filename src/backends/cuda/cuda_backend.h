// The Backend of a CUDA device: memory through the caching allocator, host copies that
// complete before returning, and op families forwarded to the kernels in ops.h.
#pragma once

#include <string>

#include "core/backend.h"

namespace numr::cuda {

class CudaDevice;

class CudaBackend final : public Backend {
 public:
  explicit CudaBackend(CudaDevice& dev) : dev_(dev) {}

  Device device() const override;
  std::string name() const override;  // "cuda:0/sm_90 (NVIDIA H100 80GB HBM3)"
  // The composed ops listed in cuda_backend.cpp have kernels (has_listed_kernel).
  bool supports(OpId op, DType t) const override;
  CudaDevice& cuda_device() const { return dev_; }

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
  void along_axis(const AxisCall& call) override;
  void matmul(const MatmulCall& call) override;
  void matmul_epilogue(const GemmEpilogueCall& call) override;
  void bias_activation_bwd(const BiasActBwdCall& call) override;
  void row_norm(const RowNormCall& call) override;
  void row_norm_bwd(const RowNormBwdCall& call) override;
  void index_gather(const GatherCall& call) override;
  void index_scatter(const ScatterCall& call) override;
  void attention(const AttentionCall& call) override;
  void attention_bwd(const AttentionBwdCall& call) override;
  void copy(const CopyCall& call) override;
  void fill(const FillCall& call) override;
  void sequence(const SequenceCall& call) override;
  void random(const RandomCall& call) override;
  void sort_rows(const SortCall& call) override;
  void search_sorted(const SearchSortedCall& call) override;

 private:
  CudaDevice& dev_;
};

// The backend of CUDA device `index`, made on first use (thread-safe). Throws
// BackendUnavailable naming the reason when the driver or the device is missing.
Backend& cuda_backend(int index);

}  // namespace numr::cuda
