// Scan (cumsum, cumprod) and softmax (softmax, log_softmax) kernels along one axis of a
// contiguous [outer, n, inner] tensor. With inner == 1 each row is contiguous and is
// processed in chunks along the row; with inner > 1 a tile of inner columns is processed
// one row at a time, vectorised across the columns. F16/BF16 compute in float, scans of
// floats accumulate in double, integer scans in int64 with wrapping.

#include <immintrin.h>
#include <sleef.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <type_traits>

#include "backends/cpu/host_allocator.h"
#include "backends/cpu/kernels/kernels.h"
#include "core/thread_pool.h"

#include "backends/cpu/kernels/isa.h"  // after every system header

#include "backends/cpu/kernels/convert.h"
#include "backends/cpu/kernels/vec.h"
#include "math/reduce_rules.h"

namespace numr::cpu::NUMR_ISA {
namespace {

constexpr int64_t kChunk = 1024;  // elements per chunk along a row
constexpr int64_t kTile = 256;    // inner columns per tile of the three-pass softmax, at most
constexpr int64_t kScanTile = 4096;  // inner columns per scan tile: one pass, long reads
constexpr int64_t kGrain = 16384;  // elements of work per thread task, at least
constexpr int64_t kFlushRows = 64;  // column exp-sums: float partials folded into double
// A thread's kept softmax exponentials, at most, and the widest tile that keeps them: a
// tile's exponentials must stay in cache until the output is written from them, and
// narrower tiles read rows in runs too short for the prefetchers.
constexpr int64_t kScratchBytes = int64_t(4) << 20;
constexpr int64_t kKeptTile = 128;
constexpr int64_t kTilePrefetchBytes = 8192;         // how far ahead column tiles prefetch
constexpr int64_t kRowStage = 8192;  // elements of a block of softmax rows kept apart
constexpr int64_t kMaxLanes = 16;    // the widest vector's lanes

template <class C> struct VecOf;
template <> struct VecOf<float> { using type = VF; };
template <> struct VecOf<double> { using type = VD; };

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
inline int64_t tile_width(int64_t outer, int64_t inner, int64_t max_tile) {
  const int64_t threads = ThreadPool::instance().size();
  const int64_t t = ceil_div(inner, std::max<int64_t>(1, ceil_div(threads, outer)));
  return std::clamp<int64_t>(ceil_div(t, 16) * 16, 16, max_tile);
}

// ---- vector helpers ----

// Prefetches the lines of count elements kPrefetchBytes past p. Loops that do much work
// per cache line keep too few misses in flight to stream from memory on their own.
constexpr int64_t kPrefetchBytes = 2048;
template <class C>
inline void prefetch_ahead(const C* p, int64_t count) {
  const char* ahead = reinterpret_cast<const char*>(p) + kPrefetchBytes;
  for (int64_t k = 0; k < count * int64_t(sizeof(C)); k += 64) __builtin_prefetch(ahead + k);
}


// Float lanes as many as VD has, for widening to double.
typedef float vfd_raw __attribute__((vector_size(kWD * 4)));

template <class C>
inline VD load_wide(const C* p) {
  if constexpr (std::is_same_v<C, double>) {
    return VD::load(p);
  } else {
    vfd_raw h;
    std::memcpy(&h, p, sizeof h);
    return VD(__builtin_convertvector(h, vd_raw));
  }
}

template <class C>
inline void store_narrow(VD v, C* p) {
  if constexpr (std::is_same_v<C, double>) {
    v.store(p);
  } else {
    const vfd_raw h = __builtin_convertvector(v.v, vfd_raw);
    std::memcpy(p, &h, sizeof h);
  }
}

// The float vector whose low half is lo and high half hi.
template <int... I>
inline vf_raw concat_impl(vfd_raw lo, vfd_raw hi, std::integer_sequence<int, I...>) {
  return __builtin_shufflevector(lo, hi, I...);
}
inline vf_raw concat_halves(vfd_raw lo, vfd_raw hi) {
  return concat_impl(lo, hi, std::make_integer_sequence<int, kWF>{});
}

// Lanes moved up by K, the low K filled from f (the mask folds to a constant).
template <int K>
inline vd_raw shift_up(vd_raw x, vd_raw f) {
  vdm_raw m;
  for (int k = 0; k < kWD; ++k) m[k] = k < K ? kWD + k : k - K;
  return __builtin_shuffle(x, f, m);
}

// Inclusive prefix sums (or products) across the lanes, in log2(width) steps.
template <bool kProd>
inline vd_raw lane_scan(vd_raw x) {
  const vd_raw f = vd_raw{} + (kProd ? 1.0 : 0.0);
  const auto step = [&](vd_raw a, vd_raw b) { return kProd ? a * b : a + b; };
  x = step(x, shift_up<1>(x, f));
  if constexpr (kWD >= 4) x = step(x, shift_up<2>(x, f));
  if constexpr (kWD >= 8) x = step(x, shift_up<4>(x, f));
  return x;
}

inline vd_raw last_lane(vd_raw x) {
  vdm_raw m;
  for (int k = 0; k < kWD; ++k) m[k] = kWD - 1;
  return __builtin_shuffle(x, m);
}

// y = running value combined with the prefix of x, over m values; floats in double.
// Two vectors per step, so the carried value waits on one add per 2 * kWD elements.
template <class C, bool kProd>
void scan_block(const C* x, C* y, int64_t m, double& acc) {
  vd_raw carry = vd_raw{} + acc;
  int64_t i = 0;
  for (; i + 2 * kWD <= m; i += 2 * kWD) {
    prefetch_ahead(x + i, 2 * kWD);
    const vd_raw p0 = lane_scan<kProd>(load_wide(x + i).v);
    const vd_raw p1 = lane_scan<kProd>(load_wide(x + i + kWD).v);
    const vd_raw t0 = last_lane(p0), t1 = last_lane(p1);
    if constexpr (kProd) {
      store_narrow(VD(p0 * carry), y + i);
      store_narrow(VD(p1 * (carry * t0)), y + i + kWD);
      carry = carry * (t0 * t1);
    } else {
      store_narrow(VD(p0 + carry), y + i);
      store_narrow(VD(p1 + (carry + t0)), y + i + kWD);
      carry = carry + (t0 + t1);
    }
  }
  acc = carry[0];
  for (; i < m; ++i) {
    acc = kProd ? acc * double(x[i]) : acc + double(x[i]);
    y[i] = C(acc);
  }
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

// One row of a column scan over whole vectors: acc[j] (double) takes x[j] in and y[j]
// gets it, with non-temporal stores if nt (y aligned to a vector). pf is a later row of
// the raw input (es bytes per value), prefetched as the row is read: a tile's rows are
// runs a stride apart, which the hardware prefetchers follow poorly. Returns the
// columns done.
template <class C, bool kProd>
int64_t scan_row(const C* x, C* y, double* acc, int64_t w, const char* pf, int64_t es,
                 bool nt) {
  const auto step = [](vd_raw s, vd_raw v) { return kProd ? s * v : s + v; };
  int64_t j = 0;
  if constexpr (std::is_same_v<C, double>) {
    for (; j + kWD <= w; j += kWD) {
      __builtin_prefetch(pf + j * es);
      const VD s = step(VD::load(acc + j).v, VD::load(x + j).v);
      s.store(acc + j);
      nt ? s.stream(y + j) : s.store(y + j);
    }
  } else {
    for (; j + kWF <= w; j += kWF) {
      __builtin_prefetch(pf + j * es);
      const vd_raw s0 = step(VD::load(acc + j).v, load_wide(x + j).v);
      const vd_raw s1 = step(VD::load(acc + j + kWD).v, load_wide(x + j + kWD).v);
      VD(s0).store(acc + j);
      VD(s1).store(acc + j + kWD);
      const VF v(concat_halves(__builtin_convertvector(s0, vfd_raw),
                               __builtin_convertvector(s1, vfd_raw)));
      nt ? v.stream(y + j) : v.store(y + j);
    }
  }
  return j;
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
          if constexpr (std::is_floating_point_v<C>) {
            scan_block<C, kProd>(x, y, m, acc);
          } else {
            for (int64_t i = 0; i < m; ++i) {
              scan_step<C, kProd>(acc, x[i]);
              y[i] = scan_value<C>(acc);
            }
          }
          a.store(at, m, y);
        }
      }
    });
    return;
  }
  const int64_t tile = tile_width(c.outer, inner, kScanTile), n_tiles = ceil_div(inner, tile);
  const int64_t grain = std::max<int64_t>(1, kGrain / (n * tile));
  const bool stream = c.out.dtype == dtype_of_v<C> &&
                      c.outer * n * inner * int64_t(sizeof(C)) >= kStreamBytes;
  ThreadPool::instance().parallel_for(c.outer * n_tiles, grain, [&](int64_t b, int64_t e) {
    // Tens of KB: on the heap, not on a possibly small thread stack.
    const std::unique_ptr<C[]> in_mem(new C[kScanTile]), out_mem(new C[kScanTile]);
    const std::unique_ptr<ScanAcc<C>[]> acc_mem(new ScanAcc<C>[kScanTile]);
    C* const in_buf = in_mem.get();
    C* const out_buf = out_mem.get();
    ScanAcc<C>* const acc = acc_mem.get();
    for (int64_t item = b; item < e; ++item) {
      const int64_t o = item / n_tiles, j0 = (item % n_tiles) * tile;
      const int64_t w = std::min(tile, inner - j0);
      std::fill(acc, acc + w, init);
      const int64_t ahead = std::max<int64_t>(2, kTilePrefetchBytes / (w * a.in_es));
      for (int64_t i = 0; i < n; ++i) {
        const int64_t at = (o * n + i) * inner + j0;
        const C* x = a.load(at, w, in_buf);
        C* y = a.target(at, out_buf);
        int64_t j = 0;
        if constexpr (std::is_floating_point_v<C>) {
          const char* pf = a.in + (o * n + std::min(i + ahead, n - 1)) * inner * a.in_es +
                           j0 * a.in_es;
          const bool nt = stream && reinterpret_cast<uintptr_t>(y) % sizeof(VF) == 0;
          j = scan_row<C, kProd>(x, y, acc, w, pf, a.in_es, nt);
        }
        // The rest, and integer scans: the compiler vectorises this loop.
        for (; j < w; ++j) {
          scan_step<C, kProd>(acc[j], x[j]);
          y[j] = scan_value<C>(acc[j]);
        }
        a.store(at, w, y);
      }
    }
    if (stream) _mm_sfence();  // order the non-temporal stores before the op returns
  });
}

