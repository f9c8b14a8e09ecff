// The per-ISA kernel entry points. Each is defined once per instruction set, in
// namespace numr::cpu::<isa>, and collected into that ISA's KernelTable.
#pragma once

#include "core/backend.h"

namespace numr::cpu {

struct KernelTable {
  const char* isa;
  int vector_bytes;  // width of the SIMD registers the kernels were compiled for
  void (*elementwise)(const ElementwiseCall&);
  void (*reduce)(const ReduceCall&);
  void (*along_axis)(const AxisCall&);
  void (*bias_activation_bwd)(const BiasActBwdCall&);
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
