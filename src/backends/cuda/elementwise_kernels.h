// The elementwise op kernels: one configuration struct per kernel, its cache key (also the
// kernel's name) and its PTX. The formulas are those of src/math/elementwise.h, emitted
// through ptx::Value; inputs load into the compute type (F16/BF16 -> f32, F64 -> f64,
// I64 -> s64, I32/U8/Bool -> s32) with element_io's rules, and results are stored in each
// output's dtype. Integer ops wrap, as on the CPU.
#pragma once

#include <string>
#include <vector>

#include "backends/cuda/elementwise_map.h"
#include "core/backend.h"

namespace numr::cuda {

struct ElementwiseConfig {
  OpId op = OpId::add;
  std::vector<DType> outs, ins;  // dtypes, as in the call
  MapShape shape;
  bool has_lo = true, has_hi = true;  // clamp only
};

// The compute type of an op whose (value) inputs have dtype `src`.
ptx::PtxType elementwise_compute_type(DType src);
// The dtype that picks the compute type: in[1] for where_cond (in[0] is the condition).
DType elementwise_source_dtype(OpId op, const std::vector<DType>& ins);
// Whether the op reads scalars[0] / scalars[1] (passed as kernel parameters).
int elementwise_scalar_count(OpId op);

// Formulas long enough (series, continued fractions) that unrolling them for every element
// of a vector step multiplies the kernel's size, not its speed: they run one element per
// step.
bool elementwise_one_per_step(OpId op);
std::string elementwise_key(const ElementwiseConfig& c);
GeneratedKernel generate_elementwise(const ElementwiseConfig& c, const ptx::Target& target);

}  // namespace numr::cuda