// ---- softmax ----

template <class V>
inline double lane_sum(V x) {
  return sum_lanes_double(x);
}

// 1 in the lanes where x is NaN, else 0. A blend between constants compiles to one
// masked move; blends between variables, and ORs of masks, GCC 12 splits into scalar
// code for 512-bit vectors under a target pragma, so the loops below avoid them.
template <class V>
inline V nan_ones(V x) {
  return select(x != x, V(1.0), V(0.0));
}

// The plain max of two vectors (maxps): NaN not sticky.
template <class V>
inline V vmax_plain(V a, V x) {
  return select(x > a, x, a);
}

// The max of n >= 1 values, as softmax's shift. A NaN may or may not come out (the
// vector loop's maxps drops NaN lanes): either way the row's exponentials, and so its
// sum and every output, are NaN, as they must be.
// row_max_lanes leaves the max in the lanes of a vector (n >= the vector width).
template <class C, class V = typename VecOf<C>::type>
[[gnu::flatten]] V row_max_lanes(const C* p, int64_t n) {
  constexpr int W = V::width;
  V b = V::load(p), b1 = b, b2 = b, b3 = b;
  int64_t i = W;
  for (; i + 4 * W <= n; i += 4 * W) {
    prefetch_ahead(p + i, 4 * W);
    b = vmax_plain(b, V::load(p + i));
    b1 = vmax_plain(b1, V::load(p + i + W));
    b2 = vmax_plain(b2, V::load(p + i + 2 * W));
    b3 = vmax_plain(b3, V::load(p + i + 3 * W));
  }
  b = vmax_plain(vmax_plain(b, b1), vmax_plain(b2, b3));
  for (; i + W <= n; i += W) b = vmax_plain(b, V::load(p + i));
  if (i < n) b = vmax_plain(b, V::load(p + n - W));
  return b;
}

