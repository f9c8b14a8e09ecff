#include "backends/cuda/gemm_epilogue_chunks.h"

#include <algorithm>
#include <atomic>

namespace numr::cuda {
namespace {

// Row slices start at multiples of this many rows (see row_chunks).
constexpr int64_t kMinChunkRows = 8;

std::atomic<int64_t> g_forced_rows{0};

int64_t round_down_to_8(int64_t v) { return v >= 8 ? v / 8 * 8 : v; }

}  // namespace

std::vector<RowChunk> row_chunks(const BatchPlan& batch, int64_t rows_per_call, int64_t n,
                                 bool a_col_major, int64_t a_ld, int64_t max_rows) {
  std::vector<RowChunk> chunks;
  // Slices start at multiples of 8 rows and groups at multiples of 8 items where the cap
  // allows: any offset of 8 elements or 8 rows is a multiple of 16 bytes, so the blocks'
  // operands keep the alignment of the whole (faster kernels, vector passes).
  const int64_t cap = round_down_to_8(std::max<int64_t>(max_rows, 1));
  // Row r of a call's a starts r elements in (column-major) or r rows of ld in.
  const int64_t a_row_step = a_col_major ? 1 : a_ld;
  batch.for_each_piece([&](const GemmPiece& p) {
    if (rows_per_call <= cap) {
      // Whole items: the whole call when it fits (it starts where the plan's does), else
      // groups of a multiple of 8 items. Items of one call are d_stride = m * n apart in
      // out, so a group is contiguous there and in the staging buffer alike.
      const int64_t fit = std::max<int64_t>(cap / std::max<int64_t>(rows_per_call, 1), 1);
      const int64_t group = fit >= p.count ? p.count : round_down_to_8(fit);
      for (int64_t i0 = 0; i0 < p.count; i0 += group)
        chunks.push_back({{p.a_off + i0 * batch.a_stride, p.b_off + i0 * batch.b_stride,
                           p.d_off + i0 * batch.d_stride, std::min(group, p.count - i0)},
                          rows_per_call});
      return;
    }
    for (int64_t item = 0; item < p.count; ++item)
      for (int64_t r0 = 0; r0 < rows_per_call; r0 += cap)
        chunks.push_back(
            {{p.a_off + item * batch.a_stride + r0 * a_row_step, p.b_off + item * batch.b_stride,
              p.d_off + item * batch.d_stride + r0 * n, 1},
             std::min(cap, rows_per_call - r0)});
  });
  return chunks;
}

int64_t staged_chunk_rows(int64_t n) {
  const int64_t forced = g_forced_rows.load(std::memory_order_relaxed);
  if (forced > 0) return forced;
  const int64_t row_bytes = std::max<int64_t>(n, 1) * int64_t(sizeof(float));
  return std::max(kMaxStageBytes / row_bytes, kMinChunkRows);
}

void set_staged_chunk_rows_for_testing(int64_t rows) {
  g_forced_rows.store(std::max<int64_t>(rows, 0), std::memory_order_relaxed);
}

}  // namespace numr::cuda
