// A fast exp for float lanes, for kernels whose arithmetic is mostly exp (softmax,
// logsumexp): Cody-Waite reduction by ln 2 and a degree-6 polynomial (the Cephes expf
// coefficients), within 2 ULP, inlined where a library call would cost more than the
// polynomial. Below -87.3 the result is 0 (the true value is a float subnormal, under
// every tolerance); NaN stays NaN. Doubles keep the accurate exp.
#pragma once

#ifndef NUMR_ISA_ACTIVE
#error "include backends/cpu/kernels/isa.h (after all system headers) first"
#endif

#include "backends/cpu/kernels/vec.h"

namespace numr::cpu::NUMR_ISA {

__attribute__((always_inline)) inline VF fast_exp(VF x) {
  using I = vfm_raw;
  const VF lo(-87.33654f), hi(88.0f);  // hi keeps 2^n finite
  const auto under = x < lo;
  x = select(x > hi, hi, x);
  x = select(under, lo, x);
  const VF magic(12582912.0f);  // 1.5 * 2^23: adding it rounds to an integer
  const VF t = x * VF(1.44269504088896341f) + magic;
  const VF n = t - magic;
  I ni;
  std::memcpy(&ni, &t.v, sizeof ni);
  const I mi = ni - 0x4B400000;  // n as an integer: t's bits less magic's bits
  VF r = x - n * VF(0.693359375f);
  r = r - n * VF(-2.12194440e-4f);
  VF p(1.9875691500e-4f);
  p = p * r + VF(1.3981999507e-3f);
  p = p * r + VF(8.3334519073e-3f);
  p = p * r + VF(4.1665795894e-2f);
  p = p * r + VF(1.6666665459e-1f);
  p = p * r + VF(5.0000001201e-1f);
  p = p * (r * r) + r + VF(1.0f);
  const I bits = (mi + 127) << 23;
  VF scale;
  std::memcpy(&scale.v, &bits, sizeof bits);
  return select(under, VF(0.0f), p * scale);
}
inline VD fast_exp(VD x) { return exp(x); }  // doubles keep the accurate one

}  // namespace numr::cpu::NUMR_ISA
