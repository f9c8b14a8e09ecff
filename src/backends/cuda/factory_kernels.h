// Kernels for sequences (arange, linspace) and random numbers, written to give exactly the
// CPU backend's values (see core/backend.h and numr/random.h):
// - sequence: start + i * step in double, the product rounded before the add (mul.rn then
//   add.rn: never fused), or end - (n-1-i) * step for the symmetric upper half; then
//   converted to the dtype by element_io's rules.
// - random: Philox4x32-10 on counter offset + i. Uniform is exact (F16/BF16 round toward
//   zero, i.e. down, from the exact f32 value). Integer is low + (r0 | r1 << 32) mod range
//   in 64-bit arithmetic. Normal is Box-Muller in double through the device math library's
//   log and cos, about 1 ulp like the CPU's std::log / std::cos but not always the same last
//   bit: F64 normals may differ from the CPU's in the last bits, and the rounded F32/F16/BF16
//   ones differ (by one unit in the last place) only when the double lies that close to a
//   rounding boundary.
#pragma once

#include <string>

#include "backends/cuda/elementwise_map.h"
#include "core/backend.h"

namespace numr::cuda {

// Parameters after the common ones: start, step, end (f64), half = n / 2 and last = n - 1
// (u64; used by the symmetric form).
struct SequenceConfig {
  DType out = DType::F32;
  bool symmetric = false;
  MapShape shape;
};
std::string sequence_key(const SequenceConfig& c);
GeneratedKernel generate_sequence(const SequenceConfig& c, const ptx::Target& target);

// Parameters after the common ones: seed, offset (u64), then for Integer low (s64) and
// range = high - low (u64).
struct RandomConfig {
  DType out = DType::F32;
  RandomKind kind = RandomKind::Uniform;
  MapShape shape;
};
std::string random_key(const RandomConfig& c);
GeneratedKernel generate_random(const RandomConfig& c, const ptx::Target& target);

}  // namespace numr::cuda
