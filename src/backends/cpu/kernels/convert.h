// Element conversions between storage dtypes and compute types for the CPU kernels.
// Float -> integer conversions saturate and send NaN to 0 (C++ leaves them undefined);
// integer narrowing wraps; anything -> Bool is "nonzero". Float -> F16/BF16 rounds to
// nearest even and keeps NaN/Inf/subnormals.
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstring>

#ifndef NUMR_ISA_ACTIVE
#error "include backends/cpu/kernels/isa.h (after all system headers) first"
#endif
#include "backends/cpu/kernels/vec.h"
#include "numr/dtype.h"

namespace numr::cpu::NUMR_ISA {

// Storage types with no arithmetic of their own.
struct H16 { uint16_t bits; };
struct B16 { uint16_t bits; };
struct Bool8 { uint8_t v; };

inline float bits_to_float(uint32_t u) { float f; std::memcpy(&f, &u, 4); return f; }
inline uint32_t float_to_bits(float f) { uint32_t u; std::memcpy(&u, &f, 4); return u; }

inline float h16_to_float(uint16_t h) {
#if NUMR_ISA_LEVEL >= 2
  return _cvtsh_ss(h);
#else
  const uint32_t sign = uint32_t(h & 0x8000u) << 16, exp = (h >> 10) & 0x1Fu, man = h & 0x3FFu;
  if (exp == 0x1F) return bits_to_float(sign | 0x7F800000u | (man << 13));
  if (exp != 0) return bits_to_float(sign | ((exp + 112u) << 23) | (man << 13));
  const float mag = float(man) * (1.0f / 16777216.0f);
  return bits_to_float(sign | float_to_bits(mag));
#endif
}

inline uint16_t float_to_h16(float f) {
#if NUMR_ISA_LEVEL >= 2
  return _cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
#else
  const uint32_t u = float_to_bits(f);
  const uint16_t sign = uint16_t((u >> 16) & 0x8000u);
  const uint32_t a = u & 0x7FFFFFFFu;
  if (a > 0x7F800000u) return uint16_t(sign | 0x7E00u | ((a >> 13) & 0x3FFu));  // NaN
  if (a >= 0x477FF000u) return uint16_t(sign | 0x7C00u);  // rounds to Inf (or is Inf)
  if (a < 0x38800000u) {  // below the smallest normal half: subnormal or zero
    const float mag = bits_to_float(a) * 16777216.0f;  // exact scaling to units of 2^-24
    // Round to nearest even through the float adder: 2^23 has ulp 1.
    const float r = (mag + 8388608.0f) - 8388608.0f;
    return uint16_t(sign | uint16_t(r));
  }
  const uint32_t rounded = a + 0xFFFu + ((a >> 13) & 1u);
  return uint16_t(sign | ((rounded - 0x38000000u) >> 13));
#endif
}

inline float b16_to_float(uint16_t b) { return bits_to_float(uint32_t(b) << 16); }
inline uint16_t float_to_b16(float f) {
  const uint32_t u = float_to_bits(f);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return uint16_t((u >> 16) | 0x40u);  // quiet NaN
  return uint16_t((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}

// Direct double -> half rounding (no double rounding through float).
inline uint16_t double_to_small(double x, int mant, int exp_bits) {
  const int bias = (1 << (exp_bits - 1)) - 1;
  uint64_t u;
  std::memcpy(&u, &x, 8);
  const uint16_t sign = (u >> 63) ? uint16_t(1u << (mant + exp_bits)) : uint16_t(0);
  const uint16_t exp_all = uint16_t(((1u << exp_bits) - 1) << mant);
  const uint64_t a = u & 0x7FFFFFFFFFFFFFFFull;
  if (a > 0x7FF0000000000000ull) return uint16_t(sign | exp_all | (1u << (mant - 1)));
  if (a == 0x7FF0000000000000ull) return uint16_t(sign | exp_all);
  if (a == 0) return sign;
  int e = int(a >> 52) - 1023;
  uint64_t m = (a & ((1ull << 52) - 1)) | (e == -1023 ? 0 : (1ull << 52));
  if (e == -1023) e = -1022;  // double subnormal (far below any half's range)
  const int emin = 1 - bias;
  // Value = m * 2^(e - 52). Keep `mant` bits after the leading one (fewer when subnormal).
  int shift = 52 - mant + (e < emin ? emin - e : 0);
  if (shift > 63) return sign;
  const uint64_t kept = m >> shift, rest = m & ((1ull << shift) - 1), half = 1ull << (shift - 1);
  uint64_t q = kept + ((rest > half || (rest == half && (kept & 1))) ? 1 : 0);
  if (e < emin) return uint16_t(sign | uint16_t(q));  // q == 2^mant becomes the min normal
  if (q == (2ull << mant)) {
    q >>= 1;
    ++e;
  }
  if (e > bias) return uint16_t(sign | exp_all);
  return uint16_t(sign | uint16_t((e + bias) << mant) | uint16_t(q - (1ull << mant)));
}

// int64 -> double without losing the bits below double's precision: they are folded into
// a sticky lowest bit, so a later rounding to a 16-bit format rounds once, correctly.
inline double int64_to_double_sticky(int64_t s) {
  const bool neg = s < 0;
  uint64_t m = neg ? 0 - uint64_t(s) : uint64_t(s);
  int shift = 0;
  while (m >= (1ull << 53)) {
    m = (m >> 1) | (m & 1);
    ++shift;
  }
  const double d = double(m) * double(1ull << shift);
  return neg ? -d : d;
}

// Float -> integer, saturating, NaN -> 0.
template <class I>
inline I sat_int(double x, double lo, double hi_excl, I min_v, I max_v) {
  if (x != x) return I(0);
  if (x <= lo) return min_v;
  if (x >= hi_excl) return max_v;
  return I(x);
}

// convert<D>(s): every pair of storage and compute types.
template <class D, class S> inline D convert(S s);

#define NUMR_CVT(S, D, expr) \
  template <> inline D convert<D, S>(S s) { return expr; }
// to double
NUMR_CVT(double, double, s)
NUMR_CVT(float, double, double(s))
NUMR_CVT(H16, double, double(h16_to_float(s.bits)))
NUMR_CVT(B16, double, double(b16_to_float(s.bits)))
NUMR_CVT(int64_t, double, double(s))
NUMR_CVT(int32_t, double, double(s))
NUMR_CVT(uint8_t, double, double(s))
NUMR_CVT(Bool8, double, s.v ? 1.0 : 0.0)
// to float
NUMR_CVT(double, float, float(s))
NUMR_CVT(float, float, s)
NUMR_CVT(H16, float, h16_to_float(s.bits))
NUMR_CVT(B16, float, b16_to_float(s.bits))
NUMR_CVT(int64_t, float, float(s))
NUMR_CVT(int32_t, float, float(s))
NUMR_CVT(uint8_t, float, float(s))
NUMR_CVT(Bool8, float, s.v ? 1.0f : 0.0f)
// to H16 / B16
NUMR_CVT(double, H16, H16{double_to_small(s, 10, 5)})
NUMR_CVT(float, H16, H16{float_to_h16(s)})
NUMR_CVT(H16, H16, s)
NUMR_CVT(B16, H16, H16{float_to_h16(b16_to_float(s.bits))})
NUMR_CVT(int64_t, H16, H16{double_to_small(int64_to_double_sticky(s), 10, 5)})
NUMR_CVT(int32_t, H16, H16{double_to_small(double(s), 10, 5)})
NUMR_CVT(uint8_t, H16, H16{float_to_h16(float(s))})
NUMR_CVT(Bool8, H16, H16{uint16_t(s.v ? 0x3C00u : 0u)})
NUMR_CVT(double, B16, B16{double_to_small(s, 7, 8)})
NUMR_CVT(float, B16, B16{float_to_b16(s)})
NUMR_CVT(H16, B16, B16{float_to_b16(h16_to_float(s.bits))})
NUMR_CVT(B16, B16, s)
NUMR_CVT(int64_t, B16, B16{double_to_small(int64_to_double_sticky(s), 7, 8)})
NUMR_CVT(int32_t, B16, B16{double_to_small(double(s), 7, 8)})
NUMR_CVT(uint8_t, B16, B16{float_to_b16(float(s))})
NUMR_CVT(Bool8, B16, B16{uint16_t(s.v ? 0x3F80u : 0u)})
// to int64
NUMR_CVT(double, int64_t, sat_int<int64_t>(s, -9223372036854775808.0, 9223372036854775808.0, INT64_MIN, INT64_MAX))
NUMR_CVT(float, int64_t, convert<int64_t>(double(s)))
NUMR_CVT(H16, int64_t, convert<int64_t>(double(h16_to_float(s.bits))))
NUMR_CVT(B16, int64_t, convert<int64_t>(double(b16_to_float(s.bits))))
NUMR_CVT(int64_t, int64_t, s)
NUMR_CVT(int32_t, int64_t, int64_t(s))
NUMR_CVT(uint8_t, int64_t, int64_t(s))
NUMR_CVT(Bool8, int64_t, int64_t(s.v ? 1 : 0))
// to int32
NUMR_CVT(double, int32_t, sat_int<int32_t>(s, -2147483648.0, 2147483648.0, INT32_MIN, INT32_MAX))
NUMR_CVT(float, int32_t, convert<int32_t>(double(s)))
NUMR_CVT(H16, int32_t, convert<int32_t>(double(h16_to_float(s.bits))))
NUMR_CVT(B16, int32_t, convert<int32_t>(double(b16_to_float(s.bits))))
NUMR_CVT(int64_t, int32_t, int32_t(s))
NUMR_CVT(int32_t, int32_t, s)
NUMR_CVT(uint8_t, int32_t, int32_t(s))
NUMR_CVT(Bool8, int32_t, int32_t(s.v ? 1 : 0))
// to uint8
NUMR_CVT(double, uint8_t, sat_int<uint8_t>(s, 0.0, 256.0, uint8_t(0), uint8_t(255)))
NUMR_CVT(float, uint8_t, convert<uint8_t>(double(s)))
NUMR_CVT(H16, uint8_t, convert<uint8_t>(double(h16_to_float(s.bits))))
NUMR_CVT(B16, uint8_t, convert<uint8_t>(double(b16_to_float(s.bits))))
NUMR_CVT(int64_t, uint8_t, uint8_t(s))
NUMR_CVT(int32_t, uint8_t, uint8_t(s))
NUMR_CVT(uint8_t, uint8_t, s)
NUMR_CVT(Bool8, uint8_t, uint8_t(s.v ? 1 : 0))
// to Bool
NUMR_CVT(double, Bool8, Bool8{uint8_t(s != 0.0)})
NUMR_CVT(float, Bool8, Bool8{uint8_t(s != 0.0f)})
NUMR_CVT(H16, Bool8, Bool8{uint8_t((s.bits & 0x7FFFu) != 0)})
NUMR_CVT(B16, Bool8, Bool8{uint8_t((s.bits & 0x7FFFu) != 0)})
NUMR_CVT(int64_t, Bool8, Bool8{uint8_t(s != 0)})
NUMR_CVT(int32_t, Bool8, Bool8{uint8_t(s != 0)})
NUMR_CVT(uint8_t, Bool8, Bool8{uint8_t(s != 0)})
NUMR_CVT(Bool8, Bool8, Bool8{uint8_t(s.v != 0)})
#undef NUMR_CVT

// Calls f(S{}) with the storage type of dtype t.
template <class F>
inline void visit_storage(DType t, F&& f) {
  switch (t) {
    case DType::F64: f(double{}); return;
    case DType::F32: f(float{}); return;
    case DType::F16: f(H16{}); return;
    case DType::BF16: f(B16{}); return;
    case DType::I64: f(int64_t{}); return;
    case DType::I32: f(int32_t{}); return;
    case DType::U8: f(uint8_t{}); return;
    case DType::Bool: f(Bool8{}); return;
    case DType::Complex64:
    case DType::Complex128: break;  // complex tensors reach kernels as their real parts
  }
}

// Vectorised contiguous F16/BF16 <-> float, the hot conversions.
#if NUMR_ISA_LEVEL >= 3
// 16 lanes at a time, in registers. Narrowing rounds to nearest even; F16 through the
// hardware conversion (exact, subnormals kept), BF16 on the bit pattern, where a NaN keeps
// its sign and becomes quiet.
inline __m512 widen_h16x16(const uint16_t* p) {
  return _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i*)p));
}
// kStream: a non-temporal store, to a 32-byte aligned p.
template <bool kStream = false>
inline void store_h16x16(__m256i r, uint16_t* p) {
  if constexpr (kStream)
    _mm256_stream_si256((__m256i*)p, r);
  else
    _mm256_storeu_si256((__m256i*)p, r);
}
inline __m256i narrow_h16x16_reg(__m512 x) { return _mm512_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT); }
template <bool kStream = false>
inline void narrow_h16x16(__m512 x, uint16_t* p) {
  store_h16x16<kStream>(narrow_h16x16_reg(x), p);
}
inline __m512 widen_b16x16(const uint16_t* p) {
  const __m512i w = _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i*)p));
  return _mm512_castsi512_ps(_mm512_slli_epi32(w, 16));
}
// Whether this CPU has AVX512-BF16, whose vcvtneps2bf16 narrows 16 floats in one
// instruction: rounding to nearest even and quieting a NaN exactly as the bit pattern
// code below does, but flushing subnormal inputs to zero, so a vector holding one takes
// the bit pattern code. The instruction is written as assembly: a function compiled for
// the extension could not be inlined into these kernels, which are compiled without it.
inline const bool kCpuHasAvx512Bf16 = [] {
  __builtin_cpu_init();  // a static initializer may run before libgcc's own
  return __builtin_cpu_supports("avx512bf16") != 0;
}();
inline __m256i narrow_b16x16_reg(__m512 x) {
  if (kCpuHasAvx512Bf16 && _mm512_fpclass_ps_mask(x, 0x20) == 0) {  // 0x20: subnormal
    __m256i r;
    asm("vcvtneps2bf16 %1, %0" : "=v"(r) : "v"(x));
    return r;
  }
  const __m512i u = _mm512_castps_si512(x);
  const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
  __m512i r = _mm512_srli_epi32(_mm512_add_epi32(_mm512_add_epi32(u, _mm512_set1_epi32(0x7FFF)), lsb), 16);
  const __mmask16 nan = _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q);
  r = _mm512_mask_blend_epi32(nan, r, _mm512_or_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(0x40)));
  return _mm512_cvtepi32_epi16(r);
}
template <bool kStream = false>
inline void narrow_b16x16(__m512 x, uint16_t* p) {
  store_h16x16<kStream>(narrow_b16x16_reg(x), p);
}
// The narrowing of 16 floats to F16 (kBf16 false) or BF16, in a register.
template <bool kBf16>
inline __m256i narrow_x16_reg(__m512 x) {
  return kBf16 ? narrow_b16x16_reg(x) : narrow_h16x16_reg(x);
}
#endif

