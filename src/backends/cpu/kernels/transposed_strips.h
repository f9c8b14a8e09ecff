// The transposing walk: a result row-major along its last dim, read from a source whose
// contiguous dim is another one, d (loop_plan.h: transposed_dim), as `contiguous()` of a
// transpose or a cast of one. Going along the result's rows, each read would touch a new
// cache line; instead a thread takes strips of kBlock source rows (result columns) by a
// run along d, and moves each strip's blocks of kBlock x kBlock elements through register
// transposes (transpose_tile.h), so that it reads kBlock source rows along their length
// and writes whole cache lines of the result.
//
// A cast converts the source rows before the transpose: from F32 to F16 or BF16 (with
// AVX-512) in registers, each block's source rows narrowed and then transposed as 16-bit
// elements (NarrowF32); otherwise each strip's rows go through the conversion into an
// L1-resident buffer of the result's dtype, which the blocks then move.
// (Elementwise ops take the pieces of transposed_pieces.h instead, where one thread's
// reads overlap the other's arithmetic.)
#pragma once

#include <immintrin.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "backends/cpu/kernels/kernels.h"
#include "backends/cpu/loop_plan.h"
#include "core/thread_pool.h"

#ifndef NUMR_ISA_ACTIVE
#error "include backends/cpu/kernels/isa.h (after all system headers) first"
#endif
#include "backends/cpu/kernels/convert.h"
#include "backends/cpu/kernels/transpose_tile.h"

