// The primitive functions of the single-precision library (libm32.h) for T = float, so that
// its templates instantiated with float can be tested against std::. They live in the
// libm32 namespace, where the templates find them by ordinary lookup; vector and expression
// types provide the same names through argument-dependent lookup.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>

#include "math/namespace.h"

namespace numr::math::inline NUMR_MATH_ISA::libm32 {

inline float select(bool c, float a, float b) { return c ? a : b; }
inline float fabs(float x) { return std::fabs(x); }
inline float sqrt(float x) { return std::sqrt(x); }
inline float floor(float x) { return std::floor(x); }
inline float ceil(float x) { return std::ceil(x); }
inline float trunc(float x) { return std::trunc(x); }
inline float rint(float x) { return std::rint(x); }
inline float fma(float a, float b, float c) { return std::fma(a, b, c); }
// 2^n for integral n in [-126, 127], built from the exponent bits.
inline float pow2i(float n) {
  return std::bit_cast<float>(static_cast<std::uint32_t>(static_cast<std::int32_t>(n) + 127) << 23);
}
// floor(log2 |x|) for normal finite nonzero x, read from the exponent bits.
inline float ilogb_normal(float x) {
  return static_cast<float>(
      static_cast<std::int32_t>((std::bit_cast<std::uint32_t>(x) >> 23) & 0xff) - 127);
}
// The IEEE representation, for the bit tests of bits.h.
inline std::uint32_t as_bits(float x) { return std::bit_cast<std::uint32_t>(x); }

}  // namespace numr::math::inline NUMR_MATH_ISA::libm32
