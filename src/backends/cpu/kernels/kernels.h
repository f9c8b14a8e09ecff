// The per-ISA kernel entry points. Each is defined once per instruction set, in
// namespace numr::cpu::<isa>, and collected into that ISA's KernelTable.
#pragma once

#include "core/backend.h"

namespace numr::cpu {

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

// act(a @ b + bias) for BF16 operands by numr's own AVX512-BF16 GEMM (bf16_gemm.cpp), the
// epilogue applied to the accumulators in registers. out and pre (null: not written) are
// contiguous [nb, m, n]; item i of a starts a_bs elements after a, item i of b b_bs after b
// (0: one b for every item); rows of a and b are a_rs and b_rs apart, with unit column
// stride; bias [n] (null: none). `packed` is scratch of at least
// bf16_gemm_packed_elements(k, n) elements per distinct b. Splits the work on numr's pool.
struct Bf16GemmCall {
  const uint16_t* a = nullptr;
  int64_t a_bs = 0, a_rs = 0;
  const uint16_t* b = nullptr;
  int64_t b_bs = 0, b_rs = 0;
  const uint16_t* bias = nullptr;
  uint16_t* out = nullptr;
  uint16_t* pre = nullptr;
  uint16_t* packed = nullptr;
  int64_t nb = 1, m = 0, n = 0, k = 0;
  Activation act = Activation::None;
};
// b packed in panels of 64 columns, each [ceil(k / 2)][64][2]: pairs of rows side by side,
// zero past k and n.
inline constexpr int64_t kBf16GemmPanel = 64;
inline int64_t bf16_gemm_packed_elements(int64_t k, int64_t n) {
  return (n + kBf16GemmPanel - 1) / kBf16GemmPanel * ((k + 1) / 2) * kBf16GemmPanel * 2;
}

struct KernelTable {
  const char* isa;
  int vector_bytes;  // width of the SIMD registers the kernels were compiled for
  void (*elementwise)(const ElementwiseCall&);
  void (*reduce)(const ReduceCall&);
  void (*along_axis)(const AxisCall&);
  void (*bias_activation_bwd)(const BiasActBwdCall&);
  void (*epilogue_rows)(const EpilogueRows&);
  // Null below AVX-512; false, having done nothing, on a CPU without AVX512-BF16.
  bool (*bf16_gemm)(const Bf16GemmCall&);
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
  void epilogue_rows(const EpilogueRows&);                                \
  bool bf16_gemm(const Bf16GemmCall&);                                    \
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
