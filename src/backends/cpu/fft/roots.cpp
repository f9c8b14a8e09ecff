#include "backends/cpu/fft/roots.h"

#include <cmath>
#include <numbers>
#include <utility>

namespace numr::cpu::fft {

Cx<double> unit_root(int64_t j, int64_t n, int sign) {
  // The angle is 2 pi a / b; each step maps it into a smaller range by a symmetry.
  int64_t a = j % n;
  if (a < 0) a += n;
  int64_t b = n;
  bool neg_sin = false, neg_cos = false, swap = false;
  if (2 * a > b) {  // (pi, 2 pi): theta = 2 pi - phi
    a = b - a;
    neg_sin = true;
  }
  if (4 * a > b) {  // (pi/2, pi]: theta = pi - phi, phi = 2 pi (b - 2a) / 2b
    a = b - 2 * a;
    b = 2 * b;
    neg_cos = true;
  }
  if (8 * a > b) {  // (pi/4, pi/2]: theta = pi/2 - phi, phi = 2 pi (b - 4a) / 4b
    a = b - 4 * a;
    b = 4 * b;
    swap = true;
  }
  const double phi = 2.0 * std::numbers::pi * static_cast<double>(a) / static_cast<double>(b);
  double c = std::cos(phi), s = std::sin(phi);
  if (swap) std::swap(c, s);
  if (neg_cos) c = -c;
  if (neg_sin) s = -s;
  return {c, sign < 0 ? -s : s};
}

}  // namespace numr::cpu::fft
