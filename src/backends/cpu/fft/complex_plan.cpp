#include "backends/cpu/fft/complex_plan.h"

#include <utility>

#include "backends/cpu/fft/factor.h"
#include "backends/cpu/fft/passes.h"
#include "backends/cpu/fft/plan_cache.h"
#include "backends/cpu/fft/roots.h"
#include "core/thread_pool.h"

namespace numr::cpu::fft {

namespace {

template <class T>
Cx<T> rounded(Cx<double> c) {
  return {static_cast<T>(c.re), static_cast<T>(c.im)};
}

// Splits [0, count) over the pool when asked to, in pieces worth a thread's wake-up.
template <class F>
void split(bool parallel, int64_t count, F&& f) {
  if (parallel && count >= 8192)
    parallel_for(count, 4096, f);
  else
    f(int64_t{0}, count);
}

template <class T, int S>
void run_pass(int64_t radix, const Cx<T>* in, Cx<T>* out, int64_t n, int64_t span, const Cx<T>* tw,
              const Cx<T>* roots, int64_t j0, int64_t j1) {
  switch (radix) {
    case 2: return pass_fixed<T, 2, S>(in, out, n, span, tw, j0, j1);
    case 3: return pass_fixed<T, 3, S>(in, out, n, span, tw, j0, j1);
    case 4: return pass_fixed<T, 4, S>(in, out, n, span, tw, j0, j1);
    case 5: return pass_fixed<T, 5, S>(in, out, n, span, tw, j0, j1);
    default: return pass_odd<T>(in, out, n, span, static_cast<int>(radix), tw, roots, j0, j1);
  }
}

}  // namespace

template <class T>
ComplexPlan<T>::ComplexPlan(int64_t n, Direction dir) : n_(n), sign_(static_cast<int>(dir)) {
  if (use_bluestein(n)) {
    m_ = next_smooth(2 * n - 1);
    forward_m_ = complex_plan<T>(m_, Direction::Forward);
    inverse_m_ = complex_plan<T>(m_, Direction::Inverse);
    // j^2 mod 2n kept exact by stepping (j + 1)^2 = j^2 + 2j + 1.
    std::vector<Cx<double>> chirp(n);
    for (int64_t j = 0, sq = 0; j < n; ++j) {
      chirp[j] = unit_root(sq, 2 * n, sign_);
      sq = (sq + 2 * j + 1) % (2 * n);
    }
    // The kernel is transformed in double whatever T, then rounded once.
    const auto plan_m = complex_plan<double>(m_, Direction::Forward);
    CxBuffer<double> a(plan_m->buffer_size()), b(plan_m->buffer_size());
    for (int64_t j = 0; j < m_; ++j) a.data()[j] = {0.0, 0.0};
    for (int64_t j = 0; j < n; ++j) {
      a.data()[j] = conj(chirp[j]);
      if (j > 0) a.data()[m_ - j] = conj(chirp[j]);
    }
    const Cx<double>* k = plan_m->run(a.data(), b.data(), false);
    kernel_.resize(m_);
    chirp_.resize(n);
    for (int64_t j = 0; j < m_; ++j)
      kernel_[j] = rounded<T>((1.0 / static_cast<double>(m_)) * k[j]);
    for (int64_t j = 0; j < n; ++j) chirp_[j] = rounded<T>(chirp[j]);
    return;
  }
  int64_t span = 1;
  for (int64_t radix : radices(n)) {
    Pass p{radix, span, {}, {}};
    if (span > 1) {
      p.tw.resize(span * (radix - 1));
      for (int64_t k = 0; k < span; ++k)
        for (int64_t r = 1; r < radix; ++r)
          p.tw[k * (radix - 1) + r - 1] = rounded<T>(unit_root(k * r, span * radix, sign_));
    }
    if (radix > 5) {
      p.roots.resize(radix);
      for (int64_t q = 0; q < radix; ++q) p.roots[q] = rounded<T>(unit_root(q, radix, sign_));
    }
    passes_.push_back(std::move(p));
    span *= radix;
  }
}

template <class T>
Cx<T>* ComplexPlan<T>::run(Cx<T>* a, Cx<T>* b, bool parallel) const {
  return m_ > 0 ? run_bluestein(a, b, parallel) : run_passes(a, b, parallel);
}

template <class T>
Cx<T>* ComplexPlan<T>::run_passes(Cx<T>* a, Cx<T>* b, bool parallel) const {
  Cx<T>* src = a;
  Cx<T>* dst = b;
  for (const Pass& p : passes_) {
    const int64_t count = n_ / p.radix;
    split(parallel, count, [&](int64_t j0, int64_t j1) {
      if (sign_ < 0)
        run_pass<T, -1>(p.radix, src, dst, n_, p.span, p.tw.data(), p.roots.data(), j0, j1);
      else
        run_pass<T, 1>(p.radix, src, dst, n_, p.span, p.tw.data(), p.roots.data(), j0, j1);
    });
    std::swap(src, dst);
  }
  return src;
}

template <class T>
Cx<T>* ComplexPlan<T>::run_bluestein(Cx<T>* a, Cx<T>* b, bool parallel) const {
  // X_k = c_k sum_j (x_j c_j) conj(c_{k-j}): a cyclic convolution of length m.
  split(parallel, m_, [&](int64_t j0, int64_t j1) {
    for (int64_t j = j0; j < j1; ++j) a[j] = j < n_ ? a[j] * chirp_[j] : Cx<T>{0, 0};
  });
  Cx<T>* p = forward_m_->run(a, b, parallel);
  Cx<T>* q = p == a ? b : a;
  split(parallel, m_, [&](int64_t j0, int64_t j1) {
    for (int64_t j = j0; j < j1; ++j) p[j] = p[j] * kernel_[j];
  });
  Cx<T>* r = inverse_m_->run(p, q, parallel);
  split(parallel, n_, [&](int64_t j0, int64_t j1) {
    for (int64_t j = j0; j < j1; ++j) r[j] = r[j] * chirp_[j];
  });
  return r;
}

template class ComplexPlan<float>;
template class ComplexPlan<double>;

}  // namespace numr::cpu::fft