template <class C>
C row_max(const C* p, int64_t n) {
  using V = typename VecOf<C>::type;
  if (n >= V::width) return extreme_lane<true>(row_max_lanes(p, n));
  C best = p[0];
  for (int64_t i = 1; i < n; ++i) best = math::extreme_merge<true>(best, p[i]);
  return best;
}

// Lane indices that fold_rows takes from a pair of vectors (a, b) whose lanes hold
// groups of G partial results per row: the first (or, kSecond, the second) half of
// each group, a's groups in the low half of the result and b's in the high half.
template <int W, int G, bool kSecond>
constexpr std::array<int, W> fold_index() {
  std::array<int, W> idx{};
  for (int t = 0; t < W; ++t) {
    const int u = t % (W / 2);
    idx[t] = (t < W / 2 ? 0 : W) + u / (G / 2) * G + u % (G / 2) + (kSecond ? G / 2 : 0);
  }
  return idx;
}
template <int W, int G, bool kSecond, class R, int... I>
inline R fold_pick(R a, R b, std::integer_sequence<int, I...>) {
  constexpr std::array<int, W> idx = fold_index<W, G, kSecond>();
  return __builtin_shufflevector(a, b, idx[I]...);
}
template <int G, class V, class Op>
inline void fold_level(V* v, int count, Op op) {
  constexpr int W = V::width;
  const auto lanes = std::make_integer_sequence<int, W>{};
  for (int k = 0; k < count / 2; ++k) {
    const auto a = v[2 * k].v, b = v[2 * k + 1].v;
    v[k] = op(V(fold_pick<W, G, false>(a, b, lanes)), V(fold_pick<W, G, true>(a, b, lanes)));
  }
  if constexpr (G > 2) fold_level<G / 2>(v, count / 2, op);
}
// Reduces W vectors, v[r] holding row r's partial results in its lanes, to one vector
// whose lane r is op over v[r]'s lanes: log2(W) levels of two shuffles and one op per
// pair, where a horizontal reduction per row is a chain of log2(W) dependent steps.
template <class V, class Op>
inline V fold_rows(V* v, Op op) {
  if constexpr (V::width > 1) fold_level<V::width>(v, V::width, op);
  return v[0];
}

