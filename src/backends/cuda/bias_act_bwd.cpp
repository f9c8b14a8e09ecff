// run_bias_activation_bwd: grad_pre and the bias gradient in one pass over [rows, N].
// Column tiles of 32 lanes x vec columns run down slices of the rows; the rows are split
// so that the grid has many blocks (fewer, longer-running blocks fall short of memory
// speed), and a second kernel adds each column's per-split sums
// in a fixed order (deterministic: no float atomics).
#include <algorithm>
#include <cstdint>

#include "backends/cuda/bias_act_bwd_kernels.h"
#include "backends/cuda/context.h"
#include "backends/cuda/launch.h"
#include "backends/cuda/ops.h"
#include "backends/cuda/reduce_codegen.h"
#include "backends/cuda/reduce_host.h"
#include "backends/cuda/reduce_state.h"
#include "numr/error.h"

namespace numr::cuda {
namespace {

constexpr int64_t kMinSplitRows = 32;  // rows per split, at least (4 per warp)
constexpr int64_t kMaxSplits = 65535;  // grid.y limit
constexpr int64_t kBlocksPerSm = 32;   // blocks the splits aim for, per SM
constexpr uint64_t kVectorAlign = 16;

}  // namespace

void run_bias_activation_bwd(CudaDevice& dev, const BiasActBwdCall& call) {
  const DType d = call.grad.dtype;
  if (call.saved.dtype != d || call.grad_pre.dtype != d || call.d_bias.dtype != d)
    fail<BackendError>("bias_activation_bwd", "CUDA kernels want one dtype for every tensor");
  const int64_t N = call.grad.shape.empty() ? 1 : call.grad.shape.back();
  if (N == 0) return;
  const int64_t rows = call.grad.numel() / N;
  const size_t es = dtype_size(d);

  const uint64_t grad = device_address(call.grad.base, call.grad.offset, es);
  const uint64_t saved = device_address(call.saved.base, call.saved.offset, es);
  const uint64_t grad_pre = device_address(call.grad_pre.base, call.grad_pre.offset, es);
  const uint64_t d_bias = device_address(call.d_bias.base, call.d_bias.offset, es);

  BiasActBwdKernelConfig cfg{d, call.act, call.saved_is_pre};
  const int vec = vector_width(d);
  if (N % vec == 0 && grad % kVectorAlign == 0 && saved % kVectorAlign == 0 &&
      grad_pre % kVectorAlign == 0)
    cfg.vec = vec;
  const int64_t col_blocks = ceil_div(N, int64_t(kBiasCols) * cfg.vec);
  if (ceil_div(N, int64_t(kBiasCols)) > int64_t(INT32_MAX))  // the bias-sum kernel's grid
    fail<BackendLimitation>("bias_activation_bwd", "more than 2^31 column tiles on CUDA");
  const int64_t want_blocks = int64_t(std::max(dev.props().sm_count, 1)) * kBlocksPerSm;
  int64_t splits = 1;
  if (col_blocks < want_blocks)
    splits = std::clamp<int64_t>(std::min(ceil_div(want_blocks, col_blocks), rows / kMinSplitRows),
                                 1, kMaxSplits);
  const int64_t per_split = std::max<int64_t>(1, ceil_div(rows, splits));
  splits = std::max<int64_t>(1, ceil_div(rows, per_split));

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
  const LaunchConfig sum_lc{
      {unsigned(ceil_div(N, int64_t(kBiasCols)))}, {unsigned(kBiasCols), unsigned(kBiasSlices)}, 0};
  launch_kernel(dev, sum, sum_lc, sum_name, partials.address(), d_bias, uint64_t(N),
                uint64_t(splits));
}

}  // namespace numr::cuda
