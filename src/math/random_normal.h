// The Box–Muller step of numr's normal random numbers (include/numr/random.h), written once
// over a number type T. Its log and cos are numr's own (device_libm.h), built only from
// correctly rounded operations and fused multiply-adds, so the CPU, the GPU and the tests'
// specification compute the same bits for the same seed.
#pragma once

#include "math/device_libm.h"
#include "math/namespace.h"

NUMR_MATH_EXACT_BEGIN

namespace numr::math::inline NUMR_MATH_ISA {

// z = sqrt(-2 ln u1) cos(2 pi u2), for u1 in (0, 1] and u2 in [0, 1).
template <class T>
T box_muller(T u1, T u2) {
  const T two_pi(6.283185307179586476925286766559);
  return sqrt(T(-2.0) * libm::log(u1)) * libm::cos(two_pi * u2);
}

}  // namespace numr::math::inline NUMR_MATH_ISA

NUMR_MATH_EXACT_END
