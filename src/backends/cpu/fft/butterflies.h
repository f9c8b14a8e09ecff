// The small DFTs that each pass applies: y_k = sum_r v_r exp(S 2 pi i rk / R), in place on
// v[0..R), for the fixed radices 2, 3, 4, 5 (written out) and any odd R up to kMaxRadix
// (from a table of its roots, pairing r with R - r so each output pair costs one sweep).
#pragma once

#include <numbers>

#include "backends/cpu/fft/cx.h"

namespace numr::cpu::fft {

inline constexpr int kMaxRadix = 64;

template <int S, class T>
inline void butterfly2(Cx<T>* v) {
  const Cx<T> a = v[0], b = v[1];
  v[0] = a + b;
  v[1] = a - b;
}

template <int S, class T>
inline void butterfly4(Cx<T>* v) {
  const Cx<T> t0 = v[0] + v[2], t1 = v[0] - v[2];
  const Cx<T> t2 = v[1] + v[3], t3 = mul_i(v[1] - v[3], S);
  v[0] = t0 + t2;
  v[2] = t0 - t2;
  v[1] = t1 + t3;
  v[3] = t1 - t3;
}

template <int S, class T>
inline void butterfly3(Cx<T>* v) {
  constexpr T kS = static_cast<T>(0.86602540378443864676372317075293618);  // sin(2 pi / 3)
  const Cx<T> t1 = v[1] + v[2];
  const Cx<T> t2 = v[0] - T(0.5) * t1;
  const Cx<T> t3 = mul_i(kS * (v[1] - v[2]), S);
  v[0] = v[0] + t1;
  v[1] = t2 + t3;
  v[2] = t2 - t3;
}

template <int S, class T>
inline void butterfly5(Cx<T>* v) {
  constexpr T c1 = static_cast<T>(0.30901699437494742410229341718281906);   // cos(2 pi / 5)
  constexpr T c2 = static_cast<T>(-0.80901699437494742410229341718281906);  // cos(4 pi / 5)
  constexpr T s1 = static_cast<T>(0.95105651629515357211643933337938214);   // sin(2 pi / 5)
  constexpr T s2 = static_cast<T>(0.58778525229247312916870595463907277);   // sin(4 pi / 5)
  const Cx<T> a0 = v[0];
  const Cx<T> b1 = v[1] + v[4], b2 = v[2] + v[3];
  const Cx<T> d1 = v[1] - v[4], d2 = v[2] - v[3];
  const Cx<T> p1 = a0 + c1 * b1 + c2 * b2, p2 = a0 + c2 * b1 + c1 * b2;
  const Cx<T> q1 = mul_i(s1 * d1 + s2 * d2, S), q2 = mul_i(s2 * d1 - s1 * d2, S);
  v[0] = a0 + b1 + b2;
  v[1] = p1 + q1;
  v[4] = p1 - q1;
  v[2] = p2 + q2;
  v[3] = p2 - q2;
}

// Odd R: roots[q] = exp(S 2 pi i q / R) for q in [0, R).
template <class T>
inline void butterfly_odd(Cx<T>* v, int radix, const Cx<T>* roots) {
  const int h = (radix - 1) / 2;
  Cx<T> b[kMaxRadix / 2], d[kMaxRadix / 2];
  Cx<T> y0 = v[0];
  for (int q = 1; q <= h; ++q) {
    b[q - 1] = v[q] + v[radix - q];
    d[q - 1] = v[q] - v[radix - q];
    y0 = y0 + b[q - 1];
  }
  const Cx<T> a0 = v[0];
  for (int k = 1; k <= h; ++k) {
    Cx<T> re = a0, im{0, 0};
    int qk = 0;
    for (int q = 1; q <= h; ++q) {
      qk += k;
      if (qk >= radix) qk -= radix;
      re = re + roots[qk].re * b[q - 1];
      im = im + roots[qk].im * d[q - 1];
    }
    // y_k = re + i im, y_{R-k} = re - i im
    v[k] = {re.re - im.im, re.im + im.re};
    v[radix - k] = {re.re + im.im, re.im - im.re};
  }
  v[0] = y0;
}

}  // namespace numr::cpu::fft
