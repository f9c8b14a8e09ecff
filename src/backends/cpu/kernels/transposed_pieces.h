// Elementwise ops that read large transposed views (loop_plan.h: transposed_dim) into a
// row-major result work in pieces (casts take the transposing walk of
// transposed_strips.h instead): rows [r0, r0 + rn) of the result's
// first dim by columns [c0, c0 + cn) of its last (the view's strided dim). A thread copies
// each transposed input of its piece into a row-major scratch of its own with the
// transposing copy, reading runs along the source's rows, then runs the op from the
// scratch, still in its L2. The threads drift apart, so that one reads the source while
// the other computes and writes, rather than both copying and then both computing.
#pragma once

#include <algorithm>
#include <cstdint>

#include "backends/cpu/host_allocator.h"
#include "backends/cpu/kernels/kernels.h"
#include "core/thread_pool.h"

#ifndef NUMR_ISA_ACTIVE
#error "include backends/cpu/kernels/isa.h (after all system headers) first"
#endif

namespace numr::cpu::NUMR_ISA {

// A piece: 256 columns (1 KiB of F32 along each result row), and as many rows as keep
// its scratch within 512 KiB.
constexpr int64_t kPieceColumns = 256;
constexpr int64_t kPieceBytes = int64_t(512) << 10;

struct Piece {
  int64_t r0, rn, c0, cn;
};

// t's elements of the piece (t has the result's rank; a broadcast dim has stride 0).
inline TensorRef piece_of(const TensorRef& t, const Piece& p) {
  TensorRef s = t;
  s.offset += p.r0 * t.strides.front() + p.c0 * t.strides.back();
  s.shape.front() = p.rn;
  s.shape.back() = p.cn;
  return s;
}

// The bytes a piece's copy of one input takes in the scratch, so that the next one starts
// on a cache line.
inline int64_t scratch_part(int64_t numel, size_t es) {
  return ceil_div(numel * int64_t(es), 64) * 64;
}

// Calls body(piece, scratch) for every piece of a result of shape `shape` (rank 2 or
// more), over the thread pool; scratch holds the piece's elements at es_sum bytes each
// (the element sizes of the inputs to copy, summed: up to three), each input's part
// scratch_part() long.
template <class Body>
void for_each_piece(const Shape& shape, int64_t es_sum, const Body& body) {
  const int64_t len = shape.back(), d0 = shape.front();
  const int64_t unit = shape_numel(shape) / (len * d0);  // result rows per index of dim 0
  const int64_t cn = std::min(len, kPieceColumns);
  // No piece one column wide: the last one takes a lone remaining column. (The elementwise
  // kernels write along the last dim a piece keeps, which must be the result's columns.)
  const int64_t n_c = std::max<int64_t>(1, len / cn + (len % cn > 1 ? 1 : 0));
  const int64_t rn = std::clamp<int64_t>(kPieceBytes / (cn * es_sum * unit), 1, d0);
  const int64_t n_r = ceil_div(d0, rn), n_items = n_c * n_r;
  ThreadPool::instance().parallel_for(n_items, 1, [&](int64_t b, int64_t e) {
    const HostScratch scratch(size_t(rn * unit * (cn + 1) * es_sum + 3 * 64));
    for (int64_t item = b; item < e; ++item) {
      const int64_t r0 = (item % n_r) * rn, c = item / n_r, c0 = c * cn;
      body(Piece{r0, std::min(rn, d0 - r0), c0, c == n_c - 1 ? len - c0 : cn},
           static_cast<char*>(scratch.get()));
    }
  });
}

}  // namespace numr::cpu::NUMR_ISA
