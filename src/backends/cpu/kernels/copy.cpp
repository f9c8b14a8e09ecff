// Strided copy with dtype conversion, fill, and the contiguous F32 conversions used
// around the BLAS.

#include <immintrin.h>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include "backends/cpu/kernels/kernels.h"
#include "backends/cpu/loop_plan.h"
#include "core/thread_pool.h"

#include "backends/cpu/kernels/isa.h"  // after every system header

#include "backends/cpu/kernels/convert.h"

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

void move_convert(const char* src, DType st, int64_t ss, char* dst, DType dt, int64_t ds,
                  int64_t n) {
  if (ss == 1 && ds == 1 && st == DType::F32 && (dt == DType::F16 || dt == DType::BF16))
    return scatter_row<float>(reinterpret_cast<const float*>(src), n, dst, dt);
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

// A transposing copy's block: kBlock x kBlock elements. Blocks of 16 took 11.6-14.6 ms to
// make a transposed [16384, 1024] F32 matrix contiguous, 8: 13-14, 32: 19-21, 64: 19.
constexpr int64_t kBlock = 16;

#if NUMR_ISA_LEVEL >= 3
// A whole block of 16 x 16 4-byte elements through registers: row j of the block is the
// source's run s + j * s_l (16 elements along dim d); four rounds of shuffles turn them
// into the destination's rows d + i * d_d. After the 32-bit and 64-bit unpacks, u[4k + m]
// holds in its 128-bit lane L the elements (rows 4k .. 4k + 3, column 4L + m); the lane
// shuffles gather the lanes L of u[m], u[4 + m], u[8 + m] and u[12 + m].
template <class T>
inline void transpose16(const T* s, int64_t s_l, T* d, int64_t d_d) {
  __m512i r[16], u[16];
  for (int j = 0; j < 16; ++j) r[j] = _mm512_loadu_si512(s + j * s_l);
  for (int k = 0; k < 8; ++k) {
    u[2 * k] = _mm512_unpacklo_epi32(r[2 * k], r[2 * k + 1]);
    u[2 * k + 1] = _mm512_unpackhi_epi32(r[2 * k], r[2 * k + 1]);
  }
  for (int k = 0; k < 4; ++k) {
    r[4 * k] = _mm512_unpacklo_epi64(u[4 * k], u[4 * k + 2]);
    r[4 * k + 1] = _mm512_unpackhi_epi64(u[4 * k], u[4 * k + 2]);
    r[4 * k + 2] = _mm512_unpacklo_epi64(u[4 * k + 1], u[4 * k + 3]);
    r[4 * k + 3] = _mm512_unpackhi_epi64(u[4 * k + 1], u[4 * k + 3]);
  }
  for (int m = 0; m < 4; ++m) {
    const __m512i v0 = _mm512_shuffle_i32x4(r[m], r[4 + m], 0x44),
                  v1 = _mm512_shuffle_i32x4(r[m], r[4 + m], 0xEE),
                  v2 = _mm512_shuffle_i32x4(r[8 + m], r[12 + m], 0x44),
                  v3 = _mm512_shuffle_i32x4(r[8 + m], r[12 + m], 0xEE);
    _mm512_storeu_si512(d + m * d_d, _mm512_shuffle_i32x4(v0, v2, 0x88));
    _mm512_storeu_si512(d + (4 + m) * d_d, _mm512_shuffle_i32x4(v0, v2, 0xDD));
    _mm512_storeu_si512(d + (8 + m) * d_d, _mm512_shuffle_i32x4(v1, v3, 0x88));
    _mm512_storeu_si512(d + (12 + m) * d_d, _mm512_shuffle_i32x4(v1, v3, 0xDD));
  }
}
#endif

// Copies blocks [i0, i0 + bi) x [j0, j0 + bj) of dims (d, last): reads run along d (the
// source's contiguous dim), writes along last (the destination's).
template <class T>
void move_block(const char* src, int64_t s_d, int64_t s_l, char* dst, int64_t d_d, int64_t bi,
                int64_t bj) {
  const T* s = reinterpret_cast<const T*>(src);
  T* d = reinterpret_cast<T*>(dst);
#if NUMR_ISA_LEVEL >= 3
  if constexpr (sizeof(T) == 4 && kBlock == 16) {
    if (bi == 16 && bj == 16 && s_d == 1) return transpose16(s, s_l, d, d_d);
  }
#endif
  T tile[kBlock][kBlock];
  for (int64_t j = 0; j < bj; ++j)
    for (int64_t i = 0; i < bi; ++i) tile[i][j] = s[i * s_d + j * s_l];
  for (int64_t i = 0; i < bi; ++i)
    for (int64_t j = 0; j < bj; ++j) d[i * d_d + j] = tile[i][j];
}

// A same-dtype copy through blocks of dims (d, last), for copies where the source's
// innermost dim is strided but dim d is contiguous in it: going along the destination's
// rows, each read would touch a new cache line (contiguous() of a transposed [16384,
// 1024] F32 matrix took 59 ms that way). A thread takes the blocks down dim d first, so
// that it reads the same source rows block after block (with the blocks along the last
// dim first: 24 ms).
void copy_transposed(const LoopPlan& plan, int d, const char* sb, char* db, size_t es) {
  const int last = plan.ndim - 1;
  const int64_t rows = plan.shape[d], cols = plan.shape[last];
  const int64_t bi_n = (rows + kBlock - 1) / kBlock, bj_n = (cols + kBlock - 1) / kBlock;
  const int64_t outer = plan.numel / (rows * cols);
  const int64_t items = outer * bi_n * bj_n;
  ThreadPool::instance().parallel_for(items, 16, [&](int64_t b, int64_t e) {
    for (int64_t item = b; item < e; ++item) {
      int64_t rest = item / (bi_n * bj_n);
      const int64_t blk = item % (bi_n * bj_n), i0 = (blk % bi_n) * kBlock,
                    j0 = (blk / bi_n) * kBlock;
      int64_t so = i0 * plan.strides[1][d] + j0 * plan.strides[1][last],
              dof = i0 * plan.strides[0][d] + j0 * plan.strides[0][last];
      for (int k = last; k >= 0; --k) {  // the other dims, innermost first
        if (k == d || k == last) continue;
        const int64_t idx = rest % plan.shape[k];
        rest /= plan.shape[k];
        so += idx * plan.strides[1][k];
        dof += idx * plan.strides[0][k];
      }
      const int64_t bi = std::min(kBlock, rows - i0), bj = std::min(kBlock, cols - j0);
      const char* s = sb + so * int64_t(es);
      char* t = db + dof * int64_t(es);
      const int64_t s_l = plan.strides[1][last], d_d = plan.strides[0][d];
      switch (es) {
        case 1: move_block<uint8_t>(s, 1, s_l, t, d_d, bi, bj); break;
        case 2: move_block<uint16_t>(s, 1, s_l, t, d_d, bi, bj); break;
        case 4: move_block<uint32_t>(s, 1, s_l, t, d_d, bi, bj); break;
        default: move_block<uint64_t>(s, 1, s_l, t, d_d, bi, bj); break;
      }
    }
  });
}

}  // namespace

