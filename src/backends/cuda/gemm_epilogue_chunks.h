// How an F16/BF16 epilogue's product is staged in f32 (gemm_epilogue.cpp says when):
// cuBLASLt writes the unrounded f32 product of a block of output rows into one staging
// buffer, the finishing pass turns that block into the 16-bit output, and the next block
// reuses the buffer (stream order keeps the two apart). A block is as large as the
// staging bound allows: usually the whole product, written once and read once. Smaller
// blocks sized to stay in L2 make GEMMs too short to fill the GPU, and the saving in
// traffic does not pay for that.
//
// The blocks follow the plan's cuBLASLt calls (matmul_plan.h): a call whose rows fit in a
// block is grouped with its neighbours in the batch (items of one strided call are
// contiguous in out), and a taller one (a big matrix, or a folded stack of items) is split
// into row slices, which only moves the a operand's start.
#pragma once

#include <cstdint>
#include <vector>

#include "backends/cuda/matmul_plan.h"

namespace numr::cuda {

// One block: gemm.a_off / b_off locate the operands as in GemmPiece, gemm.d_off is the
// block's first element of out (the staging buffer starts at element 0), gemm.count the
// batch items of one call, each `rows` rows of D. The block holds gemm.count * rows * n
// contiguous elements of out.
struct RowChunk {
  GemmPiece gemm;
  int64_t rows = 0;
  friend bool operator==(const RowChunk&, const RowChunk&) = default;
};

// The blocks of a plan's product with rows_per_call rows of D per call and n columns, at
// most max(max_rows, 1) rows each; one block per call when the call fits. Slices and
// groups start at multiples of 8 rows or items when max_rows allows, which keeps each
// block's pointers 16-byte aligned if the whole's are.
// a_col_major / a_ld: how the a operand is read (LtOperandView), for slicing its rows.
std::vector<RowChunk> row_chunks(const BatchPlan& batch, int64_t rows_per_call, int64_t n,
                                 bool a_col_major, int64_t a_ld, int64_t max_rows);

// Rows per block for an output n columns wide: as many as keep the f32 staging buffer
// within kMaxStageBytes (a product that fits is staged whole), at least 8. At n = 4096
// that is 16384 rows, so a product is only ever cut into blocks that still fill the GPU.
inline constexpr int64_t kMaxStageBytes = int64_t(256) << 20;
int64_t staged_chunk_rows(int64_t n);

// Tests: forces staged_chunk_rows to `rows` (0 restores the automatic choice), so small
// shapes exercise several blocks.
void set_staged_chunk_rows_for_testing(int64_t rows);

}  // namespace numr::cuda
