// Scan (cumsum, cumprod) and softmax (softmax, log_softmax) kernels along one axis of a
// contiguous [outer, n, inner] tensor. With inner == 1 each row is contiguous and is
// processed in chunks along the row; with inner > 1 a tile of inner columns is processed
// one row at a time, vectorised across the columns. F16/BF16 compute in float, scans of
// floats accumulate in double, integer scans in int64 with wrapping.

#include <immintrin.h>
#include <sleef.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "backends/cpu/kernels/kernels.h"
#include "core/thread_pool.h"

#include "backends/cpu/kernels/isa.h"  // after every system header

#include "backends/cpu/kernels/convert.h"
#include "backends/cpu/kernels/vec.h"

namespace numr::cpu::NUMR_ISA {
namespace {

constexpr int64_t kChunk = 1024;  // elements per chunk along a row
constexpr int64_t kTile = 256;    // inner columns per tile
constexpr int64_t kGrain = 16384;  // elements of work per thread task, at least
constexpr int64_t kFlushRows = 64;  // column exp-sums: float partials folded into double

template <class C> struct VecOf;
template <> struct VecOf<float> { using type = VF; };
template <> struct VecOf<double> { using type = VD; };

inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// A contiguous run of the tensor as compute values: direct when the dtype matches.
template <class C>
struct Access {
  const char* in;
  char* out;
  DType in_dt, out_dt;
  int64_t in_es, out_es;

