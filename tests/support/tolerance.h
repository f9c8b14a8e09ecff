// Per-dtype tolerances for comparing a result with a float64 reference, shared by the
// parity harness and the fuzz target.
#pragma once

#include <cstdint>

#include "numr/dtype.h"

namespace numr::test {

// Tolerance for comparing an op's result in `dtype` with the float64 reference:
// |got - ref| <= atol + rtol * |ref| elementwise, and ||got - ref|| / ||ref|| <= rel_norm.
struct Tolerance {
  double atol, rtol, rel_norm;
};
Tolerance tolerance_for(DType dtype);
// A looser tolerance for results that sum many terms (reductions, matmul) of length k.
Tolerance accumulation_tolerance(DType dtype, int64_t k);
// For a GEMM of inner length k whose products are at most 1 in magnitude, summed in an
// order the GEMM library chooses: the probabilistic bound of Higham and Mary,
// |error| <= lambda sqrt(k) u sum|terms| <= lambda u k^1.5 (lambda = 4).
Tolerance gemm_tolerance(DType dtype, int64_t k);

}  // namespace numr::test
