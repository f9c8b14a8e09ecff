// Roots of unity computed accurately: the angle is reduced to the first octant with exact
// integer arithmetic before one sin and cos in double, so every root is within an ulp or
// two of exp(2 pi i j / n) whatever j and n, and float tables round these once.
#pragma once

#include <cstdint>

#include "backends/cpu/fft/cx.h"

namespace numr::cpu::fft {

// exp(sign * 2 pi i j / n) for any integer j (taken modulo n), n >= 1.
Cx<double> unit_root(int64_t j, int64_t n, int sign);

}  // namespace numr::cpu::fft
