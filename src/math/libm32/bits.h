// NaN and infinity tests on the IEEE binary32 representation, for targets where x != x may
// not be trusted (a shader compiler may assume no NaN). T must offer as_bits(T), its lanes'
// 32 bits as an unsigned integer type U with & and the comparisons > == < giving T's mask;
// scalar_float.h provides it for float.
#pragma once

#include <cstdint>

#include "math/libm32/scalar_float.h"
#include "math/namespace.h"

namespace numr::math::inline NUMR_MATH_ISA::libm32 {

inline constexpr std::uint32_t kAbsMask = 0x7fffffffu, kInfBits = 0x7f800000u;

template <class T>
auto isnan_bits(T x) {
  return (as_bits(x) & kAbsMask) > kInfBits;
}
template <class T>
auto isinf_bits(T x) {
  return (as_bits(x) & kAbsMask) == kInfBits;
}
template <class T>
auto isfinite_bits(T x) {
  return (as_bits(x) & kAbsMask) < kInfBits;
}

}  // namespace numr::math::inline NUMR_MATH_ISA::libm32
