// Reduction kernels. The input arrives as [kept dims..., reduced dims...] with any strides.
// Two paths:
//   rows:    each output reduces its block in chunks along the innermost reduced dim,
//            through direct pointers when that dim is contiguous in the compute dtype and
//            gathered into a buffer otherwise (the strided fallback); a block too big for
//            one thread is split into parts whose states are merged in order;
//   columns: when the innermost kept dim is contiguous and the reduced one is not, a tile
//            of output columns (whole rows up to 4096 wide) is accumulated row by row
//            with SIMD (var/std and logsumexp read the rows twice: centre first, then
//            deviations); with too few tiles for the threads, the rows are split into
//            parts too, merged in order at the end.
// F16/BF16 compute in float; float sums are vector partial sums whose totals are
// combined in double; integers run in int64 with wrapping.

#include <immintrin.h>
#include <sleef.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <type_traits>
#include <vector>

#include "backends/cpu/kernels/kernels.h"
#include "backends/cpu/loop_plan.h"
#include "core/thread_pool.h"

#include "backends/cpu/kernels/isa.h"  // after every system header

#include "backends/cpu/kernels/convert.h"
#include "backends/cpu/kernels/vec.h"
#include "math/reduce_rules.h"

namespace numr::cpu::NUMR_ISA {
namespace {

constexpr int64_t kChunk = 4096;     // elements per feed: fewer per-chunk merges; buffers fit L1/L2
constexpr int64_t kTile = 4096;      // output columns per column-path tile: whole rows
                                     // of common widths, so reads stay contiguous
constexpr int64_t kFlushRows = 128;  // column sums: float partials folded into double
constexpr int64_t kGrain = 32768;    // elements of work per thread task, at least
constexpr double kInfD = std::numeric_limits<double>::infinity();
constexpr int64_t kPrefetchBytes = 2048;  // how far ahead max/min loops prefetch
constexpr int64_t kTilePrefetchBytes = 8192;  // how far ahead column tiles prefetch

template <class C> struct VecOf;
template <> struct VecOf<float> { using type = VF; };
template <> struct VecOf<double> { using type = VD; };

template <class C>
inline bool is_nan(C x) {
  if constexpr (std::is_floating_point_v<C>) return x != x;
  else return false;
}

template <class V>
inline double hsum(V v) {
  return sum_lanes_double(v);
}

// Asks for the count values that lie `ahead` past p. Prefetches never fault, so an
// address past the tensor is harmless.
template <class C>
inline void prefetch_next(const C* p, int64_t ahead, int64_t count) {
  const uintptr_t at = reinterpret_cast<uintptr_t>(p) + uintptr_t(ahead) * sizeof(C);
  for (int64_t k = 0; k < count * int64_t(sizeof(C)); k += 64)
    __builtin_prefetch(reinterpret_cast<const void*>(at + uintptr_t(k)));
}

// How far ahead a pass over a chunk of n values asks for memory: the next chunk, for
// chunks of min_bytes and more; below that, the lines being read (a select, not a branch,
// so that the loops keep one body). A second pass over a chunk (in cache) is arithmetic,
// and asking for the next chunk there lets its first pass find it in cache; chunks under
// 4 KiB are read in less time than those requests take. A sum or mean reads each chunk
// once; asking for the next chunk there helps on some CPUs and costs on others
// (BENCHMARKS.md names the machine it is tuned for).
template <class C>
constexpr int64_t next_chunk(int64_t n, int64_t min_bytes = 4096) {
  return n * int64_t(sizeof(C)) < min_bytes ? 0 : n;
}

// Σ p[i], vector partials in C, the total in double.
template <class C>
double sum_chunk(const C* p, int64_t n, int64_t ahead) {
  using V = typename VecOf<C>::type;
  constexpr int W = V::width;
  V a0(0.0), a1(0.0), a2(0.0), a3(0.0);
  int64_t i = 0;
  for (; i + 4 * W <= n; i += 4 * W) {
    prefetch_next(p + i, ahead, 4 * W);
    a0 += V::load(p + i);
    a1 += V::load(p + i + W);
    a2 += V::load(p + i + 2 * W);
    a3 += V::load(p + i + 3 * W);
  }
  for (; i + W <= n; i += W) a0 += V::load(p + i);
  double s = hsum((a0 + a1) + (a2 + a3));
  for (; i < n; ++i) s += double(p[i]);
  return s;
}

// Asks for the bytes [p, p + bytes): a row read soon.
inline void prefetch_run(const char* p, int64_t bytes) {
  for (int64_t k = 0; k < bytes; k += 64) __builtin_prefetch(p + k);
}

// Σ (p[i] - c) and Σ (p[i] - c)^2, for the chunk's mean and squared deviations. Two
// accumulator pairs: one pair would wait on the add latency every vector.
template <class C>
void dev_chunk(const C* p, int64_t n, C c, double& d1, double& d2) {
  using V = typename VecOf<C>::type;
  constexpr int W = V::width;
  const V cv(c);
  V s1(0.0), s2(0.0), t1(0.0), t2(0.0);
  int64_t i = 0;
  for (; i + 2 * W <= n; i += 2 * W) {
    prefetch_next(p + i, next_chunk<C>(n), 2 * W);
    const V d = V::load(p + i) - cv, e = V::load(p + i + W) - cv;
    s1 += d;
    s2 += d * d;
    t1 += e;
    t2 += e * e;
  }
  for (; i + W <= n; i += W) {
    const V d = V::load(p + i) - cv;
    s1 += d;
    s2 += d * d;
  }
  d1 = hsum(s1 + t1);
  d2 = hsum(s2 + t2);
  for (; i < n; ++i) {
    const double d = double(p[i] - c);
    d1 += d;
    d2 += d * d;
  }
}


// Σ exp(p[i] - m).
template <class C>
double sum_exp_chunk(const C* p, int64_t n, C m) {
  using V = typename VecOf<C>::type;
  constexpr int W = V::width;
  const V mv(m);
  V a0(0.0), a1(0.0);
  int64_t i = 0;
  for (; i + 2 * W <= n; i += 2 * W) {
    prefetch_next(p + i, next_chunk<C>(n), 2 * W);
    a0 += exp(V::load(p + i) - mv);
    a1 += exp(V::load(p + i + W) - mv);
  }
  for (; i + W <= n; i += W) a0 += exp(V::load(p + i) - mv);
  double s = hsum(a0 + a1);
  for (; i < n; ++i) s += std::exp(double(p[i]) - double(m));
  return s;
}

// The plain max/min of two vectors: one instruction (maxps/minps), NaN not sticky.
template <class V, bool kMax>
inline V vextreme(V a, V x) {
  return select(kMax ? (x > a) : (x < a), x, a);
}

// 1 in the lanes where x is NaN, else 0. A blend between constants compiles to one
// masked move; blends between variables, and ORs of masks, GCC 12 splits into scalar
// code for 512-bit vectors under a target pragma, so the loops below avoid them.
template <class V>
inline V nan_ones(V x) {
  return select(x != x, V(1.0), V(0.0));
}

template <class V>
inline bool any_nonzero(V v) {
  for (int k = 0; k < V::width; ++k)
    if (v.lane(k) != 0) return true;
  return false;
}

// NaN-sticky max (kMax) or min of n >= 1 values, one at a time.
template <class C, bool kMax>
C extreme_scalar(const C* p, int64_t n) {
  C best = p[0];
  for (int64_t i = 1; i < n; ++i) best = math::extreme_merge<kMax>(best, p[i]);
  return best;
}

// NaN-sticky max (kMax) or min of n >= 1 values. The vector loop keeps the plain
// extreme (maxps/minps) and, apart, a running sum of the values, which is finite unless
// a NaN or an infinity went in (or the sum overflowed); such a chunk, rare, is redone
// one value at a time. Both are cheap and independent, where a NaN-sticky blend is not.
template <class C, bool kMax>
C extreme_chunk(const C* p, int64_t n) {
  if constexpr (std::is_floating_point_v<C>) {
    using V = typename VecOf<C>::type;
    constexpr int W = V::width;
    if (n >= W) {
      V b = V::load(p), b1 = b, b2 = b, b3 = b, z = b;
      int64_t i = W;
      for (; i + 4 * W <= n; i += 4 * W) {
        // More instructions per line than a sum: fewer misses in flight without a hint.
        const char* ahead = reinterpret_cast<const char*>(p + i) + kPrefetchBytes;
        for (size_t k = 0; k < 4 * W * sizeof(C); k += 64) __builtin_prefetch(ahead + k);
        const V x0 = V::load(p + i), x1 = V::load(p + i + W), x2 = V::load(p + i + 2 * W),
                x3 = V::load(p + i + 3 * W);
        b = vextreme<V, kMax>(b, x0);
        b1 = vextreme<V, kMax>(b1, x1);
        b2 = vextreme<V, kMax>(b2, x2);
        b3 = vextreme<V, kMax>(b3, x3);
        z += (x0 + x1) + (x2 + x3);
      }
      b = vextreme<V, kMax>(vextreme<V, kMax>(b, b1), vextreme<V, kMax>(b2, b3));
      for (; i + W <= n; i += W) {
        const V x = V::load(p + i);
        b = vextreme<V, kMax>(b, x);
        z += x;
      }
      if (i < n) {  // overlapping tail is harmless
        const V x = V::load(p + n - W);
        b = vextreme<V, kMax>(b, x);
        z += x;
      }
      if (!std::isfinite(sum_lanes_double(z))) return extreme_scalar<C, kMax>(p, n);
      return extreme_lane<kMax>(b);  // no NaN went in
    }
  }
  return extreme_scalar<C, kMax>(p, n);
}

// Index of the first element equal to e (NaN matches NaN) among n values that hold it.
template <class C>
int64_t find_first(const C* p, int64_t n, C e) {
  int64_t i = 0;
  const bool nan = is_nan(e);
  if constexpr (std::is_floating_point_v<C>) {
    using V = typename VecOf<C>::type;
    constexpr int W = V::width;
    const V ev(e), one(1.0), zero(0.0);
    if (!nan) {
      for (; i + 4 * W <= n; i += 4 * W) {
        prefetch_next(p + i, next_chunk<C>(n), 4 * W);
        const V h = (select(V::load(p + i) == ev, one, zero) +
                     select(V::load(p + i + W) == ev, one, zero)) +
                    (select(V::load(p + i + 2 * W) == ev, one, zero) +
                     select(V::load(p + i + 3 * W) == ev, one, zero));
        if (any_nonzero(h)) break;
      }
    }
  }
  while (i < n - 1 && !(nan ? is_nan(p[i]) : p[i] == e)) ++i;
  return i;
}

template <class T>
inline void store_at(void* base, DType t, int64_t k, T v) {
  visit_storage(t, [&](auto s) {
    using S = decltype(s);
    static_cast<S*>(base)[k] = convert<S>(v);
  });
}

constexpr bool is_max_op(OpId op) { return op == OpId::max || op == OpId::argmax; }

// The running state of one reduction and how chunks, parts and the result relate to it.
template <class C, OpId Op>
struct Reducer {
  static constexpr bool kFloat = std::is_floating_point_v<C>;
  static constexpr bool kMax = is_max_op(Op);
  static constexpr double kInf = std::numeric_limits<double>::infinity();

