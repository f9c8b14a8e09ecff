// run_along_axis: cumsum, cumprod, softmax and log_softmax along n of a contiguous
// [outer, n, inner] tensor.
//   inner > 1:                    a thread per (outer, inner) line, coalesced across inner;
//   softmax, aligned rows (every row of in and out on a 16-byte boundary) that fit in
//   registers: warp_regs up to softmax_regs_capacity(warp), then block_regs;
//   other rows, n <= kWarpRowMax: a warp per row;
//   longer rows:                  a block per row, as many blocks as rows.
#include <cstdint>

#include "backends/cuda/axis_kernels.h"
#include "backends/cuda/context.h"
#include "backends/cuda/launch.h"
#include "backends/cuda/ops.h"
#include "backends/cuda/reduce_host.h"
#include "numr/error.h"

namespace numr::cuda {
namespace {

constexpr int64_t kWarpRowMax = 1024;

}  // namespace

void run_along_axis(CudaDevice& dev, const AxisCall& call) {
  if (call.outer <= 0 || call.n <= 0 || call.inner <= 0) return;
  if (call.in.dtype != call.out.dtype)
    fail<BackendError>(op_name(call.op), "CUDA along_axis with different dtypes");
  const DType d = call.in.dtype;
  const size_t es = dtype_size(d);
  const uint64_t in = device_address(call.in.base, call.in.offset, es);
  const uint64_t out = device_address(call.out.base, call.out.offset, es);

  AxisKernelConfig cfg;
  cfg.op = call.op;
  cfg.dtype = d;
  // n * es a multiple of 16 with both bases aligned puts every row on a 16-byte boundary.
  const bool rows_aligned = in % 16 == 0 && out % 16 == 0 && (uint64_t(call.n) * es) % 16 == 0;
  const bool softmax = call.op == OpId::softmax || call.op == OpId::log_softmax;
  const int64_t warps = ceil_div(call.outer, kAxisBlock / 32);
  unsigned blocks = 1;
  if (call.inner > 1) {
    cfg.variant = AxisVariant::columns;
    blocks = grid_blocks(dev, ceil_div(call.outer * call.inner, kAxisBlock), 16);
  } else if (softmax && rows_aligned && call.n <= softmax_regs_capacity(d, false)) {
    cfg.variant = AxisVariant::warp_regs;
    blocks = grid_blocks(dev, warps, 16);
  } else if (softmax && rows_aligned && call.n <= softmax_regs_capacity(d, true)) {
    cfg.variant = AxisVariant::block_regs;
    blocks = grid_blocks(dev, call.outer, 8);
  } else if (call.n <= kWarpRowMax) {
    cfg.variant = AxisVariant::warp_rows;
    blocks = grid_blocks(dev, warps, 16);
  } else {
    // A block per row (one_pass_blocks) rather than fewer blocks looping over the rows,
    // as for the elementwise kernels (launch.h).
    cfg.variant = AxisVariant::block_rows;
    blocks = one_pass_blocks(call.outer, 1);
  }
  // Equal misalignment: every row's aligned input vectors line up with output vectors.
  cfg.vector_store = cfg.uses_vector_store() && in % 16 == out % 16;
  cfg.aligned = cfg.uses_aligned() && rows_aligned;

  const CUfunction f = reduce_family_kernel(
      dev, cfg.name(), [&](const ptx::Target& t) { return generate_axis_kernel(cfg, t); });
  launch_kernel(dev, f, LaunchConfig{{blocks}, {kAxisBlock}, 0}, cfg.name(), in, out,
                uint64_t(call.outer), uint64_t(call.n), uint64_t(call.inner));
}

}  // namespace numr::cuda
