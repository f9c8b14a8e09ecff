// Register transposes of tiles for the transposing copy (copy.cpp): a tile of I x J
// elements of `Bytes` bytes each, source row j < J at s + j * s_l (I contiguous elements),
// destination row i < I at d + i * d_d (J elements). Included by per-ISA kernel files after
// isa.h.
//
//   Bytes | AVX-512 I x J | AVX2 I x J
//   2     | 16 x 32       | 16 x 32
//   4     | 16 x 16       | 8 x 8
//   8     | 8 x 8         | 4 x 4
//
// Where a tile's destination rows are 64 bytes (whole cache lines), Stream writes them with
// non-temporal stores (the caller checks the alignment and fences).
//
// Each is a ladder of unpacks (interleaving pairs of rows element by element, then pairs by
// pairs, ...) that ends in 128-bit lane shuffles; the comments give what a register holds
// after each step, "c" for a column (a destination row) and "r" for source rows.
#pragma once

#include <cstdint>

namespace numr::cpu::NUMR_ISA {

#if NUMR_ISA_LEVEL >= 2
// The tile's dims (0: this ISA has no register transpose for elements of this size).
template <int Bytes>
constexpr int kTileI = Bytes == 2   ? 16
                       : Bytes == 4 ? (NUMR_ISA_LEVEL >= 3 ? 16 : 8)
                       : Bytes == 8 ? (NUMR_ISA_LEVEL >= 3 ? 8 : 4)
                                    : 0;
template <int Bytes>
constexpr int kTileJ = Bytes == 2 ? 32 : kTileI<Bytes>;
template <int Bytes>
constexpr bool kTileStreams = kTileJ<Bytes>* Bytes == 64;

template <bool Stream>
inline void put256(void* p, __m256i v) {
  if constexpr (Stream)
    _mm256_stream_si256(static_cast<__m256i*>(p), v);
  else
    _mm256_storeu_si256(static_cast<__m256i*>(p), v);
}
#if NUMR_ISA_LEVEL >= 3
template <bool Stream>
inline void put512(void* p, __m512i v) {
  if constexpr (Stream)
    _mm512_stream_si512(static_cast<__m512i*>(p), v);
  else
    _mm512_storeu_si512(p, v);
}
#endif

// 16 x 16 two-byte elements, source row j in in[j], into out[i] (destination row i), in
// 256-bit registers (lane L: columns 8L ..).
inline void transpose_16x16_b16(const __m256i* in, __m256i* out) {
  __m256i r[16], u[16];
  for (int j = 0; j < 16; ++j) r[j] = in[j];
  // u[2k]: c0..3 of r 2k, 2k+1 interleaved; u[2k + 1]: c4..7.
  for (int k = 0; k < 8; ++k) {
    u[2 * k] = _mm256_unpacklo_epi16(r[2 * k], r[2 * k + 1]);
    u[2 * k + 1] = _mm256_unpackhi_epi16(r[2 * k], r[2 * k + 1]);
  }
  // r[4k + q]: c 2q and 2q + 1 of r 4k .. 4k + 3.
  for (int k = 0; k < 4; ++k)
    for (int m = 0; m < 2; ++m) {
      r[4 * k + 2 * m] = _mm256_unpacklo_epi32(u[4 * k + m], u[4 * k + 2 + m]);
      r[4 * k + 2 * m + 1] = _mm256_unpackhi_epi32(u[4 * k + m], u[4 * k + 2 + m]);
    }
  // u[8h + c]: c of r 8h .. 8h + 7.
  for (int h = 0; h < 2; ++h)
    for (int q = 0; q < 4; ++q) {
      u[8 * h + 2 * q] = _mm256_unpacklo_epi64(r[8 * h + q], r[8 * h + 4 + q]);
      u[8 * h + 2 * q + 1] = _mm256_unpackhi_epi64(r[8 * h + q], r[8 * h + 4 + q]);
    }
  for (int c = 0; c < 8; ++c) {
    out[c] = _mm256_permute2x128_si256(u[c], u[8 + c], 0x20);
    out[8 + c] = _mm256_permute2x128_si256(u[c], u[8 + c], 0x31);
  }
}

// Source rows j0 .. j0 + 15 of a tile of two-byte elements, transposed into out.
inline void transpose_16x16_b16(const uint16_t* s, int64_t s_l, __m256i* out) {
  __m256i r[16];
  for (int j = 0; j < 16; ++j)
    r[j] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + j * s_l));
  transpose_16x16_b16(r, out);
}