  struct State {
    double s = (Op == OpId::prod) ? 1.0 : 0.0;  // sum, product, or Σexp for logsumexp
    double mean = 0, m2 = 0;                    // var/std
    double lse_max = -kInf;
    uint64_t u = (Op == OpId::prod) ? 1u : 0u;  // integer sum/product, wrapping
    int64_t n = 0;
    int64_t idx = -1;  // arg index; -1 until a value is seen
    C best{};
    bool seen = false;
    bool flag = Op == OpId::all;
    bool nan = false, pos_inf = false;
  };

  static void feed(State& st, const C* p, int64_t n, int64_t base) {
    if (n <= 0) return;
    if constexpr (Op == OpId::sum || Op == OpId::mean) {
      if constexpr (kFloat) {
        st.s += sum_chunk(p, n, next_chunk<C>(n));
      } else {
        for (int64_t i = 0; i < n; ++i) st.u += uint64_t(int64_t(p[i]));
      }
    } else if constexpr (Op == OpId::prod) {
      if constexpr (kFloat) {
        for (int64_t i = 0; i < n; ++i) st.s *= double(p[i]);
      } else {
        for (int64_t i = 0; i < n; ++i) st.u *= uint64_t(int64_t(p[i]));
      }
    } else if constexpr (Op == OpId::max || Op == OpId::min) {
      const C e = extreme_chunk<C, kMax>(p, n);
      st.best = st.seen ? math::extreme_merge<kMax>(st.best, e) : e;
      st.seen = true;
    } else if constexpr (Op == OpId::argmax || Op == OpId::argmin) {
      const C e = extreme_chunk<C, kMax>(p, n);
      if (!math::arg_feed_takes<kMax>([&] { return st.idx < 0; }, e, st.best)) return;
      st.best = e;
      st.idx = base + find_first(p, n, e);
    } else if constexpr (Op == OpId::any) {
      if (st.flag) return;
      for (int64_t i = 0; i < n; ++i)
        if (math::reduce_truth(p[i])) {
          st.flag = true;
          return;
        }
    } else if constexpr (Op == OpId::all) {
      if (!st.flag) return;
      for (int64_t i = 0; i < n; ++i)
        if (!math::reduce_truth(p[i])) {
          st.flag = false;
          return;
        }
    } else if constexpr (Op == OpId::var || Op == OpId::std) {
      if constexpr (kFloat) {
        // Deviations around a rough centre, then the exact chunk mean and M2 from them.
        const C c = C(sum_chunk(p, n, next_chunk<C>(n)) / double(n));
        double d1, d2;
        dev_chunk(p, n, c, d1, d2);
        const math::Moments<double> m = math::moments_from_deviations(double(n), double(c), d1, d2);
        State b;
        b.n = n;
        b.mean = m.mean;
        b.m2 = m.m2;
        merge(st, b);
      }
    } else if constexpr (Op == OpId::logsumexp) {
      if constexpr (kFloat) {
        const C m = extreme_chunk<C, true>(p, n);
        if (is_nan(m)) { st.nan = true; return; }
        if (double(m) == kInf) { st.pos_inf = true; return; }
        if (double(m) == -kInf) return;  // exp(-inf) adds nothing
        State b;
        b.lse_max = double(m);
        b.s = sum_exp_chunk(p, n, m);
        merge(st, b);
      }
    }
  }