// flatten: the exponential is inlined into the loop whatever the callers' size; a call
// per vector would spill every live vector.
template <class C, class V = typename VecOf<C>::type>
[[gnu::flatten]] V row_sum_exp_lanes(const C* p, int64_t n, C m, const char* pf, int64_t pf_es) {
  constexpr int W = V::width;
  const V mv(m);
  V acc(0.0);
  for (int64_t i = 0; i + W <= n; i += W) {
    __builtin_prefetch(pf + i * pf_es);
    acc += exp(V::load(p + i) - mv);
  }
  return acc;
}
template <class C>
double row_sum_exp(const C* p, int64_t n, C m, const char* pf, int64_t pf_es) {
  constexpr int W = VecOf<C>::type::width;
  double s = lane_sum(row_sum_exp_lanes(p, n, m, pf, pf_es));
  int64_t i = n / W * W;
  for (; i < n; ++i) s += std::exp(double(p[i]) - double(m));
  return s;
}

// y = exp(x - m) * scale (softmax) or (x - m) - shift (log_softmax), n values; with
// stream, the vectors that start on a vector boundary of y are written with non-temporal
// stores (the caller fences).
template <class C, bool kLog>
void row_finish(const C* x, C* y, int64_t n, C m, C scale, C shift, bool stream) {
  using V = typename VecOf<C>::type;
  constexpr int W = V::width;
  const V mv(m), sv(scale), hv(shift);
  const auto one = [&](int64_t i) {
    return kLog ? (x[i] - m) - shift : C(std::exp(x[i] - m) * scale);
  };
  const auto vec = [&](int64_t i) {
    const V v = V::load(x + i);
    return kLog ? (v - mv) - hv : exp(v - mv) * sv;
  };
  int64_t i = 0;
  if (stream) {
    for (; i < n && reinterpret_cast<uintptr_t>(y + i) % sizeof(V) != 0; ++i) y[i] = one(i);
    for (; i + W <= n; i += W) vec(i).stream(y + i);
  }
  for (; i + W <= n; i += W) vec(i).store(y + i);
  for (; i < n; ++i) y[i] = one(i);
}