inline void h16_to_float_row(const uint16_t* src, float* dst, int64_t n) {
  int64_t i = 0;
#if NUMR_ISA_LEVEL >= 3
  for (; i + 16 <= n; i += 16) _mm512_storeu_ps(dst + i, widen_h16x16(src + i));
#elif NUMR_ISA_LEVEL >= 2
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i*)(src + i))));
#endif
  for (; i < n; ++i) dst[i] = h16_to_float(src[i]);
}
// With stream (AVX-512), the vectors from the first 32-byte boundary of dst on are written
// with non-temporal stores (the caller fences).
inline void float_to_h16_row(const float* src, uint16_t* dst, int64_t n, bool stream = false) {
  int64_t i = 0;
  (void)stream;  // below AVX-512: normal stores
#if NUMR_ISA_LEVEL >= 3
  if (stream) {
    for (; i < n && reinterpret_cast<uintptr_t>(dst + i) % 32 != 0; ++i)
      dst[i] = float_to_h16(src[i]);
    for (; i + 16 <= n; i += 16) narrow_h16x16<true>(_mm512_loadu_ps(src + i), dst + i);
  }
  for (; i + 16 <= n; i += 16) narrow_h16x16(_mm512_loadu_ps(src + i), dst + i);
#elif NUMR_ISA_LEVEL >= 2
  for (; i + 8 <= n; i += 8)
    _mm_storeu_si128((__m128i*)(dst + i),
                     _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT));