  // Folds b, which covers elements after a's, into a.
  static void merge(State& a, const State& b) {
    if constexpr (Op == OpId::sum || Op == OpId::mean) {
      a.s += b.s;
      a.u += b.u;
    } else if constexpr (Op == OpId::prod) {
      a.s *= b.s;
      a.u *= b.u;
    } else if constexpr (Op == OpId::max || Op == OpId::min) {
      if (!b.seen) return;
      a.best = a.seen ? math::extreme_merge<kMax>(a.best, b.best) : b.best;
      a.seen = true;
    } else if constexpr (Op == OpId::argmax || Op == OpId::argmin) {
      if (math::arg_merge_takes<kMax>(b.idx >= 0, a.idx < 0, b.idx < a.idx, b.best, a.best)) {
        a.best = b.best;
        a.idx = b.idx;
      }
    } else if constexpr (Op == OpId::any) {
      a.flag = a.flag || b.flag;
    } else if constexpr (Op == OpId::all) {
      a.flag = a.flag && b.flag;
    } else if constexpr (Op == OpId::var || Op == OpId::std) {
      // An empty side leaves the other as it is.
      if (b.n == 0) return;
      if (a.n == 0) { a = b; return; }
      const math::Moments<double> m =
          math::moments_merge<double>({double(a.n), a.mean, a.m2}, {double(b.n), b.mean, b.m2});
      a.mean = m.mean;
      a.m2 = m.m2;
      a.n += b.n;
    } else if constexpr (Op == OpId::logsumexp) {
      a.nan = a.nan || b.nan;
      a.pos_inf = a.pos_inf || b.pos_inf;
      const math::LogSumExp<double> m = math::lse_merge<double>({a.lse_max, a.s}, {b.lse_max, b.s});
      a.lse_max = m.max;
      a.s = m.sum;
    }
  }

