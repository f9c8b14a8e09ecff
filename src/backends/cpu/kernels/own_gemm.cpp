// numr's own GEMM for the epilogues: F32, and BF16 on CPUs with AVX512-BF16, whose
// vdpbf16ps adds the products of 16 pairs of BF16 values into 16 f32 sums. A tile of 6 rows
// x 64 columns accumulates over the whole of k in 24 registers; bias, activation and the
// rounding to the output's dtype then run on those registers, so the epilogue costs its
// arithmetic only, where oneDNN's eltwise post-op costs more per element than numr's
// activation.
//
// b is packed once per call in panels of 64 columns (BF16: pairs of rows interleaved, the
// operand layout of vdpbf16ps); a b per item, for a group of items at a time whose packed
// panels fit kOwnGemmPackLimit, each group's products following its packing. a is read in place,
// one element (BF16: a pair) broadcast per row and step. Work is split on numr's pool in units of
// 48 rows by a block of panels of about 1 MiB, which stays in the core's L2 while the unit's row
// tiles pass over it.
#include <immintrin.h>
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "backends/cpu/kernels/kernels.h"
#include "core/thread_pool.h"

#include "backends/cpu/kernels/isa.h"  // after every system header

#include "backends/cpu/kernels/activation.h"
#include "backends/cpu/kernels/convert.h"
#include "backends/cpu/kernels/vec.h"
#include "math/elementwise.h"

