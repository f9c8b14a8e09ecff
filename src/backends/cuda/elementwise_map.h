// The generator behind every one-element-in, one-element-out kernel of the CUDA backend
// (elementwise ops, copies, fills, sequences, random numbers): a "map" over the elements
// of up to two outputs, reading up to three inputs of any storage dtype.
//
// Two layouts:
// - Contiguous: every operand is dense (or, for an input, one element read by all threads:
//   "uniform"). A grid-stride loop where each step handles `vec` consecutive elements with
//   16-byte (or narrower) vector loads and stores, then a scalar loop over the last
//   n mod vec elements. vec = 1 is the plain scalar loop (pointers not aligned for vectors).
//   The host launches a thread per step (one_pass_blocks), so the loops rarely repeat.
// - Strided: `rank` dims (after the host merged what it could), the shape and each
//   operand's strides passed as by-value parameter arrays; each element's linear index is
//   decomposed with 32-bit division when the tensor has fewer than 2^31 elements (`wide`
//   false) and 64-bit otherwise. Strides may be zero or negative.
//
// Kernel parameters, in order: the output pointers, the input pointers, n (u64, the element
// count), then for Strided the shape (u32 or u64 [rank]) and one s64 [rank] stride array
// per operand (outputs first), then whatever the spec's setup declares. Pointers point at
// the operand's first element (offset applied by the host).
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "backends/cuda/module.h"
#include "codegen/ptx/builder.h"
#include "numr/dtype.h"

namespace numr::cuda {

inline constexpr int kMapMaxRank = 16;  // dims left after merging, as on the CPU
inline constexpr int kMapMaxOutputs = 2;
inline constexpr int kMapMaxInputs = 3;

enum class MapLayout : uint8_t { Contiguous, Strided };

// The layout half of a map kernel's configuration.
struct MapShape {
  MapLayout layout = MapLayout::Contiguous;
  int vec = 1;           // Contiguous: elements per step, a power of two <= 16
  uint32_t uniform = 0;  // Contiguous: bit k set when input k is a single element
  int rank = 1;          // Strided: 1..kMapMaxRank
  bool wide = false;     // Strided: 64-bit index arithmetic
  // A fragment of a kernel name: "c4", "c8", "c1u2", "s3", "s3w".
  std::string key() const;
  friend bool operator==(const MapShape&, const MapShape&) = default;
};

struct MapSpec {
  std::string name;  // the entry point's name (a PTX identifier)
  std::vector<DType> outs, ins;
  MapShape shape;
  bool needs_index = false;  // body wants each element's linear index (u64)
  // Called once at the top of the kernel, after the common parameters: declares and loads
  // the kernel's own parameters (scalars).
  std::function<void(ptx::KernelBuilder&)> setup;
  // One element: the raw input elements (registers of ptx::storage_reg_type(ins[k])) and,
  // when needs_index, the linear index; returns one raw element per output.
  std::function<std::vector<ptx::Reg>(ptx::KernelBuilder&, std::span<const ptx::Reg>, ptx::Reg)>
      body;
};

GeneratedKernel generate_map(const MapSpec& spec, const ptx::Target& target);

// The elements per vector step for operands of these sizes (bytes): 16 / the largest, or 1
// when some operand's share of a step would be narrower than 4 bytes.
int map_vector_width(std::span<const int> element_sizes);

}  // namespace numr::cuda