void copy(const CopyCall& call) {
  const LoopPlan plan =
      make_loop_plan("copy", call.dst.shape, {&call.dst.strides, &call.src.strides});
  const size_t ses = dtype_size(call.src.dtype), des = dtype_size(call.dst.dtype);
  const char* sb = static_cast<const char*>(call.src.base) + call.src.offset * int64_t(ses);
  char* db = static_cast<char*>(call.dst.base) + call.dst.offset * int64_t(des);
  const bool same = call.src.dtype == call.dst.dtype;
  const int last = plan.ndim - 1;
  if (const int d = transposed_dim(plan, 1); same && d >= 0 && plan.numel >= 4096) {
    copy_transposed(plan, d, sb, db, ses);
    return;
  }
  ThreadPool::instance().parallel_for(plan.numel, 65536, [&](int64_t b, int64_t e) {
    for_each_row(plan, b, e, [&](const int64_t* offs, int64_t len) {
      const int64_t ds = plan.strides[0][last], ss = plan.strides[1][last];
      const char* s = sb + offs[1] * int64_t(ses);
      char* d = db + offs[0] * int64_t(des);
      if (same)
        move_same(s, ss, d, ds, len, ses);
      else
        move_convert(s, call.src.dtype, ss, d, call.dst.dtype, ds, len);
    });
  });
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
