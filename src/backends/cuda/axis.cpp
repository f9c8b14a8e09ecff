// run_along_axis: cumsum, cumprod, softmax and log_softmax along n of a contiguous
// [outer, n, inner] tensor.
//   inner == 1, n <= kWarpRowMax: a warp per row;
//   inner == 1, longer rows:      a block per row;
//   inner > 1:                    a thread per (outer, inner) line, coalesced across inner.
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
  unsigned blocks = 1;
  if (call.inner > 1) {
    cfg.variant = AxisVariant::columns;
    blocks = grid_blocks(dev, ceil_div(call.outer * call.inner, kAxisBlock), 16);
  } else if (call.n <= kWarpRowMax) {
    cfg.variant = AxisVariant::warp_rows;
    blocks = grid_blocks(dev, ceil_div(call.outer, kAxisBlock / 32), 16);
  } else {
    cfg.variant = AxisVariant::block_rows;
    blocks = grid_blocks(dev, call.outer, 8);
  }
  // Equal misalignment: every row's aligned input vectors line up with output vectors.
  cfg.vector_store = cfg.uses_vector_store() && in % 16 == out % 16;

  const CUfunction f = reduce_family_kernel(
      dev, cfg.name(), [&](const ptx::Target& t) { return generate_axis_kernel(cfg, t); });
  launch_kernel(dev, f, LaunchConfig{{blocks}, {kAxisBlock}, 0}, cfg.name(), in, out,
                uint64_t(call.outer), uint64_t(call.n), uint64_t(call.inner));
}

}  // namespace numr::cuda
