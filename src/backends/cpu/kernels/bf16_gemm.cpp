// numr's own BF16 GEMM for the epilogues, on CPUs with AVX512-BF16, whose vdpbf16ps adds
// the products of 16 pairs of BF16 values into 16 f32 sums. A tile of 6 rows x 64 columns
// accumulates over the whole of k in 24 registers; bias, activation and the rounding to
// BF16 then run on those registers, so the epilogue costs its arithmetic only. oneDNN's
// eltwise post-op costs about twice numr's activation per element, 6% of a BF16 product
// with k = 1024 for GELU (BENCHMARKS.md).
//
// b is packed once per call in panels of 64 columns, pairs of rows interleaved (the
// operand layout of vdpbf16ps); a is read in place, a pair of elements broadcast per row.
// Work is split on numr's pool in units of 48 rows by a block of panels of about 1 MiB,
// which stays in the core's L2 while the unit's row tiles pass over it.
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
constexpr int kNr = int(kBf16GemmPanel);           // columns per tile
constexpr int kVecs = kNr / 16;                    // f32 vectors per tile row
constexpr int64_t kUnitRows = 8 * kMr;             // rows per unit of work
constexpr int64_t kBlockBytes = int64_t(1) << 20;  // packed b per unit
constexpr int64_t kPrefetchPairs = 16;             // how far ahead in b the tile prefetches

// acc + the products of a's and b's pairs (vdpbf16ps; assembly, as in convert.h, since
// these files are compiled without the extension).
inline __m512 dot_pairs(__m512 acc, __m512i a, __m512i b) {
  asm("vdpbf16ps %2, %1, %0" : "+v"(acc) : "v"(a), "v"(b));
  return acc;
}

// Columns [c0, c0 + 64) of b as a panel [ceil(k / 2)][64][2], zero past k and n.
void pack_panel(const uint16_t* b, int64_t rs, int64_t k, int64_t n, int64_t c0, uint16_t* out) {
  alignas(64) static constexpr uint16_t kInterleave[32] = {
      0, 32, 1, 33, 2,  34, 3,  35, 4,  36, 5,  37, 6,  38, 7,  39,
      8, 40, 9, 41, 10, 42, 11, 43, 12, 44, 13, 45, 14, 46, 15, 47};
  const __m512i idx = _mm512_load_si512(kInterleave);
  __mmask16 masks[kVecs];
  for (int j = 0; j < kVecs; ++j) {
    const int64_t left = std::clamp<int64_t>(n - c0 - 16 * j, 0, 16);
    masks[j] = __mmask16((uint32_t(1) << left) - 1);
  }
  for (int64_t p = 0; p < (k + 1) / 2; ++p) {
    const uint16_t* r0 = b + 2 * p * rs + c0;
    const uint16_t* r1 = r0 + rs;
    const bool second = 2 * p + 1 < k;
    uint16_t* o = out + p * 2 * kNr;
    for (int j = 0; j < kVecs; ++j) {
      const __m512i x = _mm512_zextsi256_si512(_mm256_maskz_loadu_epi16(masks[j], r0 + 16 * j));
      const __m512i y =
          second ? _mm512_zextsi256_si512(_mm256_maskz_loadu_epi16(masks[j], r1 + 16 * j))
                 : _mm512_setzero_si512();
      _mm512_storeu_si512(o + 32 * j, _mm512_permutex2var_epi16(x, idx, y));
    }
  }
}

inline __m512i broadcast_pair(const uint16_t* p) {
  int32_t v;
  std::memcpy(&v, p, sizeof v);
  return _mm512_set1_epi32(v);
}

