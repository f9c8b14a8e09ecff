// SIMD number types for the CPU kernels: VF (float lanes) and VD (double lanes), with
// masks, arithmetic operators and the primitive functions the formulas in src/math call
// (from SLEEF, 1-ULP variants). Instantiating a formula with VF or VD gives the kernel.
#pragma once

#include <immintrin.h>
#include <sleef.h>

#include <cstdint>
#include <cstring>

#ifndef NUMR_ISA_ACTIVE
#error "include backends/cpu/kernels/isa.h (after all system headers) first"
#endif

namespace numr::cpu::NUMR_ISA {

#if defined(__AVX512F__)
inline constexpr int kWF = 16, kWD = 8;
#define NUMR_SLEEF(fn, kind, acc) Sleef_##fn##kind##acc##avx512f
#define NUMR_FW f16
#define NUMR_DW d8
#elif defined(__AVX2__)
inline constexpr int kWF = 8, kWD = 4;
#define NUMR_SLEEF(fn, kind, acc) Sleef_##fn##kind##acc##avx2
#define NUMR_FW f8
#define NUMR_DW d4
#else
inline constexpr int kWF = 4, kWD = 2;
#define NUMR_SLEEF(fn, kind, acc) Sleef_##fn##kind##acc##sse4
#define NUMR_FW f4
#define NUMR_DW d2
#endif
#define NUMR_SLEEF_X(fn, kind, acc) NUMR_SLEEF(fn, kind, acc)

typedef float vf_raw __attribute__((vector_size(kWF * 4)));
typedef int32_t vfm_raw __attribute__((vector_size(kWF * 4)));
typedef double vd_raw __attribute__((vector_size(kWD * 8)));
typedef int64_t vdm_raw __attribute__((vector_size(kWD * 8)));

// Lanes of S with mask type M; the operators of GCC's vector extensions underneath.
template <class S, class R, class MR, int W>
struct Vec {
  using scalar = S;
  static constexpr int width = W;
  struct Mask {
    MR m;
    friend Mask operator&(Mask a, Mask b) { return {a.m & b.m}; }
    friend Mask operator|(Mask a, Mask b) { return {a.m | b.m}; }
    friend Mask operator^(Mask a, Mask b) { return {a.m ^ b.m}; }
    friend Mask operator!(Mask a) { return {~a.m}; }
  };
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

  friend Vec operator+(Vec a, Vec b) { return a.v + b.v; }
  friend Vec operator-(Vec a, Vec b) { return a.v - b.v; }
  friend Vec operator*(Vec a, Vec b) { return a.v * b.v; }
  friend Vec operator/(Vec a, Vec b) { return a.v / b.v; }
  friend Vec operator-(Vec a) { return -a.v; }
  Vec& operator+=(Vec b) { v += b.v; return *this; }
  Vec& operator*=(Vec b) { v *= b.v; return *this; }
  friend Mask operator<(Vec a, Vec b) { return {a.v < b.v}; }
  friend Mask operator<=(Vec a, Vec b) { return {a.v <= b.v}; }
  friend Mask operator>(Vec a, Vec b) { return {a.v > b.v}; }
  friend Mask operator>=(Vec a, Vec b) { return {a.v >= b.v}; }
  friend Mask operator==(Vec a, Vec b) { return {a.v == b.v}; }
  friend Mask operator!=(Vec a, Vec b) { return {a.v != b.v}; }
  friend Vec select(Mask m, Vec a, Vec b) { return m.m ? a.v : b.v; }
  S lane(int i) const { return v[i]; }
};

using VF = Vec<float, vf_raw, vfm_raw, kWF>;
using VD = Vec<double, vd_raw, vdm_raw, kWD>;

// Primitive functions, found by argument-dependent lookup from the formulas.
#define NUMR_VMATH1(name, sleef_name, acc)                                              \
  inline VF name(VF x) { return VF(vf_raw(NUMR_SLEEF_X(sleef_name, NUMR_FW, acc)(x.v))); } \
  inline VD name(VD x) { return VD(vd_raw(NUMR_SLEEF_X(sleef_name, NUMR_DW, acc)(x.v))); }
#define NUMR_VMATH2(name, sleef_name, acc)                                              \
  inline VF name(VF x, VF y) {                                                          \
    return VF(vf_raw(NUMR_SLEEF_X(sleef_name, NUMR_FW, acc)(x.v, y.v)));                \
  }                                                                                     \
  inline VD name(VD x, VD y) {                                                          \
    return VD(vd_raw(NUMR_SLEEF_X(sleef_name, NUMR_DW, acc)(x.v, y.v)));                \
  }
NUMR_VMATH1(sqrt, sqrt, _u05)
NUMR_VMATH1(cbrt, cbrt, _u10)
NUMR_VMATH1(exp, exp, _u10)
NUMR_VMATH1(exp2, exp2, _u10)
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
NUMR_VMATH1(fabs, fabs, _)
NUMR_VMATH1(floor, floor, _)
NUMR_VMATH1(ceil, ceil, _)
NUMR_VMATH1(trunc, trunc, _)
NUMR_VMATH1(rint, rint, _)
NUMR_VMATH2(pow, pow, _u10)
NUMR_VMATH2(atan2, atan2, _u10)
#undef NUMR_VMATH1
#undef NUMR_VMATH2

}  // namespace numr::cpu::NUMR_ISA
