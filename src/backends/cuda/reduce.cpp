// run_reduce: picks the kernel variant for a reduction and launches it.
//
//   reduced run contiguous (the last dims, or all):
//     R <= kWarpRowMax                     warp_rows  (a warp per output)
//     few outputs, R >= 2 * kSplitMinChunk  split_rows + partials (blocks share an output)
//     otherwise                             block_rows (a block per output)
//   reduced dims strided, innermost kept dim contiguous with >= kColumnMinWidth outputs:
//     vec_columns when 16-byte vectors of adjacent outputs line up (vector_columns), else
//     columns (+ partials when the reduced range is split to fill the device)
//   anything else: the row variants with strided loads.
// Results are deterministic: the split of the work depends only on the sizes and the
// device's SM count, and partial states are merged in a fixed order (no float atomics).
#include <algorithm>
#include <array>
#include <cstdint>

#include "backends/cuda/context.h"
#include "backends/cuda/launch.h"
#include "backends/cuda/ops.h"
#include "backends/cuda/reduce_codegen.h"
#include "backends/cuda/reduce_host.h"
#include "backends/cuda/reduce_kernels.h"
#include "backends/cuda/reduce_state.h"
#include "numr/error.h"

namespace numr::cuda {
namespace {

constexpr int64_t kWarpRowMax = 1024;      // elements: a warp's 32 lanes, a few vectors each
constexpr int64_t kSplitMinChunk = 16384;  // elements per block of a split row, at least
constexpr int64_t kColumnMinWidth = 8;     // contiguous outputs for the column kernel
constexpr int64_t kColumnMinSlice = 64;    // reduced elements per block slice, at least
constexpr int64_t kMaxSplits = 65535;      // grid.y limit (columns)

using DimArray = std::array<uint64_t, kMaxReduceDims>;
using StrideArray = std::array<int64_t, kMaxReduceDims>;

struct Launch {
  uint64_t in = 0, out = 0, partials = 0;
  uint64_t K = 0, R = 0;
  int64_t correction = 1;
  uint64_t chunk = 0;
  DimArray keep_shape{}, red_shape{};
  StrideArray keep_strides{}, red_strides{};
};

void fill(const Dims& d, DimArray& shape, StrideArray& strides) {
  for (size_t i = 0; i < d.shape.size(); ++i) {
    shape[i] = uint64_t(d.shape[i]);
    strides[i] = d.strides[i];
  }
}

CUfunction kernel_for(CudaDevice& dev, const ReduceKernelConfig& cfg) {
  return reduce_family_kernel(dev, cfg.name(),
                              [&](const ptx::Target& t) { return generate_reduce_kernel(cfg, t); });
}

void launch_main(CudaDevice& dev, const ReduceKernelConfig& cfg, const LaunchConfig& lc,
                 const Launch& a) {
  launch_kernel(dev, kernel_for(dev, cfg), lc, cfg.name(), a.in, a.out, a.partials, a.K, a.R,
                a.correction, a.chunk, a.keep_shape, a.keep_strides, a.red_shape, a.red_strides);
}

// vec_columns applies: each vector of adjacent outputs lies in the innermost kept dim and
// every one of its loads starts on a 16-byte boundary (aligned base, strides in whole
// vectors).
bool vector_columns(const Dims& keep, const Dims& red, uint64_t in, DType d) {
  const int64_t vec = vector_width(d);
  if (vec > kMaxColumnVector || in % 16 != 0 || keep.shape.back() % vec != 0) return false;
  for (size_t i = 0; i + 1 < keep.strides.size(); ++i)
    if (keep.strides[i] % vec != 0) return false;
  for (int64_t s : red.strides)
    if (s % vec != 0) return false;
  return true;
}

void launch_partials(CudaDevice& dev, ReduceKernelConfig cfg, const Launch& a, uint64_t splits) {
  cfg.variant = ReduceVariant::partials;
  const unsigned blocks = grid_blocks(dev, ceil_div(int64_t(a.K), kReduceBlock / 32));
  launch_kernel(dev, kernel_for(dev, cfg), LaunchConfig{{blocks}, {kReduceBlock}, 0}, cfg.name(),
                a.partials, a.out, a.K, a.R, a.correction, splits);
}

}  // namespace

void run_reduce(CudaDevice& dev, const ReduceCall& call) {
  const std::string_view name = op_name(call.op);
  const size_t nk = size_t(call.n_keep);
  const std::vector<int64_t> shape(call.in.shape.begin(), call.in.shape.end());
  const std::vector<int64_t> strides(call.in.strides.begin(), call.in.strides.end());
  const std::vector<int64_t> keep_shape(shape.begin(), shape.begin() + long(nk));
  const std::vector<int64_t> keep_strides(strides.begin(), strides.begin() + long(nk));
  const std::vector<int64_t> red_shape(shape.begin() + long(nk), shape.end());
  const std::vector<int64_t> red_strides(strides.begin() + long(nk), strides.end());
  int64_t K = 1, R = 1;
  for (int64_t e : keep_shape) K *= e;
  for (int64_t e : red_shape) R *= e;
  if (K == 0) return;
  if (R == 0) fail<BackendError>(name, "CUDA reduce called with an empty reduction");

  const Dims keep = collapse_dims(keep_shape, keep_strides);
  const Dims red = collapse_dims(red_shape, red_strides);
  if (keep.shape.size() > size_t(kMaxReduceDims) || red.shape.size() > size_t(kMaxReduceDims))
    fail<BackendLimitation>(name, "a view whose dims collapse to more than ", kMaxReduceDims,
                            " kept or reduced dims on CUDA");

  ReduceKernelConfig cfg;
  cfg.op = call.op;
  cfg.in = call.in.dtype;
  cfg.keep_dims = int(keep.shape.size());
  cfg.red_dims = int(red.shape.size());
  cfg.contiguous = cfg.red_dims == 1 && red.strides[0] == 1;
  if (call.out.dtype != cfg.out())
    fail<BackendError>(name, "CUDA reduce: output dtype ", dtype_name(call.out.dtype),
                       ", expected ", dtype_name(cfg.out()));

  Launch a;
  a.in = device_address(call.in.base, call.in.offset, dtype_size(call.in.dtype));
  a.out = device_address(call.out.base, call.out.offset, dtype_size(call.out.dtype));
  a.K = uint64_t(K);
  a.R = uint64_t(R);
  a.correction = call.correction;
  fill(keep, a.keep_shape, a.keep_strides);
  fill(red, a.red_shape, a.red_strides);

  const int64_t sms = std::max(dev.props().sm_count, 1);
  const int64_t want_blocks = sms * 8;  // 2048 resident threads per SM at 256 per block
  const int state_bytes = ReduceState::bytes(call.op, reduce_state_type(call.op, cfg.in));

  const bool columns = !cfg.contiguous && red.strides.back() != 1 && keep.strides.back() == 1 &&
                       keep.shape.back() >= kColumnMinWidth;
  if (columns) {
    cfg.variant = vector_columns(keep, red, a.in, cfg.in) ? ReduceVariant::vec_columns
                                                          : ReduceVariant::columns;
    const int64_t tile =
        kColumnWidth * (cfg.variant == ReduceVariant::vec_columns ? vector_width(cfg.in) : 1);
    const int64_t col_blocks = ceil_div(K, tile);
    if (col_blocks > int64_t(INT32_MAX))
      fail<BackendLimitation>(name, "more than 2^31 blocks of outputs on CUDA");
    int64_t splits = 1;
    if (col_blocks < want_blocks / 2)
      splits = std::clamp<int64_t>(std::min(ceil_div(want_blocks, col_blocks), R / kColumnMinSlice),
                                   1, kMaxSplits);
    a.chunk = uint64_t(ceil_div(R, splits));
    splits = ceil_div(R, int64_t(a.chunk));
    const LaunchConfig lc{{unsigned(col_blocks), unsigned(splits)},
                          {unsigned(kColumnWidth), unsigned(kColumnSlices)},
                          0};
    if (splits == 1) {
      launch_main(dev, cfg, lc, a);
      return;
    }
    ScratchBuffer scratch(dev, size_t(K * splits * state_bytes));
    a.partials = scratch.address();
    launch_main(dev, cfg, lc, a);
    launch_partials(dev, cfg, a, uint64_t(splits));
    return;
  }

  if (R <= kWarpRowMax) {
    cfg.variant = ReduceVariant::warp_rows;
    const unsigned blocks = grid_blocks(dev, ceil_div(K, kReduceBlock / 32), 16);
    launch_main(dev, cfg, LaunchConfig{{blocks}, {kReduceBlock}, 0}, a);
    return;
  }
  if (K < want_blocks / 2 && R >= 2 * kSplitMinChunk) {
    cfg.variant = ReduceVariant::split_rows;
    int64_t splits = std::min(ceil_div(want_blocks, K), R / kSplitMinChunk);
    // Chunks of whole 16-byte vectors keep every block's run aligned like the row's.
    a.chunk = uint64_t(ceil_div(ceil_div(R, splits), 16) * 16);
    splits = ceil_div(R, int64_t(a.chunk));
    ScratchBuffer scratch(dev, size_t(K * splits * state_bytes));
    a.partials = scratch.address();
    launch_main(dev, cfg,
                LaunchConfig{{unsigned(splits), unsigned(K)}, {unsigned(kReduceBlock)}, 0}, a);
    launch_partials(dev, cfg, a, uint64_t(splits));
    return;
  }
  // As many blocks as rows rather than fewer blocks looping over the rows, as for the
  // elementwise kernels (launch.h).
  cfg.variant = ReduceVariant::block_rows;
  launch_main(dev, cfg, LaunchConfig{{one_pass_blocks(K, 1)}, {kReduceBlock}, 0}, a);
}

}  // namespace numr::cuda