  static void write(const State& st, int64_t count, int64_t correction, void* out, DType t,
                    int64_t k) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    if constexpr (Op == OpId::sum || Op == OpId::prod) {
      if constexpr (kFloat) store_at(out, t, k, st.s);
      else store_at(out, t, k, int64_t(st.u));
    } else if constexpr (Op == OpId::mean) {
      store_at(out, t, k, count > 0 ? math::mean_of(st.s, double(count)) : nan);
    } else if constexpr (Op == OpId::max || Op == OpId::min) {
      if constexpr (kFloat) store_at(out, t, k, st.seen ? double(st.best) : nan);
      else store_at(out, t, k, int64_t(st.best));
    } else if constexpr (Op == OpId::argmax || Op == OpId::argmin) {
      store_at(out, t, k, st.idx < 0 ? int64_t(0) : st.idx);
    } else if constexpr (Op == OpId::any || Op == OpId::all) {
      store_at(out, t, k, int64_t(st.flag ? 1 : 0));
    } else if constexpr (Op == OpId::var || Op == OpId::std) {
      const double denom = double(count - correction);
      const double v = math::variance_from_m2(st.m2, denom, count > 0 && denom > 0);
      store_at(out, t, k, Op == OpId::std ? std::sqrt(v) : v);
    } else if constexpr (Op == OpId::logsumexp) {
      store_at(out, t, k,
               math::lse_result<double>(
                   {st.lse_max, st.s}, [&] { return st.pos_inf; }, [&] { return st.nan; }));
    }
  }
};

// Everything a path needs to know about one call.
struct Ctx {
  const char* in = nullptr;  // at the view's offset
  DType in_dt = DType::F32;
  int64_t in_esize = 4;
  char* out = nullptr;  // at the output's offset
  DType out_dt = DType::F32;
  LoopPlan keep, red;
  int64_t K = 1, R = 1;
  int64_t correction = 1;
};

// Feeds the flat reduced elements [b, e) of the block at element offset `base`.
template <class C, OpId Op>
void feed_range(const Ctx& c, int64_t base, int64_t b, int64_t e,
                typename Reducer<C, Op>::State& st) {
  alignas(64) C buf[kChunk];
  const int last = c.red.ndim - 1;
  const int64_t rs = c.red.strides[0][last];
  const bool direct = rs == 1 && c.in_dt == dtype_of_v<C>;
  if (direct && c.red.ndim == 1) {  // one contiguous run: no index arithmetic per chunk
    const C* src = reinterpret_cast<const C*>(c.in + base * c.in_esize);
    for (int64_t j = b; j < e; j += kChunk)
      Reducer<C, Op>::feed(st, src + j, std::min(kChunk, e - j), j);
    return;
  }
  int64_t pos = b;
  for_each_row(c.red, b, e, [&](const int64_t* offs, int64_t len) {
    for (int64_t j = 0; j < len; j += kChunk) {
      const int64_t m = std::min(kChunk, len - j);
      const char* p = c.in + (base + offs[0] + j * rs) * c.in_esize;
      const C* src = reinterpret_cast<const C*>(p);
      if (!direct) {
        gather_row<C>(p, c.in_dt, rs, m, buf);
        src = buf;
      }
      Reducer<C, Op>::feed(st, src, m, pos + j);
    }
    pos += len;
  });
}

// Element offsets of outputs [b, e) of the kept plan, passed to f(k, offset).
template <class F>
void for_each_output(const Ctx& c, int64_t b, int64_t e, F&& f) {
  const int64_t ks = c.keep.strides[0][c.keep.ndim - 1];
  int64_t k = b;
  for_each_row(c.keep, b, e, [&](const int64_t* offs, int64_t len) {
    for (int64_t j = 0; j < len; ++j) f(k + j, offs[0] + j * ks);
    k += len;
  });
}

template <class C, OpId Op>
void reduce_rows(const Ctx& c) {
  using R = Reducer<C, Op>;
  const int threads = ThreadPool::instance().size();
  if (c.K >= 2 * threads || c.R < 2 * kGrain) {
    const int64_t grain = std::max<int64_t>(1, kGrain / std::max<int64_t>(c.R, 1));
    ThreadPool::instance().parallel_for(c.K, grain, [&](int64_t b, int64_t e) {
      for_each_output(c, b, e, [&](int64_t k, int64_t off) {
        typename R::State st;
        feed_range<C, Op>(c, off, 0, c.R, st);
        R::write(st, c.R, c.correction, c.out, c.out_dt, k);
      });
    });
    return;
  }
  // Few large blocks: split each block into parts, merged in order.
  const int64_t parts = std::min<int64_t>(ceil_div(c.R, kGrain), int64_t(threads) * 4);
  std::vector<typename R::State> states(static_cast<size_t>(parts));
  for_each_output(c, 0, c.K, [&](int64_t k, int64_t off) {
    ThreadPool::instance().parallel_for(parts, 1, [&](int64_t pb, int64_t pe) {
      for (int64_t q = pb; q < pe; ++q) {
        states[size_t(q)] = typename R::State{};
        feed_range<C, Op>(c, off, c.R * q / parts, c.R * (q + 1) / parts, states[size_t(q)]);
      }
    });
    typename R::State total;
    for (const auto& s : states) R::merge(total, s);
    R::write(total, c.R, c.correction, c.out, c.out_dt, k);
  });
}

// ---- column path: a tile of contiguous output columns, one input row at a time ----

// var/std and logsumexp read the rows twice: first the centre (mean or max), then the
// deviations from it.
constexpr bool is_two_pass(OpId op) {
  return op == OpId::var || op == OpId::std || op == OpId::logsumexp;
}

template <class C, OpId Op>
struct ColumnTile {
  static constexpr bool kFloat = std::is_floating_point_v<C>;
  static constexpr bool kMax = is_max_op(Op);
  static constexpr bool kSums = Op == OpId::sum || Op == OpId::mean || is_two_pass(Op);
  alignas(64) C part[kTile];    // float partial sums; running max/min
  alignas(64) C part2[kTile];   // second partial sum (squared deviations, exp terms)
  alignas(64) C center[kTile];  // mean or max from the first pass
  // Double totals of the partials (float products); after finish(), var/std keep the
  // mean in tot and M2 in tot2.
  double tot[kTile], tot2[kTile];
  uint64_t u[kTile];               // integer sums/products
  int64_t idx[kTile];
  uint8_t flag[kTile];
  int64_t w = 0;
  int64_t rows = 0;  // rows folded in, for merging var/std

