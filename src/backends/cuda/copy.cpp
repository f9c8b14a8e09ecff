// run_copy and run_fill: strided copies with dtype conversion, and fills of any view.
#include <vector>

#include "backends/cuda/context.h"
#include "backends/cuda/copy_kernels.h"
#include "backends/cuda/elementwise_launch.h"
#include "backends/cuda/module.h"
#include "backends/cuda/ops.h"

namespace numr::cuda {

void run_copy(CudaDevice& dev, const CopyCall& call) {
  if (call.dst.numel() == 0) return;
  const TensorRef* outs[] = {&call.dst};
  const TensorRef* ins[] = {&call.src};
  const MapPlan plan = plan_map("copy", call.dst.shape, outs, ins);
  const CopyConfig c{call.src.dtype, call.dst.dtype, plan.shape};
  const std::string key = copy_key(c);
  const ptx::Target target = map_kernel_target(dev);
  CUfunction f = dev.kernels().get_or_build(key, [&] { return generate_copy(c, target); });
  launch_map(dev, f, key, plan, KernelArgs{});
}

void run_fill(CudaDevice& dev, const FillCall& call) {
  if (call.dst.numel() == 0) return;
  const TensorRef* outs[] = {&call.dst};
  const MapPlan plan = plan_map("fill", call.dst.shape, outs, {});
  const FillConfig c{call.dst.dtype, plan.shape};
  const std::string key = fill_key(c);
  const ptx::Target target = map_kernel_target(dev);
  CUfunction f = dev.kernels().get_or_build(key, [&] { return generate_fill(c, target); });
  KernelArgs extra;
  extra.add(call.value);
  launch_map(dev, f, key, plan, extra);
}

}  // namespace numr::cuda
