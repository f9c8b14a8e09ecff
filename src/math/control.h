// Control flow for the formulas: loops that end when every lane has converged, and paths
// computed only where some lane needs them. A number type may supply real control flow:
// double runs a plain loop and if; the SIMD vectors stop once all their lanes are done
// (all_lanes, any_lane); ptx::Value and wgsl::Value emit a loop or a branch per thread
// (emit_iterate_until, emit_compute_where, found by argument-dependent lookup). Any other
// type (the Tensor compositions) runs the loop to its maximum count and every path. The
// result of each lane is the same whichever way it runs.
#pragma once

#include <array>
#include <cstddef>
#include <type_traits>

#include "math/namespace.h"
#include "math/scalar_double.h"

namespace numr::math::inline NUMR_MATH_ISA {

// for (n = 1; n <= max_n && !done(v); ++n) step(n, v), per lane: step(n, v) updates the
// loop-carried values v in place (n is a T); once done(v) holds in a lane, its v stays.
template <class T, std::size_t N, class Step, class Done>
void iterate_until(int max_n, std::array<T, N>& v, Step&& step, Done&& done) {
  if constexpr (std::is_same_v<T, double>) {
    for (int n = 1; n <= max_n && !done(v); ++n) step(double(n), v);
  } else if constexpr (requires { emit_iterate_until(max_n, v, step, done); }) {
    emit_iterate_until(max_n, v, step, done);
  } else {
    for (int n = 1; n <= max_n; ++n) {
      const auto d = done(v);
      if constexpr (requires { all_lanes(d); })
        if (all_lanes(d)) break;
      std::array<T, N> next = v;
      step(T(n), next);
      for (std::size_t i = 0; i < N; ++i) v[i] = select(d, v[i], next[i]);
    }
  }
}

// v = need ? path(v) : v per lane, where path(v) assigns new values to v; path runs only
// if need holds in some lane.
template <class T, std::size_t N, class M, class Path>
void compute_where(const M& need, std::array<T, N>& v, Path&& path) {
  if constexpr (std::is_same_v<T, double>) {
    if (need) path(v);
  } else if constexpr (requires { emit_compute_where(need, v, path); }) {
    emit_compute_where(need, v, path);
  } else {
    if constexpr (requires { any_lane(need); })
      if (!any_lane(need)) return;
    std::array<T, N> next = v;
    path(next);
    for (std::size_t i = 0; i < N; ++i) v[i] = select(need, next[i], v[i]);
  }
}

// The relative precision a converged sum of T needs: 2^-26 where T computes in float,
// 2^-55 in double (a little below the half ulp of each, as the tails are not summed).
template <class T>
T convergence_eps() {
  return select(T(1) + T(0x1p-30) == T(1), T(0x1p-26), T(0x1p-55));
}

}  // namespace numr::math::inline NUMR_MATH_ISA
