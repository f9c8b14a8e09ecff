// run_row_norm and run_row_norm_bwd: rms_norm and layer_norm over contiguous [rows, d].
//   forward, aligned rows that fit in registers: a warp per row up to the warp's capacity,
//   else a block per row (norm_regs_capacity);
//   other rows of d <= kWarpRowMax: a warp per row (8 rows per block), else a block per row,
//   walking the row in memory once per pass.
// Aligned: every tensor of the walk 16-byte aligned and d a multiple of the vector width,
// so 16-byte vectors move; otherwise single elements.
// The backward runs the fused rows kernel (d_x, and d_weight and d_bias through shared
// memory) where its shared regions fit, else the rows kernel (d_x) and the columns kernel
// (d_weight, d_bias). Either leaves partial sums, per block or per row split, that the
// bias-sum kernel adds in a fixed order when there is more than one (norm_kernels.h).
#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <string>

#include "backends/cuda/bias_act_bwd_kernels.h"
#include "backends/cuda/context.h"
#include "backends/cuda/launch.h"
#include "backends/cuda/norm_kernels.h"
#include "backends/cuda/ops.h"
#include "backends/cuda/reduce_codegen.h"
#include "backends/cuda/reduce_host.h"
#include "backends/cuda/reduce_state.h"
#include "numr/error.h"

