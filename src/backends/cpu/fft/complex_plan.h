// A plan for one complex transform of length n in one direction: Stockham passes (each
// reads one buffer and writes the other, in natural order at the end) with mixed radices,
// or Bluestein's chirp-z convolution through a plan of a 2,3,5-smooth length >= 2n - 1.
// Immutable once built, so one plan serves any number of threads.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "backends/cpu/fft/cx.h"
#include "backends/cpu/fft/fft.h"

namespace numr::cpu::fft {

template <class T>
class ComplexPlan {
 public:
  ComplexPlan(int64_t n, Direction dir);

  int64_t n() const { return n_; }
  int sign() const { return sign_; }
  // Elements each of the two buffers given to run() must hold.
  int64_t buffer_size() const { return m_ > 0 ? m_ : n_; }
  // Transforms a[0, n) using b as work space (both buffer_size() long) and returns the
  // buffer that holds the result. With `parallel`, each pass is split over the thread pool.
  Cx<T>* run(Cx<T>* a, Cx<T>* b, bool parallel) const;

 private:
  struct Pass {
    int64_t radix, span;       // span: the length of the transforms the pass starts from
    std::vector<Cx<T>> tw;     // tw[k * (radix - 1) + r - 1] = w_{span * radix}^{S k r}
    std::vector<Cx<T>> roots;  // odd radices > 5: w_radix^{S q}
  };
  Cx<T>* run_passes(Cx<T>* a, Cx<T>* b, bool parallel) const;
  Cx<T>* run_bluestein(Cx<T>* a, Cx<T>* b, bool parallel) const;

  int64_t n_;
  int sign_;
  std::vector<Pass> passes_;
  // Bluestein: padded length, chirp c_j = exp(S pi i j^2 / n), and the transform of the
  // conjugate chirp wrapped to length m, divided by m.
  int64_t m_ = 0;
  std::vector<Cx<T>> chirp_, kernel_;
  std::shared_ptr<const ComplexPlan<T>> forward_m_, inverse_m_;
};

}  // namespace numr::cpu::fft
