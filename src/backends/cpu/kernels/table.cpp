// This ISA's kernel table.
#include "backends/cpu/kernels/kernels.h"

#include "backends/cpu/kernels/isa.h"  // after every system header

#include "backends/cpu/kernels/vec.h"

namespace numr::cpu::NUMR_ISA {

#define NUMR_STR2(x) #x
#define NUMR_STR(x) NUMR_STR2(x)
const KernelTable table = {NUMR_STR(NUMR_ISA),
                           int(sizeof(vf_raw)),
                           elementwise,
                           reduce,
                           along_axis,
                           bias_activation_bwd,
                           row_norm,
                           row_norm_bwd,
                           sort_rows,
                           search_sorted,
                           index_gather,
                           index_scatter,
                           epilogue_rows,
#if NUMR_ISA_LEVEL >= 3
                           own_gemm,
#else
                           nullptr,
#endif
                           copy,
                           fill,
                           sequence,
                           random,
                           to_f32,
                           from_f32};

}  // namespace numr::cpu::NUMR_ISA

#pragma GCC pop_options
