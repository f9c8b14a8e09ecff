// Strided copy with dtype conversion, fill, and the contiguous F32 conversions used
// around the BLAS.

#include <immintrin.h>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include "backends/cpu/host_allocator.h"
#include "backends/cpu/kernels/kernels.h"
#include "backends/cpu/loop_plan.h"
#include "core/thread_pool.h"

#include "backends/cpu/kernels/isa.h"  // after every system header

#include "backends/cpu/kernels/convert.h"
#include "backends/cpu/kernels/transpose_tile.h"
#include "backends/cpu/kernels/transposed_pieces.h"

namespace numr::cpu::NUMR_ISA {
namespace {

template <class T>
void strided_move(const char* src, int64_t ss, char* dst, int64_t ds, int64_t n) {
  const T* s = reinterpret_cast<const T*>(src);
  T* d = reinterpret_cast<T*>(dst);
  for (int64_t i = 0; i < n; ++i) d[i * ds] = s[i * ss];
}

void move_same(const char* src, int64_t ss, char* dst, int64_t ds, int64_t n, size_t es) {
  if (ss == 1 && ds == 1) {
    std::memcpy(dst, src, size_t(n) * es);
    return;
  }
  switch (es) {
    case 1: return strided_move<uint8_t>(src, ss, dst, ds, n);
    case 2: return strided_move<uint16_t>(src, ss, dst, ds, n);
    case 4: return strided_move<uint32_t>(src, ss, dst, ds, n);
    default: return strided_move<uint64_t>(src, ss, dst, ds, n);
  }
}

// stream: F32 to F16/BF16 along contiguous rows with non-temporal stores (convert.h).
void move_convert(const char* src, DType st, int64_t ss, char* dst, DType dt, int64_t ds, int64_t n,
                  bool stream) {
  if (ss == 1 && ds == 1 && st == DType::F32 && (dt == DType::F16 || dt == DType::BF16))
    return scatter_row<float>(reinterpret_cast<const float*>(src), n, dst, dt, stream);
  if (ss == 1 && ds == 1 && dt == DType::F32 && (st == DType::F16 || st == DType::BF16))
    return gather_row<float>(src, st, 1, n, reinterpret_cast<float*>(dst));
  visit_storage(st, [&](auto s_tag) {
    using S = decltype(s_tag);
    visit_storage(dt, [&](auto d_tag) {
      using D = decltype(d_tag);
      const S* s = reinterpret_cast<const S*>(src);
      D* d = reinterpret_cast<D*>(dst);
      for (int64_t i = 0; i < n; ++i) d[i * ds] = convert<D>(s[i * ss]);
    });
  });
}

// A transposing copy's block: kBlock x kBlock elements, at least 64 bytes along either dim
// (16 x 16 of 4- and 8-byte elements, 32 x 32 of 2, 64 x 64 of 1), so that a block's rows
// are whole cache lines on both sides. For F32, blocks
// of 16 took 11.6-14.6 ms to make a transposed [16384, 1024] matrix contiguous, 8: 13-14,
// 32: 19-21, 64: 19 (element by element, before the register transposes).
template <class T>
constexpr int64_t kBlock = sizeof(T) >= 4 ? 16 : 64 / int64_t(sizeof(T));

// Copies blocks [i0, i0 + bi) x [j0, j0 + bj) of dims (d, last): reads run along d (the
// source's contiguous dim), writes along last (the destination's). A whole block goes
// through register transposes of tiles (transpose_tile.h) where the ISA has them, with
// non-temporal stores if `stream` and the tile's rows are whole cache lines.
template <class T>
void move_block(const char* src, int64_t s_l, char* dst, int64_t d_d, int64_t bi, int64_t bj,
                bool stream) {
  constexpr int64_t B = kBlock<T>;
  const T* s = reinterpret_cast<const T*>(src);
  T* d = reinterpret_cast<T*>(dst);
#if NUMR_ISA_LEVEL >= 2
  constexpr int64_t TI = kTileI<sizeof(T)>, TJ = kTileJ<sizeof(T)>;
  if constexpr (TI > 0) {
    static_assert(B % TI == 0 && B % TJ == 0);
    if (bi == B && bj == B) {
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

// A same-dtype copy through blocks of dims (d, last), for copies where the source's
// innermost dim is strided but dim d is contiguous in it: going along the destination's
// rows, each read would touch a new cache line (contiguous() of a transposed [16384,
// 1024] F32 matrix took 59 ms that way). A thread takes the blocks down dim d first, so
// that it reads the same source rows block after block (with the blocks along the last
// dim first: 24 ms).
template <class T>
void copy_transposed(const LoopPlan& plan, int d, const char* sb, char* db) {
  constexpr int64_t B = kBlock<T>, es = sizeof(T);
  const int last = plan.ndim - 1;
  const int64_t rows = plan.shape[d], cols = plan.shape[last];
  const int64_t bi_n = (rows + B - 1) / B, bj_n = (cols + B - 1) / B;
  const int64_t outer = plan.numel / (rows * cols);
  const int64_t items = outer * bi_n * bj_n;
  const int64_t s_l = plan.strides[1][last], d_d = plan.strides[0][d];
  // A large result is written with non-temporal stores where a block starts on a cache
  // line and its rows are whole lines apart: a normal store would read each line first.
  const bool stream = plan.numel * es >= kStreamBytes && (d_d * es) % 64 == 0;
  ThreadPool::instance().parallel_for(items, 16, [&](int64_t b, int64_t e) {
    for (int64_t item = b; item < e; ++item) {
      int64_t rest = item / (bi_n * bj_n);
      const int64_t blk = item % (bi_n * bj_n), i0 = (blk % bi_n) * B, j0 = (blk / bi_n) * B;
      int64_t so = i0 * plan.strides[1][d] + j0 * s_l, dof = i0 * d_d + j0 * plan.strides[0][last];
      for (int k = last; k >= 0; --k) {  // the other dims, innermost first
        if (k == d || k == last) continue;
        const int64_t idx = rest % plan.shape[k];
        rest /= plan.shape[k];
        so += idx * plan.strides[1][k];
        dof += idx * plan.strides[0][k];
      }
      char* t = db + dof * es;
      move_block<T>(sb + so * es, s_l, t, d_d, std::min(B, rows - i0), std::min(B, cols - j0),
                    stream && reinterpret_cast<uintptr_t>(t) % 64 == 0);
    }
    if (stream) _mm_sfence();  // order the non-temporal stores before the copy returns
  });
}

// A copy's loop plan (operand 0 the destination, 1 the source), element sizes and first
// elements.
struct CopyPlan {
  LoopPlan plan;
  size_t ses, des;
  const char* sb;
  char* db;
  bool same;
};
CopyPlan plan_copy(const CopyCall& call) {
  const size_t ses = dtype_size(call.src.dtype), des = dtype_size(call.dst.dtype);
  return {make_loop_plan("copy", call.dst.shape, {&call.dst.strides, &call.src.strides}),
          ses,
          des,
          static_cast<const char*>(call.src.base) + call.src.offset * int64_t(ses),
          static_cast<char*>(call.dst.base) + call.dst.offset * int64_t(des),
          call.src.dtype == call.dst.dtype};
}

// The copy along the destination's rows, a thread taking a range of them. A result of
// kStreamBytes or more (whole_bytes: of the whole copy, when this is a piece of it) is
// written with non-temporal stores where a conversion narrows F32 (glibc's memcpy already
// streams large same-dtype rows).
void copy_rows(const CopyCall& call, int64_t whole_bytes) {
  const CopyPlan cp = plan_copy(call);
  const LoopPlan& plan = cp.plan;
  const size_t ses = cp.ses, des = cp.des;
  const char* sb = cp.sb;
  char* db = cp.db;
  const bool same = cp.same;
  const int last = plan.ndim - 1;
  const bool stream = !same && whole_bytes >= kStreamBytes;
  ThreadPool::instance().parallel_for(plan.numel, 65536, [&](int64_t b, int64_t e) {
    for_each_row(plan, b, e, [&](const int64_t* offs, int64_t len) {
      const int64_t ds = plan.strides[0][last], ss = plan.strides[1][last];
      const char* s = sb + offs[1] * int64_t(ses);
      char* d = db + offs[0] * int64_t(des);
      if (same)
        move_same(s, ss, d, ds, len, ses);
      else
        move_convert(s, call.src.dtype, ss, d, call.dst.dtype, ds, len, stream);
    });
    if (stream) _mm_sfence();  // order the non-temporal stores before the copy returns
  });
}

}  // namespace

void copy(const CopyCall& call) {
  const CopyPlan cp = plan_copy(call);
  const LoopPlan& plan = cp.plan;
  if (const int d = transposed_dim(plan, 1); cp.same && d >= 0 && plan.numel >= 4096) {
    switch (cp.ses) {
      case 1: return copy_transposed<uint8_t>(plan, d, cp.sb, cp.db);
      case 2: return copy_transposed<uint16_t>(plan, d, cp.sb, cp.db);
      case 4: return copy_transposed<uint32_t>(plan, d, cp.sb, cp.db);
      default: return copy_transposed<uint64_t>(plan, d, cp.sb, cp.db);
    }
  }
  if (const int d = transposed_dim(plan, 1);
      !cp.same && d >= 0 && plan.numel >= kTransposedCopyMin) {
    // A cast of a transposed view: going along the result's rows, each read would touch
    // a new cache line. Piece by piece (transposed_pieces.h), the source is transposed
    // into a row-major scratch of its own dtype, then converted along rows from the cache.
    // (A transposed [16384, 1024] F32 matrix cast to BF16: 2.8-3.4 ms in pieces; 5.3-6.5
    // in slabs of whole columns, each copy and conversion on both threads; the whole
    // source transposed at once, written to memory and read back: 7.2-8.6 ms.)
    for_each_piece(call.dst.shape, int64_t(cp.ses), [&](const Piece& p, char* scratch) {
      const TensorRef dst = piece_of(call.dst, p);
      const TensorRef row_major{scratch, 0, call.src.dtype, dst.shape,
                                contiguous_strides(dst.shape)};
      copy(CopyCall{piece_of(call.src, p), row_major});  // on this thread: no nesting
      copy_rows(CopyCall{row_major, dst}, plan.numel * int64_t(cp.des));
    });
    return;
  }
  copy_rows(call, plan.numel * int64_t(cp.des));
}

void fill(const FillCall& call) {
  const LoopPlan plan = make_loop_plan("fill", call.dst.shape, {&call.dst.strides});
  const size_t es = dtype_size(call.dst.dtype);
  char* db = static_cast<char*>(call.dst.base) + call.dst.offset * int64_t(es);
  alignas(8) unsigned char value[8];
  visit_storage(call.dst.dtype, [&](auto tag) {
    using D = decltype(tag);
    const D v = convert<D>(call.value);
    std::memcpy(value, &v, sizeof(D));
  });
  const int last = plan.ndim - 1;
  ThreadPool::instance().parallel_for(plan.numel, 65536, [&](int64_t b, int64_t e) {
    for_each_row(plan, b, e, [&](const int64_t* offs, int64_t len) {
      char* d = db + offs[0] * int64_t(es);
      move_same(reinterpret_cast<const char*>(value), 0, d, plan.strides[0][last], len, es);
    });
  });
}

void to_f32(const void* src, DType src_dtype, float* dst, int64_t n) {
  ThreadPool::instance().parallel_for(n, 65536, [&](int64_t b, int64_t e) {
    gather_row<float>(static_cast<const char*>(src) + b * int64_t(dtype_size(src_dtype)),
                      src_dtype, 1, e - b, dst + b);
  });
}

void from_f32(const float* src, void* dst, DType dst_dtype, int64_t n) {
  ThreadPool::instance().parallel_for(n, 65536, [&](int64_t b, int64_t e) {
    scatter_row<float>(src + b, e - b,
                       static_cast<char*>(dst) + b * int64_t(dtype_size(dst_dtype)), dst_dtype);
  });
}

}  // namespace numr::cpu::NUMR_ISA

#pragma GCC pop_options
