// run_sequence and run_random: contiguous outputs written by index.
#include <vector>

#include "backends/cuda/context.h"
#include "backends/cuda/elementwise_launch.h"
#include "backends/cuda/factory_kernels.h"
#include "backends/cuda/module.h"
#include "backends/cuda/ops.h"

namespace numr::cuda {

void run_sequence(CudaDevice& dev, const SequenceCall& call) {
  const int64_t n = call.out.numel();
  if (n == 0) return;
  const TensorRef* outs[] = {&call.out};
  const MapPlan plan = plan_map("sequence", call.out.shape, outs, {});
  const SequenceConfig c{call.out.dtype, call.symmetric, plan.shape};
  const std::string key = sequence_key(c);
  const ptx::Target target = map_kernel_target(dev);
  CUfunction f = dev.kernels().get_or_build(key, [&] { return generate_sequence(c, target); });
  KernelArgs extra;
  extra.add(call.start);
  extra.add(call.step);
  extra.add(call.end);
  extra.add(uint64_t(n / 2));
  extra.add(uint64_t(n - 1));
  launch_map(dev, f, key, plan, extra);
}

void run_random(CudaDevice& dev, const RandomCall& call) {
  if (call.out.numel() == 0) return;
  const TensorRef* outs[] = {&call.out};
  const MapPlan plan = plan_map("random", call.out.shape, outs, {});
  const RandomConfig c{call.out.dtype, call.kind, plan.shape};
  const std::string key = random_key(c);
  const ptx::Target target = map_kernel_target(dev);
  CUfunction f = dev.kernels().get_or_build(key, [&] { return generate_random(c, target); });
  KernelArgs extra;
  extra.add(call.seed);
  extra.add(call.offset);
  if (call.kind == RandomKind::Integer) {
    extra.add(call.low);
    extra.add(uint64_t(call.high) - uint64_t(call.low));
  }
  launch_map(dev, f, key, plan, extra);
}

}  // namespace numr::cuda