namespace numr::cuda {
namespace {

constexpr int64_t kWarpRowMax = 1024;
constexpr int64_t kMinSplitRows = 32;  // rows per split of the columns kernel, at least
constexpr int64_t kMaxSplits = 65535;  // grid.y limit
constexpr int64_t kBlocksPerSm = 32;   // blocks the splits aim for, per SM
// The fused backward's shared regions, at most (dynamic shared memory above 48 KiB is an
// opt-in every sm_80+ device grants up to this).
constexpr int64_t kFusedSharedMax = 96 * 1024;

// vector_width(d) when every address is 16-byte aligned and d is a multiple of it, else 1.
int vector_units(DType t, int64_t d, std::initializer_list<uint64_t> addresses) {
  const int vec = vector_width(t);
  if (d % vec != 0) return 1;
  for (const uint64_t a : addresses)
    if (a % 16 != 0) return 1;
  return vec;
}

// The rows kernels' grid: 8 rows per block for warps, else a block per row.
unsigned row_blocks(CudaDevice& dev, bool block, int64_t rows) {
  return block ? one_pass_blocks(rows, 1) : grid_blocks(dev, ceil_div(rows, kNormBlock / 32), 16);
}

// d_weight (and d_bias when nonzero) from partial sums [parts, d] (d_bias's after
// d_weight's), added in a fixed order by the bias-sum kernel.
void sum_partials(CudaDevice& dev, DType t, uint64_t partials, uint64_t d_w, uint64_t d_b,
                  int64_t d, int64_t parts) {
  const std::string name = bias_sum_kernel_name(t);
  const CUfunction sum = reduce_family_kernel(
      dev, name, [&](const ptx::Target& target) { return generate_bias_sum_kernel(t, target); });
  const LaunchConfig lc{
      {unsigned(ceil_div(d, int64_t(kBiasCols)))}, {unsigned(kBiasCols), unsigned(kBiasSlices)}, 0};
  const uint64_t acc = uint64_t(ptx::type_size(reduce_acc_type(t)));
  launch_kernel(dev, sum, lc, name, partials, d_w, uint64_t(d), uint64_t(parts));
  if (d_b)
    launch_kernel(dev, sum, lc, name, partials + uint64_t(parts * d) * acc, d_b, uint64_t(d),
                  uint64_t(parts));
}

CUfunction norm_kernel(CudaDevice& dev, const NormKernelConfig& cfg) {
  return reduce_family_kernel(dev, cfg.name(),
                              [&](const ptx::Target& t) { return generate_norm_kernel(cfg, t); });
}

}  // namespace

void run_row_norm(CudaDevice& dev, const RowNormCall& call) {
  if (call.rows <= 0) return;
  const DType t = call.x.dtype;
  const bool centred = call.op == OpId::layer_norm;
  if (call.weight.dtype != t || call.out.dtype != t || (centred && call.bias.dtype != t))
    fail<BackendError>(op_name(call.op), "CUDA kernels want one dtype for x, weight, bias and out");
  const size_t es = dtype_size(t);
  const size_t acc = size_t(ptx::type_size(reduce_acc_type(t)));
  const uint64_t x = device_address(call.x.base, call.x.offset, es);
  const uint64_t w = device_address(call.weight.base, call.weight.offset, es);
  const uint64_t b = centred ? device_address(call.bias.base, call.bias.offset, es) : 0;
  const uint64_t out = device_address(call.out.base, call.out.offset, es);
  uint64_t mean = 0, rstd = 0;
  if (call.has_stats) {
    rstd = device_address(call.rstd.base, call.rstd.offset, acc);
    if (centred) mean = device_address(call.mean.base, call.mean.offset, acc);
  }
  uint64_t res = 0, sum = 0;
  if (call.has_residual) {
    if (call.residual.dtype != t || call.sum.dtype != t)
      fail<BackendError>(op_name(call.op), "CUDA kernels want residual and sum of x's dtype");
    res = device_address(call.residual.base, call.residual.offset, es);
    sum = device_address(call.sum.base, call.sum.offset, es);
  }
  NormKernelConfig cfg;
  cfg.kind = NormKernel::forward;
  cfg.op = call.op;
  cfg.dtype = t;
  cfg.block = call.d > kWarpRowMax;
  cfg.vec = vector_units(t, call.d, {x, w, out, centred ? b : 0, res, sum});
  cfg.stats = call.has_stats;
  cfg.residual = call.has_residual;
  // Aligned rows that fit in registers: a warp up to its capacity, then a block.
  if (cfg.vec > 1 && call.d <= norm_regs_capacity(t, true)) {
    cfg.regs = true;
    cfg.block = call.d > norm_regs_capacity(t, false);
  }
  const LaunchConfig lc{{row_blocks(dev, cfg.block, call.rows)}, {unsigned(kNormBlock)}, 0};
  launch_kernel(dev, norm_kernel(dev, cfg), lc, cfg.name(), x, w, b, out, mean, rstd,
                uint64_t(call.rows), uint64_t(call.d), call.eps, res, sum);
}

void run_row_norm_bwd(CudaDevice& dev, const RowNormBwdCall& call) {
  const DType t = call.x.dtype;
  const bool centred = call.op == OpId::layer_norm;
  if (call.grad.dtype != t || call.weight.dtype != t || call.d_x.dtype != t ||
      call.d_weight.dtype != t || (centred && call.d_bias.dtype != t))
    fail<BackendError>(op_name(call.op),
                       "CUDA kernels want one dtype for x, grad, weight and "
                       "the gradients");
  if (call.d <= 0) return;
  const int64_t rows = std::max<int64_t>(call.rows, 0), d = call.d;
  const size_t es = dtype_size(t);
  const size_t acc = size_t(ptx::type_size(reduce_acc_type(t)));
  const uint64_t g = device_address(call.grad.base, call.grad.offset, es);
  const uint64_t x = device_address(call.x.base, call.x.offset, es);
  const uint64_t w = device_address(call.weight.base, call.weight.offset, es);
  const uint64_t mean = centred ? device_address(call.mean.base, call.mean.offset, acc) : 0;
  const uint64_t rstd = device_address(call.rstd.base, call.rstd.offset, acc);
  const uint64_t d_x = device_address(call.d_x.base, call.d_x.offset, es);
  const uint64_t d_w = device_address(call.d_weight.base, call.d_weight.offset, es);
  const uint64_t d_b = centred ? device_address(call.d_bias.base, call.d_bias.offset, es) : 0;

  NormKernelConfig rows_cfg;
  rows_cfg.kind = NormKernel::backward_rows;
  rows_cfg.op = call.op;
  rows_cfg.dtype = t;
  rows_cfg.block = d > kWarpRowMax;
  rows_cfg.vec = vector_units(t, d, {g, x, w, d_x});
  const int sums = centred ? 2 : 1;
  // The fused kernel where its shared regions fit (a region per warp, or one per block).
  const int64_t regions = rows_cfg.block ? 1 : kNormBlock / 32;
  const int64_t shared = regions * sums * d * int64_t(acc);
  // (The block variant's static row sums take a little more; 1 KiB covers them.)
  rows_cfg.fused = rows > 0 && shared <= kFusedSharedMax &&
                   shared + 1024 <= int64_t(dev.props().max_shared_per_block_optin);
  if (rows_cfg.fused) {
    const unsigned blocks =
        rows_cfg.block ? grid_blocks(dev, rows, 8) : grid_blocks(dev, ceil_div(rows, regions), 4);
    const LaunchConfig lc{{blocks}, {unsigned(kNormBlock)}, unsigned(shared)};
    const CUfunction f = norm_kernel(dev, rows_cfg);
    if (blocks == 1) {
      launch_kernel(dev, f, lc, rows_cfg.name(), g, x, w, mean, rstd, d_x, d_w, d_b, uint64_t(0),
                    uint64_t(rows), uint64_t(d));
      return;
    }
    ScratchBuffer partials(dev, size_t(sums * int64_t(blocks) * d) * acc);
    launch_kernel(dev, f, lc, rows_cfg.name(), g, x, w, mean, rstd, d_x, d_w, d_b,
                  partials.address(), uint64_t(rows), uint64_t(d));
    sum_partials(dev, t, partials.address(), d_w, centred ? d_b : 0, d, blocks);
    return;
  }
  if (rows > 0) {
    const LaunchConfig lc{{row_blocks(dev, rows_cfg.block, rows)}, {unsigned(kNormBlock)}, 0};
    launch_kernel(dev, norm_kernel(dev, rows_cfg), lc, rows_cfg.name(), g, x, w, mean, rstd, d_x,
                  d_w, d_b, uint64_t(0), uint64_t(rows), uint64_t(d));
  }

  // The columns: every row of the split summed per column; rows == 0 gives zeros.
  NormKernelConfig col_cfg;
  col_cfg.kind = NormKernel::backward_columns;
  col_cfg.op = call.op;
  col_cfg.dtype = t;
  col_cfg.vec = vector_units(t, d, {g, x});
  const int64_t col_blocks = ceil_div(d, int64_t(32) * col_cfg.vec);
  if (ceil_div(d, int64_t(32)) > int64_t(INT32_MAX))  // the bias-sum kernel's grid
    fail<BackendLimitation>(op_name(call.op), "more than 2^31 column tiles on CUDA");
  const int64_t want_blocks = int64_t(std::max(dev.props().sm_count, 1)) * kBlocksPerSm;
  int64_t splits = 1;
  if (col_blocks < want_blocks)
    splits = std::clamp<int64_t>(std::min(ceil_div(want_blocks, col_blocks), rows / kMinSplitRows),
                                 1, kMaxSplits);
  const int64_t per_split = std::max<int64_t>(1, ceil_div(rows, splits));
  splits = std::max<int64_t>(1, ceil_div(rows, per_split));
  const LaunchConfig lc{
      {unsigned(col_blocks), unsigned(splits)}, {32u, unsigned(kNormColWarps)}, 0};
  const CUfunction cols = norm_kernel(dev, col_cfg);
  if (splits == 1) {
    launch_kernel(dev, cols, lc, col_cfg.name(), g, x, mean, rstd, d_w, d_b, uint64_t(0),
                  uint64_t(rows), uint64_t(d), uint64_t(per_split));
    return;
  }
  ScratchBuffer partials(dev, size_t(sums * splits * d) * acc);
  launch_kernel(dev, cols, lc, col_cfg.name(), g, x, mean, rstd, d_w, d_b, partials.address(),
                uint64_t(rows), uint64_t(d), uint64_t(per_split));
  sum_partials(dev, t, partials.address(), d_w, centred ? d_b : 0, d, splits);
}

}  // namespace numr::cuda
