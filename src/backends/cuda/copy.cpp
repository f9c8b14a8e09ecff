// run_copy and run_fill: strided copies with dtype conversion (transposed views through
// shared-memory tiles), and fills of any view.
#include <cstdint>
#include <vector>

#include "backends/cuda/context.h"
#include "backends/cuda/copy_kernels.h"
#include "backends/cuda/elementwise_launch.h"
#include "backends/cuda/launch.h"
#include "backends/cuda/module.h"
#include "backends/cuda/ops.h"

namespace numr::cuda {

namespace {

// A copy or cast whose source is contiguous along one of the result's outer dims and
// strided along its last (a transposed view), with at most one other dim: moved through
// shared-memory tiles (generate_transpose_copy). False when the plan is not of that form.
bool run_transpose_copy(CudaDevice& dev, const CopyCall& call, const MapPlan& plan) {
  if (plan.shape.layout != MapLayout::Strided) return false;
  const int rank = plan.shape.rank, last = rank - 1;
  if (rank != 2 && rank != 3) return false;
  const std::vector<int64_t>&dst = plan.strides[0], &src = plan.strides[1];
  if (dst[size_t(last)] != 1 || src[size_t(last)] == 0 || src[size_t(last)] == 1) return false;
  int d = -1;
  for (int k = 0; k < last && d < 0; ++k)
    if (src[size_t(k)] == 1) d = k;
  if (d < 0) return false;
  const int batch = rank == 3 ? 1 - d : -1;  // the dim that is neither d nor last
  const int64_t rows = plan.extents[size_t(d)], cols = plan.extents[size_t(last)];
  const int64_t n_batch = batch < 0 ? 1 : plan.extents[size_t(batch)];
  const int64_t s_b = batch < 0 ? 0 : src[size_t(batch)], d_b = batch < 0 ? 0 : dst[size_t(batch)];
  TransposeCopyConfig c{call.src.dtype, call.dst.dtype};
  const auto even = [](int64_t v) { return (v & 1) == 0; };
  c.pairs = transpose_copy_pairs_possible(c.src, c.dst) && even(rows) && even(cols) &&
            even(src[size_t(last)]) && even(dst[size_t(d)]) && even(s_b) && even(d_b) &&
            plan.addresses[0] % (2 * dtype_size(c.dst)) == 0 &&
            plan.addresses[1] % (2 * dtype_size(c.src)) == 0;
  const int64_t t = transpose_copy_tile(c);
  const int64_t tiles_y = (rows + t - 1) / t, tiles_x = (cols + t - 1) / t;
  if (tiles_y > 65535 || n_batch > 65535 || tiles_x > INT32_MAX) return false;
  const std::string key = transpose_copy_key(c);
  const ptx::Target target = map_kernel_target(dev);
  CUfunction f =
      dev.kernels().get_or_build(key, [&] { return generate_transpose_copy(c, target); });
  const LaunchConfig cfg{{unsigned(tiles_x), unsigned(tiles_y), unsigned(n_batch)}, {32, 8}, 0};
  const auto u = [](int64_t v) { return uint64_t(v); };
  launch_kernel(dev, f, cfg, key, plan.addresses[1], plan.addresses[0], u(rows), u(cols),
                u(src[size_t(last)]), u(dst[size_t(d)]), u(s_b), u(d_b));
  return true;
}

}  // namespace

void run_copy(CudaDevice& dev, const CopyCall& call) {
  if (call.dst.numel() == 0) return;
  const TensorRef* outs[] = {&call.dst};
  const TensorRef* ins[] = {&call.src};
  const MapPlan plan = plan_map("copy", call.dst.shape, outs, ins);
  if (run_transpose_copy(dev, call, plan)) return;
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
