#include "backends/cpu/fft/factor.h"

#include <cmath>

#include "backends/cpu/fft/butterflies.h"

namespace numr::cpu::fft {

std::vector<int64_t> radices(int64_t n) {
  std::vector<int64_t> r;
  while (n % 4 == 0) r.push_back(4), n /= 4;
  if (n % 2 == 0) r.push_back(2), n /= 2;
  for (int64_t p = 3; p * p <= n; p += 2)
    while (n % p == 0) r.push_back(p), n /= p;
  if (n > 1) r.push_back(n);
  return r;
}

double mixed_radix_cost(int64_t n) {
  double per_element = 0;
  for (int64_t p : radices(n)) {
    switch (p) {
      case 2: per_element += 1.0; break;
      case 3: per_element += 1.6; break;
      case 4: per_element += 1.6; break;
      case 5: per_element += 2.2; break;
      default: per_element += 0.6 * static_cast<double>(p) + 1.0;
    }
  }
  return static_cast<double>(n) * per_element;
}

int64_t next_smooth(int64_t n) {
  int64_t best = 1;
  while (best < n) best *= 2;
  for (int64_t p5 = 1; p5 < best; p5 *= 5)
    for (int64_t p35 = p5; p35 < best; p35 *= 3) {
      int64_t m = p35;
      while (m < n) m *= 2;
      if (m < best) best = m;
    }
  return best;
}

bool use_bluestein(int64_t n) {
  const std::vector<int64_t> r = radices(n);
  const int64_t largest = r.empty() ? 1 : r.back();
  if (largest <= 5) return false;
  if (largest > kMaxRadix) return true;
  const int64_t m = next_smooth(2 * n - 1);
  return 2.0 * mixed_radix_cost(m) + 3.0 * static_cast<double>(m) < mixed_radix_cost(n);
}

}  // namespace numr::cpu::fft
