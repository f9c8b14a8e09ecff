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
#include "core/random_values.h"
#include "core/thread_pool.h"
#include "numr/random.h"

#include "backends/cpu/kernels/isa.h"  // after every system header

#include "backends/cpu/kernels/convert.h"
#include "backends/cpu/kernels/vec.h"
#include "math/random_normal.h"

namespace numr::cpu::NUMR_ISA {
namespace {

// Values are produced into a small buffer, then converted and stored in one pass.
constexpr int64_t kBlock = 512;
constexpr int64_t kGrain = 16384;

char* element_ptr(const TensorRef& r, int64_t i) {
  return static_cast<char*>(r.base) + (r.offset + i) * int64_t(dtype_size(r.dtype));
}

// Box-Muller's u1, in (0, 1] so that its log is finite.
double normal_u1(uint32_t bits) { return (double(bits >> 8) + 1.0) * (1.0 / 16777216.0); }

// Normal values of words w0, w1 into out, kWD lanes at a time (the same bits as the scalar
// formula: the library uses only correctly rounded operations and fused multiply-adds), with
// AVX2 or AVX-512; SSE4.2 has no fused multiply-add, so its lanes would round twice.
void normal_values(const uint32_t* w0, const uint32_t* w1, int64_t len, double* out) {
  int64_t k = 0;
  for (; NUMR_ISA_LEVEL >= 2 && k + kWD <= len; k += kWD) {
    double u1[kWD], u2[kWD];
    for (int j = 0; j < kWD; ++j) {
      u1[j] = normal_u1(w0[k + j]);
      u2[j] = philox_uniform(w1[k + j]);
    }
    math::box_muller(VD::load(u1), VD::load(u2)).store(out + k);
  }
  for (; k < len; ++k) out[k] = math::box_muller(normal_u1(w0[k]), philox_uniform(w1[k]));
}

// Words 0 and 1 of the Philox blocks of counters base .. base + len - 1 (philox4x32's
// rounds, written over arrays of lanes so that the compiler runs them in vector registers).
void philox_words(uint64_t base, int64_t len, uint64_t seed, uint32_t* w0, uint32_t* w1) {
  for (int64_t k = 0; k < len; ++k) {
    const uint64_t counter = base + uint64_t(k);
    uint32_t c0 = uint32_t(counter), c1 = uint32_t(counter >> 32), c2 = 0, c3 = 0;
    philox4x32_rounds(c0, c1, c2, c3, uint32_t(seed), uint32_t(seed >> 32));
    w0[k] = c0;
    w1[k] = c1;
  }
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
    uint32_t w0[kBlock], w1[kBlock];
    for (int64_t s = b; s < e; s += kBlock) {
      const int64_t len = std::min(kBlock, e - s);
      char* dst = element_ptr(call.out, s);
      philox_words(call.offset + uint64_t(s), len, call.seed, w0, w1);
      if (call.kind == RandomKind::Integer) {
        // Unsigned arithmetic: high - low may exceed INT64_MAX.
        const uint64_t range = uint64_t(call.high) - uint64_t(call.low);
        int64_t buf[kBlock];
        for (int64_t k = 0; k < len; ++k) {
          const uint64_t bits = uint64_t(w0[k]) | (uint64_t(w1[k]) << 32);
          buf[k] = int64_t(uint64_t(call.low) + bits % range);
        }
        scatter_row<int64_t>(buf, len, dst, t);
      } else if (call.kind == RandomKind::Uniform && (t == DType::F32 || t == DType::F64)) {
        double buf[kBlock];  // exact in both: 24 bits
        for (int64_t k = 0; k < len; ++k) buf[k] = philox_uniform(w0[k]);
        scatter_row<double>(buf, len, dst, t);
      } else if (call.kind == RandomKind::Uniform) {
        double buf[kBlock];
        for (int64_t k = 0; k < len; ++k) buf[k] = uniform_value(w0[k], t);
        scatter_row<double>(buf, len, dst, t);
      } else {
        double buf[kBlock];
        normal_values(w0, w1, len, buf);
        scatter_row<double>(buf, len, dst, t);
      }
    }
  });
}

}  // namespace numr::cpu::NUMR_ISA

#pragma GCC pop_options
