// sort_rows and search_sorted. Each element is mapped to an unsigned key whose integer order
// is sort's order (NaN above +inf, -0.0 equal to +0.0, F16/BF16 as their float values);
// rows are sorted as (key, position) pairs, the position breaking ties, so the order is
// stable and the same from std::sort, std::partial_sort (topk) and merges of sorted pieces
// (long rows). Values are copied from the input by position, so every bit (a NaN's payload,
// -0.0) is kept. Rows, or search values, are split over the thread pool.

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "backends/cpu/kernels/kernels.h"
#include "core/thread_pool.h"

#include "backends/cpu/kernels/isa.h"  // after every system header

#include "backends/cpu/kernels/convert.h"

namespace numr::cpu::NUMR_ISA {
namespace {

inline uint32_t float_key(float f) {
  if (f != f) return 0xFFFFFFFFu;  // every NaN alike, above +inf (0xFF800000)
  if (f == 0.0f) f = 0.0f;         // -0.0 as +0.0
  const uint32_t u = float_to_bits(f);
  return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}
inline uint64_t double_key(double d) {
  if (d != d) return ~uint64_t(0);
  if (d == 0.0) d = 0.0;
  uint64_t u;
  std::memcpy(&u, &d, 8);
  return (u >> 63) ? ~u : (u | (uint64_t(1) << 63));
}

// The key of an element of storage type S, and its type.
inline uint64_t key_of(double v) { return double_key(v); }
inline uint32_t key_of(float v) { return float_key(v); }
inline uint32_t key_of(H16 v) { return float_key(h16_to_float(v.bits)); }
inline uint32_t key_of(B16 v) { return float_key(b16_to_float(v.bits)); }
inline uint64_t key_of(int64_t v) { return uint64_t(v) ^ (uint64_t(1) << 63); }
inline uint32_t key_of(int32_t v) { return uint32_t(v) ^ 0x80000000u; }
inline uint32_t key_of(uint8_t v) { return v; }

template <class S>
using Key = decltype(key_of(S{}));

template <class K>
struct Item {
  K key;
  int64_t pos;
};

// Rows at least this long, when there are fewer rows than threads, are sorted in pieces on
// every thread, the pieces then merged pairwise (also in parallel) until one is left.
constexpr int64_t kSplitRow = int64_t(1) << 16;

template <class S, class K, class Before>
void sort_long_row(const S* row, int64_t n, S* values, int64_t* indices, int64_t threads,
                   const Before& before) {
  // A power of two of pieces, so that they pair up in every round of merges.
  int64_t pieces = 1;
  while (pieces < 2 * threads && n / (2 * pieces) >= 4096) pieces *= 2;
  const auto lo = [&](int64_t p) { return n * p / pieces; };
  std::vector<Item<K>> a(static_cast<size_t>(n)), b(static_cast<size_t>(n));
  parallel_for(pieces, 1, [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      for (int64_t i = lo(p); i < lo(p + 1); ++i) a[size_t(i)] = {key_of(row[i]), i};
      std::sort(a.begin() + lo(p), a.begin() + lo(p + 1), before);
    }
  });
  for (int64_t width = 1; width < pieces; width *= 2) {
    parallel_for(pieces / (2 * width), 1, [&](int64_t q0, int64_t q1) {
      for (int64_t q = q0; q < q1; ++q) {
        const int64_t s0 = lo(2 * width * q), s1 = lo(2 * width * q + width),
                      s2 = lo(2 * width * (q + 1));
        std::merge(a.begin() + s0, a.begin() + s1, a.begin() + s1, a.begin() + s2, b.begin() + s0,
                   before);
      }
    });
    a.swap(b);
  }
  parallel_for(n, 16384, [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) {
      values[i] = row[a[size_t(i)].pos];
      indices[i] = a[size_t(i)].pos;
    }
  });
}