  const C* load(int64_t at, int64_t m, C* buf) const {
    const char* p = in + at * in_es;
    if (in_dt == dtype_of_v<C>) return reinterpret_cast<const C*>(p);
    gather_row<C>(p, in_dt, 1, m, buf);
    return buf;
  }
  // Where results for [at, at + m) go before store(): the output itself when it can be.
  C* target(int64_t at, C* buf) const {
    return out_dt == dtype_of_v<C> ? reinterpret_cast<C*>(out + at * out_es) : buf;
  }
  void store(int64_t at, int64_t m, const C* vals) const {
    if (out_dt == dtype_of_v<C>) return;  // written in place by target()
    scatter_row<C>(vals, m, out + at * out_es, out_dt);
  }
};

template <class C>
Access<C> access_of(const AxisCall& c) {
  const int64_t ies = int64_t(dtype_size(c.in.dtype)), oes = int64_t(dtype_size(c.out.dtype));
  return {static_cast<const char*>(c.in.base) + c.in.offset * ies,
          static_cast<char*>(c.out.base) + c.out.offset * oes, c.in.dtype, c.out.dtype, ies, oes};
}

// Splits the inner dim into tiles so that outer * tiles gives every thread work.
inline int64_t tile_width(int64_t outer, int64_t inner) {
  const int64_t threads = ThreadPool::instance().size();
  const int64_t t = ceil_div(inner, std::max<int64_t>(1, ceil_div(threads, outer)));
  return std::clamp<int64_t>(ceil_div(t, 16) * 16, 16, kTile);
}

// ---- scans ----

// The running value: double for floats, wrapping uint64 for integers.
template <class C>
using ScanAcc = std::conditional_t<std::is_floating_point_v<C>, double, uint64_t>;

template <class C, bool kProd>
inline void scan_step(ScanAcc<C>& acc, C x) {
  if constexpr (std::is_floating_point_v<C>) {
    acc = kProd ? acc * double(x) : acc + double(x);
  } else {
    acc = kProd ? acc * uint64_t(int64_t(x)) : acc + uint64_t(int64_t(x));
  }
}

template <class C>
inline C scan_value(ScanAcc<C> acc) {
  if constexpr (std::is_floating_point_v<C>) return C(acc);
  else return C(int64_t(acc));
}

template <class C, bool kProd>
void scan(const AxisCall& c) {
  const Access<C> a = access_of<C>(c);
  const int64_t n = c.n, inner = c.inner;
  const ScanAcc<C> init = kProd ? ScanAcc<C>(1) : ScanAcc<C>(0);
  if (inner == 1) {
    const int64_t grain = std::max<int64_t>(1, kGrain / n);
    ThreadPool::instance().parallel_for(c.outer, grain, [&](int64_t b, int64_t e) {
      alignas(64) C in_buf[kChunk];
      alignas(64) C out_buf[kChunk];
      for (int64_t o = b; o < e; ++o) {
        ScanAcc<C> acc = init;
        for (int64_t j = 0; j < n; j += kChunk) {
          const int64_t m = std::min(kChunk, n - j), at = o * n + j;
          const C* x = a.load(at, m, in_buf);
          C* y = a.target(at, out_buf);
          for (int64_t i = 0; i < m; ++i) {
            scan_step<C, kProd>(acc, x[i]);
            y[i] = scan_value<C>(acc);
          }
          a.store(at, m, y);
        }
      }
    });
    return;
  }
  const int64_t tile = tile_width(c.outer, inner), n_tiles = ceil_div(inner, tile);
  const int64_t grain = std::max<int64_t>(1, kGrain / (n * tile));
  ThreadPool::instance().parallel_for(c.outer * n_tiles, grain, [&](int64_t b, int64_t e) {
    alignas(64) C in_buf[kTile];
    alignas(64) C out_buf[kTile];
    ScanAcc<C> acc[kTile];
    for (int64_t item = b; item < e; ++item) {
      const int64_t o = item / n_tiles, j0 = (item % n_tiles) * tile;
      const int64_t w = std::min(tile, inner - j0);
      std::fill(acc, acc + w, init);
      for (int64_t i = 0; i < n; ++i) {
        const int64_t at = (o * n + i) * inner + j0;
        const C* x = a.load(at, w, in_buf);
        C* y = a.target(at, out_buf);
        for (int64_t j = 0; j < w; ++j) {
          scan_step<C, kProd>(acc[j], x[j]);
          y[j] = scan_value<C>(acc[j]);
        }
        a.store(at, w, y);
      }
    }
  });
}

// ---- softmax ----

template <class V>
inline V vmax_nan(V best, V x) {
  return select((x > best) | (x != x), x, best);
}

template <class C>
inline C max_nan(C best, C x) {
  if (best != best) return best;
  return (x > best || x != x) ? x : best;
}

// NaN-sticky max of n >= 1 values.
template <class C>
C row_max(const C* p, int64_t n) {
  using V = typename VecOf<C>::type;
  constexpr int W = V::width;
  C best = p[0];
  int64_t i = 1;
  if (n >= W) {
    V b = V::load(p);
    for (i = W; i + W <= n; i += W) b = vmax_nan(b, V::load(p + i));
    if (i < n) b = vmax_nan(b, V::load(p + n - W));
    best = b.lane(0);
    for (int k = 1; k < W; ++k) best = max_nan(best, b.lane(k));
    return best;
  }
  for (; i < n; ++i) best = max_nan(best, p[i]);
  return best;
}

template <class C>
double row_sum_exp(const C* p, int64_t n, C m) {
  using V = typename VecOf<C>::type;
  constexpr int W = V::width;
  const V mv(m);
  V acc(0.0);
  int64_t i = 0;
  for (; i + W <= n; i += W) acc += exp(V::load(p + i) - mv);
  double s = 0;
  for (int k = 0; k < W; ++k) s += double(acc.lane(k));
  for (; i < n; ++i) s += std::exp(double(p[i]) - double(m));
  return s;
}

// y = exp(x - m) * scale (softmax) or (x - m) - shift (log_softmax), n values.
template <class C, bool kLog>
void row_finish(const C* x, C* y, int64_t n, C m, C scale, C shift) {
  using V = typename VecOf<C>::type;
  constexpr int W = V::width;
  const V mv(m), sv(scale), hv(shift);
  int64_t i = 0;
  for (; i + W <= n; i += W) {
    const V v = V::load(x + i);
    (kLog ? (v - mv) - hv : exp(v - mv) * sv).store(y + i);
  }
  for (; i < n; ++i) y[i] = kLog ? (x[i] - m) - shift : C(std::exp(x[i] - m) * scale);
}

// y = exp(x - m), returning Σ y.
template <class C>
double exp_store(const C* x, C* y, int64_t n, C m) {
  using V = typename VecOf<C>::type;
  constexpr int W = V::width;
  const V mv(m);
  V acc(0.0);
  int64_t i = 0;
  for (; i + W <= n; i += W) {
    const V e = exp(V::load(x + i) - mv);
    e.store(y + i);
    acc += e;
  }
  double s = 0;
  for (int k = 0; k < W; ++k) s += double(acc.lane(k));
  for (; i < n; ++i) {
    y[i] = C(std::exp(x[i] - m));
    s += double(y[i]);
  }
  return s;
}

template <class C>
void scale_in_place(C* y, int64_t n, C scale) {
  using V = typename VecOf<C>::type;
  constexpr int W = V::width;
  const V sv(scale);
  int64_t i = 0;
  for (; i + W <= n; i += W) (V::load(y + i) * sv).store(y + i);
  for (; i < n; ++i) y[i] *= scale;
}

template <class C, bool kLog>
void softmax_rows(const AxisCall& c) {
  const Access<C> a = access_of<C>(c);
  const int64_t n = c.n;
  const int64_t grain = std::max<int64_t>(1, kGrain / n);
  ThreadPool::instance().parallel_for(c.outer, grain, [&](int64_t b, int64_t e) {
    alignas(64) C in_buf[kChunk];
    alignas(64) C out_buf[kChunk];
    for (int64_t o = b; o < e; ++o) {
      const int64_t row = o * n;
      C m = C(0);
      for (int64_t j = 0; j < n; j += kChunk) {
        const int64_t len = std::min(kChunk, n - j);
        const C cm = row_max(a.load(row + j, len, in_buf), len);
        m = j == 0 ? cm : max_nan(m, cm);
      }
      double s = 0;
      if (!kLog && a.out_dt == dtype_of_v<C>) {
        // Output in the compute type: keep the exponentials there and only rescale.
        for (int64_t j = 0; j < n; j += kChunk) {
          const int64_t len = std::min(kChunk, n - j);
          s += exp_store(a.load(row + j, len, in_buf), a.target(row + j, out_buf), len, m);
        }
        for (int64_t j = 0; j < n; j += kChunk)
          scale_in_place(a.target(row + j, out_buf), std::min(kChunk, n - j), C(1.0 / s));
        continue;
      }
      for (int64_t j = 0; j < n; j += kChunk) {
        const int64_t len = std::min(kChunk, n - j);
        s += row_sum_exp(a.load(row + j, len, in_buf), len, m);
      }
      const C scale = C(1.0 / s), shift = C(std::log(s));
      for (int64_t j = 0; j < n; j += kChunk) {
        const int64_t len = std::min(kChunk, n - j);
        C* y = a.target(row + j, out_buf);
        row_finish<C, kLog>(a.load(row + j, len, in_buf), y, len, m, scale, shift);
        a.store(row + j, len, y);
      }
    }
  });
}

template <class C, bool kLog>
void softmax_columns(const AxisCall& c) {
  using V = typename VecOf<C>::type;
  constexpr int W = V::width;
  const Access<C> a = access_of<C>(c);
  const int64_t n = c.n, inner = c.inner;
  const int64_t tile = tile_width(c.outer, inner), n_tiles = ceil_div(inner, tile);
  const int64_t grain = std::max<int64_t>(1, kGrain / (n * tile));
  ThreadPool::instance().parallel_for(c.outer * n_tiles, grain, [&](int64_t b, int64_t e) {
    alignas(64) C in_buf[kTile];
    alignas(64) C out_buf[kTile];
    alignas(64) C mx[kTile];
    alignas(64) C part[kTile];
    double tot[kTile];
    alignas(64) C scale[kTile];
    alignas(64) C shift[kTile];
    for (int64_t item = b; item < e; ++item) {
      const int64_t o = item / n_tiles, j0 = (item % n_tiles) * tile;
      const int64_t w = std::min(tile, inner - j0);
      const auto at = [&](int64_t i) { return (o * n + i) * inner + j0; };
      std::memcpy(mx, a.load(at(0), w, in_buf), size_t(w) * sizeof(C));
      for (int64_t i = 1; i < n; ++i) {
        const C* x = a.load(at(i), w, in_buf);
        int64_t j = 0;
        for (; j + W <= w; j += W) vmax_nan(V::load(mx + j), V::load(x + j)).store(mx + j);
        for (; j < w; ++j) mx[j] = max_nan(mx[j], x[j]);
      }
      std::fill(part, part + w, C(0));
      std::fill(tot, tot + w, 0.0);
      for (int64_t i = 0; i < n; ++i) {
        const C* x = a.load(at(i), w, in_buf);
        int64_t j = 0;
        for (; j + W <= w; j += W)
          (V::load(part + j) + exp(V::load(x + j) - V::load(mx + j))).store(part + j);
        for (; j < w; ++j) part[j] += C(std::exp(x[j] - mx[j]));
        if (i % kFlushRows == kFlushRows - 1 || i == n - 1)
          for (j = 0; j < w; ++j) {
            tot[j] += double(part[j]);
            part[j] = C(0);
          }
      }
      for (int64_t j = 0; j < w; ++j) {
        scale[j] = C(1.0 / tot[j]);
        shift[j] = C(std::log(tot[j]));
      }
      for (int64_t i = 0; i < n; ++i) {
        const C* x = a.load(at(i), w, in_buf);
        C* y = a.target(at(i), out_buf);
        int64_t j = 0;
        for (; j + W <= w; j += W) {
          const V v = V::load(x + j);
          const V d = v - V::load(mx + j);
          (kLog ? d - V::load(shift + j) : exp(d) * V::load(scale + j)).store(y + j);
        }
        for (; j < w; ++j) {
          const C d = x[j] - mx[j];
          y[j] = kLog ? d - shift[j] : C(std::exp(d) * scale[j]);
        }
        a.store(at(i), w, y);
      }
    }
  });
}

template <class C>
void run(const AxisCall& c) {
  switch (c.op) {
    case OpId::cumsum: return scan<C, false>(c);
    case OpId::cumprod: return scan<C, true>(c);
    default: break;
  }
  if constexpr (std::is_floating_point_v<C>) {
    const bool rows = c.inner == 1;
    switch (c.op) {
      case OpId::softmax: return rows ? softmax_rows<C, false>(c) : softmax_columns<C, false>(c);
      case OpId::log_softmax:
        return rows ? softmax_rows<C, true>(c) : softmax_columns<C, true>(c);
      default: break;
    }
  }
}

}  // namespace

void along_axis(const AxisCall& call) {
  if (call.outer <= 0 || call.n <= 0 || call.inner <= 0) return;
  switch (call.in.dtype) {
    case DType::F64: return run<double>(call);
    case DType::F32:
    case DType::F16:
    case DType::BF16: return run<float>(call);
    default: return run<int64_t>(call);
  }
}

}  // namespace numr::cpu::NUMR_ISA

#pragma GCC pop_options