// One tile: `rows` rows of a (pointers; rows past the tile's `nr` repeat a valid one) times
// one panel over all of k, then out = act(x) and pre = x for x = product + bias (f32, 64
// values), for the first nr rows and nc columns; ld is out's and pre's row stride.
template <class Act>
inline void tile(const uint16_t* const* rows, const uint16_t* panel, int64_t k, const float* bias,
                 uint16_t* out, uint16_t* pre, int64_t ld, int nr, int nc, Act act) {
  __m512 acc[kMr][kVecs];
  for (int r = 0; r < kMr; ++r)
    for (int j = 0; j < kVecs; ++j) acc[r][j] = _mm512_setzero_ps();
  auto step = [&](const uint16_t* bp, auto pair_of_row) {
    __m512i bv[kVecs];
    for (int j = 0; j < kVecs; ++j) bv[j] = _mm512_loadu_si512(bp + 32 * j);
#pragma GCC unroll 6
    for (int r = 0; r < kMr; ++r) {
      const __m512i av = pair_of_row(r);
      for (int j = 0; j < kVecs; ++j) acc[r][j] = dot_pairs(acc[r][j], av, bv[j]);
    }
  };
  const int64_t pairs = k / 2;
  for (int64_t p = 0; p < pairs; ++p) {
    const uint16_t* bp = panel + p * 2 * kNr;
    for (int j = 0; j < kVecs; ++j)
      _mm_prefetch(reinterpret_cast<const char*>(bp + kPrefetchPairs * 2 * kNr + 32 * j),
                   _MM_HINT_T0);
    step(bp, [&](int r) { return broadcast_pair(rows[r] + 2 * p); });
  }
  if (k & 1)  // the last row of b is paired with zeros: a's element with anything
    step(panel + pairs * 2 * kNr,
         [&](int r) { return _mm512_set1_epi32(int32_t(rows[r][k - 1])); });

  for (int j = 0; j < kVecs && 16 * j < nc; ++j) {
    const __m512 bj = _mm512_loadu_ps(bias + 16 * j);
    const int cols = std::min(16, nc - 16 * j);
#pragma GCC unroll 6
    for (int r = 0; r < kMr; ++r) {
      if (r >= nr) break;
      const VFH x(_mm512_add_ps(acc[r][j], bj));
      const VFH y = act(x);
      uint16_t* o = out + r * ld + 16 * j;
      uint16_t* q = pre ? pre + r * ld + 16 * j : nullptr;
      if (cols == 16) {
        narrow_b16x16(y.v, o);
        if (q) narrow_b16x16(x.v, q);
      } else {
        alignas(32) uint16_t buf[16];
        narrow_b16x16(y.v, buf);
        std::memcpy(o, buf, size_t(cols) * sizeof(uint16_t));
        if (q) {
          narrow_b16x16(x.v, buf);
          std::memcpy(q, buf, size_t(cols) * sizeof(uint16_t));
        }
      }
    }
  }
}

}  // namespace

bool bf16_gemm(const Bf16GemmCall& c) {
  if (!kCpuHasAvx512Bf16) return false;
  const int64_t m = c.m, n = c.n, k = c.k, nb = c.nb;
  if (nb * m * n == 0) return true;
  const int64_t panels = (n + kNr - 1) / kNr;
  const int64_t panel_elems = (k + 1) / 2 * 2 * kNr;
  const int64_t distinct_b = c.b_bs == 0 ? 1 : nb;
  auto packed_panel = [&](int64_t item, int64_t p) {
    return c.packed + ((c.b_bs == 0 ? 0 : item) * panels + p) * panel_elems;
  };
  parallel_for(distinct_b * panels, 1, [&](int64_t first, int64_t last) {
    for (int64_t i = first; i < last; ++i)
      pack_panel(c.b + (i / panels) * c.b_bs, c.b_rs, k, n, (i % panels) * kNr,
                 packed_panel(i / panels, i % panels));
  });
  std::vector<float> bias(size_t(panels * kNr), 0.f);
  if (c.bias) b16_to_float_row(c.bias, bias.data(), n);

  const int64_t block = std::clamp<int64_t>(
      kBlockBytes / std::max<int64_t>(panel_elems * int64_t(sizeof(uint16_t)), 1), 1, panels);
  const int64_t col_blocks = (panels + block - 1) / block;
  const int64_t row_units = (m + kUnitRows - 1) / kUnitRows;
  with_activation<VFH>(c.act, [&](auto act) {
    parallel_for(nb * col_blocks * row_units, 1, [&](int64_t first, int64_t last) {
      for (int64_t u = first; u < last; ++u) {
        const int64_t item = u / (col_blocks * row_units);
        const int64_t cb = u / row_units % col_blocks;
        const int64_t r_end = std::min(m, (u % row_units + 1) * kUnitRows);
        const int64_t p_end = std::min(panels, (cb + 1) * block);
        const uint16_t* a = c.a + item * c.a_bs;
        for (int64_t r0 = u % row_units * kUnitRows; r0 < r_end; r0 += kMr) {
          const int nr = int(std::min<int64_t>(kMr, r_end - r0));
          const uint16_t* rows[kMr];
          for (int r = 0; r < kMr; ++r) rows[r] = a + (r0 + std::min(r, nr - 1)) * c.a_rs;
          const int64_t off = (item * m + r0) * n;
          for (int64_t p = cb * block; p < p_end; ++p) {
            const int nc = int(std::min<int64_t>(kNr, n - p * kNr));
            tile(rows, packed_panel(item, p), k, bias.data() + p * kNr, c.out + off + p * kNr,
                 c.pre ? c.pre + off + p * kNr : nullptr, n, nr, nc, act);
          }
        }
      }
    });
  });
  return true;
}
#endif

}  // namespace numr::cpu::NUMR_ISA

#pragma GCC pop_options
