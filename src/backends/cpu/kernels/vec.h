// SIMD number types for the CPU kernels: VF (float lanes) and VD (double lanes), with
// masks, arithmetic operators and the primitive functions the formulas in src/math call
// (from SLEEF, 1-ULP variants). Instantiating a formula with VF or VD gives the kernel.
// VFH is VF for results rounded to BF16: the same except for a cheaper exp (see there).
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstring>
#include <utility>

#ifndef NUMR_ISA_ACTIVE
#error "include backends/cpu/kernels/isa.h (after all system headers) first"
#endif

namespace numr::cpu::NUMR_ISA {

// NUMR_ISA_LEVEL comes from the build (3 = AVX-512, 2 = AVX2, 1 = SSE4.2): GCC's target
// pragma does not define __AVX512F__ and friends, so they cannot be tested here.
#if NUMR_ISA_LEVEL >= 3
inline constexpr int kWF = 16, kWD = 8;
using SleefF = __m512;
using SleefD = __m512d;
#define NUMR_SLEEF(fn, kind, acc) Sleef_##fn##kind##acc##avx512f
#define NUMR_FW f16
#define NUMR_DW d8
#elif NUMR_ISA_LEVEL == 2
inline constexpr int kWF = 8, kWD = 4;
using SleefF = __m256;
using SleefD = __m256d;
#define NUMR_SLEEF(fn, kind, acc) Sleef_##fn##kind##acc##avx2
#define NUMR_FW f8
#define NUMR_DW d4
#else
inline constexpr int kWF = 4, kWD = 2;
using SleefF = __m128;
using SleefD = __m128d;
#define NUMR_SLEEF(fn, kind, acc) Sleef_##fn##kind##acc##sse4
#define NUMR_FW f4
#define NUMR_DW d2
#endif
#define NUMR_SLEEF_X(fn, kind, acc) NUMR_SLEEF(fn, kind, acc)

typedef float vf_raw __attribute__((vector_size(kWF * 4)));
typedef int32_t vfm_raw __attribute__((vector_size(kWF * 4)));
typedef double vd_raw __attribute__((vector_size(kWD * 8)));
typedef int64_t vdm_raw __attribute__((vector_size(kWD * 8)));

// Lane masks and blends, written with intrinsics: GCC 12 turns vector-extension selects
// and OR-ed comparison masks on 512-bit vectors into lane-by-lane code under a target
// pragma. Comparisons are IEEE: ordered, except != which is true for NaN (as in C++).
#if NUMR_ISA_LEVEL >= 3
struct MaskF {
  __mmask16 m;
};
struct MaskD {
  __mmask8 m;
};
#define NUMR_MASK_OPS(M, T)                                                  \
  inline M operator&(M a, M b) { return {T(a.m & b.m)}; }                     \
  inline M operator|(M a, M b) { return {T(a.m | b.m)}; }                     \
  inline M operator^(M a, M b) { return {T(a.m ^ b.m)}; }                     \
  inline M operator!(M a) { return {T(~a.m)}; }
NUMR_MASK_OPS(MaskF, __mmask16)
NUMR_MASK_OPS(MaskD, __mmask8)
#undef NUMR_MASK_OPS
#define NUMR_CMP(name, pred)                                                             \
  inline MaskF name(vf_raw a, vf_raw b) { return {_mm512_cmp_ps_mask(__m512(a), __m512(b), pred)}; } \
  inline MaskD name(vd_raw a, vd_raw b) { return {_mm512_cmp_pd_mask(__m512d(a), __m512d(b), pred)}; }
inline vf_raw blend(MaskF m, vf_raw a, vf_raw b) {
  return vf_raw(_mm512_mask_blend_ps(m.m, __m512(b), __m512(a)));
}
inline vd_raw blend(MaskD m, vd_raw a, vd_raw b) {
  return vd_raw(_mm512_mask_blend_pd(m.m, __m512d(b), __m512d(a)));
}
#elif NUMR_ISA_LEVEL == 2
struct MaskF {
  __m256 m;
};
struct MaskD {
  __m256d m;
};
inline MaskF operator&(MaskF a, MaskF b) { return {_mm256_and_ps(a.m, b.m)}; }
inline MaskF operator|(MaskF a, MaskF b) { return {_mm256_or_ps(a.m, b.m)}; }
inline MaskF operator^(MaskF a, MaskF b) { return {_mm256_xor_ps(a.m, b.m)}; }
inline MaskF operator!(MaskF a) { return {_mm256_xor_ps(a.m, _mm256_castsi256_ps(_mm256_set1_epi32(-1)))}; }
inline MaskD operator&(MaskD a, MaskD b) { return {_mm256_and_pd(a.m, b.m)}; }
inline MaskD operator|(MaskD a, MaskD b) { return {_mm256_or_pd(a.m, b.m)}; }
inline MaskD operator^(MaskD a, MaskD b) { return {_mm256_xor_pd(a.m, b.m)}; }
inline MaskD operator!(MaskD a) { return {_mm256_xor_pd(a.m, _mm256_castsi256_pd(_mm256_set1_epi64x(-1)))}; }
#define NUMR_CMP(name, pred)                                                                \
  inline MaskF name(vf_raw a, vf_raw b) { return {_mm256_cmp_ps(__m256(a), __m256(b), pred)}; } \
  inline MaskD name(vd_raw a, vd_raw b) { return {_mm256_cmp_pd(__m256d(a), __m256d(b), pred)}; }
inline vf_raw blend(MaskF m, vf_raw a, vf_raw b) {
  return vf_raw(_mm256_blendv_ps(__m256(b), __m256(a), m.m));
}
inline vd_raw blend(MaskD m, vd_raw a, vd_raw b) {
  return vd_raw(_mm256_blendv_pd(__m256d(b), __m256d(a), m.m));
}
#else
struct MaskF {
  __m128 m;
};
struct MaskD {
  __m128d m;
};
inline MaskF operator&(MaskF a, MaskF b) { return {_mm_and_ps(a.m, b.m)}; }
inline MaskF operator|(MaskF a, MaskF b) { return {_mm_or_ps(a.m, b.m)}; }
inline MaskF operator^(MaskF a, MaskF b) { return {_mm_xor_ps(a.m, b.m)}; }
inline MaskF operator!(MaskF a) { return {_mm_xor_ps(a.m, _mm_castsi128_ps(_mm_set1_epi32(-1)))}; }
inline MaskD operator&(MaskD a, MaskD b) { return {_mm_and_pd(a.m, b.m)}; }
inline MaskD operator|(MaskD a, MaskD b) { return {_mm_or_pd(a.m, b.m)}; }
inline MaskD operator^(MaskD a, MaskD b) { return {_mm_xor_pd(a.m, b.m)}; }
inline MaskD operator!(MaskD a) { return {_mm_xor_pd(a.m, _mm_castsi128_pd(_mm_set1_epi64x(-1)))}; }
// SSE has no predicate-immediate compare; each comparison has its own instruction.
#define NUMR_CMP(name, pred)                                                       \
  inline MaskF name(vf_raw a, vf_raw b) { return {NUMR_SSE_CMP_##pred(ps, __m128(a), __m128(b))}; } \
  inline MaskD name(vd_raw a, vd_raw b) { return {NUMR_SSE_CMP_##pred(pd, __m128d(a), __m128d(b))}; }
#define NUMR_SSE_CMP__CMP_LT_OQ(t, a, b) _mm_cmplt_##t(a, b)
#define NUMR_SSE_CMP__CMP_LE_OQ(t, a, b) _mm_cmple_##t(a, b)
#define NUMR_SSE_CMP__CMP_GT_OQ(t, a, b) _mm_cmpgt_##t(a, b)
#define NUMR_SSE_CMP__CMP_GE_OQ(t, a, b) _mm_cmpge_##t(a, b)
#define NUMR_SSE_CMP__CMP_EQ_OQ(t, a, b) _mm_cmpeq_##t(a, b)
#define NUMR_SSE_CMP__CMP_NEQ_UQ(t, a, b) _mm_cmpneq_##t(a, b)
inline vf_raw blend(MaskF m, vf_raw a, vf_raw b) { return vf_raw(_mm_blendv_ps(__m128(b), __m128(a), m.m)); }
inline vd_raw blend(MaskD m, vd_raw a, vd_raw b) { return vd_raw(_mm_blendv_pd(__m128d(b), __m128d(a), m.m)); }
#endif
// Whether a mask holds in every lane, or in some lane: the early exits of math/control.h.
#if NUMR_ISA_LEVEL >= 3
inline bool all_lanes(MaskF m) { return m.m == __mmask16(0xffff); }
inline bool all_lanes(MaskD m) { return m.m == __mmask8(0xff); }
inline bool any_lane(MaskF m) { return m.m != 0; }
inline bool any_lane(MaskD m) { return m.m != 0; }
#elif NUMR_ISA_LEVEL == 2
inline bool all_lanes(MaskF m) { return _mm256_movemask_ps(m.m) == 0xff; }
inline bool all_lanes(MaskD m) { return _mm256_movemask_pd(m.m) == 0xf; }
inline bool any_lane(MaskF m) { return _mm256_movemask_ps(m.m) != 0; }
inline bool any_lane(MaskD m) { return _mm256_movemask_pd(m.m) != 0; }
#else
inline bool all_lanes(MaskF m) { return _mm_movemask_ps(m.m) == 0xf; }
inline bool all_lanes(MaskD m) { return _mm_movemask_pd(m.m) == 0x3; }
inline bool any_lane(MaskF m) { return _mm_movemask_ps(m.m) != 0; }
inline bool any_lane(MaskD m) { return _mm_movemask_pd(m.m) != 0; }
#endif
NUMR_CMP(cmp_lt, _CMP_LT_OQ)
NUMR_CMP(cmp_le, _CMP_LE_OQ)
NUMR_CMP(cmp_gt, _CMP_GT_OQ)
NUMR_CMP(cmp_ge, _CMP_GE_OQ)
NUMR_CMP(cmp_eq, _CMP_EQ_OQ)
NUMR_CMP(cmp_ne, _CMP_NEQ_UQ)
#undef NUMR_CMP

// Lanes of S with mask type M; arithmetic through GCC's vector extensions, comparisons and
// selects through the intrinsics above. kForBf16 marks VFH, whose exp differs.
template <class S, class R, class M, int W, bool kForBf16 = false>
struct Vec {
  using scalar = S;
  using Mask = M;
  static constexpr int width = W;
  R v;
  Vec() = default;
  Vec(R r) : v(r) {}
  Vec(double s) : v(R{} + S(s)) {}
  Vec(float s) : v(R{} + S(s)) {}
  Vec(int s) : v(R{} + S(s)) {}

  static Vec load(const S* p) {
    Vec r;
    std::memcpy(&r.v, p, sizeof(R));
    return r;
  }
  void store(S* p) const { std::memcpy(p, &v, sizeof(R)); }
  // Non-temporal store to a sizeof(R)-aligned address: for outputs larger than the caches,
  // it skips reading the destination line before writing it.
  void stream(S* p) const {
    if constexpr (sizeof(S) == 4 && sizeof(R) == 64) _mm512_stream_ps((float*)p, (__m512)v);
    else if constexpr (sizeof(S) == 8 && sizeof(R) == 64) _mm512_stream_pd((double*)p, (__m512d)v);
    else if constexpr (sizeof(S) == 4 && sizeof(R) == 32) _mm256_stream_ps((float*)p, (__m256)v);
    else if constexpr (sizeof(S) == 8 && sizeof(R) == 32) _mm256_stream_pd((double*)p, (__m256d)v);
    else if constexpr (sizeof(S) == 4) _mm_stream_ps((float*)p, (__m128)v);
    else _mm_stream_pd((double*)p, (__m128d)v);
  }

  friend Vec operator+(Vec a, Vec b) { return a.v + b.v; }
  friend Vec operator-(Vec a, Vec b) { return a.v - b.v; }
  friend Vec operator*(Vec a, Vec b) { return a.v * b.v; }
  friend Vec operator/(Vec a, Vec b) { return a.v / b.v; }
  friend Vec operator-(Vec a) { return -a.v; }
  Vec& operator+=(Vec b) { v += b.v; return *this; }
  Vec& operator*=(Vec b) { v *= b.v; return *this; }
  friend Mask operator<(Vec a, Vec b) { return cmp_lt(a.v, b.v); }
  friend Mask operator<=(Vec a, Vec b) { return cmp_le(a.v, b.v); }
  friend Mask operator>(Vec a, Vec b) { return cmp_gt(a.v, b.v); }
  friend Mask operator>=(Vec a, Vec b) { return cmp_ge(a.v, b.v); }
  friend Mask operator==(Vec a, Vec b) { return cmp_eq(a.v, b.v); }
  friend Mask operator!=(Vec a, Vec b) { return cmp_ne(a.v, b.v); }
  friend Vec select(Mask m, Vec a, Vec b) { return blend(m, a.v, b.v); }
  S lane(int i) const { return v[i]; }
};

using VF = Vec<float, vf_raw, MaskF, kWF>;
using VD = Vec<double, vd_raw, MaskD, kWD>;
using VFH = Vec<float, vf_raw, MaskF, kWF, true>;

// ---- horizontal reductions: log2(width) shuffle steps, not a lane-by-lane chain ----

// The raw vector x (W lanes) with its lanes rotated by K: lane i holds lane (i + K) mod W.
template <int K, int W, class R, int... I>
inline R rotate_raw_impl(R x, std::integer_sequence<int, I...>) {
  return __builtin_shufflevector(x, x, ((I + K) % W)...);
}
template <int K, int W, class R>
inline R rotate_raw(R x) {
  return rotate_raw_impl<K, W>(x, std::make_integer_sequence<int, W>{});
}

// The largest (kMax) or smallest lane by a plain comparison: the caller has ruled NaN out.
template <bool kMax, class V>
inline typename V::scalar extreme_lane(V x) {
  constexpr int W = V::width;
  const auto step = [](V a, V b) { return select(kMax ? (b > a) : (b < a), b, a); };
  if constexpr (W >= 16) x = step(x, V(rotate_raw<8, W>(x.v)));
  if constexpr (W >= 8) x = step(x, V(rotate_raw<4, W>(x.v)));
  if constexpr (W >= 4) x = step(x, V(rotate_raw<2, W>(x.v)));
  x = step(x, V(rotate_raw<1, W>(x.v)));
  return x.lane(0);
}

// Σ of W double lanes, added as a tree.
template <int W, class R>
inline double sum_raw_double(R d) {
  if constexpr (W >= 16) d += rotate_raw<8, W>(d);
  if constexpr (W >= 8) d += rotate_raw<4, W>(d);
  if constexpr (W >= 4) d += rotate_raw<2, W>(d);
  d += rotate_raw<1, W>(d);
  return d[0];
}
// Σ of the lanes in double (each float lane converted exactly).
typedef double vf_as_double_raw __attribute__((vector_size(kWF * 8)));
inline double sum_lanes_double(VF x) {
  return sum_raw_double<kWF>(__builtin_convertvector(x.v, vf_as_double_raw));
}
inline double sum_lanes_double(VD x) { return sum_raw_double<kWD>(x.v); }

// Primitive functions, found by argument-dependent lookup from the formulas.
// SLEEF's header declares each ISA's functions only when the compiler flags enable that
// ISA, so the ones used here are declared here (C linkage, the same symbols). They read
// nothing but their arguments, so they are declared const: the compiler may then compute
// a repeated call (exp(-x) in both halves of a gate's backward) once.
#define NUMR_VMATH1(name, sleef_name, acc)                                          \
  extern "C" SleefF NUMR_SLEEF_X(sleef_name, NUMR_FW, acc)(SleefF) __attribute__((const));         \
  extern "C" SleefD NUMR_SLEEF_X(sleef_name, NUMR_DW, acc)(SleefD) __attribute__((const));         \
  inline VF name(VF x) {                                                            \
    return VF(vf_raw(NUMR_SLEEF_X(sleef_name, NUMR_FW, acc)(SleefF(x.v))));         \
  }                                                                                 \
  inline VD name(VD x) {                                                            \
    return VD(vd_raw(NUMR_SLEEF_X(sleef_name, NUMR_DW, acc)(SleefD(x.v))));         \
  }                                                                                 \
  inline VFH name(VFH x) { return VFH(name(VF(x.v)).v); }
#define NUMR_VMATH2(name, sleef_name, acc)                                          \
  extern "C" SleefF NUMR_SLEEF_X(sleef_name, NUMR_FW, acc)(SleefF, SleefF) __attribute__((const)); \
  extern "C" SleefD NUMR_SLEEF_X(sleef_name, NUMR_DW, acc)(SleefD, SleefD) __attribute__((const)); \
  inline VF name(VF x, VF y) {                                                      \
    return VF(vf_raw(NUMR_SLEEF_X(sleef_name, NUMR_FW, acc)(SleefF(x.v), SleefF(y.v)))); \
  }                                                                                 \
  inline VD name(VD x, VD y) {                                                      \
    return VD(vd_raw(NUMR_SLEEF_X(sleef_name, NUMR_DW, acc)(SleefD(x.v), SleefD(y.v)))); \
  }                                                                                 \
  inline VFH name(VFH x, VFH y) { return VFH(name(VF(x.v), VF(y.v)).v); }
NUMR_VMATH1(cbrt, cbrt, _u10)
NUMR_VMATH1(exp_sleef, exp, _u10)
NUMR_VMATH1(exp2_sleef, exp2, _u10)
NUMR_VMATH1(expm1, expm1, _u10)
NUMR_VMATH1(log, log, _u10)
NUMR_VMATH1(log2, log2, _u10)
NUMR_VMATH1(log10, log10, _u10)
NUMR_VMATH1(log1p, log1p, _u10)
NUMR_VMATH1(sin, sin, _u10)
NUMR_VMATH1(cos, cos, _u10)
NUMR_VMATH1(tan, tan, _u10)
NUMR_VMATH1(asin, asin, _u10)
NUMR_VMATH1(acos, acos, _u10)
NUMR_VMATH1(atan, atan, _u10)
NUMR_VMATH1(sinh, sinh, _u10)
NUMR_VMATH1(cosh, cosh, _u10)
NUMR_VMATH1(tanh, tanh, _u35)  // 3.5 ULP: twice as fast as the 1-ULP one
NUMR_VMATH1(asinh, asinh, _u10)
NUMR_VMATH1(acosh, acosh, _u10)
NUMR_VMATH1(atanh, atanh, _u10)
NUMR_VMATH1(erf, erf, _u10)
NUMR_VMATH1(erfc, erfc, _u15)
NUMR_VMATH1(fabs, fabs, _)
NUMR_VMATH1(floor, floor, _)
NUMR_VMATH1(ceil, ceil, _)
NUMR_VMATH1(trunc, trunc, _)
NUMR_VMATH1(rint, rint, _)
NUMR_VMATH2(pow, pow, _u10)
NUMR_VMATH2(atan2, atan2, _u10)
#undef NUMR_VMATH1
// The hardware square root is correctly rounded and much faster than a library call.
inline VF sqrt(VF x) {
#if NUMR_ISA_LEVEL >= 3
  // The zero-masked form: GCC 12's unmasked one starts from an undefined register, which
  // -Wuninitialized flags where it is inlined at -O2 (the sanitizer build).
  return VF(vf_raw(_mm512_maskz_sqrt_ps(__mmask16(0xFFFF), SleefF(x.v))));
#elif NUMR_ISA_LEVEL == 2
  return VF(vf_raw(_mm256_sqrt_ps(SleefF(x.v))));
#else
  return VF(vf_raw(_mm_sqrt_ps(SleefF(x.v))));
#endif
}
inline VD sqrt(VD x) {
#if NUMR_ISA_LEVEL >= 3
  return VD(vd_raw(_mm512_sqrt_pd(SleefD(x.v))));
#elif NUMR_ISA_LEVEL == 2
  return VD(vd_raw(_mm256_sqrt_pd(SleefD(x.v))));
#else
  return VD(vd_raw(_mm_sqrt_pd(SleefD(x.v))));
#endif
}
inline VFH sqrt(VFH x) { return VFH(sqrt(VF(x.v)).v); }
#undef NUMR_VMATH2

// a * b + c rounded once (FMA instructions); with SSE4.2, which has none, rounded twice.
inline VF fma(VF a, VF b, VF c) {
#if NUMR_ISA_LEVEL >= 3
  return VF(vf_raw(_mm512_fmadd_ps(__m512(a.v), __m512(b.v), __m512(c.v))));
#elif NUMR_ISA_LEVEL == 2
  return VF(vf_raw(_mm256_fmadd_ps(__m256(a.v), __m256(b.v), __m256(c.v))));
#else
  return a * b + c;
#endif
}
inline VD fma(VD a, VD b, VD c) {
#if NUMR_ISA_LEVEL >= 3
  return VD(vd_raw(_mm512_fmadd_pd(__m512d(a.v), __m512d(b.v), __m512d(c.v))));
#elif NUMR_ISA_LEVEL == 2
  return VD(vd_raw(_mm256_fmadd_pd(__m256d(a.v), __m256d(b.v), __m256d(c.v))));
#else
  return a * b + c;
#endif
}
inline VFH fma(VFH a, VFH b, VFH c) { return VFH(fma(VF(a.v), VF(b.v), VF(c.v)).v); }

// Primitives of the device math libraries (math/device_libm.h, math/libm32/libm32.h), for
// the functions SLEEF lacks: 2^n for integral n in the normal exponent range, and
// floor(log2 |x|) of normal x, both from the exponent bits.
inline VF pow2i(VF n) {
  const vfm_raw b = (__builtin_convertvector(n.v, vfm_raw) + 127) << 23;
  vf_raw r;
  std::memcpy(&r, &b, sizeof r);
  return VF(r);
}
inline VD pow2i(VD n) {
  const vdm_raw b = (__builtin_convertvector(n.v, vdm_raw) + 1023) << 52;
  vd_raw r;
  std::memcpy(&r, &b, sizeof r);
  return VD(r);
}
inline VF ilogb_normal(VF x) {
  vfm_raw b;
  std::memcpy(&b, &x.v, sizeof b);
  return VF(__builtin_convertvector(((b >> 23) & 0xff) - 127, vf_raw));
}
inline VD ilogb_normal(VD x) {
  vdm_raw b;
  std::memcpy(&b, &x.v, sizeof b);
  return VD(__builtin_convertvector(((b >> 52) & 0x7ff) - 1023, vd_raw));
}

// exp and exp2 of float lanes, inlined (a library call costs more than the arithmetic, and
// every live vector is spilled around it): exp(x) = 2^n e^r with x = n ln2 + r, |r| <= ln2
// / 2 (ln2 in two parts); exp2(x) = 2^n e^r with r = (x - n) ln2 (x - n exact). e^r comes
// from a polynomial; results below the normal range are subnormals, correctly rounded
// once, and above it +inf; NaN stays NaN. Doubles keep SLEEF's.
// - VF: degree 6 (the Cephes expf coefficients, e^r = 1 + r + r^2 q(r), evaluated as
//   (q r + 1) r + 1 in two fmas), within 0.90 ULP of the true value over every float whose
//   result is normal, for exp and exp2 (1.26 and 1.27 ULP as q r^2 + (r + 1), one more
//   operation).
// - VFH, for results rounded to BF16 (8 significant bits), degree 4. With AVX-512
//   (exp2_reduced): 2^x = 2^n 2^f, n the nearest integer to x and f = x - n from vreduceps
//   (0 for ±inf, so that no clamp is needed), 2^f = 1 + f q(f) with q fitted for the least
//   maximum relative error on [-1/2, 1/2], 3.6e-6 (2^-18.1); exp(x) = 2^(x log2(e)), the
//   rounded product adding up to 3.9e-6 at the ends of the range. Over every float whose
//   result is normal, exp2 is within 2^-18.07 of the true value and exp within 2^-17.04.
//   Without AVX-512: e^r = 1 + r + r^2 q(r), 5.3e-6 (2^-17.5) on the interval, within
//   2^-17 with the float rounding. A BF16 result computed from either differs from the
//   correctly rounded one by at most 1 BF16 ULP, and only within 2^-17 of a rounding
//   midpoint. The lower degree, and vreduceps, take fewer operations per element, which
//   is most of the cost of BF16 activations.
//
// Clamps x to [lo, hi] (beyond them the result is 0 or +inf anyway); NaN stays.
inline VF clamp_keep_nan(VF x, VF lo, VF hi) {
#if NUMR_ISA_LEVEL >= 3
  // max/min return their second operand when one is NaN. (The zero-masked forms: GCC 12's
  // unmasked ones start from an undefined register.)
  constexpr __mmask16 kAll = 0xFFFF;
  return VF(vf_raw(_mm512_maskz_min_ps(kAll, __m512(hi.v),
                                       _mm512_maskz_max_ps(kAll, __m512(lo.v), __m512(x.v)))));
#else
  return select(x < lo, lo, select(x > hi, hi, x));  // NaN compares false: it stays
#endif
}
// x rounded to the nearest integer (ties to even), for |x| < 2^22.
inline VF round_int(VF x) {
#if NUMR_ISA_LEVEL >= 3
  return VF(vf_raw(_mm512_maskz_roundscale_ps(__mmask16(0xFFFF), __m512(x.v),
                                              _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)));
#else
  const VF magic(12582912.0f);  // 1.5 * 2^23: adding it rounds to an integer
  return (x + magic) - magic;
#endif
}
// 2^n e^r for |r| <= ln2 / 2 and integral n in [-151, 129].
template <int kDegree>
inline VF exp_finish(VF n, VF r) {
  VF p;
  if constexpr (kDegree == 6) {
    p = VF(1.9875691500e-4f) * r + VF(1.3981999507e-3f);
    p = p * r + VF(8.3334519073e-3f);
    p = p * r + VF(4.1665795894e-2f);
    p = p * r + VF(1.6666665459e-1f);
    p = p * r + VF(5.0000001201e-1f);
  } else {
    static_assert(kDegree == 4);
    p = VF(4.127774647e-2f) * r + VF(1.675351395e-1f);
    p = p * r + VF(5.000511603e-1f);
  }
  p = (p * r + VF(1.0f)) * r + VF(1.0f);  // two fmas: fewer operations, and more accurate
#if NUMR_ISA_LEVEL >= 3
  return VF(vf_raw(_mm512_maskz_scalef_ps(__mmask16(0xFFFF), __m512(p.v), __m512(n.v))));
#else
  // 2^n as two normal powers of two, n1 + n2 = n: p 2^n1 is exact, the second product
  // rounds once (into the subnormals, or to +inf, where the true value lies there).
  const vfm_raw ni = __builtin_convertvector(n.v, vfm_raw);
  const vfm_raw n1 = ni >> 1, n2 = ni - n1;
  vf_raw s1, s2;
  const vfm_raw b1 = (n1 + 127) << 23, b2 = (n2 + 127) << 23;
  std::memcpy(&s1, &b1, sizeof s1);
  std::memcpy(&s2, &b2, sizeof s2);
  return VF((p.v * s1) * s2);
#endif
}
template <int kDegree>
inline VF exp_poly(VF x) {
  x = clamp_keep_nan(x, VF(-104.0f), VF(89.0f));
  const VF n = round_int(x * VF(1.44269504088896341f));
  return exp_finish<kDegree>(n, (x - n * VF(0.693359375f)) - n * VF(-2.12194440e-4f));
}
template <int kDegree>
inline VF exp2_poly(VF x) {
  x = clamp_keep_nan(x, VF(-151.0f), VF(129.0f));
  const VF n = round_int(x);
  return exp_finish<kDegree>(n, (x - n) * VF(0.693147180559945309f));
}
inline VF exp(VF x) { return exp_poly<6>(x); }
#if NUMR_ISA_LEVEL >= 3
inline VF exp2_reduced(VF x) {
  constexpr __mmask16 kAll = 0xFFFF;
  constexpr int kNear = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
  const VF n(vf_raw(_mm512_maskz_roundscale_ps(kAll, __m512(x.v), kNear)));
  const VF f(vf_raw(_mm512_maskz_reduce_ps(kAll, __m512(x.v), kNear)));
  VF q = VF(9.782912210e-3f) * f + VF(5.597688258e-2f);
  q = q * f + VF(2.402071059e-1f);
  q = q * f + VF(6.931136250e-1f);
  return VF(vf_raw(_mm512_maskz_scalef_ps(kAll, __m512((q * f + VF(1.0f)).v), __m512(n.v))));
}
inline VFH exp(VFH x) { return VFH(exp2_reduced(VF(x.v) * VF(1.44269504088896341f)).v); }
inline VFH exp2(VFH x) { return VFH(exp2_reduced(VF(x.v)).v); }
#else
inline VFH exp(VFH x) { return VFH(exp_poly<4>(VF(x.v)).v); }
inline VFH exp2(VFH x) { return VFH(exp2_poly<4>(VF(x.v)).v); }
#endif
inline VF exp2(VF x) { return exp2_poly<6>(x); }
inline VD exp2(VD x) { return exp2_sleef(x); }
inline VD exp(VD x) { return exp_sleef(x); }

}  // namespace numr::cpu::NUMR_ISA