  void init(int64_t width) {
    w = width;
    rows = 0;
    for (int64_t j = 0; j < w; ++j) {
      part[j] = part2[j] = C(0);
      tot[j] = Op == OpId::prod ? 1.0 : 0.0;
      tot2[j] = 0.0;
      u[j] = Op == OpId::prod ? 1u : 0u;
      idx[j] = 0;
      flag[j] = Op == OpId::all ? 1 : 0;
    }
  }

  void flush() {
    if constexpr (kFloat && kSums) {
      using V = typename VecOf<C>::type;
      const V zero(0.0);
      int64_t j = 0;
      if constexpr (std::is_same_v<C, double>) {
        for (; j + V::width <= w; j += V::width) {
          (V::load(tot + j) + V::load(part + j)).store(tot + j);
          (V::load(tot2 + j) + V::load(part2 + j)).store(tot2 + j);
          zero.store(part + j);
          zero.store(part2 + j);
        }
      }
      for (; j < w; ++j) {
        tot[j] += double(part[j]);
        tot2[j] += double(part2[j]);
        part[j] = part2[j] = C(0);
      }
    }
  }

  // part[j] += x[j].
  void add_row(const C* x) {
    using V = typename VecOf<C>::type;
    constexpr int W = V::width;
    int64_t j = 0;
    for (; j + 2 * W <= w; j += 2 * W) {
      (V::load(part + j) + V::load(x + j)).store(part + j);
      (V::load(part + j + W) + V::load(x + j + W)).store(part + j + W);
    }
    for (; j + W <= w; j += W) (V::load(part + j) + V::load(x + j)).store(part + j);
    for (; j < w; ++j) part[j] += x[j];
  }

  // part[j] += x0[j] + x1[j] + x2[j] + x3[j]: four rows, lr the first's index in the
  // pass; folds into the totals when a multiple of kFlushRows is crossed.
  void add_rows4(const C* x0, const C* x1, const C* x2, const C* x3, int64_t lr) {
    using V = typename VecOf<C>::type;
    constexpr int W = V::width;
    const int64_t width = w;
    int64_t j = 0;
    for (; j + W <= width; j += W)
      (V::load(part + j) + ((V::load(x0 + j) + V::load(x1 + j)) +
                            (V::load(x2 + j) + V::load(x3 + j)))).store(part + j);
    for (; j < width; ++j) part[j] += (x0[j] + x1[j]) + (x2[j] + x3[j]);
    if ((lr + 4) / kFlushRows != lr / kFlushRows) flush();
  }

  template <bool kPickMax>
  void pick_row(const C* x, bool first) {
    if (first) {
      std::memcpy(part, x, size_t(w) * sizeof(C));
      return;
    }
    int64_t j = 0;
    if constexpr (kFloat) {
      // The plain extreme, and NaNs counted per column in part2 (see nan_ones).
      using V = typename VecOf<C>::type;
      for (; j + V::width <= w; j += V::width) {
        const V v = V::load(x + j);
        vextreme<V, kPickMax>(V::load(part + j), v).store(part + j);
        (V::load(part2 + j) + nan_ones(v)).store(part2 + j);
      }
    }
    for (; j < w; ++j) part[j] = math::extreme_merge<kPickMax>(part[j], x[j]);
  }

  // Columns that saw a NaN in pick_row get NaN.
  void apply_nans() {
    if constexpr (kFloat)
      for (int64_t j = 0; j < w; ++j)
        if (part2[j] != 0) part[j] = std::numeric_limits<C>::quiet_NaN();
  }