#endif
  for (; i < n; ++i) dst[i] = float_to_h16(src[i]);
}
inline void b16_to_float_row(const uint16_t* src, float* dst, int64_t n) {
  int64_t i = 0;
#if NUMR_ISA_LEVEL >= 3
  for (; i + 16 <= n; i += 16) _mm512_storeu_ps(dst + i, widen_b16x16(src + i));
#elif NUMR_ISA_LEVEL >= 2
  for (; i + 8 <= n; i += 8) {
    const __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i*)(src + i)));
    _mm256_storeu_ps(dst + i, _mm256_castsi256_ps(_mm256_slli_epi32(w, 16)));
  }
#endif
  for (; i < n; ++i) dst[i] = bits_to_float(uint32_t(src[i]) << 16);
}
inline void float_to_b16_row(const float* src, uint16_t* dst, int64_t n, bool stream = false) {
  int64_t i = 0;
  (void)stream;  // below AVX-512: normal stores
#if NUMR_ISA_LEVEL >= 3
  if (stream) {
    for (; i < n && reinterpret_cast<uintptr_t>(dst + i) % 32 != 0; ++i)
      dst[i] = float_to_b16(src[i]);
    for (; i + 16 <= n; i += 16) narrow_b16x16<true>(_mm512_loadu_ps(src + i), dst + i);
  }
  for (; i + 16 <= n; i += 16) narrow_b16x16(_mm512_loadu_ps(src + i), dst + i);
#endif
  for (; i < n; ++i) dst[i] = float_to_b16(src[i]);
}

