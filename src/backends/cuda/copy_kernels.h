// Kernels for copies with dtype conversion (any strides on both sides) and fills. A copy
// between equal dtypes moves the raw bits; otherwise the element loads into the source's
// compute type and is stored with element_io's rules, which are the CPU's conversion rules.
// A fill converts its double value into the destination dtype in the kernel, by the same
// rules, so no host conversion has to agree with them.
#pragma once

#include <string>

#include "backends/cuda/elementwise_map.h"

namespace numr::cuda {

struct CopyConfig {
  DType src = DType::F32, dst = DType::F32;
  MapShape shape;
};
std::string copy_key(const CopyConfig& c);
GeneratedKernel generate_copy(const CopyConfig& c, const ptx::Target& target);

// Parameter after the common ones: value (f64).
struct FillConfig {
  DType dst = DType::F32;
  MapShape shape;
};
std::string fill_key(const FillConfig& c);
GeneratedKernel generate_fill(const FillConfig& c, const ptx::Target& target);

}  // namespace numr::cuda
