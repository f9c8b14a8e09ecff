// Kernels of sort_rows and search_sorted (core/backend.h), one of each kind per dtype.
//
// Every element becomes an item (key, position): key an unsigned integer whose order is
// sort's order (NaN above +inf, -0.0 equal to +0.0, F16/BF16 by float value; complemented
// when descending), position its index in the row. Items are ordered by key, then
// position, so no two are equal and any correct sort gives the one stable order. Items are
// 8 bytes (key << 32 | position, compared as one u64) for dtypes of 32-bit keys and 16 bytes
// (key, position as two u64) for F64 and I64. Pads (all ones) sort after every item.
//
// tile: a block sorts kSortTile items in shared memory with a bitonic network. A tile holds
// kSortTile / seg segments of seg (a power of two) items: whole rows padded to seg when
// rows fit (n <= kSortTile), else kSortTile-long pieces of one row. Whole rows are written
// out directly (the first k values and positions); pieces go to an item buffer, each
// sorted run keeping its first k items (k < n only for topk).
// Parameters: in, values, indices, items (u64); rows, n, k, seg (u64); log_seg (u32);
// pieces (u64, per row: 1 when rows fit); tiles (u64); descending (u32).
//
// merge: one pass joining sorted runs of `width` items (two by two, within each row) into
// runs of 2 * width; every run keeps its first k items. A block makes kMergeTile outputs:
// split (a thread per block, before the pass) finds where they start and end in run a by
// binary searches along the merge path; the block loads those inputs into shared memory,
// each thread merges kMergeChunk of them from its own split point, and the block writes
// them out in order. The last pass writes values and positions instead of items.
// Parameters of split: src, splits (u64); rows, n, k, width, blocks (u64, per row). Of
// merge: src, dst, in, splits, values, indices (u64); rows, n, k, width, blocks (u64);
// last (u32).
//
// search: a thread per value: a binary search of its row of the sorted sequence by key.
// Parameters: seq, values, out (u64); n, m, total (u64); right (u32).
#pragma once

#include <cstdint>
#include <string>

#include "backends/cuda/module.h"
#include "codegen/ptx/types.h"
#include "numr/dtype.h"

namespace numr::cuda {

inline constexpr int kSortTile = 2048;  // items per tile, a power of two
inline constexpr int kSortThreads = 512;
inline constexpr int kMergeThreads = 256;
inline constexpr int kSplitThreads = 256;
inline constexpr int kMergeChunk = 8;  // outputs per thread
inline constexpr int kMergeTile = kMergeThreads * kMergeChunk;
// A merge block's outputs never straddle two pairs of runs (the first pass's runs are tiles).
static_assert(kMergeTile <= 2 * kSortTile && (kSortTile & (kSortTile - 1)) == 0);
inline constexpr int kSearchBlock = 256;

enum class SortKernelKind : uint8_t { tile, split, merge, search };

struct SortKernelConfig {
  SortKernelKind kind = SortKernelKind::tile;
  DType dtype = DType::F32;  // a NUMERIC dtype

  std::string name() const;
};

// Bytes of one item in the merge buffers.
int sort_item_bytes(DType d);

GeneratedKernel generate_sort_kernel(const SortKernelConfig& cfg, const ptx::Target& target);

}  // namespace numr::cuda
