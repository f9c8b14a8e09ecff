// Sequence (arange, linspace) and random kernels.
//
// Random numbers are specified exactly, so that every backend draws the same values for
// the same (seed, offset). Element i of a draw uses the Philox4x32-10 block
//   r0, r1, r2, r3 = philox4x32(counter = offset + i, seed)            (random.h)
// and becomes:
//   Uniform  u = (r0 >> 8) / 2^24, in [0, 1). F64 and F32 hold u exactly. F16 and BF16
//            take the largest representable value <= u (rounding toward zero), so a draw
//            never rounds up to 1.0.
//   Normal   Box-Muller in double: u1 = ((r0 >> 8) + 1) / 2^24 (in (0, 1], so the log is
//            finite), u2 = (r1 >> 8) / 2^24, z = sqrt(-2 ln u1) * cos(2 pi u2), then
//            rounded to nearest (even) in the dtype.
//   Integer  low + ((r0 | r1 << 32) mod (high - low)), the sum and the range taken in
//            64-bit two's complement; then converted to the dtype.
// r2 and r3 are unused, so a draw of n elements consumes exactly n counters.

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include "backends/cpu/kernels/kernels.h"
#include "core/thread_pool.h"
#include "numr/random.h"

#include "backends/cpu/kernels/isa.h"  // after every system header

#include "backends/cpu/kernels/convert.h"
#include "math/random_normal.h"

namespace numr::cpu::NUMR_ISA {
namespace {

// Values are produced into a small buffer, then converted and stored in one pass.
constexpr int64_t kBlock = 512;
constexpr int64_t kGrain = 16384;

char* element_ptr(const TensorRef& r, int64_t i) {
  return static_cast<char*>(r.base) + (r.offset + i) * int64_t(dtype_size(r.dtype));
}

// The largest value with `mant` stored mantissa bits (and minimum exponent emin) that is
// <= u, for u in [0, 1).
double truncate_to_format(double u, int mant, int emin) {
  if (u == 0.0) return 0.0;
  int e = std::ilogb(u);
  if (e < emin) e = emin;
  const double scale = std::ldexp(1.0, mant - e);
  return std::floor(u * scale) / scale;
}

double uniform_value(const Philox4& r, DType t) {
  const double u = philox_uniform(r.v[0]);
  if (t == DType::F16) return truncate_to_format(u, 10, -14);
  if (t == DType::BF16) return truncate_to_format(u, 7, -126);
  return u;
}

double normal_value(const Philox4& r) {
  const double u1 = (double(r.v[0] >> 8) + 1.0) * (1.0 / 16777216.0);
  const double u2 = philox_uniform(r.v[1]);
  return math::box_muller(u1, u2);
}

// a * b rounded to double before any later add: the sequence formulas are specified
// without fused multiply-adds, which the compiler would otherwise form where the ISA has
// them, changing results between instruction sets and backends.
double mul_rounded(double a, double b) {
  volatile double p = a * b;
  return p;
}

}  // namespace

void sequence(const SequenceCall& call) {
  const int64_t n = call.out.numel();
  ThreadPool::instance().parallel_for(n, kGrain, [&](int64_t b, int64_t e) {
    double buf[kBlock];
    for (int64_t s = b; s < e; s += kBlock) {
      const int64_t len = std::min(kBlock, e - s);
      for (int64_t k = 0; k < len; ++k) {
        const int64_t i = s + k;
        // The symmetric form makes the last element exactly `end`.
        buf[k] = call.symmetric && i >= n / 2 ? call.end - mul_rounded(double(n - 1 - i), call.step)
                                              : call.start + mul_rounded(double(i), call.step);
      }
      scatter_row<double>(buf, len, element_ptr(call.out, s), call.out.dtype);
    }
  });
}

void random(const RandomCall& call) {
  const int64_t n = call.out.numel();
  const DType t = call.out.dtype;
  ThreadPool::instance().parallel_for(n, kGrain, [&](int64_t b, int64_t e) {
    for (int64_t s = b; s < e; s += kBlock) {
      const int64_t len = std::min(kBlock, e - s);
      char* dst = element_ptr(call.out, s);
      if (call.kind == RandomKind::Integer) {
        // Unsigned arithmetic: high - low may exceed INT64_MAX.
        const uint64_t range = uint64_t(call.high) - uint64_t(call.low);
        int64_t buf[kBlock];
        for (int64_t k = 0; k < len; ++k) {
          const Philox4 r = philox4x32(call.offset + uint64_t(s + k), call.seed);
          const uint64_t bits = uint64_t(r.v[0]) | (uint64_t(r.v[1]) << 32);
          buf[k] = int64_t(uint64_t(call.low) + bits % range);
        }
        scatter_row<int64_t>(buf, len, dst, t);
      } else {
        double buf[kBlock];
        for (int64_t k = 0; k < len; ++k) {
          const Philox4 r = philox4x32(call.offset + uint64_t(s + k), call.seed);
          buf[k] = call.kind == RandomKind::Uniform ? uniform_value(r, t) : normal_value(r);
        }
        scatter_row<double>(buf, len, dst, t);
      }
    }
  });
}

}  // namespace numr::cpu::NUMR_ISA

#pragma GCC pop_options