// y = exp(x - m), returning Σ y.
template <class C, class V = typename VecOf<C>::type>
[[gnu::flatten]] V exp_store_lanes(const C* x, C* y, int64_t n, C m, const char* pf, int64_t pf_es) {
  constexpr int W = V::width;
  const V mv(m);
  V acc(0.0);
  for (int64_t i = 0; i + W <= n; i += W) {
    __builtin_prefetch(pf + i * pf_es);
    const V e = exp(V::load(x + i) - mv);
    e.store(y + i);
    acc += e;
  }
  return acc;
}
template <class C>
double exp_store(const C* x, C* y, int64_t n, C m, const char* pf, int64_t pf_es) {
  constexpr int W = VecOf<C>::type::width;
  double s = lane_sum(exp_store_lanes(x, y, n, m, pf, pf_es));
  int64_t i = n / W * W;
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

// y = e * scale, n values; with stream, the vectors that start on a vector boundary of y
// are written with non-temporal stores (the caller fences).
template <class C>
void scale_to(const C* e, C* y, int64_t n, C scale, bool stream) {
  using V = typename VecOf<C>::type;
  constexpr int W = V::width;
  const V sv(scale);
  int64_t i = 0;
  if (stream) {
    for (; i < n && reinterpret_cast<uintptr_t>(y + i) % sizeof(V) != 0; ++i) y[i] = e[i] * scale;
    for (; i + W <= n; i += W) (V::load(e + i) * sv).stream(y + i);
  }
  for (; i + W <= n; i += W) (V::load(e + i) * sv).store(y + i);
  for (; i < n; ++i) y[i] = e[i] * scale;
}

// The maxima m[r] and exponential sums s[r] of rows [o0, o0 + rows) of length n, a
// multiple of the vector width, W rows at a time through fold_rows (a ragged last group
// repeats its first row in the lanes past its end). The exponentials go to stage (rows
// n apart) when given, else to the output when in_place, else nowhere. pf_row(r, j):
// where to prefetch while row r is exponentiated. m has room for a vector past rows.
template <class C, class PfRow>
[[gnu::flatten]] void fold_block_stats(const Access<C>& a, int64_t o0, int64_t rows, int64_t n, C* stage,
                      bool in_place, C* out_buf, C* in_buf, const PfRow& pf_row, C* m,
                      double* s) {
  using V = typename VecOf<C>::type;
  constexpr int W = V::width;
  V lanes[W];
  alignas(64) C sums[W];
  for (int64_t g = 0; g < rows; g += W) {
    for (int64_t r = 0; r < W; ++r)
      lanes[r] = g + r < rows ? row_max_lanes(a.load((o0 + g + r) * n, n, in_buf), n) : lanes[0];
    fold_rows(lanes, [](V x, V y) { return vmax_plain(x, y); }).store(m + g);
  }
  for (int64_t g = 0; g < rows; g += W) {
    for (int64_t r = 0; r < W; ++r) {
      if (g + r >= rows) {
        lanes[r] = lanes[0];
        continue;
      }
      const int64_t row = (o0 + g + r) * n;
      const C* x = a.load(row, n, in_buf);
      const char* pf = pf_row(g + r, 0);
      if (in_place) {
        C* y = stage ? stage + (g + r) * n : a.target(row, out_buf);
        lanes[r] = exp_store_lanes(x, y, n, m[g + r], pf, a.in_es);
      } else {
        lanes[r] = row_sum_exp_lanes(x, n, m[g + r], pf, a.in_es);
      }
    }
    fold_rows(lanes, [](V x, V y) { return x + y; }).store(sums);
    for (int64_t r = 0; r < W && g + r < rows; ++r) s[g + r] = double(sums[r]);
  }
}

// Rows are taken in blocks of about kChunk elements, and each step (max, sum of
// exponentials, output) runs over the whole block before the next: a short row's steps
// form one long dependency chain, and stepping across rows lets them overlap.
template <class C, bool kLog>
void softmax_rows(const AxisCall& c) {
  constexpr int64_t kBlockRows = 64;
  constexpr int64_t kStatRows = kBlockRows + kMaxLanes;  // room for a vector past the rows
  const Access<C> a = access_of<C>(c);
  const int64_t n = c.n;
  const int64_t grain = std::max<int64_t>(1, kGrain / n);
  const int64_t block = std::clamp<int64_t>(kChunk / n, 1, kBlockRows);
  const bool in_place = !kLog && a.out_dt == dtype_of_v<C>;
  // A large output is written with non-temporal stores (a normal store reads each output
  // line from memory first). Softmax then keeps a block's exponentials in a stage of the
  // thread's own, and rescales them from there into the output.
  const bool stream =
      a.out_dt == dtype_of_v<C> && c.outer * n * int64_t(sizeof(C)) >= kStreamBytes;
  const bool staged = in_place && stream && block * n <= kRowStage;
  // Short rows whose length is a multiple of the vector width, W or more to a block: the
  // maxima and sums of W rows at a time come out of fold_rows.
  constexpr int W = VecOf<C>::type::width;
  const bool folded = n % W == 0 && block >= W;
  ThreadPool::instance().parallel_for(c.outer, grain, [&](int64_t b, int64_t e) {
    alignas(64) C in_buf[kChunk];
    alignas(64) C out_buf[kChunk];
    alignas(64) C stage[kRowStage];
    alignas(64) C m[kStatRows];
    double s[kBlockRows];
    for (int64_t o0 = b; o0 < e; o0 += block) {
      const int64_t rows = std::min(block, e - o0);
      const auto pf_row = [&](int64_t r, int64_t j) {  // the next block's row r, at j
        return a.in + (std::min(o0 + block + r, e - 1) * n + j) * a.in_es;
      };
      if (folded) {
        fold_block_stats<C>(a, o0, rows, n, in_place ? (staged ? stage : nullptr) : nullptr,
                            in_place, out_buf, in_buf, pf_row, m, s);
      } else {
        for (int64_t r = 0; r < rows; ++r) {
          const int64_t row = (o0 + r) * n;
          for (int64_t j = 0; j < n; j += kChunk) {
            const int64_t len = std::min(kChunk, n - j);
            const C cm = row_max(a.load(row + j, len, in_buf), len);
            m[r] = j == 0 ? cm : math::extreme_merge<true>(m[r], cm);
          }
        }
        for (int64_t r = 0; r < rows; ++r) {
          const int64_t row = (o0 + r) * n;
          s[r] = 0;
          for (int64_t j = 0; j < n; j += kChunk) {
            const int64_t len = std::min(kChunk, n - j);
            const C* x = a.load(row + j, len, in_buf);
            // Output in the compute type: keep the exponentials there and only rescale.
            C* y = staged ? stage + r * n + j : a.target(row + j, out_buf);
            s[r] += in_place ? exp_store(x, y, len, m[r], pf_row(r, j), a.in_es)
                             : row_sum_exp(x, len, m[r], pf_row(r, j), a.in_es);
          }
        }
      }
      for (int64_t r = 0; r < rows; ++r) {
        const int64_t row = (o0 + r) * n;
        if (staged) {
          scale_to(stage + r * n, a.target(row, out_buf), n, C(1.0 / s[r]), true);
          continue;
        }
        if (in_place) {
          for (int64_t j = 0; j < n; j += kChunk)
            scale_in_place(a.target(row + j, out_buf), std::min(kChunk, n - j), C(1.0 / s[r]));
          continue;
        }
        const C scale = C(1.0 / s[r]), shift = C(std::log(s[r]));
        for (int64_t j = 0; j < n; j += kChunk) {
          const int64_t len = std::min(kChunk, n - j);
          C* y = a.target(row + j, out_buf);
          row_finish<C, kLog>(a.load(row + j, len, in_buf), y, len, m[r], scale, shift,
                              stream);
          a.store(row + j, len, y);
        }
      }
    }
    if (stream) _mm_sfence();  // order the non-temporal stores before the op returns
  });
}

// Deals items 0 .. n_items - 1 to the threads in turn: lane t of T runs items t, t + T,
// and so on, through body(lane, lanes). Column tiles dealt so are read by the threads at
// neighbouring places of the same rows at about the same time: longer runs of each memory
// row than when each thread walks its own part of the columns.
template <class Body>
void deal_items(int64_t n_items, int64_t grain, const Body& body) {
  const int64_t lanes = std::min<int64_t>(ThreadPool::instance().size(), ceil_div(n_items, grain));
  ThreadPool::instance().parallel_for(lanes, 1, [&](int64_t b, int64_t e) {
    for (int64_t lane = b; lane < e; ++lane) body(lane, lanes);
  });
}

// Vectors of columns whose maxima, shifts and sums stay in registers through a block's
// rows: 2 * kChunkVecs live at a time, of the 32 AVX-512 registers or the 16 AVX2/SSE ones.
constexpr int kChunkVecs = NUMR_ISA_LEVEL >= 3 ? 8 : 4;

// The rows of a block of a tile: row r at p + r * stride.
template <class C>
struct BlockRows {
  const C* p;
  int64_t stride, n;
  const C* operator[](int64_t r) const { return p + r * stride; }
};

// Columns [j, j + K W) of a block of a softmax tile: folds the block's maxima into the
// running ones (run) and writes them as the block's shift c_b (cb); then writes exp(x -
// c_b) (exp(x) while c_b is -inf, so that all -inf rows give 0, not NaN) to the block's
// kept exponentials (e, rows w apart) and their sums to bs. Two passes over the chunk's
// rows, which stay in L1 between them, the maxima and sums in registers rather than in
// memory as a pass over whole rows of the tile would need. prefetch(r, j, count) asks for
// what row r of the next block needs of columns [j, j + count).
template <class V, int K, class C, class Prefetch>
inline void block_chunk(const BlockRows<C>& rows, int64_t j, int64_t w, C* run, C* cb, C* bs, C* e,
                        const Prefetch& prefetch) {
  constexpr int W = V::width;
  V m[K], shift[K], sum[K];
  for (int k = 0; k < K; ++k) m[k] = V::load(run + j + k * W);
  for (int64_t r = 0; r < rows.n; ++r)
    for (int k = 0; k < K; ++k) m[k] = vmax_plain(m[k], V::load(rows[r] + j + k * W));
  for (int k = 0; k < K; ++k) {
    m[k].store(run + j + k * W);
    m[k].store(cb + j + k * W);
    shift[k] = select(m[k] == V(-std::numeric_limits<C>::infinity()), V(C(0)), m[k]);
    sum[k] = V(C(0));
  }
  for (int64_t r = 0; r < rows.n; ++r) {
    prefetch(r, j, K * W);
    for (int k = 0; k < K; ++k) {
      const V v = exp(V::load(rows[r] + j + k * W) - shift[k]);
      v.store(e + r * w + j + k * W);
      sum[k] = sum[k] + v;
    }
  }
  for (int k = 0; k < K; ++k) sum[k].store(bs + j + k * W);
}
// block_chunk over columns [j, w): chunks of K vectors, then of K / 2, ..., then the
// columns past the last whole vector one at a time.
template <class V, int K, class C, class Prefetch>
inline void block_chunks(const BlockRows<C>& rows, int64_t j, int64_t w, C* run, C* cb, C* bs, C* e,
                         const Prefetch& prefetch) {
  constexpr int64_t kCols = K * V::width;
  for (; j + kCols <= w; j += kCols) block_chunk<V, K>(rows, j, w, run, cb, bs, e, prefetch);
  if constexpr (K > 1) {
    block_chunks<V, K / 2>(rows, j, w, run, cb, bs, e, prefetch);
  } else {
    for (; j < w; ++j) {
      C m = run[j];
      for (int64_t r = 0; r < rows.n; ++r) m = rows[r][j] > m ? rows[r][j] : m;
      run[j] = cb[j] = m;
      const C shift = m == -std::numeric_limits<C>::infinity() ? C(0) : m;
      C sum = 0;
      for (int64_t r = 0; r < rows.n; ++r) sum += e[r * w + j] = C(std::exp(rows[r][j] - shift));
      bs[j] = sum;
    }
  }
}

// Softmax over a strided dim, a tile of w columns and all n rows at a time, keeping the
// tile's exponentials in a scratch that stays in cache. The tile is read from memory once,
// kColumnBlock rows at a time: the block's column maxima, folded into the running maxima
// c_b; then exp(x - c_b) into the scratch, and the block's sums. The exponentials are
// computed while the next block streams in (each row prefetches its row of the next
// block), not in a pass of their own after the maxima. Then per block the factor
// exp(c_b - max) / sum over blocks b' of exp(c_b' - max) * blocksum_b', and the output:
// the kept exponentials times their block's factor. A large output is written with
// non-temporal stores, which skip reading its lines first.
constexpr int64_t kColumnBlock = 64;
template <class C>
void softmax_columns_kept(const AxisCall& c, int64_t tile) {
  using V = typename VecOf<C>::type;
  constexpr int W = V::width;
  constexpr int64_t R = kColumnBlock;
  constexpr C kNegInf = -std::numeric_limits<C>::infinity();
  const Access<C> a = access_of<C>(c);
  const int64_t n = c.n, inner = c.inner;
  const int64_t n_tiles = ceil_div(inner, tile), n_blocks = ceil_div(n, R);
  const int64_t n_items = c.outer * n_tiles;
  const bool direct = a.in_dt == dtype_of_v<C>;
  const bool stream =
      a.out_dt == dtype_of_v<C> && c.outer * n * inner * int64_t(sizeof(C)) >= kStreamBytes;
  const auto at = [&](int64_t item, int64_t i) {  // element (i, first column) of a tile
    return ((item / n_tiles) * n + i) * inner + (item % n_tiles) * tile;
  };
  deal_items(n_items, std::max<int64_t>(1, kGrain / (n * tile)), [&](int64_t lane, int64_t lanes) {
    alignas(64) C run[kKeptTile];  // running column maxima
    alignas(64) C out_buf[kKeptTile];
    double tot[kKeptTile];
    // From the host allocator: huge-page blocks, kept from one call to the next.
    const HostScratch mem(size_t((n + 2 * n_blocks) * tile) * sizeof(C));
    C* const ex = static_cast<C*>(mem.get());  // [n, w] exponentials
    C* const fac = ex + n * tile;           // [n_blocks, w]: c_b, then the block factors
    C* const bsum = fac + n_blocks * tile;  // [n_blocks, w] block sums
    const std::unique_ptr<C[]> blk(direct ? nullptr : new C[size_t(R * tile)]);
    for (int64_t item = lane; item < n_items; item += lanes) {
      const int64_t w = std::min(tile, inner - (item % n_tiles) * tile);
      const int64_t item2 = item + lanes < n_items ? item + lanes : item;
      const int64_t w2 = std::min(w, inner - (item2 % n_tiles) * tile);
      const auto ahead = [&](int64_t i, int64_t& pw) {
        pw = i + R < n ? w : w2;
        return a.in + (i + R < n ? at(item, i + R) : at(item2, (i + R - n) % n)) * a.in_es;
      };
      std::fill(run, run + w, kNegInf);
      for (int64_t b = 0; b < n_blocks; ++b) {
        const int64_t i0 = b * R, i1 = std::min(n, i0 + R);
        if (!direct)
          for (int64_t i = i0; i < i1; ++i) a.load(at(item, i), w, blk.get() + (i - i0) * w);
        const BlockRows<C> rows{
            direct ? reinterpret_cast<const C*>(a.in + at(item, i0) * a.in_es) : blk.get(),
            direct ? inner : w, i1 - i0};
        C* const cb = fac + b * w;
        C* const bs = bsum + b * w;
        C* const e = ex + i0 * w;
        // Row i's prefetch: the same row of the next block, or of the thread's next tile.
        const auto prefetch = [&](int64_t r, int64_t j, int64_t count) {
          int64_t pw = 0;
          const char* pf = ahead(i0 + r, pw);
          for (int64_t k = j; k < std::min(j + count, pw); k += W)
            __builtin_prefetch(pf + k * a.in_es, 0, 1);
        };
        block_chunks<V, kChunkVecs>(rows, 0, w, run, cb, bs, e, prefetch);
      }
      // The factors exp(c_b - max) (0 for a block whose c_b is -inf, as its exponentials
      // are; NaN for every block of a column whose max is -inf too: all NaN, as it must
      // be), their total in double, then each factor over the total.
      std::fill(tot, tot + w, 0.0);
      for (int64_t b = 0; b < n_blocks; ++b) {
        C* f = fac + b * w;
        const C* bs = bsum + b * w;
        int64_t j = 0;
        for (; j + W <= w; j += W) exp(V::load(f + j) - V::load(run + j)).store(f + j);
        for (; j < w; ++j) f[j] = C(std::exp(f[j] - run[j]));
        for (j = 0; j < w; ++j) tot[j] += double(f[j]) * double(bs[j]);
      }
      for (int64_t j = 0; j < w; ++j) tot[j] = 1.0 / tot[j];
      for (int64_t b = 0; b < n_blocks; ++b)
        for (int64_t j = 0; j < w; ++j) fac[b * w + j] = C(double(fac[b * w + j]) * tot[j]);
      for (int64_t i = 0; i < n; ++i) {
        C* y = a.target(at(item, i), out_buf);
        const C* e = ex + i * w;
        const C* f = fac + (i / R) * w;
        const bool nt = stream && w % W == 0 && reinterpret_cast<uintptr_t>(y) % sizeof(V) == 0;
        int64_t j = 0;
        if (nt) {
          for (; j + W <= w; j += W) (V::load(e + j) * V::load(f + j)).stream(y + j);
        } else {
          for (; j + W <= w; j += W) (V::load(e + j) * V::load(f + j)).store(y + j);
        }
        for (; j < w; ++j) y[j] = e[j] * f[j];
        a.store(at(item, i), w, y);
      }
    }
    if (stream) _mm_sfence();  // order the non-temporal stores before the op returns
  });
}

// Three passes over a tile of w columns and all n rows: the column maxima; the sums of
// exp(x - max); the output, recomputed (log_softmax: x - max - log sum; softmax whose
// tile of 16 columns would not fit the scratch: exp(x - max) / sum).
template <class C, bool kLog>
void softmax_columns(const AxisCall& c) {
  using V = typename VecOf<C>::type;
  constexpr int W = V::width;
  const int64_t n = c.n, inner = c.inner;
  const int64_t cs = int64_t(sizeof(C));
  // Softmax keeps its exponentials when a tile of at least 16 columns fits the scratch.
  if (!kLog && n * 16 * cs <= kScratchBytes) {
    const int64_t max_tile = std::clamp<int64_t>(kScratchBytes / (n * cs) / 16 * 16, 16, kKeptTile);
    return softmax_columns_kept<C>(c, tile_width(c.outer, inner, max_tile));
  }
  const Access<C> a = access_of<C>(c);
  const int64_t tile = tile_width(c.outer, inner, kTile), n_tiles = ceil_div(inner, tile);
  const bool out_direct = a.out_dt == dtype_of_v<C>;
  const bool stream = out_direct && c.outer * n * inner * cs >= kStreamBytes;
  const int64_t n_items = c.outer * n_tiles;
  deal_items(n_items, std::max<int64_t>(1, kGrain / (n * tile)), [&](int64_t lane, int64_t lanes) {
    alignas(64) C in_buf[kTile];
    alignas(64) C out_buf[kTile];
    alignas(64) C mx[kTile];
    alignas(64) C part[kTile];
    double tot[kTile];
    alignas(64) C scale[kTile];
    alignas(64) C shift[kTile];
    for (int64_t item = lane; item < n_items; item += lanes) {
      const int64_t o = item / n_tiles, j0 = (item % n_tiles) * tile;
      const int64_t w = std::min(tile, inner - j0);
      const auto at = [&](int64_t i) { return (o * n + i) * inner + j0; };
      // A tile's rows are short runs a large stride apart, which the hardware prefetchers
      // follow poorly: each pass asks for the row `ahead` rows on (about
      // kTilePrefetchBytes ahead), one prefetch per vector of the row it works on, into
      // L2 (prefetcht2: prefetcht0 would hold L1's few miss buffers).
      const int64_t ahead = std::max<int64_t>(2, kTilePrefetchBytes / (w * a.in_es));
      const auto next = [&](int64_t i) { return a.in + at(std::min(i + ahead, n - 1)) * a.in_es; };
      // The plain max, and NaNs counted per column in part (see nan_ones).
      std::memcpy(mx, a.load(at(0), w, in_buf), size_t(w) * sizeof(C));
      std::fill(part, part + w, C(0));
      for (int64_t i = 0; i < n; ++i) {
        const char* pf = next(i);
        const C* x = a.load(at(i), w, in_buf);
        int64_t j = 0;
        for (; j + W <= w; j += W) {
          __builtin_prefetch(pf + j * a.in_es, 0, 1);
          const V v = V::load(x + j);
          vmax_plain(V::load(mx + j), v).store(mx + j);
          (V::load(part + j) + nan_ones(v)).store(part + j);
        }
        for (; j < w; ++j) mx[j] = math::extreme_merge<true>(mx[j], x[j]);
      }
      for (int64_t j = 0; j < w; ++j)
        if (part[j] != 0) mx[j] = std::numeric_limits<C>::quiet_NaN();
      std::fill(part, part + w, C(0));
      std::fill(tot, tot + w, 0.0);
      for (int64_t i = 0; i < n; ++i) {
        const char* pf = next(i);
        const C* x = a.load(at(i), w, in_buf);
        int64_t j = 0;
        for (; j + W <= w; j += W) {
          __builtin_prefetch(pf + j * a.in_es, 0, 1);
          (V::load(part + j) + exp(V::load(x + j) - V::load(mx + j))).store(part + j);
        }
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
        C* y = a.target(at(i), out_buf);
        const bool nt = stream && w % W == 0 && reinterpret_cast<uintptr_t>(y) % sizeof(V) == 0;
        const auto put = [&](V v, C* p) { nt ? v.stream(p) : v.store(p); };
        const char* pf = next(i);
        const C* x = a.load(at(i), w, in_buf);
        int64_t j = 0;
        for (; j + W <= w; j += W) {
          __builtin_prefetch(pf + j * a.in_es);
          const V d = V::load(x + j) - V::load(mx + j);
          put(kLog ? d - V::load(shift + j) : exp(d) * V::load(scale + j), y + j);
        }
        for (; j < w; ++j) {
          const C d = x[j] - mx[j];
          y[j] = kLog ? d - shift[j] : C(std::exp(d) * scale[j]);
        }
        a.store(at(i), w, y);
      }
    }
    if (stream) _mm_sfence();  // order the non-temporal stores before the op returns
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
