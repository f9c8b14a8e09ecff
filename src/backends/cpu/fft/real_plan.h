// Real transforms of length n. Even n = 2h runs one complex transform of length h over the
// reals taken in pairs (z_j = x_2j + i x_2j+1) and separates the even and odd halves with
// one sweep of twiddles; odd n runs the complex transform of length n.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "backends/cpu/fft/cx.h"
#include "backends/cpu/fft/fft.h"

namespace numr::cpu::fft {

template <class T>
class ComplexPlan;

template <class T>
class RealPlan {
 public:
  RealPlan(int64_t n, Direction dir);

  int64_t n() const { return n_; }
  int64_t buffer_size() const;
  // Forward: reads n reals (element j at in[j * stride]) into a.
  void load_real(const T* in, int64_t stride, Cx<T>* a) const;
  // Forward: a holds what load_real wrote; returns the buffer with the n / 2 + 1 outputs.
  Cx<T>* forward(Cx<T>* a, Cx<T>* b, bool parallel) const;
  // Inverse: a holds the n / 2 + 1 inputs; returns the n reals, element j at ptr[j * stride].
  struct Reals {
    const T* ptr;
    int64_t stride;
  };
  Reals inverse(Cx<T>* a, Cx<T>* b, bool parallel) const;

 private:
  int64_t n_;
  std::shared_ptr<const ComplexPlan<T>> sub_;
  std::vector<Cx<T>> w_;  // even n: w_k = exp(-2 pi i k / n) for k in [0, n / 4]
};

}  // namespace numr::cpu::fft
