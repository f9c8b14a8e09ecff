// The rules of numr's reductions, written once over a number type T: double for the float64
// reference, float, double or int64_t for the CPU kernels' scalar states, ptx::Value for
// the CUDA generator. P is what T's comparisons give (bool; ptx::Mask), and
// select(p, a, b) picks between Ts. Backends keep their own strategies (chunks, SIMD passes,
// warp shuffles, partial states in memory) and call these where a state is fed, merged or
// finished, so that NaN propagation, first-index ties, Welford/Chan and logsumexp's guards
// mean the same on every backend.
//
// max/min: a NaN anywhere gives NaN, else the extreme. argmax/argmin: the first NaN's index
// if any, else the first index of the extreme. var/std: (count, mean, M2) fed with
// Welford's update, merged with Chan's, finished with the correction. logsumexp: (max,
// Σexp(x - max)) over the finite elements, NaN and +inf recorded apart. mean: sum / count.
// any/all: an element counts as true when it is not zero (NaN is true). sum and prod merge
// with + and *.
#pragma once

#include <limits>
#include <type_traits>

#include "math/namespace.h"
#include "math/scalar_double.h"

namespace numr::math::inline NUMR_MATH_ISA {

// select for the plain numbers other than double (scalar_double.h has double's).
template <class T>
requires(std::is_arithmetic_v<T> && !std::is_same_v<T, double>) T select(bool c, T a, T b) {
  return c ? a : b;
}

// Whether T can hold NaN; a Value answers for its register type (codegen/ptx/value.h).
template <class T>
requires std::is_arithmetic_v<T>
constexpr bool can_be_nan(T) { return std::is_floating_point_v<T>; }

inline constexpr double kReduceInf = std::numeric_limits<double>::infinity();
inline constexpr double kReduceNaN = std::numeric_limits<double>::quiet_NaN();

// ---- max/min, NaN-sticky ----

// x replaces best as the running max (kMax) or min: x is beyond best or NaN, and best is
// not NaN already. So the first NaN sticks, and of equal values the one held stays.
template <bool kMax, class T>
auto extreme_beats(const T& x, const T& best) {
  using P = decltype(x > best);
  const P beyond = kMax ? x > best : x < best;
  if (!can_be_nan(x)) return beyond;
  return P((beyond | (x != x)) & (best == best));
}

// The running max (kMax) or min after x.
template <bool kMax, class T>
T extreme_merge(const T& best, const T& x) {
  return select(extreme_beats<kMax>(x, best), x, best);
}

// x and best are the same extreme (NaN matches NaN).
template <class T>
auto same_extreme(const T& x, const T& best) {
  using P = decltype(x == best);
  if (!can_be_nan(x)) return P(x == best);
  return P((x == best) | ((x != x) & (best != best)));
}

// ---- argmax/argmin: a value and its index ----

// Whether element x, at an index after every one the state (best, index) has seen, takes
// the state over: x beats best (equal values keep the earlier), or the state is empty.
// empty() gives that predicate; it is asked for after the comparison.
template <bool kMax, class T, class Empty>
auto arg_feed_takes(Empty empty, const T& x, const T& best) {
  const auto beats = extreme_beats<kMax>(x, best);
  return decltype(beats)(empty() | beats);
}

// Whether state (x, other's index) takes over state (best, index) in a merge, in any order:
// the other has an element, and this state is empty, or x beats best, or they are the same
// extreme and the other's index is the lower one.
template <bool kMax, class T, class P>
P arg_merge_takes(const P& other_has, const P& empty, const P& other_earlier, const T& x,
                  const T& best) {
  return P(other_has &
           (empty | extreme_beats<kMax>(x, best) | (same_extreme(x, best) & other_earlier)));
}

// ---- var/std: count, mean and M2 (the sum of squared deviations from the mean) ----

template <class T>
struct Moments {
  T n, mean, m2;
};

// Welford: n += 1; mean += (x - mean) / n; M2 += (x - mean_old) (x - mean_new). div(a, b)
// is the quotient a / b as the backend takes it.
template <class T, class Div>
Moments<T> moments_add(const Moments<T>& s, const T& x, Div div) {
  const T n = s.n + T(1);
  const T d = x - s.mean;
  const T mean = s.mean + div(d, n);
  return {n, mean, s.m2 + d * (x - mean)};
}

// The moments of n > 0 elements from their deviations from a centre c: d1 = Σ (x - c) and
// d2 = Σ (x - c)^2 (any c; near the mean keeps d2 - d1^2 / n accurate).
template <class T>
Moments<T> moments_from_deviations(const T& n, const T& c, const T& d1, const T& d2) {
  return {n, c + d1 / n, d2 - d1 * d1 / n};
}

// Chan et al.: the moments of the elements of a and b together. Either may be empty (an
// idle lane of a group reduction): its side adds no delta^2 term, which for a mean beyond
// the square root of the largest finite value would otherwise be inf * 0 = NaN.
template <class T>
Moments<T> moments_merge(const Moments<T>& a, const Moments<T>& b) {
  const T n = a.n + b.n;
  const T zero(0);
  const T frac = select(n > zero, b.n / n, zero);
  const T delta = b.mean - a.mean;
  const T mean = a.mean + delta * frac;
  const T spread = select((a.n > zero) & (b.n > zero), delta * delta * a.n * frac, zero);
  return {n, mean, a.m2 + b.m2 + spread};
}

// M2 / denom, denom = count - correction; NaN unless `ok` (denom > 0, as each backend counts
// it). Rounding can leave M2 a hair below zero: a negative variance becomes 0.
template <class T, class P>
T variance_from_m2(const T& m2, const T& denom, const P& ok) {
  const T v = select(ok, m2 / denom, T(kReduceNaN));
  return select(v < T(0), T(0), v);
}

// ---- logsumexp ----

// The finite elements' part of a logsumexp state: their max (-inf while there is none) and
// Σ exp(x - max) over them. Whether a NaN or a +inf was seen is kept apart by the backend
// (flags), and -inf elements add nothing.
template <class T>
struct LogSumExp {
  T max, sum;
};

// Feeds one element online (one exp per element); a non-finite x leaves the state as it is.
template <class T>
LogSumExp<T> lse_add(const LogSumExp<T>& s, const T& x) {
  const auto finite = (x > T(-kReduceInf)) & (x < T(kReduceInf));
  const T d = x - s.max;  // +inf while max is still -inf
  const T t = exp(-fabs(d));
  const auto up = d > T(0);
  const T s_up = s.sum * t + T(1), s_keep = s.sum + t;
  const T sum = select(finite, select(up, s_up, s_keep), s.sum);
  const T max = select(finite & up, x, s.max);
  return {max, sum};
}

// Both parts rescaled to the larger max. A part whose max is -inf is empty: its sum is not
// read (a backend may leave it NaN).
template <class T>
LogSumExp<T> lse_merge(const LogSumExp<T>& a, const LogSumExp<T>& b) {
  const T ninf(-kReduceInf);
  const auto a_big = a.max >= b.max;
  const T t = exp(-fabs(a.max - b.max));  // NaN when both are -inf: replaced below
  T sum = select(a_big, a.sum + b.sum * t, a.sum * t + b.sum);
  sum = select(b.max == ninf, a.sum, sum);
  sum = select(a.max == ninf, b.sum, sum);
  const T max = select(a_big, a.max, b.max);
  return {max, sum};
}

// log Σ exp(x) over the finite elements: max + log(sum), -inf when there are none.
template <class T>
T lse_finite_result(const LogSumExp<T>& s) {
  return select(s.max == T(-kReduceInf), s.max, s.max + log(s.sum));
}

// v (the finite result, or the max as softmax's shift) with the flags applied: +inf when a
// +inf was seen, NaN when a NaN was (the NaN wins). pos_inf_seen() and nan_seen() give the
// predicates; they are asked for in that order, each just before it is used.
template <class T, class InfSeen, class NanSeen>
T lse_flagged(const T& v, InfSeen pos_inf_seen, NanSeen nan_seen) {
  const T r = select(pos_inf_seen(), T(kReduceInf), v);
  return select(nan_seen(), T(kReduceNaN), r);
}

// The full result from the finite part and the flags.
template <class T, class InfSeen, class NanSeen>
T lse_result(const LogSumExp<T>& s, InfSeen pos_inf_seen, NanSeen nan_seen) {
  return lse_flagged(lse_finite_result(s), pos_inf_seen, nan_seen);
}

// softmax's sum beside its shift (the flagged max): NaN when the shift is not finite, as
// Σ exp(x - shift) over the elements would be.
template <class T>
T lse_shifted_sum(const T& shift, const T& sum) {
  const auto finite = (shift > T(-kReduceInf)) & (shift < T(kReduceInf));
  return select(finite, sum, T(kReduceNaN));
}

// ---- mean, any/all ----

template <class T>
T mean_of(const T& sum, const T& count) {
  return sum / count;
}

// any/all read an element as true when it is not zero; NaN is true.
template <class T>
auto reduce_truth(const T& x) {
  return x != T(0);
}

}  // namespace numr::math::inline NUMR_MATH_ISA
