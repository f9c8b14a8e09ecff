// run_bias_activation_bwd: grad_pre and the bias gradient in one pass over [rows, N].
// Column tiles of 32 run down slices of the rows; when there are too few tiles to fill
// the device the rows are split too, and a second kernel adds each column's per-split
// sums in a fixed order (deterministic: no float atomics).
#include <algorithm>
#include <cstdint>

#include "backends/cuda/bias_act_bwd_kernels.h"
#include "backends/cuda/context.h"
#include "backends/cuda/launch.h"
#include "backends/cuda/ops.h"
#include "backends/cuda/reduce_host.h"
#include "backends/cuda/reduce_state.h"
#include "numr/error.h"

namespace numr::cuda {
namespace {

constexpr int64_t kMinSplitRows = 64;  // rows per split, at least (8 per thread)
constexpr int64_t kMaxSplits = 65535;  // grid.y limit

}  // namespace

void run_bias_activation_bwd(CudaDevice& dev, const BiasActBwdCall& call) {
  const DType d = call.grad.dtype;
  if (call.saved.dtype != d || call.grad_pre.dtype != d || call.d_bias.dtype != d)
    fail<BackendError>("bias_activation_bwd", "CUDA kernels want one dtype for every tensor");
  const int64_t N = call.grad.shape.empty() ? 1 : call.grad.shape.back();
  if (N == 0) return;
  const int64_t rows = call.grad.numel() / N;
  const size_t es = dtype_size(d);

  const BiasActBwdKernelConfig cfg{d, call.act, call.saved_is_pre};
  const int64_t col_blocks = ceil_div(N, kBiasCols);
  if (col_blocks > int64_t(INT32_MAX))
    fail<BackendLimitation>("bias_activation_bwd", "more than 2^31 column tiles on CUDA");
  const int64_t want_blocks = int64_t(std::max(dev.props().sm_count, 1)) * 8;
  int64_t splits = 1;
  if (col_blocks < want_blocks)
    splits = std::clamp<int64_t>(std::min(ceil_div(want_blocks, col_blocks), rows / kMinSplitRows),
                                 1, kMaxSplits);
  const int64_t per_split = std::max<int64_t>(1, ceil_div(rows, splits));
  splits = std::max<int64_t>(1, ceil_div(rows, per_split));

  const uint64_t grad = device_address(call.grad.base, call.grad.offset, es);
  const uint64_t saved = device_address(call.saved.base, call.saved.offset, es);
  const uint64_t grad_pre = device_address(call.grad_pre.base, call.grad_pre.offset, es);
  const uint64_t d_bias = device_address(call.d_bias.base, call.d_bias.offset, es);
  const LaunchConfig lc{
      {unsigned(col_blocks), unsigned(splits)}, {unsigned(kBiasCols), unsigned(kBiasSlices)}, 0};
  const CUfunction main = reduce_family_kernel(
      dev, cfg.name(), [&](const ptx::Target& t) { return generate_bias_act_bwd_kernel(cfg, t); });
  if (splits == 1) {
    launch_kernel(dev, main, lc, cfg.name(), grad, saved, grad_pre, d_bias, uint64_t(0),
                  uint64_t(rows), uint64_t(N), uint64_t(per_split));
    return;
  }
  const size_t acc_size = size_t(ptx::type_size(reduce_acc_type(d)));
  ScratchBuffer partials(dev, size_t(splits * N) * acc_size);
  launch_kernel(dev, main, lc, cfg.name(), grad, saved, grad_pre, d_bias, partials.address(),
                uint64_t(rows), uint64_t(N), uint64_t(per_split));
  const std::string sum_name = bias_sum_kernel_name(d);
  const CUfunction sum = reduce_family_kernel(
      dev, sum_name, [&](const ptx::Target& t) { return generate_bias_sum_kernel(d, t); });
  launch_kernel(dev, sum, LaunchConfig{{grid_blocks(dev, ceil_div(N, 256), 8)}, {256}, 0}, sum_name,
                partials.address(), d_bias, uint64_t(N), uint64_t(splits));
}

}  // namespace numr::cuda
