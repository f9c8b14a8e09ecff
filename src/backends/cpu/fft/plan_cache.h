// Plans are built once per (length, precision, direction, kind) and shared: building one
// computes its roots of unity, which costs more than a transform.
#pragma once

#include <cstdint>
#include <memory>

#include "backends/cpu/fft/fft.h"

namespace numr::cpu::fft {

template <class T>
class ComplexPlan;
template <class T>
class RealPlan;

template <class T>
std::shared_ptr<const ComplexPlan<T>> complex_plan(int64_t n, Direction dir);
// Forward: n reals -> n / 2 + 1 complex; Inverse: the reverse.
template <class T>
std::shared_ptr<const RealPlan<T>> real_plan(int64_t n, Direction dir);

// Plans held by the cache (those in use elsewhere live on until released).
int64_t cached_plan_count();

}  // namespace numr::cpu::fft
