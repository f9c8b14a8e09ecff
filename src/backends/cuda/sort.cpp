// run_sort_rows and run_search_sorted (sort_kernels.h). A sort is one tile launch when rows
// fit a tile; longer rows are cut into tile-sized sorted runs, then merged pairwise in
// ceil(log2(pieces)) passes between two item buffers (each a split launch, then the merge),
// the last pass writing the results.
#include <algorithm>
#include <cstdint>
#include <optional>

#include "backends/cuda/context.h"
#include "backends/cuda/launch.h"
#include "backends/cuda/ops.h"
#include "backends/cuda/reduce_host.h"
#include "backends/cuda/sort_kernels.h"
#include "numr/error.h"

namespace numr::cuda {
namespace {

CUfunction sort_kernel(CudaDevice& dev, SortKernelKind kind, DType d) {
  const SortKernelConfig cfg{kind, d};
  return reduce_family_kernel(dev, cfg.name(),
                              [&](const ptx::Target& t) { return generate_sort_kernel(cfg, t); });
}

uint64_t address(const TensorRef& t) {
  return device_address(t.base, t.offset, dtype_size(t.dtype));
}

unsigned capped_grid(int64_t blocks) {
  return unsigned(std::clamp<int64_t>(blocks, 1, int64_t(0x7fffffff)));
}

}  // namespace

void run_sort_rows(CudaDevice& dev, const SortCall& c) {
  if (c.rows == 0 || c.k == 0) return;
  // Positions travel in 32 bits inside the items of 4-byte keys.
  if (c.n >= (int64_t(1) << 31))
    fail<BackendLimitation>("sort", "rows of at most 2^31 - 1 elements on CUDA, got ", c.n);
  const DType d = c.in.dtype;
  const int64_t n = c.n, k = c.k;
  // Whole rows padded to a power of two share a tile; longer rows are cut into tiles.
  int64_t seg = 1;
  uint32_t log_seg = 0;
  while (seg < std::min<int64_t>(n, kSortTile)) seg *= 2, ++log_seg;
  const int64_t pieces = n <= kSortTile ? 1 : ceil_div(n, kSortTile);
  const int64_t tiles = ceil_div(c.rows * pieces, kSortTile / seg);
  const uint64_t in = address(c.in), values = address(c.values), indices = address(c.indices);
  const size_t buffer_bytes = size_t(c.rows) * size_t(n) * size_t(sort_item_bytes(d));
  std::optional<ScratchBuffer> a, b;
  if (pieces > 1) a.emplace(dev, buffer_bytes);
  if (pieces > 2) b.emplace(dev, buffer_bytes);
  const uint64_t a_addr = a ? a->address() : 0, b_addr = b ? b->address() : 0;

  const std::string tile_name = SortKernelConfig{SortKernelKind::tile, d}.name();
  launch_kernel(dev, sort_kernel(dev, SortKernelKind::tile, d),
                LaunchConfig{{capped_grid(tiles)}, {kSortThreads}, 0}, tile_name, in, values,
                indices, a_addr, uint64_t(c.rows), uint64_t(n), uint64_t(k), uint64_t(seg), log_seg,
                uint64_t(pieces), uint64_t(tiles), uint32_t(c.descending ? 1 : 0));
  if (pieces == 1) return;

  const std::string split_name = SortKernelConfig{SortKernelKind::split, d}.name();
  const std::string merge_name = SortKernelConfig{SortKernelKind::merge, d}.name();
  const CUfunction split = sort_kernel(dev, SortKernelKind::split, d);
  const CUfunction merge = sort_kernel(dev, SortKernelKind::merge, d);
  const int64_t blocks = ceil_div(n, kMergeTile);
  const unsigned split_grid = one_pass_blocks(c.rows * blocks, kSplitThreads);
  const unsigned grid = capped_grid(c.rows * blocks);
  const ScratchBuffer splits(dev, size_t(c.rows) * size_t(blocks) * 16);
  uint64_t src = a_addr, dst = b_addr;
  for (int64_t width = kSortTile; width < n; width *= 2) {
    const uint32_t last = 2 * width >= n ? 1 : 0;
    launch_kernel(dev, split, LaunchConfig{{split_grid}, {kSplitThreads}, 0}, split_name, src,
                  splits.address(), uint64_t(c.rows), uint64_t(n), uint64_t(k), uint64_t(width),
                  uint64_t(blocks));
    launch_kernel(dev, merge, LaunchConfig{{grid}, {kMergeThreads}, 0}, merge_name, src, dst, in,
                  splits.address(), values, indices, uint64_t(c.rows), uint64_t(n), uint64_t(k),
                  uint64_t(width), uint64_t(blocks), last);
    std::swap(src, dst);
  }
}

void run_search_sorted(CudaDevice& dev, const SearchSortedCall& c) {
  const int64_t total = c.rows * c.m;
  if (total == 0) return;
  const DType d = c.seq.dtype;
  const std::string name = SortKernelConfig{SortKernelKind::search, d}.name();
  launch_kernel(dev, sort_kernel(dev, SortKernelKind::search, d),
                LaunchConfig{{one_pass_blocks(total, kSearchBlock)}, {kSearchBlock}, 0}, name,
                address(c.seq), address(c.values), address(c.out), uint64_t(c.n), uint64_t(c.m),
                uint64_t(total), uint32_t(c.right ? 1 : 0));
}

}  // namespace numr::cuda
