// Complex arithmetic as real ops on the parts, written once over Tensor and Var: a Var
// built this way differentiates as the pair of reals it is, which is PyTorch's convention
// for complex gradients (dL/dx + i dL/dy).
#pragma once

#include <vector>

#include "numr/complex.h"
#include "numr/ops.h"

namespace numr::complex_ops {

// Entry points of the front ends for complex operands (dtype already checked).
Tensor unary(OpId op, const Tensor& z);  // neg, abs, exp, log
Tensor binary(OpId op, const Tensor& a, const Tensor& b);  // add, sub, mul, div
Tensor scalar(OpId op, const Tensor& z, double s);  // mul_scalar, div_scalar
Tensor reduce(OpId op, const Tensor& z, const std::vector<int64_t>& dims, bool keepdim);
Tensor matmul(const Tensor& a, const Tensor& b);
Var mul(const Var& a, const Var& b);
Var div(const Var& a, const Var& b);
Var exp(const Var& z);
Var log(const Var& z);
Var abs(const Var& z);
Var matmul(const Var& a, const Var& b);

// The dims of a reduction over z (empty: all of z's dims) as dims of its pair view.
std::vector<int64_t> pair_dims(std::string_view op, const std::vector<int64_t>& dims,
                               int64_t ndim);

template <class T>
T mul_parts(const T& a, const T& b) {
  const T ar = real(a), ai = imag(a), br = real(b), bi = imag(b);
  return complex(ar * br - ai * bi, ar * bi + ai * br);
}

// a / b with b scaled by max(|re b|, |im b|) first, so |b|^2 neither overflows nor
// underflows where the quotient itself is representable.
template <class T>
T div_parts(const T& a, const T& b) {
  const T ar = real(a), ai = imag(a), br = real(b), bi = imag(b);
  const T s = maximum(numr::abs(br), numr::abs(bi));
  const T cr = br / s, ci = bi / s;
  const T den = (cr * cr + ci * ci) * s;
  return complex((ar * cr + ai * ci) / den, (ai * cr - ar * ci) / den);
}

template <class T>
T exp_parts(const T& z) {
  const T m = numr::exp(real(z)), y = imag(z);
  return complex(m * cos(y), m * sin(y));
}

template <class T>
T log_parts(const T& z) {
  return complex(numr::log(numr::abs(z)), angle(z));
}

template <class T>
T matmul_parts(const T& a, const T& b) {
  const T ar = real(a), ai = imag(a), br = real(b), bi = imag(b);
  return complex(numr::matmul(ar, br) - numr::matmul(ai, bi),
                 numr::matmul(ar, bi) + numr::matmul(ai, br));
}

}  // namespace numr::complex_ops
