// index_gather and index_scatter. gather copies elements by their size (it never converts),
// rows of out split over the pool. scatter gives each task whole (o, i) columns and walks j
// in order inside them, so a column's updates happen in one fixed order on one thread and
// the result never depends on the schedule; F16 and BF16 reductions run on an F32 copy of
// out, rounded back once.
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "backends/cpu/kernels/kernels.h"
#include "core/thread_pool.h"

#include "backends/cpu/kernels/isa.h"  // after every system header

#include "backends/cpu/kernels/convert.h"
#include "backends/cpu/kernels/vec.h"
#include "math/reduce_rules.h"

namespace numr::cpu::NUMR_ISA {

// uint16_t stands for 16-bit storage moved as bits.
template <>
inline uint16_t convert<uint16_t, uint16_t>(uint16_t s) {
  return s;
}

namespace {

template <class E>
void gather_as(const GatherCall& c) {
  const E* x = static_cast<const E*>(c.x.base) + c.x.offset;
  const int64_t* idx = static_cast<const int64_t*>(c.index.base) + c.index.offset;
  E* out = static_cast<E*>(c.out.base) + c.out.offset;
  const int64_t m = c.index.shape[1], inner = c.index.shape[2];
  const int64_t xs0 = c.x.strides[0], xs1 = c.x.strides[1], xs2 = c.x.strides[2];
  const int64_t is0 = c.index.strides[0], is1 = c.index.strides[1], is2 = c.index.strides[2];
  const int64_t rows = c.index.shape[0] * m;
  parallel_for(rows, std::max<int64_t>(1, 16384 / std::max<int64_t>(inner, 1)),
               [&](int64_t begin, int64_t end) {
                 for (int64_t r = begin; r < end; ++r) {
                   const int64_t o = r / m, j = r % m;
                   const int64_t* ir = idx + o * is0 + j * is1;
                   const E* xo = x + o * xs0;
                   E* dst = out + r * inner;
                   if (is2 == 0) {  // one index for the whole row (index_select, embedding)
                     const E* src = xo + ir[0] * xs1;
                     if (xs2 == 1)
                       std::memcpy(dst, src, size_t(inner) * sizeof(E));
                     else
                       for (int64_t i = 0; i < inner; ++i) dst[i] = src[i * xs2];
                   } else {
                     for (int64_t i = 0; i < inner; ++i) dst[i] = xo[ir[i * is2] * xs1 + i * xs2];
                   }
                 }
               });
}

// The combining rules in the compute type C. Integer Sum and Prod wrap (computed unsigned,
// as signed overflow is undefined in C++).
template <ScatterOp kOp, class C>
inline C combine(C acc, C v) {
  if constexpr (kOp == ScatterOp::Assign) {
    return v;
  } else if constexpr (kOp == ScatterOp::Amax || kOp == ScatterOp::Amin) {
    return math::extreme_merge<kOp == ScatterOp::Amax>(acc, v);
  } else if constexpr (std::is_integral_v<C>) {
    using U = std::make_unsigned_t<C>;
    return kOp == ScatterOp::Sum ? C(U(acc) + U(v)) : C(U(acc) * U(v));
  } else {
    return kOp == ScatterOp::Sum ? acc + v : acc * v;
  }
}

// Columns (o, i) per task: a run of i inside one o, so that loads along i stay near.
constexpr int64_t kColumnBlock = 64;

// out (element type O, read and written as C) [outer, n, inner] with strides os; src of
// storage type S read through convert<C>.
template <ScatterOp kOp, class C, class S>
void scatter_columns(C* out, const int64_t* os, const ScatterCall& c) {
  const S* src = static_cast<const S*>(c.src.base) + c.src.offset;
  const int64_t* idx = static_cast<const int64_t*>(c.index.base) + c.index.offset;
  const int64_t outer = c.index.shape[0], m = c.index.shape[1], inner = c.index.shape[2];
  const int64_t blocks = (inner + kColumnBlock - 1) / kColumnBlock;
  const Strides& is = c.index.strides;
  const Strides& ss = c.src.strides;
  parallel_for(outer * blocks, std::max<int64_t>(1, 4096 / std::max<int64_t>(m, 1)),
               [&](int64_t begin, int64_t end) {
                 for (int64_t t = begin; t < end; ++t) {
                   const int64_t o = t / blocks, i0 = (t % blocks) * kColumnBlock;
                   const int64_t i1 = std::min(inner, i0 + kColumnBlock);
                   for (int64_t j = 0; j < m; ++j) {
                     const int64_t* ir = idx + o * is[0] + j * is[1];
                     const S* sr = src + o * ss[0] + j * ss[1];
                     C* orow = out + o * os[0];
                     for (int64_t i = i0; i < i1; ++i) {
                       C& dst = orow[ir[i * is[2]] * os[1] + i * os[2]];
                       dst = combine<kOp>(dst, convert<C>(sr[i * ss[2]]));
                     }
                   }
                 }
               });
}

template <ScatterOp kOp, class S>
void scatter_typed(const ScatterCall& c) {
  if constexpr (std::is_same_v<S, H16> || std::is_same_v<S, B16>) {
    if constexpr (kOp == ScatterOp::Assign) {
      // Assign moves bits: no widening needed.
      scatter_typed<kOp, uint16_t>(c);
    } else {
      // Reduce on an F32 copy of out and round once at the end.
      const TensorRef& o = c.out;
      const int64_t outer = o.shape[0], n = o.shape[1], inner = o.shape[2];
      S* base = static_cast<S*>(o.base) + o.offset;
      std::vector<float> wide(size_t(outer * n * inner));
      for (int64_t a = 0; a < outer; ++a)
        for (int64_t b = 0; b < n; ++b)
          for (int64_t i = 0; i < inner; ++i)
            wide[size_t((a * n + b) * inner + i)] =
                convert<float>(base[a * o.strides[0] + b * o.strides[1] + i * o.strides[2]]);
      const int64_t ws[3] = {n * inner, inner, 1};
      scatter_columns<kOp, float, S>(wide.data(), ws, c);
      for (int64_t a = 0; a < outer; ++a)
        for (int64_t b = 0; b < n; ++b)
          for (int64_t i = 0; i < inner; ++i)
            base[a * o.strides[0] + b * o.strides[1] + i * o.strides[2]] =
                convert<S>(wide[size_t((a * n + b) * inner + i)]);
    }
  } else {
    S* out = static_cast<S*>(c.out.base) + c.out.offset;
    const int64_t os[3] = {c.out.strides[0], c.out.strides[1], c.out.strides[2]};
    scatter_columns<kOp, S, S>(out, os, c);
  }
}

template <ScatterOp kOp>
void scatter_op(const ScatterCall& c) {
  switch (c.out.dtype) {
    case DType::F64: return scatter_typed<kOp, double>(c);
    case DType::F32: return scatter_typed<kOp, float>(c);
    case DType::F16: return scatter_typed<kOp, H16>(c);
    case DType::BF16: return scatter_typed<kOp, B16>(c);
    case DType::I64: return scatter_typed<kOp, int64_t>(c);
    case DType::I32: return scatter_typed<kOp, int32_t>(c);
    case DType::U8: return scatter_typed<kOp, uint8_t>(c);
    case DType::Bool:
      // Only Assign takes Bool (the front end checks): move the bytes.
      if constexpr (kOp == ScatterOp::Assign) return scatter_typed<kOp, uint8_t>(c);
      break;
    case DType::Complex64:
    case DType::Complex128: break;
  }
}

}  // namespace

void index_gather(const GatherCall& c) {
  switch (dtype_size(c.x.dtype)) {
    case 1: return gather_as<uint8_t>(c);
    case 2: return gather_as<uint16_t>(c);
    case 4: return gather_as<uint32_t>(c);
    default: return gather_as<uint64_t>(c);
  }
}

void index_scatter(const ScatterCall& c) {
  switch (c.op) {
    case ScatterOp::Assign: return scatter_op<ScatterOp::Assign>(c);
    case ScatterOp::Sum: return scatter_op<ScatterOp::Sum>(c);
    case ScatterOp::Prod: return scatter_op<ScatterOp::Prod>(c);
    case ScatterOp::Amax: return scatter_op<ScatterOp::Amax>(c);
    case ScatterOp::Amin: return scatter_op<ScatterOp::Amin>(c);
  }
}

}  // namespace numr::cpu::NUMR_ISA

#pragma GCC pop_options
