// The engine's complex number: a plain pair laid out as std::complex<T>, with arithmetic
// written out so no NaN-recovery library call sits in the inner loops.
#pragma once

#include <cstdint>
#include <memory>
#include <new>

namespace numr::cpu::fft {

template <class T>
struct Cx {
  T re, im;
};

template <class T>
inline Cx<T> operator+(Cx<T> a, Cx<T> b) {
  return {a.re + b.re, a.im + b.im};
}
template <class T>
inline Cx<T> operator-(Cx<T> a, Cx<T> b) {
  return {a.re - b.re, a.im - b.im};
}
template <class T>
inline Cx<T> operator*(Cx<T> a, Cx<T> b) {
  return {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
}
template <class T>
inline Cx<T> operator*(T s, Cx<T> a) {
  return {s * a.re, s * a.im};
}
template <class T>
inline Cx<T> conj(Cx<T> a) {
  return {a.re, -a.im};
}
// a * (sign * i): a rotation by a quarter turn, +i for sign = 1, -i for sign = -1.
template <class T>
inline Cx<T> mul_i(Cx<T> a, int sign) {
  return sign > 0 ? Cx<T>{-a.im, a.re} : Cx<T>{a.im, -a.re};
}

// A buffer of n complex elements aligned to a cache line, uninitialised.
template <class T>
class CxBuffer {
 public:
  CxBuffer() = default;
  explicit CxBuffer(int64_t n)
      : p_(static_cast<Cx<T>*>(::operator new[](static_cast<size_t>(n > 0 ? n : 1) * sizeof(Cx<T>),
                                                std::align_val_t{64}))),
        n_(n) {}
  Cx<T>* data() const { return p_.get(); }
  int64_t size() const { return n_; }

 private:
  struct Free {
    void operator()(Cx<T>* p) const { ::operator delete[](p, std::align_val_t{64}); }
  };
  std::unique_ptr<Cx<T>, Free> p_;
  int64_t n_ = 0;
};

}  // namespace numr::cpu::fft
