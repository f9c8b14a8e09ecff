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

struct KernelTable {
  const char* isa;
  int vector_bytes;  // width of the SIMD registers the kernels were compiled for
  void (*elementwise)(const ElementwiseCall&);
  void (*reduce)(const ReduceCall&);
  void (*along_axis)(const AxisCall&);
  void (*bias_activation_bwd)(const BiasActBwdCall&);
  void (*epilogue_rows)(const EpilogueRows&);
  void (*copy)(const CopyCall&);
  void (*fill)(const FillCall&);
  void (*sequence)(const SequenceCall&);
  void (*random)(const RandomCall&);
  // Contiguous conversions used around the BLAS: n elements.
  void (*to_f32)(const void* src, DType src_dtype, float* dst, int64_t n);
  void (*from_f32)(const float* src, void* dst, DType dst_dtype, int64_t n);
};

#define NUMR_DECLARE_ISA(isa)                                  \
  namespace isa {                                              \
  void elementwise(const ElementwiseCall&);                    \
  void reduce(const ReduceCall&);                              \
  void along_axis(const AxisCall&);                            \
  void bias_activation_bwd(const BiasActBwdCall&);             \
  void epilogue_rows(const EpilogueRows&);                     \
  void copy(const CopyCall&);                                  \
  void fill(const FillCall&);                                  \
  void sequence(const SequenceCall&);                          \
  void random(const RandomCall&);                              \
  void to_f32(const void* src, DType src_dtype, float* dst, int64_t n); \
  void from_f32(const float* src, void* dst, DType dst_dtype, int64_t n); \
  extern const KernelTable table;                              \
  }
NUMR_DECLARE_ISA(avx512)
NUMR_DECLARE_ISA(avx2)
NUMR_DECLARE_ISA(sse4)
#undef NUMR_DECLARE_ISA

// The table for the best instruction set this CPU supports.
const KernelTable& kernels();

}  // namespace numr::cpu