template <class S>
void sort_typed(const SortCall& c) {
  using K = Key<S>;
  const int64_t n = c.n, k = c.k;
  const S* in = static_cast<const S*>(c.in.base) + c.in.offset;
  S* values = static_cast<S*>(c.values.base) + c.values.offset;
  int64_t* indices = static_cast<int64_t*>(c.indices.base) + c.indices.offset;
  const bool desc = c.descending;
  const auto before = [desc](const Item<K>& a, const Item<K>& b) {
    if (a.key != b.key) return desc ? a.key > b.key : a.key < b.key;
    return a.pos < b.pos;
  };
  const int64_t threads = ThreadPool::instance().size();
  if (k == n && n >= kSplitRow && c.rows < std::max<int64_t>(threads, 2)) {
    for (int64_t r = 0; r < c.rows; ++r)
      sort_long_row<S, K>(in + r * n, n, values + r * n, indices + r * n, threads, before);
    return;
  }
  const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(n, 1));
  parallel_for(c.rows, grain, [&](int64_t r0, int64_t r1) {
    std::vector<Item<K>> items(static_cast<size_t>(n));
    for (int64_t r = r0; r < r1; ++r) {
      const S* row = in + r * n;
      for (int64_t i = 0; i < n; ++i) items[size_t(i)] = {key_of(row[i]), i};
      if (k < n)
        std::partial_sort(items.begin(), items.begin() + k, items.end(), before);
      else
        std::sort(items.begin(), items.end(), before);
      for (int64_t j = 0; j < k; ++j) {
        const int64_t p = items[size_t(j)].pos;
        values[r * k + j] = row[p];
        indices[r * k + j] = p;
      }
    }
  });
}

template <class S>
void search_typed(const SearchSortedCall& c) {
  const int64_t n = c.n, m = c.m;
  const S* seq = static_cast<const S*>(c.seq.base) + c.seq.offset;
  const S* values = static_cast<const S*>(c.values.base) + c.values.offset;
  int64_t* out = static_cast<int64_t*>(c.out.base) + c.out.offset;
  const bool right = c.right;
  const int64_t grain = std::max<int64_t>(1, 4096 / (64 - __builtin_clzll(uint64_t(n) | 1)));
  parallel_for(c.rows * m, grain, [&](int64_t e0, int64_t e1) {
    for (int64_t e = e0; e < e1; ++e) {
      const S* row = seq + (e / m) * n;
      const auto v = key_of(values[e]);
      // The first position whose key is >= v (right: > v), by a search whose steps select
      // instead of branching: with random values every branch of the textbook search is a
      // coin toss the predictor loses.
      if (n == 0) {
        out[e] = 0;
        continue;
      }
      const S* base = row;
      for (int64_t len = n; len > 1;) {
        const int64_t half = len / 2;
        const auto s = key_of(base[half]);
        base = (right ? s <= v : s < v) ? base + half : base;
        len -= half;
      }
      const auto s = key_of(*base);
      out[e] = (base - row) + int64_t(right ? s <= v : s < v);
    }
  });
}

// Calls f(S{}) with the storage type of a NUMERIC dtype.
template <class F>
inline void visit_numeric(DType t, F&& f) {
  switch (t) {
    case DType::F64: f(double{}); return;
    case DType::F32: f(float{}); return;
    case DType::F16: f(H16{}); return;
    case DType::BF16: f(B16{}); return;
    case DType::I64: f(int64_t{}); return;
    case DType::I32: f(int32_t{}); return;
    default: f(uint8_t{}); return;  // U8
  }
}

}  // namespace

void sort_rows(const SortCall& c) {
  if (c.rows == 0 || c.k == 0) return;
  visit_numeric(c.in.dtype, [&](auto s) { sort_typed<decltype(s)>(c); });
}

void search_sorted(const SearchSortedCall& c) {
  if (c.rows == 0 || c.m == 0) return;
  visit_numeric(c.seq.dtype, [&](auto s) { search_typed<decltype(s)>(c); });
}

}  // namespace numr::cpu::NUMR_ISA

#pragma GCC pop_options