  // Second pass of var/std: Σ d and Σ d^2 with d = x - mean.
  void deviation_row(const C* x) {
    using V = typename VecOf<C>::type;
    int64_t j = 0;
    for (; j + V::width <= w; j += V::width) {
      const V d = V::load(x + j) - V::load(center + j);
      (V::load(part + j) + d).store(part + j);
      (V::load(part2 + j) + d * d).store(part2 + j);
    }
    for (; j < w; ++j) {
      const C d = x[j] - center[j];
      part[j] += d;
      part2[j] += d * d;
    }
  }

  // Second pass of logsumexp: Σ exp(x - max).
  void exp_row(const C* x) {
    using V = typename VecOf<C>::type;
    int64_t j = 0;
    for (; j + V::width <= w; j += V::width)
      (V::load(part2 + j) + exp(V::load(x + j) - V::load(center + j))).store(part2 + j);
    for (; j < w; ++j) part2[j] += C(std::exp(x[j] - center[j]));
  }

  // Adds input row r (w contiguous values of compute type) in the given pass; lr counts
  // the rows this tile has seen in the pass (0 for its first).
  void feed(const C* x, int64_t r, int64_t lr, int pass) {
    const bool first = lr == 0;
    if constexpr (Op == OpId::sum || Op == OpId::mean) {
      if constexpr (kFloat) add_row(x);
      else for (int64_t j = 0; j < w; ++j) u[j] += uint64_t(int64_t(x[j]));
    } else if constexpr (Op == OpId::prod) {
      if constexpr (kFloat) for (int64_t j = 0; j < w; ++j) tot[j] *= double(x[j]);
      else for (int64_t j = 0; j < w; ++j) u[j] *= uint64_t(int64_t(x[j]));
    } else if constexpr (Op == OpId::max || Op == OpId::min) {
      pick_row<kMax>(x, first);
    } else if constexpr (Op == OpId::argmax || Op == OpId::argmin) {
      if (first) {
        std::memcpy(part, x, size_t(w) * sizeof(C));
        for (int64_t j = 0; j < w; ++j) idx[j] = r;
        return;
      }
      for (int64_t j = 0; j < w; ++j)
        if (math::extreme_beats<kMax>(x[j], part[j])) {
          part[j] = x[j];
          idx[j] = r;
        }
    } else if constexpr (Op == OpId::any) {
      for (int64_t j = 0; j < w; ++j) flag[j] |= uint8_t(math::reduce_truth(x[j]));
    } else if constexpr (Op == OpId::all) {
      for (int64_t j = 0; j < w; ++j) flag[j] &= uint8_t(math::reduce_truth(x[j]));
    } else if constexpr (kFloat && (Op == OpId::var || Op == OpId::std)) {
      if (pass == 0) add_row(x);
      else deviation_row(x);
    } else if constexpr (kFloat && Op == OpId::logsumexp) {
      if (pass == 0) pick_row<true>(x, first);
      else exp_row(x);
    }
    // Not in logsumexp's first pass: part holds the running max there, not a sum.
    if constexpr (kFloat && kSums)
      if (lr % kFlushRows == kFlushRows - 1 && (Op != OpId::logsumexp || pass == 1)) flush();
  }

  // Turns the first pass's sums or max into the centre and clears the accumulators.
  void end_first_pass(int64_t count) {
    if constexpr (kFloat && is_two_pass(Op)) {
      if constexpr (Op == OpId::logsumexp) {
        apply_nans();
        std::memcpy(center, part, size_t(w) * sizeof(C));
      } else {
        flush();
        for (int64_t j = 0; j < w; ++j) center[j] = C(tot[j] / double(count));
      }
      for (int64_t j = 0; j < w; ++j) {
        part[j] = part2[j] = C(0);
        tot[j] = tot2[j] = 0.0;
      }
    }
  }

  // Brings the state into the form merge() and write() use, after `count` rows.
  void finish(int64_t count) {
    if constexpr (Op == OpId::max || Op == OpId::min) apply_nans();
    flush();
    rows = count;
    if constexpr (kFloat && (Op == OpId::var || Op == OpId::std)) {
      for (int64_t j = 0; j < w; ++j) {
        const math::Moments<double> m =
            math::moments_from_deviations(double(count), double(center[j]), tot[j], tot2[j]);
        tot[j] = m.mean;
        tot2[j] = m.m2;
      }
    }
  }