// How a kernel loop reads its operands and writes its results, a vector at a time: data of
// the compute type used in place (PlainIO), or, with AVX-512, contiguous F16/BF16 data
// widened and narrowed in registers (HalfIO), which spares a round trip through chunk
// buffers.
template <class V>
struct PlainIO {
  using T = typename V::scalar;
  static constexpr bool kCanStream = true;
  static V load(const T* p) { return V::load(p); }
  static void store(V v, T* p) { v.store(p); }
};
#if NUMR_ISA_LEVEL >= 3
// V: VF, or VFH for BF16 (vec.h).
template <bool kBf16, class V = VF>
struct HalfIO {
  using T = uint16_t;
  static constexpr bool kCanStream = false;
  static V load(const uint16_t* p) { return V(vf_raw(kBf16 ? widen_b16x16(p) : widen_h16x16(p))); }
  static void store(V v, uint16_t* p) {
    if constexpr (kBf16) narrow_b16x16(__m512(v.v), p);
    else narrow_h16x16(__m512(v.v), p);
  }
};
#endif

// Reads n elements of dtype t at base + i * stride (elements) into dst as C.
template <class C>
inline void gather_row(const void* base, DType t, int64_t stride, int64_t n, C* dst) {
  if constexpr (sizeof(C) == 4 && C(0.5f) != C(0)) {  // C = float
    if (stride == 1 && t == DType::F16) return h16_to_float_row((const uint16_t*)base, dst, n);
    if (stride == 1 && t == DType::BF16) return b16_to_float_row((const uint16_t*)base, dst, n);
  }
  visit_storage(t, [&](auto s) {
    using S = decltype(s);
    const S* p = static_cast<const S*>(base);
    if (stride == 0) {
      const C v = convert<C>(p[0]);
      for (int64_t i = 0; i < n; ++i) dst[i] = v;
    } else if (stride == 1) {
      for (int64_t i = 0; i < n; ++i) dst[i] = convert<C>(p[i]);
    } else {
      for (int64_t i = 0; i < n; ++i) dst[i] = convert<C>(p[i * stride]);
    }
  });
}

// Writes n compute values to contiguous storage of dtype t.
// With stream, F16/BF16 from float are written as float_to_h16_row says.
template <class C>
inline void scatter_row(const C* src, int64_t n, void* base, DType t, bool stream = false) {
  if constexpr (sizeof(C) == 4 && C(0.5f) != C(0)) {
    if (t == DType::F16) return float_to_h16_row(src, (uint16_t*)base, n, stream);
    if (t == DType::BF16) return float_to_b16_row(src, (uint16_t*)base, n, stream);
  }
  (void)stream;
  visit_storage(t, [&](auto s) {
    using S = decltype(s);
    S* p = static_cast<S*>(base);
    for (int64_t i = 0; i < n; ++i) p[i] = convert<S>(src[i]);
  });
}

}  // namespace numr::cpu::NUMR_ISA
