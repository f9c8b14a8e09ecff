#include "backends/cpu/fft/real_plan.h"

#include <algorithm>

#include "backends/cpu/fft/complex_plan.h"
#include "backends/cpu/fft/plan_cache.h"
#include "backends/cpu/fft/roots.h"

namespace numr::cpu::fft {

template <class T>
RealPlan<T>::RealPlan(int64_t n, Direction dir) : n_(n) {
  const bool even = n % 2 == 0;
  sub_ = complex_plan<T>(even ? n / 2 : n, dir);
  if (even) {
    w_.resize(n / 4 + 1);
    for (int64_t k = 0; k <= n / 4; ++k) {
      const Cx<double> w = unit_root(k, n, -1);
      w_[k] = {static_cast<T>(w.re), static_cast<T>(w.im)};
    }
  }
}

template <class T>
int64_t RealPlan<T>::buffer_size() const {
  return std::max(sub_->buffer_size(), n_ / 2 + 1);
}

template <class T>
void RealPlan<T>::load_real(const T* in, int64_t stride, Cx<T>* a) const {
  if (n_ % 2 == 0) {
    // The pairs (x_2j, x_2j+1) are the complex z_j.
    T* r = &a[0].re;
    for (int64_t j = 0; j < n_; ++j) r[j] = in[j * stride];
  } else {
    for (int64_t j = 0; j < n_; ++j) a[j] = {in[j * stride], T(0)};
  }
}

namespace {

// w^{h - k} = -conj(w^k) for w = exp(-2 pi i / n), n = 2h; k <= n / 4 from the table.
template <class T>
Cx<T> twiddle(const std::vector<Cx<T>>& w, int64_t k, int64_t h) {
  if (k < static_cast<int64_t>(w.size())) return w[k];
  const Cx<T> c = w[h - k];
  return {-c.re, c.im};
}

}  // namespace

template <class T>
Cx<T>* RealPlan<T>::forward(Cx<T>* a, Cx<T>* b, bool parallel) const {
  Cx<T>* z = sub_->run(a, b, parallel);
  if (n_ % 2 != 0) return z;
  const int64_t h = n_ / 2;
  // Z = E + i O with E, O the transforms of the even and odd samples:
  // E_k = (Z_k + conj Z_{h-k}) / 2, O_k = (Z_k - conj Z_{h-k}) / 2i, X_k = E_k + w^k O_k.
  const auto half = [&](Cx<T> zk, Cx<T> zhk, int64_t k) {
    const Cx<T> e{T(0.5) * (zk.re + zhk.re), T(0.5) * (zk.im - zhk.im)};
    const Cx<T> o{T(0.5) * (zk.im + zhk.im), T(-0.5) * (zk.re - zhk.re)};
    return e + twiddle(w_, k, h) * o;
  };
  const Cx<T> z0 = z[0];
  for (int64_t k = 1; 2 * k <= h; ++k) {
    const Cx<T> zk = z[k], zhk = z[h - k];
    z[k] = half(zk, zhk, k);
    if (h - k != k) z[h - k] = half(zhk, zk, h - k);
  }
  z[0] = {z0.re + z0.im, T(0)};
  z[h] = {z0.re - z0.im, T(0)};
  return z;
}

template <class T>
typename RealPlan<T>::Reals RealPlan<T>::inverse(Cx<T>* a, Cx<T>* b, bool parallel) const {
  if (n_ % 2 != 0) {
    // The whole Hermitian sequence, then the real parts of its transform.
    a[0].im = T(0);
    for (int64_t k = 1; 2 * k < n_; ++k) a[n_ - k] = conj(a[k]);
    const Cx<T>* x = sub_->run(a, b, parallel);
    return {&x[0].re, 2};
  }
  const int64_t h = n_ / 2;
  // Z_k = 2 E_k + 2i O_k with 2 E_k = X_k + conj X_{h-k}, 2 O_k = (X_k - conj X_{h-k}) conj w^k;
  // its unnormalised inverse of length h is n (x_2j + i x_2j+1).
  const auto pack = [&](Cx<T> xk, Cx<T> xhk, int64_t k) {
    const Cx<T> e{xk.re + xhk.re, xk.im - xhk.im};
    const Cx<T> o = Cx<T>{xk.re - xhk.re, xk.im + xhk.im} * conj(twiddle(w_, k, h));
    return Cx<T>{e.re - o.im, e.im + o.re};
  };
  const T x0 = a[0].re, xh = a[h].re;
  for (int64_t k = 1; 2 * k <= h; ++k) {
    const Cx<T> xk = a[k], xhk = a[h - k];
    a[k] = pack(xk, xhk, k);
    if (h - k != k) a[h - k] = pack(xhk, xk, h - k);
  }
  a[0] = {x0 + xh, x0 - xh};
  const Cx<T>* x = sub_->run(a, b, parallel);
  return {&x[0].re, 1};
}

template class RealPlan<float>;
template class RealPlan<double>;

}  // namespace numr::cpu::fft