  // Folds b, which covers the rows after this tile's, into this one (both finished).
  void merge(const ColumnTile& b) {
    for (int64_t j = 0; j < w; ++j) {
      if constexpr (Op == OpId::sum || Op == OpId::mean) {
        tot[j] += b.tot[j];
        u[j] += b.u[j];
      } else if constexpr (Op == OpId::prod) {
        tot[j] *= b.tot[j];
        u[j] *= b.u[j];
      } else if constexpr (Op == OpId::max || Op == OpId::min) {
        part[j] = math::extreme_merge<kMax>(part[j], b.part[j]);
      } else if constexpr (Op == OpId::argmax || Op == OpId::argmin) {
        if (math::arg_merge_takes<kMax>(true, false, b.idx[j] < idx[j], b.part[j], part[j])) {
          part[j] = b.part[j];
          idx[j] = b.idx[j];
        }
      } else if constexpr (Op == OpId::any) {
        flag[j] |= b.flag[j];
      } else if constexpr (Op == OpId::all) {
        flag[j] &= b.flag[j];
      } else if constexpr (kFloat && (Op == OpId::var || Op == OpId::std)) {
        const math::Moments<double> m = math::moments_merge<double>(
            {double(rows), tot[j], tot2[j]}, {double(b.rows), b.tot[j], b.tot2[j]});
        tot[j] = m.mean;
        tot2[j] = m.m2;
      } else if constexpr (kFloat && Op == OpId::logsumexp) {
        // The centre is the flagged max (NaN if a NaN was seen, else +inf if a +inf
        // was): merged NaN-sticky; only finite maxima carry a sum to merge.
        const C m = math::extreme_merge<true>(center[j], b.center[j]);
        if (is_nan(m) || double(m) == kInfD) {
          center[j] = m;
        } else {
          const math::LogSumExp<double> r = math::lse_merge<double>(
              {double(center[j]), tot2[j]}, {double(b.center[j]), b.tot2[j]});
          center[j] = C(r.max);
          tot2[j] = r.sum;
        }
      }
    }
    rows += b.rows;
  }

  void write(int64_t count, int64_t correction, void* out, DType t, int64_t k0) {
    for (int64_t j = 0; j < w; ++j) {
      const int64_t k = k0 + j;
      if constexpr (Op == OpId::sum || Op == OpId::prod) {
        if constexpr (kFloat) store_at(out, t, k, tot[j]);
        else store_at(out, t, k, int64_t(u[j]));
      } else if constexpr (Op == OpId::mean) {
        store_at(out, t, k, math::mean_of(tot[j], double(count)));
      } else if constexpr (Op == OpId::max || Op == OpId::min) {
        if constexpr (kFloat) store_at(out, t, k, double(part[j]));
        else store_at(out, t, k, int64_t(part[j]));
      } else if constexpr (Op == OpId::argmax || Op == OpId::argmin) {
        store_at(out, t, k, idx[j]);
      } else if constexpr (Op == OpId::any || Op == OpId::all) {
        store_at(out, t, k, int64_t(flag[j]));
      } else if constexpr (Op == OpId::var || Op == OpId::std) {
        const double denom = double(count - correction);
        const double v = math::variance_from_m2(tot2[j], denom, denom > 0);
        store_at(out, t, k, Op == OpId::std ? std::sqrt(v) : v);
      } else if constexpr (Op == OpId::logsumexp) {
        const double m = double(center[j]);  // the flagged max
        store_at(out, t, k,
                 math::lse_result<double>(
                     {m, tot2[j]}, [&] { return m == kInfD; }, [&] { return std::isnan(m); }));
      }
    }
  }
};

// Tiles of up to kTile contiguous output columns. When tiles alone cannot keep every
// thread busy (few, wide columns: sum over dim 0 of a matrix), the reduced rows are also
// split into parts, each accumulated on its own and merged in row order afterwards; each
// thread then streams one contiguous block of whole rows.
template <class C, OpId Op>
void reduce_columns(const Ctx& c) {
  using Tile = ColumnTile<C, Op>;
  const int last = c.keep.ndim - 1;
  const int64_t M = c.keep.shape[last], outer = c.K / M;
  const int64_t threads = ThreadPool::instance().size();
  const int64_t n_tiles = ceil_div(M, kTile);
  const int64_t tile = ceil_div(M, n_tiles);
  const int64_t groups = outer * n_tiles;
  // Parts of at least kGrain elements and 16 rows, enough for about two per thread.
  int64_t parts = 1;
  if (groups < 2 * threads) {
    const int64_t by_size = std::min(c.R / 16, c.R * tile / kGrain);
    parts = std::clamp<int64_t>(ceil_div(2 * threads, groups), 1, std::max<int64_t>(1, by_size));
  }
  const int rl = c.red.ndim - 1;
  const int64_t rs = c.red.strides[0][rl];
  const bool direct = c.in_dt == dtype_of_v<C>;
  const int passes = is_two_pass(Op) ? 2 : 1;

  // Accumulates rows [rb, re) of group g into acc, finished.
  const auto run_part = [&](int64_t g, int64_t rb, int64_t re, Tile& acc, C* buf) {
    const int64_t o = g / n_tiles, j0 = (g % n_tiles) * tile;
    int64_t base = 0;
    for_each_output(c, o * M, o * M + 1, [&](int64_t, int64_t off) { base = off + j0; });
    acc.init(std::min(tile, M - j0));
    // The rows are runs a stride apart: each asks for the one `ahead` rows on.
    const int64_t row_bytes = acc.w * c.in_esize;
    const int64_t ahead = std::max<int64_t>(2, kTilePrefetchBytes / row_bytes);
    for (int pass = 0; pass < passes; ++pass) {
      if (pass == 1) acc.end_first_pass(re - rb);
      int64_t r = rb;
      for_each_row(c.red, rb, re, [&](const int64_t* offs, int64_t len) {
        for (int64_t t = 0; t < len; ++t, ++r) {
          const char* p = c.in + (base + offs[0] + t * rs) * c.in_esize;
          if constexpr (Tile::kFloat && (Op == OpId::sum || Op == OpId::mean)) {
            if (direct && t + 4 <= len) {
              const C* q = reinterpret_cast<const C*>(p);
              acc.add_rows4(q, q + rs, q + 2 * rs, q + 3 * rs, r - rb);
              t += 3;
              r += 3;
              continue;
            }
          }
          prefetch_run(c.in + (base + offs[0] + std::min(t + ahead, len - 1) * rs) * c.in_esize,
                       row_bytes);
          const C* src = reinterpret_cast<const C*>(p);
          if (!direct) {
            gather_row<C>(p, c.in_dt, 1, acc.w, buf);
            src = buf;
          }
          acc.feed(src, r, r - rb, pass);
        }
      });
    }
    acc.finish(re - rb);
  };
  const auto out_index = [&](int64_t g) { return (g / n_tiles) * M + (g % n_tiles) * tile; };

  if (parts == 1) {
    const int64_t grain = std::max<int64_t>(1, kGrain / std::max<int64_t>(1, c.R * tile));
    ThreadPool::instance().parallel_for(groups, grain, [&](int64_t b, int64_t e) {
      // Hundreds of KB of accumulators: on the heap, not on a possibly small thread stack.
      const std::unique_ptr<Tile> acc = std::make_unique<Tile>();
      const std::unique_ptr<C[]> buf(new C[kTile]);
      for (int64_t g = b; g < e; ++g) {
        run_part(g, 0, c.R, *acc, buf.get());
        acc->write(c.R, c.correction, c.out, c.out_dt, out_index(g));
      }
    });
    return;
  }
  std::vector<std::unique_ptr<Tile>> states(size_t(groups * parts));
  ThreadPool::instance().parallel_for(groups * parts, 1, [&](int64_t b, int64_t e) {
    const std::unique_ptr<C[]> buf(new C[kTile]);
    for (int64_t item = b; item < e; ++item) {
      const int64_t g = item / parts, q = item % parts;
      states[size_t(item)] = std::make_unique<Tile>();
      run_part(g, c.R * q / parts, c.R * (q + 1) / parts, *states[size_t(item)], buf.get());
    }
  });
  for (int64_t g = 0; g < groups; ++g) {
    Tile& total = *states[size_t(g * parts)];
    for (int64_t q = 1; q < parts; ++q) total.merge(*states[size_t(g * parts + q)]);
    total.write(c.R, c.correction, c.out, c.out_dt, out_index(g));
  }
}

template <class C, OpId Op>
void run(const Ctx& c) {
  {
    const int kl = c.keep.ndim - 1, rl = c.red.ndim - 1;
    const bool columns = c.R > 1 && c.keep.strides[0][kl] == 1 && c.keep.shape[kl] >= 16 &&
                         c.red.strides[0][rl] != 1;
    if (columns) return reduce_columns<C, Op>(c);
  }
  reduce_rows<C, Op>(c);
}

template <class C>
void dispatch_op(OpId op, const Ctx& c) {
  switch (op) {
    case OpId::sum: return run<C, OpId::sum>(c);
    case OpId::prod: return run<C, OpId::prod>(c);
    case OpId::max: return run<C, OpId::max>(c);
    case OpId::min: return run<C, OpId::min>(c);
    case OpId::any: return run<C, OpId::any>(c);
    case OpId::all: return run<C, OpId::all>(c);
    case OpId::argmax: return run<C, OpId::argmax>(c);
    case OpId::argmin: return run<C, OpId::argmin>(c);
    default: break;
  }
  if constexpr (std::is_floating_point_v<C>) {
    switch (op) {
      case OpId::mean: return run<C, OpId::mean>(c);
      case OpId::var: return run<C, OpId::var>(c);
      case OpId::std: return run<C, OpId::std>(c);
      case OpId::logsumexp: return run<C, OpId::logsumexp>(c);
      default: break;
    }
  }
}

}  // namespace