namespace numr::cpu::NUMR_ISA {

// A block: kBlock x kBlock elements, at least 64 bytes along either dim (16 x 16 of 4- and
// 8-byte elements, 32 x 32 of 2, 64 x 64 of 1), so that a block's rows are whole cache
// lines on both sides: the smallest such size, as larger blocks timed slower.
template <class T>
constexpr int64_t kBlock = sizeof(T) >= 4 ? 16 : 64 / int64_t(sizeof(T));

// A strip's run along d where the source rows go through an op first: 16 KiB of results
// in an L1 buffer.
template <class T>
constexpr int64_t kStripLen = (int64_t(16) << 10) / (kBlock<T> * int64_t(sizeof(T)));

// Fetches into L2 what lies kAhead bytes on along source rows j < rows (at s + j * s_l; n
// elements of each): a block reads more rows at once than the hardware prefetchers
// follow. Used for 4- and 8-byte elements; 2-byte blocks (32 rows of 64 bytes) gain
// nothing from it.
constexpr int64_t kAhead = 1024;
template <class S>
inline void prefetch_ahead(const S* s, int64_t s_l, int64_t rows, int64_t n) {
  for (int64_t j = 0; j < rows; ++j)
    for (int64_t o = 0; o < n * int64_t(sizeof(S)); o += 64)
      _mm_prefetch(reinterpret_cast<const char*>(s + j * s_l) + kAhead + o, _MM_HINT_T1);
}

// Moves the block [i0, i0 + bi) x [j0, j0 + bj) of dims (d, last): source row j < bj at
// s + j * s_l (contiguous along d), result row i < bi at d + i * d_d. Whole blocks go
// through the register transposes where the ISA has them, with non-temporal stores if
// `stream` and a tile's rows are whole cache lines.
template <class T>
void move_block(const T* s, int64_t s_l, T* d, int64_t d_d, int64_t bi, int64_t bj, bool stream) {
  constexpr int64_t B = kBlock<T>;
#if NUMR_ISA_LEVEL >= 2
  constexpr int64_t TI = kTileI<sizeof(T)>, TJ = kTileJ<sizeof(T)>;
  if constexpr (TI > 0) {
    static_assert(B % TI == 0 && B % TJ == 0);
    if (bi == B && bj == B) {
      if constexpr (sizeof(T) >= 4) prefetch_ahead(s, s_l, B, B);
      auto tiles = [&]<bool Stream>() {
        for (int64_t i = 0; i < B; i += TI)
          for (int64_t j = 0; j < B; j += TJ)
            transpose_tile<Stream>(s + i + j * s_l, s_l, d + i * d_d + j, d_d);
      };
      if constexpr (kTileStreams<sizeof(T)>)
        if (stream) return tiles.template operator()<true>();
      return tiles.template operator()<false>();
    }
  }
#endif
  (void)stream;
  T tile[B][B];
  for (int64_t j = 0; j < bj; ++j)
    for (int64_t i = 0; i < bi; ++i) tile[i][j] = s[i + j * s_l];
  for (int64_t i = 0; i < bi; ++i)
    for (int64_t j = 0; j < bj; ++j) d[i * d_d + j] = tile[i][j];
}

// The row_op of a cast from F32 to BF16 (kBf16) or F16 that the walk does block by block
// in registers (with AVX-512): each source row's 16 elements narrowed, then transposed as
// 16-bit elements, no buffer between.
template <bool kBf16>
struct NarrowF32 {
  static constexpr bool bf16 = kBf16;
};
template <class RowOp>
constexpr bool kNarrowF32 =
    std::is_same_v<RowOp, NarrowF32<true>> || std::is_same_v<RowOp, NarrowF32<false>>;

// move_block for NarrowF32: s the F32 source, d the 16-bit result.
template <bool kBf16>
void move_narrow_block(const float* s, int64_t s_l, uint16_t* d, int64_t d_d, int64_t bi,
                       int64_t bj, bool stream) {
  constexpr int64_t B = kBlock<uint16_t>;
#if NUMR_ISA_LEVEL >= 3
  static_assert(B == 32);
  if (bi == B && bj == B) {
    prefetch_ahead(s, s_l, B, B);
    auto tiles = [&]<bool Stream>() {
      for (int64_t i = 0; i < B; i += 16) {
        __m256i half[2][16];
        for (int h = 0; h < 2; ++h) {
          __m256i r[16];
          for (int j = 0; j < 16; ++j)
            r[j] = narrow_x16_reg<kBf16>(_mm512_loadu_ps(s + i + (16 * h + j) * s_l));
          transpose_16x16_b16(r, half[h]);
        }
        put_rows_16x32_b16<Stream>(half[0], half[1], d + i * d_d, d_d);
      }
    };
    if (stream) return tiles.template operator()<true>();
    return tiles.template operator()<false>();
  }
#endif
  (void)stream;
  for (int64_t j = 0; j < bj; ++j)
    for (int64_t i = 0; i < bi; ++i) {
      const float x = s[i + j * s_l];
      d[i * d_d + j] = kBf16 ? float_to_b16(x) : float_to_h16(x);
    }
  (void)B;
}

// The walk's sizes over a loop plan (operand 0 the result, 1 the source).
struct Walk {
  const LoopPlan& plan;
  int d, last;
  int64_t rows, cols, si_n, s_l, d_d;
  bool stream;
};

// One strip, whose source rows start at element so and result rows at dof, of si source
// elements by bj rows: moved as it is (row_op null), or through row_op into buf first.
template <class T, int64_t S, class RowOp>
void move_strip(const Walk& w, const char* sb, size_t ses, char* db, const RowOp& row_op, T* buf,
                int64_t so, int64_t dof, int64_t i0, int64_t si, int64_t bj) {
  constexpr bool kDirect = std::is_same_v<RowOp, std::nullptr_t>;
  constexpr int64_t B = kBlock<T>;
  const T* src;
  int64_t src_l;
  if constexpr (kDirect) {
    (void)ses;
    src = reinterpret_cast<const T*>(sb) + so;
    src_l = w.s_l;
  } else {
    // The next strip's rows are fetched into L2 meanwhile, a row's worth before each row
    // of this one, so the conversion does not wait on memory.
    const int64_t ahead = i0 + S < w.rows ? std::min(S, w.rows - i0 - S) * int64_t(ses) : 0;
    for (int64_t j = 0; j < bj; ++j) {
      const char* next = sb + (so + S + j * w.s_l) * int64_t(ses);
      for (int64_t o = 0; o < ahead; o += 64) _mm_prefetch(next + o, _MM_HINT_T1);
      row_op(sb + (so + j * w.s_l) * int64_t(ses), si, buf + j * S);
    }
    src = buf;
    src_l = S;
  }
  for (int64_t i = 0; i < si; i += B) {
    T* t = reinterpret_cast<T*>(db) + dof + i * w.d_d;
    move_block<T>(src + i, src_l, t, w.d_d, std::min(B, si - i), bj,
                  w.stream && reinterpret_cast<uintptr_t>(t) % 64 == 0);
  }
}

// Strips [b, e) of the walk, with strips of S elements along d.
template <class T, int64_t S, class RowOp>
void walk_strips(const Walk& w, const char* sb, size_t ses, char* db, const RowOp& row_op,
                 int64_t b, int64_t e) {
  constexpr bool kDirect = std::is_same_v<RowOp, std::nullptr_t>;
  constexpr bool kBlocks = kDirect || kNarrowF32<RowOp>;  // no buffer
  constexpr int64_t B = kBlock<T>;
  const LoopPlan& plan = w.plan;
  const int64_t bj_n = ceil_div(w.cols, B);
  alignas(64) T buf[kBlocks ? 1 : B * S];
  for (int64_t item = b; item < e; ++item) {
    int64_t rest = item / (w.si_n * bj_n);
    const int64_t strip = item % (w.si_n * bj_n), i0 = (strip % w.si_n) * S,
                  j0 = (strip / w.si_n) * B;
    int64_t so = i0 * plan.strides[1][w.d] + j0 * w.s_l,
            dof = i0 * w.d_d + j0 * plan.strides[0][w.last];
    for (int k = w.last; k >= 0; --k) {  // the other dims, innermost first
      if (k == w.d || k == w.last) continue;
      const int64_t idx = rest % plan.shape[k];
      rest /= plan.shape[k];
      so += idx * plan.strides[1][k];
      dof += idx * plan.strides[0][k];
    }
    const int64_t si = std::min(S, w.rows - i0), bj = std::min(B, w.cols - j0);
    if constexpr (kNarrowF32<RowOp>) {
      (void)ses;
      (void)row_op;
      (void)buf;
      for (int64_t i = 0; i < si; i += B) {
        uint16_t* t = reinterpret_cast<uint16_t*>(db) + dof + i * w.d_d;
        move_narrow_block<RowOp::bf16>(reinterpret_cast<const float*>(sb) + so + i, w.s_l, t, w.d_d,
                                       std::min(B, si - i), bj,
                                       w.stream && reinterpret_cast<uintptr_t>(t) % 64 == 0);
      }
    } else {
      move_strip<T, S>(w, sb, ses, db, row_op, buf, so, dof, i0, si, bj);
    }
  }
}

// The walk over plan (operand 0 the result, of element type T; operand 1 the source, ses
// bytes per element, contiguous along d). With row_op null the source is moved as it is
// (it has type T too); otherwise row_op(src, n, out) turns n contiguous source elements
// into n of the result's. A large result is written with non-temporal stores where a
// block starts on a cache line and its rows are whole lines apart: a normal store would
// read each line first.
template <class T, class RowOp>
void transposed_walk(const LoopPlan& plan, int d, const char* sb, size_t ses, char* db,
                     const RowOp& row_op) {
  constexpr bool kBlocks = std::is_same_v<RowOp, std::nullptr_t> || kNarrowF32<RowOp>;
  constexpr int64_t es = sizeof(T);
  // Moved block by block, a strip is one block; through an op, kStripLen elements along d.
  constexpr int64_t S = kBlocks ? kBlock<T> : kStripLen<T>;
  const int last = plan.ndim - 1;
  const Walk w{plan,
               d,
               last,
               plan.shape[d],
               plan.shape[last],
               ceil_div(plan.shape[d], S),
               plan.strides[1][last],
               plan.strides[0][d],
               plan.numel * es >= kStreamBytes && (plan.strides[0][d] * es) % 64 == 0};
  const int64_t items = plan.numel / (w.rows * w.cols) * w.si_n * ceil_div(w.cols, kBlock<T>);
  // A thread takes the strips down dim d first, so that it reads the same source rows strip
  // after strip while they are still in cache.
  ThreadPool::instance().parallel_for(items, kBlocks ? 16 : 1, [&](int64_t b, int64_t e) {
    walk_strips<T, S>(w, sb, ses, db, row_op, b, e);
    if (w.stream) _mm_sfence();  // order the non-temporal stores before the walk returns
  });
}

}  // namespace numr::cpu::NUMR_ISA