// Destination rows i < 16 from the transposed halves of a 16 x 32 tile: columns 0 .. 15 in
// lo[i], 16 .. 31 in hi[i]; each row written at once.
template <bool Stream>
inline void put_rows_16x32_b16(const __m256i* lo, const __m256i* hi, uint16_t* d, int64_t d_d) {
  for (int i = 0; i < 16; ++i) {
#if NUMR_ISA_LEVEL >= 3
    put512<Stream>(d + i * d_d, _mm512_inserti64x4(_mm512_castsi256_si512(lo[i]), hi[i], 1));
#else
    put256<Stream>(d + i * d_d, lo[i]);
    put256<Stream>(d + i * d_d + 16, hi[i]);
#endif
  }
}

// 16 x 32 two-byte elements: two 16 x 16 transposes.
template <bool Stream>
inline void transpose_tile_16x32_b16(const uint16_t* s, int64_t s_l, uint16_t* d, int64_t d_d) {
  __m256i lo[16], hi[16];
  transpose_16x16_b16(s, s_l, lo);
  transpose_16x16_b16(s + 16 * s_l, s_l, hi);
  put_rows_16x32_b16<Stream>(lo, hi, d, d_d);
}
#endif

#if NUMR_ISA_LEVEL >= 3
// 16 x 16 four-byte elements, in 512-bit registers. After the 32-bit and 64-bit unpacks,
// r[4k + m] holds in its 128-bit lane L the elements (r 4k .. 4k + 3, c 4L + m); the lane
// shuffles gather the lanes L of r[m], r[4 + m], r[8 + m] and r[12 + m].
template <bool Stream>
inline void transpose_tile_16x16_b32(const uint32_t* s, int64_t s_l, uint32_t* d, int64_t d_d) {
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
    put512<Stream>(d + m * d_d, _mm512_shuffle_i32x4(v0, v2, 0x88));
    put512<Stream>(d + (4 + m) * d_d, _mm512_shuffle_i32x4(v0, v2, 0xDD));
    put512<Stream>(d + (8 + m) * d_d, _mm512_shuffle_i32x4(v1, v3, 0x88));
    put512<Stream>(d + (12 + m) * d_d, _mm512_shuffle_i32x4(v1, v3, 0xDD));
  }
}

// 8 x 8 eight-byte elements, in 512-bit registers.
template <bool Stream>
inline void transpose_tile_8x8_b64(const uint64_t* s, int64_t s_l, uint64_t* d, int64_t d_d) {
  __m512i r[8], u[8];
  for (int j = 0; j < 8; ++j) r[j] = _mm512_loadu_si512(s + j * s_l);
  // u[2k]: (r 2k, 2k+1) of c 0, 2, 4, 6; u[2k + 1]: of c 1, 3, 5, 7.
  for (int k = 0; k < 4; ++k) {
    u[2 * k] = _mm512_unpacklo_epi64(r[2 * k], r[2 * k + 1]);
    u[2 * k + 1] = _mm512_unpackhi_epi64(r[2 * k], r[2 * k + 1]);
  }
  // r[4h + 2p + e]: lanes (c, r 4h..4h+1), (c + 4, r 4h..4h+1), (c, r 4h+2..4h+3),
  // (c + 4, r 4h+2..4h+3) for c = p + 2e.
  for (int h = 0; h < 2; ++h)
    for (int p = 0; p < 2; ++p) {
      r[4 * h + 2 * p] = _mm512_shuffle_i64x2(u[4 * h + p], u[4 * h + 2 + p], 0x88);
      r[4 * h + 2 * p + 1] = _mm512_shuffle_i64x2(u[4 * h + p], u[4 * h + 2 + p], 0xDD);
    }
  // c and c + 4 gather the lanes of r[2p + e] (r 0..3) and r[4 + 2p + e] (r 4..7).
  for (int p = 0; p < 2; ++p)
    for (int e = 0; e < 2; ++e) {
      const int c = p + 2 * e;
      put512<Stream>(d + c * d_d, _mm512_shuffle_i64x2(r[2 * p + e], r[4 + 2 * p + e], 0x88));
      put512<Stream>(d + (c + 4) * d_d, _mm512_shuffle_i64x2(r[2 * p + e], r[4 + 2 * p + e], 0xDD));
    }
}
#elif NUMR_ISA_LEVEL == 2
// 8 x 8 four-byte elements, in 256-bit registers (lane L: columns 4L ..).
inline void transpose_tile_8x8_b32(const uint32_t* s, int64_t s_l, uint32_t* d, int64_t d_d) {
  __m256i r[8], u[8];
  for (int j = 0; j < 8; ++j)
    r[j] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + j * s_l));
  // u[2k]: c 0, 1 of r 2k, 2k+1 interleaved; u[2k + 1]: c 2, 3.
  for (int k = 0; k < 4; ++k) {
    u[2 * k] = _mm256_unpacklo_epi32(r[2 * k], r[2 * k + 1]);
    u[2 * k + 1] = _mm256_unpackhi_epi32(r[2 * k], r[2 * k + 1]);
  }
  // r[4h + c]: c of r 4h .. 4h + 3.
  for (int h = 0; h < 2; ++h)
    for (int m = 0; m < 2; ++m) {
      r[4 * h + 2 * m] = _mm256_unpacklo_epi64(u[4 * h + m], u[4 * h + 2 + m]);
      r[4 * h + 2 * m + 1] = _mm256_unpackhi_epi64(u[4 * h + m], u[4 * h + 2 + m]);
    }
  for (int c = 0; c < 4; ++c) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + c * d_d),
                        _mm256_permute2x128_si256(r[c], r[4 + c], 0x20));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + (4 + c) * d_d),
                        _mm256_permute2x128_si256(r[c], r[4 + c], 0x31));
  }
}