namespace numr::cpu::NUMR_ISA {

#if NUMR_ISA_LEVEL >= 3
namespace {

constexpr int kMr = 6;                             // rows per tile
constexpr int kNr = int(kOwnGemmPanel);            // columns per tile
constexpr int kVecs = kNr / 16;                    // f32 vectors per tile row
constexpr int64_t kUnitRows = 8 * kMr;             // rows per unit of work
constexpr int64_t kBlockBytes = int64_t(1) << 20;  // packed b per unit
constexpr int64_t kPrefetchSteps = 16;             // how far ahead in b a tile prefetches

// F32: a step is one row of b, 64 floats; a's element is broadcast.
struct F32Traits {
  using T = float;
  using V = VF;  // activations at full f32 accuracy
  static constexpr int kRowsPerStep = 1;
  static constexpr int64_t kStepElems = kNr;
  static __m512 load_b(const T* p) { return _mm512_loadu_ps(p); }
  static __m512 broadcast(const T* p) { return _mm512_set1_ps(*p); }
  static __m512 last_row(const T* p) { return _mm512_set1_ps(*p); }  // unused: k is whole
  static __m512 madd(__m512 acc, __m512 a, __m512 b) { return _mm512_fmadd_ps(a, b, acc); }
  // Rows r0 (and r0 + 1 for BF16) of columns [c, c + 16) of b, zero where mask is clear.
  static void pack16(const T* r0, const T*, bool, __mmask16 mask, T* o) {
    _mm512_storeu_ps(o, _mm512_maskz_loadu_ps(mask, r0));
  }
  static __m512 widen(const T* p) { return _mm512_loadu_ps(p); }
  static void narrow(__m512 x, T* p) { _mm512_storeu_ps(p, x); }
};

// BF16: a step is a pair of rows of b, interleaved; a's pair of elements is broadcast.
struct Bf16Traits {
  using T = uint16_t;
  using V = VFH;  // the activations of BF16 results, as in the elementwise kernels
  static constexpr int kRowsPerStep = 2;
  static constexpr int64_t kStepElems = 2 * kNr;
  static __m512 load_b(const T* p) { return _mm512_castsi512_ps(_mm512_loadu_si512(p)); }
  static __m512 broadcast(const T* p) {
    int32_t v;
    std::memcpy(&v, p, sizeof v);
    return _mm512_castsi512_ps(_mm512_set1_epi32(v));
  }
  // a's last element of an odd k, paired with the zero row packed past b's end.
  static __m512 last_row(const T* p) { return _mm512_castsi512_ps(_mm512_set1_epi32(int32_t(*p))); }
  // vdpbf16ps, written as assembly as in convert.h: these files are compiled without the
  // extension.
  static __m512 madd(__m512 acc, __m512 a, __m512 b) {
    asm("vdpbf16ps %2, %1, %0" : "+v"(acc) : "v"(a), "v"(b));
    return acc;
  }
  static void pack16(const T* r0, const T* r1, bool second, __mmask16 mask, T* o) {
    alignas(64) static constexpr uint16_t kInterleave[32] = {
        0, 32, 1, 33, 2,  34, 3,  35, 4,  36, 5,  37, 6,  38, 7,  39,
        8, 40, 9, 41, 10, 42, 11, 43, 12, 44, 13, 45, 14, 46, 15, 47};
    const __m512i x = _mm512_zextsi256_si512(_mm256_maskz_loadu_epi16(mask, r0));
    const __m512i y = second ? _mm512_zextsi256_si512(_mm256_maskz_loadu_epi16(mask, r1))
                             : _mm512_setzero_si512();
    _mm512_storeu_si512(o, _mm512_permutex2var_epi16(x, _mm512_load_si512(kInterleave), y));
  }
  static __m512 widen(const T* p) { return widen_b16x16(p); }
  static void narrow(__m512 x, T* p) { narrow_b16x16(x, p); }
};

// Columns [c0, c0 + 64) of b as one panel, zero past k and n.
template <class Tr>
void pack_panel(const typename Tr::T* b, int64_t rs, int64_t k, int64_t n, int64_t c0,
                typename Tr::T* out) {
  __mmask16 masks[kVecs];
  for (int j = 0; j < kVecs; ++j) {
    const int64_t left = std::clamp<int64_t>(n - c0 - 16 * j, 0, 16);
    masks[j] = __mmask16((uint32_t(1) << left) - 1);
  }
  constexpr int R = Tr::kRowsPerStep;
  for (int64_t s = 0; s < (k + R - 1) / R; ++s) {
    const typename Tr::T* r0 = b + R * s * rs + c0;
    for (int j = 0; j < kVecs; ++j)
      Tr::pack16(r0 + 16 * j, r0 + rs + 16 * j, R * s + 1 < k, masks[j],
                 out + s * Tr::kStepElems + 16 * R * j);
  }
}

// One tile: `rows` rows of a (pointers; rows past the tile's `nr` repeat a valid one) times
// one panel over all of k, then out = act(x) and pre = x for x = product + bias (f32, 64
// values), for the first nr rows and nc columns; ld is out's and pre's row stride.
template <class Tr, class Act>
inline void tile(const typename Tr::T* const* rows, const typename Tr::T* panel, int64_t k,
                 const float* bias, typename Tr::T* out, typename Tr::T* pre, int64_t ld, int nr,
                 int nc, Act act) {
  using T = typename Tr::T;
  using V = typename Tr::V;
  constexpr int R = Tr::kRowsPerStep;
  __m512 acc[kMr][kVecs];
  for (int r = 0; r < kMr; ++r)
    for (int j = 0; j < kVecs; ++j) acc[r][j] = _mm512_setzero_ps();
  auto step = [&](const T* bp, auto a_of_row) {
    __m512 bv[kVecs];
    for (int j = 0; j < kVecs; ++j) bv[j] = Tr::load_b(bp + 16 * R * j);
#pragma GCC unroll 6
    for (int r = 0; r < kMr; ++r) {
      const __m512 av = a_of_row(r);
      for (int j = 0; j < kVecs; ++j) acc[r][j] = Tr::madd(acc[r][j], av, bv[j]);
    }
  };
  const int64_t steps = k / R;
  for (int64_t s = 0; s < steps; ++s) {
    const T* bp = panel + s * Tr::kStepElems;
    for (int j = 0; j < kVecs; ++j)
      _mm_prefetch(reinterpret_cast<const char*>(bp + kPrefetchSteps * Tr::kStepElems + 16 * R * j),
                   _MM_HINT_T0);
    step(bp, [&](int r) { return Tr::broadcast(rows[r] + R * s); });
  }
  if (k % R)
    step(panel + steps * Tr::kStepElems, [&](int r) { return Tr::last_row(rows[r] + k - 1); });

  for (int j = 0; j < kVecs && 16 * j < nc; ++j) {
    const __m512 bj = _mm512_loadu_ps(bias + 16 * j);
    const int cols = std::min(16, nc - 16 * j);
#pragma GCC unroll 6
    for (int r = 0; r < kMr; ++r) {
      if (r >= nr) break;
      const V x(_mm512_add_ps(acc[r][j], bj));
      const V y = act(x);
      T* o = out + r * ld + 16 * j;
      T* q = pre ? pre + r * ld + 16 * j : nullptr;
      if (cols == 16) {
        Tr::narrow(y.v, o);
        if (q) Tr::narrow(x.v, q);
      } else {
        alignas(64) T buf[16];
        Tr::narrow(y.v, buf);
        std::memcpy(o, buf, size_t(cols) * sizeof(T));
        if (q) {
          Tr::narrow(x.v, buf);
          std::memcpy(q, buf, size_t(cols) * sizeof(T));
        }
      }
    }
  }
}

template <class Tr>
void run(const OwnGemmCall& c) {
  using T = typename Tr::T;
  const int64_t m = c.m, n = c.n, k = c.k, nb = c.nb;
  const int64_t panels = (n + kNr - 1) / kNr;
  const int64_t panel_elems = (k + Tr::kRowsPerStep - 1) / Tr::kRowsPerStep * Tr::kStepElems;
  const T* a_base = static_cast<const T*>(c.a);
  const T* b_base = static_cast<const T*>(c.b);
  T* packed = static_cast<T*>(c.packed);
  // Item i's panel p, for items of the group packed last (one b: item 0's, for all).
  const int64_t group = own_gemm_group_items(c);
  auto packed_panel = [&](int64_t item, int64_t p) {
    return packed + ((c.b_bs == 0 ? 0 : item % group) * panels + p) * panel_elems;
  };
  auto pack_group = [&](int64_t i0, int64_t items) {
    parallel_for(items * panels, 1, [&](int64_t first, int64_t last) {
      for (int64_t i = first; i < last; ++i)
        pack_panel<Tr>(b_base + (i0 + i / panels) * c.b_bs, c.b_rs, k, n, (i % panels) * kNr,
                       packed_panel(i0 + i / panels, i % panels));
    });
  };
  // The bias widened to f32 once, zero-padded to whole panels.
  std::vector<float> bias(size_t(panels * kNr), 0.f);
  if (c.bias) {
    std::vector<T> padded(size_t(panels * kNr), T(0));
    std::memcpy(padded.data(), c.bias, size_t(n) * sizeof(T));
    for (int64_t j = 0; j < panels * kNr; j += 16)
      _mm512_storeu_ps(&bias[size_t(j)], Tr::widen(&padded[size_t(j)]));
  }

  const int64_t block = std::clamp<int64_t>(
      kBlockBytes / std::max<int64_t>(panel_elems * int64_t(sizeof(T)), 1), 1, panels);
  const int64_t col_blocks = (panels + block - 1) / block;
  const int64_t row_units = (m + kUnitRows - 1) / kUnitRows;
  T* out = static_cast<T*>(c.out);
  T* pre = static_cast<T*>(c.pre);
  with_activation<typename Tr::V>(c.act, [&](auto act) {
    for (int64_t i0 = 0; i0 < nb; i0 += group) {
      const int64_t items = std::min(group, nb - i0);
      pack_group(i0, c.b_bs == 0 ? 1 : items);  // one b: group == nb, a single pass
      parallel_for(items * col_blocks * row_units, 1, [&](int64_t first, int64_t last) {
        for (int64_t u = first; u < last; ++u) {
          const int64_t item = i0 + u / (col_blocks * row_units);
          const int64_t cb = u / row_units % col_blocks;
          const int64_t r_end = std::min(m, (u % row_units + 1) * kUnitRows);
          const int64_t p_end = std::min(panels, (cb + 1) * block);
          const T* a = a_base + item * c.a_bs;
          for (int64_t r0 = u % row_units * kUnitRows; r0 < r_end; r0 += kMr) {
            const int nr = int(std::min<int64_t>(kMr, r_end - r0));
            const T* rows[kMr];
            for (int r = 0; r < kMr; ++r) rows[r] = a + (r0 + std::min(r, nr - 1)) * c.a_rs;
            const int64_t off = (item * m + r0) * n;
            for (int64_t p = cb * block; p < p_end; ++p) {
              const int nc = int(std::min<int64_t>(kNr, n - p * kNr));
              tile<Tr>(rows, packed_panel(item, p), k, bias.data() + p * kNr, out + off + p * kNr,
                       pre ? pre + off + p * kNr : nullptr, n, nr, nc, act);
            }
          }
        }
      });
    }
  });
}

}  // namespace

bool own_gemm(const OwnGemmCall& c) {
  if (c.dtype == DType::BF16 && !kCpuHasAvx512Bf16) return false;
  if (c.dtype != DType::BF16 && c.dtype != DType::F32) return false;
  if (c.nb * c.m * c.n == 0) return true;
  if (c.dtype == DType::BF16)
    run<Bf16Traits>(c);
  else
    run<F32Traits>(c);
  return true;
}
#endif

}  // namespace numr::cpu::NUMR_ISA

#pragma GCC pop_options
