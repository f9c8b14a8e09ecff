// run_index_gather and run_index_scatter: one generated kernel per (primitive, op, dtype);
// strides and extents are parameters. F16 and BF16 reductions run on an F32 copy of out
// (copied there and back by run_copy) so that each element is rounded once.
#include <cstdint>

#include "backends/cuda/context.h"
#include "backends/cuda/indexing_kernels.h"
#include "backends/cuda/launch.h"
#include "backends/cuda/ops.h"
#include "backends/cuda/reduce_host.h"

namespace numr::cuda {
namespace {

CUfunction index_kernel(CudaDevice& dev, const IndexKernelConfig& cfg) {
  return reduce_family_kernel(dev, cfg.name(),
                              [&](const ptx::Target& t) { return generate_index_kernel(cfg, t); });
}

uint64_t address(const TensorRef& t) {
  return device_address(t.base, t.offset, dtype_size(t.dtype));
}

}  // namespace

void run_index_gather(CudaDevice& dev, const GatherCall& c) {
  const int64_t total = c.index.numel();
  if (total == 0) return;
  const IndexKernelConfig cfg{false, ScatterOp::Assign, c.x.dtype, c.x.dtype};
  const CUfunction f = index_kernel(dev, cfg);
  launch_kernel(
      dev, f, LaunchConfig{{grid_blocks(dev, ceil_div(total, kIndexBlock), 16)}, {kIndexBlock}, 0},
      cfg.name(), address(c.x), address(c.index), address(c.out), uint64_t(c.index.shape[1]),
      uint64_t(c.index.shape[2]), uint64_t(total), c.x.strides[0], c.x.strides[1], c.x.strides[2],
      c.index.strides[0], c.index.strides[1], c.index.strides[2]);
}

void run_index_scatter(CudaDevice& dev, const ScatterCall& c) {
  if (c.index.numel() == 0) return;
  const DType t = c.out.dtype;
  if (c.op != ScatterOp::Assign && (t == DType::F16 || t == DType::BF16)) {
    // Reduce in F32 and round once: widen out into scratch, scatter there, narrow back.
    ScratchBuffer scratch(dev, size_t(c.out.numel()) * 4);
    TensorRef wide;
    wide.base = reinterpret_cast<void*>(uintptr_t(scratch.address()));
    wide.dtype = DType::F32;
    wide.shape = c.out.shape;
    wide.strides = {c.out.shape[1] * c.out.shape[2], c.out.shape[2], 1};
    run_copy(dev, CopyCall{c.out, wide});
    ScatterCall w = c;
    w.out = wide;
    run_index_scatter(dev, w);
    run_copy(dev, CopyCall{wide, c.out});
    return;
  }
  const IndexKernelConfig cfg{true, c.op, t, c.src.dtype};
  const CUfunction f = index_kernel(dev, cfg);
  const int64_t columns = c.index.shape[0] * c.index.shape[2];
  launch_kernel(
      dev, f,
      LaunchConfig{{grid_blocks(dev, ceil_div(columns, kIndexBlock), 16)}, {kIndexBlock}, 0},
      cfg.name(), address(c.out), address(c.index), address(c.src), uint64_t(c.index.shape[0]),
      uint64_t(c.index.shape[1]), uint64_t(c.index.shape[2]), c.out.strides[0], c.out.strides[1],
      c.out.strides[2], c.index.strides[0], c.index.strides[1], c.index.strides[2],
      c.src.strides[0], c.src.strides[1], c.src.strides[2]);
}

}  // namespace numr::cuda
