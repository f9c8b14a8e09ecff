// run_elementwise: plans the layout of the call's operands, fetches (or generates) the
// kernel for that configuration and launches it with the call's scalars.
#include <cmath>
#include <cstdint>
#include <vector>

#include "backends/cuda/context.h"
#include "backends/cuda/elementwise_kernels.h"
#include "backends/cuda/elementwise_launch.h"
#include "backends/cuda/module.h"
#include "backends/cuda/ops.h"

namespace numr::cuda {
namespace {

// double -> int64 as the hardware's saturating conversion (NaN -> 0), without C++'s
// undefined behaviour out of range.
int64_t saturate_i64(double v) {
  if (std::isnan(v)) return 0;
  if (v >= 9223372036854775807.0) return INT64_MAX;
  if (v <= -9223372036854775808.0) return INT64_MIN;
  return int64_t(v);
}

// A scalar as a parameter of the compute type, converted as the CPU converts it (C(s)
// with C the compute dtype: U8 keeps the low byte).
void add_scalar(KernelArgs& args, double s, DType src) {
  switch (elementwise_compute_type(src)) {
    case ptx::PtxType::f64: return args.add(s);
    case ptx::PtxType::f32: return args.add(float(s));
    case ptx::PtxType::s64: return args.add(saturate_i64(s));
    default: {
      const int64_t i = saturate_i64(s);
      return args.add(compute_dtype(src) == DType::U8 ? int32_t(uint8_t(i)) : int32_t(i));
    }
  }
}

}  // namespace

void run_elementwise(CudaDevice& dev, const ElementwiseCall& call) {
  if (call.out.numel() == 0) return;
  std::vector<const TensorRef*> outs{&call.out};
  if (call.n_out == 2) outs.push_back(&call.out2);
  std::vector<const TensorRef*> ins;
  for (int k = 0; k < call.n_in; ++k) ins.push_back(&call.in[size_t(k)]);

  const char* name = op_name(call.op).data();
  const MapPlan plan =
      plan_map(name, call.out.shape, outs, ins, !elementwise_one_per_step(call.op));
  ElementwiseConfig c;
  c.op = call.op;
  for (const TensorRef* t : outs) c.outs.push_back(t->dtype);
  for (const TensorRef* t : ins) c.ins.push_back(t->dtype);
  c.shape = plan.shape;
  c.has_lo = call.has_lo;
  c.has_hi = call.has_hi;

  const std::string key = elementwise_key(c);
  const ptx::Target target = map_kernel_target(dev);
  CUfunction f = dev.kernels().get_or_build(key, [&] { return generate_elementwise(c, target); });
  KernelArgs extra;
  const DType src = elementwise_source_dtype(c.op, c.ins);
  for (int i = 0; i < elementwise_scalar_count(c.op); ++i)
    add_scalar(extra, call.scalars[size_t(i)], src);
  launch_map(dev, f, key, plan, extra);
}

}  // namespace numr::cuda
