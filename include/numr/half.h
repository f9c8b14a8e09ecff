// 16-bit floating-point storage types. Conversions round to nearest, ties to even, and
// keep NaN, ±Inf and subnormals. Rounding from double is direct (no double rounding
// through float).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

namespace numr {

namespace detail {

// Rounds x to a binary format with `mant` stored mantissa bits and exponent bias `bias`
// (IEEE layout: sign, exponent, mantissa) and returns its bits.
inline uint16_t round_to_small_float(double x, int mant, int exp_bits) {
  const int bias = (1 << (exp_bits - 1)) - 1;
  const uint16_t sign = std::signbit(x) ? uint16_t(1u << (mant + exp_bits)) : uint16_t(0);
  const uint16_t exp_all = uint16_t(((1u << exp_bits) - 1) << mant);
  if (std::isnan(x)) return uint16_t(sign | exp_all | (1u << (mant - 1)));
  const double a = std::fabs(x);
  if (std::isinf(a)) return uint16_t(sign | exp_all);
  if (a == 0.0) return sign;
  const int emin = 1 - bias;
  int e = std::ilogb(a);
  if (e < emin) {  // subnormal (or rounds up to the smallest normal: q == 2^mant)
    const double q = std::nearbyint(std::ldexp(a, mant - emin));
    return uint16_t(sign | uint16_t(q));
  }
  double q = std::nearbyint(std::ldexp(a, mant - e));
  if (q == std::ldexp(1.0, mant + 1)) {
    q = std::ldexp(1.0, mant);
    ++e;
  }
  if (e > bias) return uint16_t(sign | exp_all);
  return uint16_t(sign | uint16_t((e + bias) << mant) | uint16_t(q - std::ldexp(1.0, mant)));
}

inline float f16_bits_to_float(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1Fu;
  const uint32_t man = h & 0x3FFu;
  uint32_t bits;
  if (exp == 0x1F) {
    bits = sign | 0x7F800000u | (man << 13);
  } else if (exp != 0) {
    bits = sign | ((exp + 112u) << 23) | (man << 13);
  } else {  // zero or subnormal: man * 2^-24, exact in float
    float v = std::ldexp(float(man), -24);
    std::memcpy(&bits, &v, 4);
    bits |= sign;
  }
  float out;
  std::memcpy(&out, &bits, 4);
  return out;
}

inline float bf16_bits_to_float(uint16_t b) {
  const uint32_t bits = uint32_t(b) << 16;
  float out;
  std::memcpy(&out, &bits, 4);
  return out;
}

}  // namespace detail

// IEEE 754 binary16.
struct f16 {
  uint16_t bits = 0;
  f16() = default;
  explicit f16(double x) : bits(detail::round_to_small_float(x, 10, 5)) {}
  explicit f16(float x) : f16(double(x)) {}
  static f16 from_bits(uint16_t b) {
    f16 h;
    h.bits = b;
    return h;
  }
  explicit operator float() const { return detail::f16_bits_to_float(bits); }
  explicit operator double() const { return double(float(*this)); }
};

// bfloat16: the upper half of an IEEE binary32.
struct bf16 {
  uint16_t bits = 0;
  bf16() = default;
  explicit bf16(double x) : bits(detail::round_to_small_float(x, 7, 8)) {}
  explicit bf16(float x) : bf16(double(x)) {}
  static bf16 from_bits(uint16_t b) {
    bf16 h;
    h.bits = b;
    return h;
  }
  explicit operator float() const { return detail::bf16_bits_to_float(bits); }
  explicit operator double() const { return double(float(*this)); }
};

}  // namespace numr