void reduce(const ReduceCall& call) {
  const char* name = op_name(call.op).data();
  const size_t nk = size_t(call.n_keep);
  const Shape keep_shape(call.in.shape.begin(), call.in.shape.begin() + long(nk));
  const Strides keep_strides(call.in.strides.begin(), call.in.strides.begin() + long(nk));
  const Shape red_shape(call.in.shape.begin() + long(nk), call.in.shape.end());
  const Strides red_strides(call.in.strides.begin() + long(nk), call.in.strides.end());
  Ctx c;
  c.in_dt = call.in.dtype;
  c.in_esize = int64_t(dtype_size(c.in_dt));
  c.in = static_cast<const char*>(call.in.base) + call.in.offset * c.in_esize;
  c.out_dt = call.out.dtype;
  c.out = static_cast<char*>(call.out.base) + call.out.offset * int64_t(dtype_size(c.out_dt));
  c.keep = make_loop_plan(name, keep_shape, {&keep_strides});
  c.red = make_loop_plan(name, red_shape, {&red_strides});
  c.K = shape_numel(keep_shape);
  c.R = shape_numel(red_shape);
  c.correction = call.correction;
  if (c.K == 0) return;
  switch (c.in_dt) {
    case DType::F64: return dispatch_op<double>(call.op, c);
    case DType::F32:
    case DType::F16:
    case DType::BF16: return dispatch_op<float>(call.op, c);
    default: return dispatch_op<int64_t>(call.op, c);
  }
}

}  // namespace numr::cpu::NUMR_ISA

#pragma GCC pop_options
