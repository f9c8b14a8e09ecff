// How a length is split into passes, and when the chirp-z route is cheaper.
#pragma once

#include <cstdint>
#include <vector>

namespace numr::cpu::fft {

// The radices of the passes for n: 4s, a 2, 3s, 5s, then the other primes ascending.
std::vector<int64_t> radices(int64_t n);

// A rough cost (in units of one radix-2 pass per element) of the mixed-radix passes.
double mixed_radix_cost(int64_t n);

// The smallest m >= n whose prime factors are 2, 3 and 5.
int64_t next_smooth(int64_t n);

// Whether a transform of length n should use Bluestein's chirp-z algorithm: some prime
// factor is beyond the odd butterflies' reach, or the passes would cost more than three
// transforms of the padded length.
bool use_bluestein(int64_t n);

}  // namespace numr::cpu::fft
