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
#include "backends/cpu/kernels/transposed_strips.h"

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

// The transposing walk (transposed_strips.h) moving elements of `es` bytes, through
// row_op if it is not null.
template <class RowOp>
void walk_by_size(size_t es, const LoopPlan& plan, int d, const char* sb, size_t ses, char* db,
                  const RowOp& row_op) {
  switch (es) {
    case 1: return transposed_walk<uint8_t>(plan, d, sb, ses, db, row_op);
    case 2: return transposed_walk<uint16_t>(plan, d, sb, ses, db, row_op);
    case 4: return transposed_walk<uint32_t>(plan, d, sb, ses, db, row_op);
    default: return transposed_walk<uint64_t>(plan, d, sb, ses, db, row_op);
  }
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
  // A transposed view (transposed_strips.h); a cast converts the source's rows on the way,
  // in registers from F32 to F16 and BF16 (with AVX-512), which saves the strips' pass
  // through an L1 buffer.
  if (const int d = transposed_dim(plan, 1); d >= 0 && plan.numel >= 4096) {
    if (cp.same) return walk_by_size(cp.des, plan, d, cp.sb, cp.ses, cp.db, nullptr);
    if (plan.numel >= kTransposedCopyMin) {
      const DType st = call.src.dtype, dt = call.dst.dtype;
#if NUMR_ISA_LEVEL >= 3
      if (st == DType::F32 && dt == DType::BF16)
        return transposed_walk<uint16_t>(plan, d, cp.sb, cp.ses, cp.db, NarrowF32<true>{});
      if (st == DType::F32 && dt == DType::F16)
        return transposed_walk<uint16_t>(plan, d, cp.sb, cp.ses, cp.db, NarrowF32<false>{});
#endif
      return walk_by_size(cp.des, plan, d, cp.sb, cp.ses, cp.db,
                          [&](const char* s, int64_t n, void* out) {
                            move_convert(s, st, 1, static_cast<char*>(out), dt, 1, n, false);
                          });
    }
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
