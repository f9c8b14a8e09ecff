// The uniform draw of one Philox word in a dtype, as every backend specifies it
// (src/backends/cpu/kernels/factory.cpp has the whole specification).
#pragma once

#include <cmath>
#include <cstdint>

#include "numr/dtype.h"
#include "numr/random.h"

namespace numr {

// The largest value with `mant` stored mantissa bits (and minimum exponent emin) that is
// <= u, for u in [0, 1).
inline double truncate_to_format(double u, int mant, int emin) {
  if (u == 0.0) return 0.0;
  int e = std::ilogb(u);
  if (e < emin) e = emin;
  const double scale = std::ldexp(1.0, mant - e);
  return std::floor(u * scale) / scale;
}

// u = (bits >> 8) / 2^24; F16 and BF16 round it toward zero, so a draw never becomes 1.
inline double uniform_value(uint32_t bits, DType t) {
  const double u = philox_uniform(bits);
  if (t == DType::F16) return truncate_to_format(u, 10, -14);
  if (t == DType::BF16) return truncate_to_format(u, 7, -126);
  return u;
}

}  // namespace numr
