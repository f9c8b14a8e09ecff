// Shape compositions written once over T = Tensor or Var: both have the same ops (narrow,
// cat, reshape, broadcast_to, ...), so the Tensor front ends and the Var forms share one
// definition, and a Var form's gradient is that of the ops it is made of, to any order.
// Callers check the arguments first and pass dims already wrapped.
#pragma once

#include <cstdint>
#include <vector>

#include "numr/shape.h"

namespace numr::compose {

// x rolled by s (0 < s < n) along d: the last s elements move to the front.
template <class T>
T roll_dim(const T& x, int64_t d, int64_t s) {
  const int64_t n = x.shape()[size_t(d)];
  return cat(std::vector<T>{narrow(x, d, n - s, s), narrow(x, d, 0, n - s)}, d);
}

// x rolled by shifts[i] along dims[i] in turn; a new tensor even when nothing moves.
template <class T>
T roll(const T& x, const std::vector<int64_t>& shifts, const std::vector<int64_t>& dims) {
  T r = x;
  bool moved = false;
  for (size_t i = 0; i < dims.size(); ++i) {
    const int64_t n = r.shape()[size_t(dims[i])];
    if (n == 0) continue;
    const int64_t s = ((shifts[i] % n) + n) % n;
    if (s == 0) continue;
    r = roll_dim(r, dims[i], s);
    moved = true;
  }
  return moved ? r : clone(x);
}

// Each element of dim d repeated r times in place: a new dim of r after d, broadcast, then
// merged into d.
template <class T>
T repeat_interleave(const T& x, int64_t r, int64_t d) {
  if (r == 1) return clone(x);
  Shape wide = x.shape();
  wide.insert(wide.begin() + d + 1, r);
  Shape out = x.shape();
  out[size_t(d)] *= r;
  return reshape(broadcast_to(unsqueeze(x, d + 1), wide), out);
}

// xs[i] (numel n_i) viewed along output dim pos(i) and broadcast to the grid's shape.
template <class T>
std::vector<T> meshgrid(const std::vector<T>& xs, bool xy) {
  const size_t k = xs.size();
  auto pos = [&](size_t i) { return xy && k >= 2 && i < 2 ? 1 - i : i; };
  Shape grid(k);
  for (size_t i = 0; i < k; ++i) grid[pos(i)] = xs[i].numel();
  std::vector<T> out;
  out.reserve(k);
  for (size_t i = 0; i < k; ++i) {
    Shape s(k, 1);
    s[pos(i)] = xs[i].numel();
    out.push_back(broadcast_to(reshape(xs[i], s), grid));
  }
  return out;
}

// x with its elements [start, start + src.size(d)) along d replaced by src.
template <class T>
T slice_assign(const T& x, const T& src, int64_t d, int64_t start) {
  const int64_t n = x.shape()[size_t(d)], len = src.shape()[size_t(d)];
  return cat(
      std::vector<T>{narrow(x, d, 0, start), src, narrow(x, d, start + len, n - start - len)}, d);
}

}  // namespace numr::compose
