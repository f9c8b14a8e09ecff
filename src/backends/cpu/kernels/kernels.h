// The per-ISA kernel entry points. Each is defined once per instruction set, in
// namespace numr::cpu::<isa>, and collected into that ISA's KernelTable.
#pragma once

#include <algorithm>

#include "core/backend.h"

namespace numr::cpu {

inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Results at least this large are written with non-temporal stores where the kernel can:
// they would not stay in the caches, and a normal store reads each line before writing it.
constexpr int64_t kStreamBytes = int64_t(8) << 20;

// Transposed views (loop_plan.h: transposed_dim) of at least this many elements are first
// copied into row-major order by the transposing copy where an op reads them along the
// result's rows (elementwise ops, casts).
constexpr int64_t kTransposedCopyMin = 65536;

// Finishes rows of a GEMM result on the calling thread (callers split the rows):
// x = src + bias, pre = x, out = act(x) + residual, each part skipped when its pointer is
// null (src null: an all-zero product, K = 0). src has the compute type of dtype (F32 or
// F64) and may be out or pre itself (same row stride); bias [n], residual, out and pre
// have dtype. Row strides are in elements.
struct EpilogueRows {
  const void* src = nullptr;
  int64_t src_ld = 0;
  const void* bias = nullptr;
  const void* residual = nullptr;
  int64_t res_ld = 0;
  void* out = nullptr;
  int64_t out_ld = 0;
  void* pre = nullptr;
  int64_t pre_ld = 0;
  DType dtype = DType::F32;
  Activation act = Activation::None;
  int64_t rows = 0, n = 0;
};

// act(a @ b + bias) by numr's own GEMM for the epilogues (own_gemm.cpp), applied to the
// accumulators in registers: F32, and BF16 on CPUs with AVX512-BF16. Operands, bias, out
// and pre (null: not written) have `dtype`; out and pre are contiguous [nb, m, n]; item i of
// a starts a_bs elements after a, item i of b b_bs after b (0: one b for every item); rows
// of a and b are a_rs and b_rs apart, with unit column stride; bias [n] (null: none).
// `packed` is scratch of own_gemm_scratch_bytes(call). Splits the work on numr's pool.
struct OwnGemmCall {
  DType dtype = DType::F32;
  const void* a = nullptr;
  int64_t a_bs = 0, a_rs = 0;
  const void* b = nullptr;
  int64_t b_bs = 0, b_rs = 0;
  const void* bias = nullptr;
  void* out = nullptr;
  void* pre = nullptr;
  void* packed = nullptr;
  int64_t nb = 1, m = 0, n = 0, k = 0;
  Activation act = Activation::None;
};
// b packed in panels of 64 columns: F32 [k][64]; BF16 [ceil(k / 2)][64][2], pairs of rows
// side by side (vdpbf16ps's operand); zero past k and n.
inline constexpr int64_t kOwnGemmPanel = 64;
inline int64_t own_gemm_packed_bytes(DType dtype, int64_t k, int64_t n) {
  const int64_t rows = dtype == DType::BF16 ? (k + 1) / 2 * 2 : k;
  return (n + kOwnGemmPanel - 1) / kOwnGemmPanel * rows * kOwnGemmPanel *
         int64_t(dtype_size(dtype));
}

// A b per item is packed for a group of items at a time, as many as fit this many bytes
// (at least one), so that the scratch stays bounded for large batches.
inline constexpr int64_t kOwnGemmPackLimit = int64_t(32) << 20;
inline int64_t own_gemm_group_items(const OwnGemmCall& c) {
  if (c.b_bs == 0) return c.nb;  // one b, packed once
  const int64_t per_item = std::max<int64_t>(own_gemm_packed_bytes(c.dtype, c.k, c.n), 1);
  return std::clamp<int64_t>(kOwnGemmPackLimit / per_item, 1, std::max<int64_t>(c.nb, 1));
}
inline int64_t own_gemm_scratch_bytes(const OwnGemmCall& c) {
  const int64_t distinct = c.b_bs == 0 ? 1 : own_gemm_group_items(c);
  return distinct * own_gemm_packed_bytes(c.dtype, c.k, c.n);
}

struct KernelTable {
  const char* isa;
  int vector_bytes;  // width of the SIMD registers the kernels were compiled for
  void (*elementwise)(const ElementwiseCall&);
  void (*reduce)(const ReduceCall&);
  void (*along_axis)(const AxisCall&);
  void (*bias_activation_bwd)(const BiasActBwdCall&);
  void (*row_norm)(const RowNormCall&);
  void (*row_norm_bwd)(const RowNormBwdCall&);
  void (*sort_rows)(const SortCall&);
  void (*search_sorted)(const SearchSortedCall&);
  void (*index_gather)(const GatherCall&);
  void (*index_scatter)(const ScatterCall&);
  void (*epilogue_rows)(const EpilogueRows&);
  // Null below AVX-512; false, having done nothing, for BF16 on a CPU without AVX512-BF16.
  bool (*own_gemm)(const OwnGemmCall&);
  void (*copy)(const CopyCall&);
  void (*fill)(const FillCall&);
  void (*sequence)(const SequenceCall&);
  void (*random)(const RandomCall&);
  // Contiguous conversions used around the BLAS: n elements.
  void (*to_f32)(const void* src, DType src_dtype, float* dst, int64_t n);
  void (*from_f32)(const float* src, void* dst, DType dst_dtype, int64_t n);
};

#define NUMR_DECLARE_ISA(isa)                                             \
  namespace isa {                                                         \
  void elementwise(const ElementwiseCall&);                               \
  void reduce(const ReduceCall&);                                         \
  void along_axis(const AxisCall&);                                       \
  void bias_activation_bwd(const BiasActBwdCall&);                        \
  void row_norm(const RowNormCall&);                                      \
  void row_norm_bwd(const RowNormBwdCall&);                               \
  void sort_rows(const SortCall&);                                        \
  void search_sorted(const SearchSortedCall&);                            \
  void index_gather(const GatherCall&);                                   \
  void index_scatter(const ScatterCall&);                                 \
  void epilogue_rows(const EpilogueRows&);                                \
  bool own_gemm(const OwnGemmCall&);                                      \
  void copy(const CopyCall&);                                             \
  void fill(const FillCall&);                                             \
  void sequence(const SequenceCall&);                                     \
  void random(const RandomCall&);                                         \
  void to_f32(const void* src, DType src_dtype, float* dst, int64_t n);   \
  void from_f32(const float* src, void* dst, DType dst_dtype, int64_t n); \
  extern const KernelTable table;                                         \
  }
NUMR_DECLARE_ISA(avx512)
NUMR_DECLARE_ISA(avx2)
NUMR_DECLARE_ISA(sse4)
#undef NUMR_DECLARE_ISA

// The table for the best instruction set this CPU supports.
const KernelTable& kernels();

}  // namespace numr::cpu
