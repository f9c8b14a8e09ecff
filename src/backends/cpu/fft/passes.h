// One Stockham pass of radix R over butterflies [j0, j1) of n / R: butterfly j = g * span + k
// reads in[j + r n / R], multiplies input r by w^{k r} (w the (span R)-th root), applies the
// radix-R DFT and writes out[g span R + k + r span]. After the passes with spans 1, R1,
// R1 R2, .. the output is the transform in natural order.
#pragma once

#include <algorithm>
#include <cstdint>

#include "backends/cpu/fft/butterflies.h"

namespace numr::cpu::fft {

template <class T, int R, int S>
void pass_fixed(const Cx<T>* in, Cx<T>* out, int64_t n, int64_t span, const Cx<T>* tw, int64_t j0,
                int64_t j1) {
  const int64_t step = n / R;
  int64_t g = j0 / span, k = j0 - g * span;
  for (int64_t j = j0; j < j1; ++g, k = 0) {
    const int64_t k_end = std::min(span, k + (j1 - j));
    Cx<T>* o = out + g * span * R;
    for (; k < k_end; ++k, ++j) {
      Cx<T> v[R];
      v[0] = in[j];
      const Cx<T>* w = tw + k * (R - 1);
      for (int r = 1; r < R; ++r) v[r] = span > 1 ? in[j + r * step] * w[r - 1] : in[j + r * step];
      if constexpr (R == 2) butterfly2<S>(v);
      if constexpr (R == 3) butterfly3<S>(v);
      if constexpr (R == 4) butterfly4<S>(v);
      if constexpr (R == 5) butterfly5<S>(v);
      for (int r = 0; r < R; ++r) o[k + r * span] = v[r];
    }
  }
}

template <class T>
void pass_odd(const Cx<T>* in, Cx<T>* out, int64_t n, int64_t span, int radix, const Cx<T>* tw,
              const Cx<T>* roots, int64_t j0, int64_t j1) {
  const int64_t step = n / radix;
  Cx<T> v[kMaxRadix];
  int64_t g = j0 / span, k = j0 - g * span;
  for (int64_t j = j0; j < j1; ++g, k = 0) {
    const int64_t k_end = std::min(span, k + (j1 - j));
    Cx<T>* o = out + g * span * radix;
    for (; k < k_end; ++k, ++j) {
      v[0] = in[j];
      const Cx<T>* w = tw + k * (radix - 1);
      for (int r = 1; r < radix; ++r)
        v[r] = span > 1 ? in[j + r * step] * w[r - 1] : in[j + r * step];
      butterfly_odd(v, radix, roots);
      for (int r = 0; r < radix; ++r) o[k + r * span] = v[r];
    }
  }
}

}  // namespace numr::cpu::fft
