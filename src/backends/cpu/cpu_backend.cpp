// The CPU backend: 64-byte aligned host memory, kernels from the best instruction set
// this CPU has (NUMR_CPU_ISA=avx512|avx2|sse4 picks a lower one), GEMM through the BLAS.
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>

#include "backends/cpu/gemm_epilogue.h"
#include "backends/cpu/host_allocator.h"
#include "backends/cpu/kernels/kernels.h"
#include "backends/cpu/matmul.h"
#include "core/backend.h"
#include "numr/error.h"

namespace numr {
namespace cpu {

const KernelTable& kernels() {
  static const KernelTable* table = [] {
    __builtin_cpu_init();
    const bool has_avx512 =
        __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
    const bool has_avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
                          __builtin_cpu_supports("bmi2");
    const bool has_sse4 = __builtin_cpu_supports("sse4.2");
    std::string want = std::getenv("NUMR_CPU_ISA") ? std::getenv("NUMR_CPU_ISA") : "";
    if (!want.empty() && want != "avx512" && want != "avx2" && want != "sse4")
      fail<BackendUnavailable>("cpu", "NUMR_CPU_ISA must be avx512, avx2 or sse4, not '", want,
                               "'");
    if ((want.empty() || want == "avx512") && has_avx512) return &avx512::table;
    if ((want.empty() || want == "avx512" || want == "avx2") && has_avx2) return &avx2::table;
    if (has_sse4) return &sse4::table;
    fail<BackendUnavailable>("cpu", "numr's CPU kernels need at least SSE4.2");
  }();
  return *table;
}

namespace {

// The composed ops with CPU kernels (has_listed_kernel).
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
    OpId::sort,
    OpId::argsort,
    OpId::topk,
    OpId::searchsorted,
    OpId::gather,
    OpId::scatter,
    OpId::scatter_reduce,
};

class CpuBackend final : public Backend {
 public:
  Device device() const override { return Device::cpu(); }
  std::string name() const override { return std::string("cpu/") + kernels().isa; }
  // Complex mul, div and abs included (complex_elementwise_op): they are not composed ops.
  bool supports(OpId op, DType t) const override {
    return op_accepts(op, t) && has_listed_kernel(op, kKernels);
  }

  void* allocate(size_t nbytes) override { return HostAllocator::instance().allocate(nbytes); }
  void deallocate(void* handle) noexcept override { HostAllocator::instance().deallocate(handle); }
  void copy_from_host(void* dst, size_t dst_off, const void* src, size_t n) override {
    std::memcpy(static_cast<char*>(dst) + dst_off, src, n);
  }
  void copy_to_host(void* dst, const void* src, size_t src_off, size_t n) override {
    std::memcpy(dst, static_cast<const char*>(src) + src_off, n);
  }
  void synchronize() override {}
  void fill_bytes(void* handle, size_t nbytes, uint8_t value) override {
    std::memset(handle, value, nbytes);
  }

  void elementwise(const ElementwiseCall& c) override { kernels().elementwise(c); }
  void reduce(const ReduceCall& c) override { kernels().reduce(c); }
  void along_axis(const AxisCall& c) override { kernels().along_axis(c); }
  void matmul(const MatmulCall& c) override { cpu::matmul(c); }
  void matmul_epilogue(const GemmEpilogueCall& c) override { cpu::matmul_epilogue(c); }
  void bias_activation_bwd(const BiasActBwdCall& c) override { kernels().bias_activation_bwd(c); }
  void row_norm(const RowNormCall& c) override { kernels().row_norm(c); }
  void row_norm_bwd(const RowNormBwdCall& c) override { kernels().row_norm_bwd(c); }
  void sort_rows(const SortCall& c) override { kernels().sort_rows(c); }
  void search_sorted(const SearchSortedCall& c) override { kernels().search_sorted(c); }
  void index_gather(const GatherCall& c) override { kernels().index_gather(c); }
  void index_scatter(const ScatterCall& c) override { kernels().index_scatter(c); }
  void copy(const CopyCall& c) override { kernels().copy(c); }
  void fill(const FillCall& c) override { kernels().fill(c); }
  void sequence(const SequenceCall& c) override { kernels().sequence(c); }
  void random(const RandomCall& c) override { kernels().random(c); }
};

}  // namespace
}  // namespace cpu

Backend& cpu_backend() {
  static cpu::CpuBackend backend;
  return backend;
}

}  // namespace numr