// 4 x 4 eight-byte elements, in 256-bit registers.
inline void transpose_tile_4x4_b64(const uint64_t* s, int64_t s_l, uint64_t* d, int64_t d_d) {
  __m256i r[4], u[4];
  for (int j = 0; j < 4; ++j)
    r[j] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + j * s_l));
  // u[2k]: (r 2k, 2k+1) of c 0 | c 2; u[2k + 1]: of c 1 | c 3.
  for (int k = 0; k < 2; ++k) {
    u[2 * k] = _mm256_unpacklo_epi64(r[2 * k], r[2 * k + 1]);
    u[2 * k + 1] = _mm256_unpackhi_epi64(r[2 * k], r[2 * k + 1]);
  }
  for (int c = 0; c < 2; ++c) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + c * d_d),
                        _mm256_permute2x128_si256(u[c], u[2 + c], 0x20));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + (2 + c) * d_d),
                        _mm256_permute2x128_si256(u[c], u[2 + c], 0x31));
  }
}
#endif

#if NUMR_ISA_LEVEL >= 2
// One tile of kTileI x kTileJ elements through the transposes above; Stream only where
// kTileStreams.
template <bool Stream, class T>
inline void transpose_tile(const T* s, int64_t s_l, T* d, int64_t d_d) {
  if constexpr (sizeof(T) == 2) {
    transpose_tile_16x32_b16<Stream>(reinterpret_cast<const uint16_t*>(s), s_l,
                                     reinterpret_cast<uint16_t*>(d), d_d);
  } else if constexpr (sizeof(T) == 4) {
#if NUMR_ISA_LEVEL >= 3
    transpose_tile_16x16_b32<Stream>(reinterpret_cast<const uint32_t*>(s), s_l,
                                     reinterpret_cast<uint32_t*>(d), d_d);
#else
    static_assert(!Stream);
    transpose_tile_8x8_b32(reinterpret_cast<const uint32_t*>(s), s_l,
                           reinterpret_cast<uint32_t*>(d), d_d);
#endif
  } else if constexpr (sizeof(T) == 8) {
#if NUMR_ISA_LEVEL >= 3
    transpose_tile_8x8_b64<Stream>(reinterpret_cast<const uint64_t*>(s), s_l,
                                   reinterpret_cast<uint64_t*>(d), d_d);
#else
    static_assert(!Stream);
    transpose_tile_4x4_b64(reinterpret_cast<const uint64_t*>(s), s_l,
                           reinterpret_cast<uint64_t*>(d), d_d);
#endif
  }
}
#endif

}  // namespace numr::cpu::NUMR_ISA
