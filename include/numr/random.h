// Counter-based random numbers (Philox4x32-10). Element i of a draw depends only on
// (seed, the generator's offset before the draw, i), so every backend produces the same
// numbers for the same seed, whatever its parallelism. Element i of a draw with offset o
// takes the words r0..r3 = philox4x32(o + i, seed) and becomes:
//   uniform: (r0 >> 8) / 2^24, exact in F64/F32; F16/BF16 take the largest value <= it,
//            so the result stays below 1
//   normal:  u1 = ((r0 >> 8) + 1) / 2^24, u2 = (r1 >> 8) / 2^24,
//            z = sqrt(-2 ln u1) cos(2 pi u2) in double with numr's own log and cos
//            (src/math/random_normal.h), rounded to nearest in the dtype: the same bits
//            on every backend
//   integer: low + ((r0 | r1 << 32) mod (high - low)) in 64-bit arithmetic
// A draw of n elements advances the generator's offset by n.
#pragma once

#include <cstdint>

namespace numr {

class Generator {
 public:
  explicit Generator(uint64_t seed = 0) : seed_(seed) {}
  uint64_t seed() const { return seed_; }
  // Counter of the next draw; each draw of n elements advances it by n.
  uint64_t offset() const { return offset_; }
  void set_offset(uint64_t offset) { offset_ = offset; }
  uint64_t advance(uint64_t n) {
    const uint64_t start = offset_;
    offset_ += n;
    return start;
  }

 private:
  uint64_t seed_;
  uint64_t offset_ = 0;
};

// Philox4x32 with 10 rounds on counter (lo, hi, 0, 0) and key (seed lo, seed hi).
struct Philox4 {
  uint32_t v[4];
};
// The ten Philox4x32 rounds on the block (c0, c1, c2, c3) under the key (k0, k1).
constexpr void philox4x32_rounds(uint32_t& c0, uint32_t& c1, uint32_t& c2, uint32_t& c3,
                                 uint32_t k0, uint32_t k1) {
  for (int r = 0; r < 10; ++r) {
    const uint64_t p0 = uint64_t(0xD2511F53u) * c0;
    const uint64_t p1 = uint64_t(0xCD9E8D57u) * c2;
    const uint32_t n0 = uint32_t(p1 >> 32) ^ c1 ^ k0;
    const uint32_t n2 = uint32_t(p0 >> 32) ^ c3 ^ k1;
    c1 = uint32_t(p1);
    c3 = uint32_t(p0);
    c0 = n0;
    c2 = n2;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
}
constexpr Philox4 philox4x32(uint64_t counter, uint64_t seed) {
  uint32_t c0 = uint32_t(counter), c1 = uint32_t(counter >> 32), c2 = 0, c3 = 0;
  philox4x32_rounds(c0, c1, c2, c3, uint32_t(seed), uint32_t(seed >> 32));
  return {{c0, c1, c2, c3}};
}

// Uniform in [0, 1) from 24 random bits.
constexpr double philox_uniform(uint32_t bits) { return double(bits >> 8) * (1.0 / 16777216.0); }

}  // namespace numr
