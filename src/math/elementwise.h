// Every elementwise formula of numr, written once over a number-like type T. T is double
// for the reference, a SIMD vector on the CPU, and (later) a PTX or WGSL expression type.
// T provides + - * /, comparisons giving a mask, select(mask, a, b), T(constant), and the
// primitive functions of scalar_double.h, found by argument-dependent lookup.
// Guards for special values live here too, so every backend gets them.
#pragma once

#include "math/libm/erf.h"
#include "math/namespace.h"
#include "math/scalar_double.h"
#include "math/special.h"

namespace numr::math::inline NUMR_MATH_ISA {

// ---- unary ----
template <class T> T neg(T x) { return -x; }
template <class T> T abs(T x) { return fabs(x); }
// 1, -1, or x itself for ±0 and NaN.
template <class T> T sign(T x) { return select(x > T(0), T(1), select(x < T(0), T(-1), x)); }
template <class T> T square(T x) { return x * x; }
template <class T> T recip(T x) { return T(1) / x; }
template <class T> T rsqrt(T x) { return T(1) / sqrt(x); }
// Round half to even, as IEEE 754, NumPy and PyTorch do.
template <class T> T round(T x) { return rint(x); }
template <class T> T isnan(T x) { return select(x != x, T(1), T(0)); }
template <class T> T isinf(T x) { return select(fabs(x) == T(__builtin_inf()), T(1), T(0)); }
template <class T> T logical_not(T x) { return select(x == T(0), T(1), T(0)); }
// erfinv has no std:: counterpart: for double it is the device library's.
inline double erfinv(double x) { return libm::erfinv(x); }

// ---- activations ----
// x < 0 ? 0 : x, so NaN stays NaN.
template <class T> T relu(T x) { return select(x < T(0), T(0), x); }
template <class T> T sigmoid(T x) { return T(1) / (T(1) + exp(-x)); }
template <class T> T silu(T x) { return x / (T(1) + exp(-x)); }
// tanh approximation: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), evaluated as
// x * sigmoid(2 u) (the same function: 0.5 (1 + tanh u) = sigmoid(2 u)), which needs one
// exp and one division instead of a tanh. The exponent -2u is taken in base 2 as
// x (g0 + g1 x^2), g0 = -2 sqrt(2/pi) log2(e), g1 = 0.044715 g0: three operations (one an
// fma) before exp2, where e^(-2u) took seven on CUDA, whose exp is ex2 of a product.
inline constexpr double kGeluG0 = -2 * 0.7978845608028654 * 1.4426950408889634;
inline constexpr double kGeluG1 = 0.044715 * kGeluG0;
template <class T> T gelu_exp2_arg(T x) { return x * fma(T(kGeluG1), x * x, T(kGeluG0)); }
template <class T> T gelu(T x) { return x / (T(1) + exp2(gelu_exp2_arg(x))); }
// log(1 + exp(x)) = max(x, 0) + log1p(exp(-|x|)), without overflow.
template <class T> T softplus(T x) {
  return select(x > T(0), x, T(0)) + log1p(exp(-fabs(x)));
}
template <class T> T leaky_relu(T x, T slope) { return select(x < T(0), slope * x, x); }
template <class T> T elu(T x, T alpha) { return select(x < T(0), alpha * expm1(x), x); }

// ---- activation derivatives, written once ----
template <class T> T relu_grad(T x) { return select(x > T(0), T(1), T(0)); }
template <class T> T sigmoid_grad(T x) {
  const T s = sigmoid(x);
  return s * (T(1) - s);
}
template <class T> T silu_grad(T x) {
  const T s = sigmoid(x);
  return s * (T(1) + x * (T(1) - s));
}
// gelu(x) = x * gelu_gate(x), gelu_gate(x) = sigmoid(k u), u = x + c x^3.
template <class T> T gelu_gate(T x) { return T(1) / (T(1) + exp2(gelu_exp2_arg(x))); }
// d/dx [x * sigmoid(k u)]: s + x s (1 - s) k (1 + 3 c x^2).
template <class T> T gelu_grad(T x) {
  const T k(2 * 0.7978845608028654), c(0.044715);
  const T s = gelu_gate(x);
  return s + x * s * (T(1) - s) * k * (T(1) + T(3) * c * x * x);
}
template <class T> T softplus_grad(T x) { return sigmoid(x); }
template <class T> T leaky_relu_grad(T x, T slope) { return select(x < T(0), slope, T(1)); }
template <class T> T elu_grad(T x, T alpha) { return select(x < T(0), alpha * exp(x), T(1)); }
template <class T> T tanh_grad(T x) {
  const T t = tanh(x);
  return T(1) - t * t;
}
// A derivative that is not finite (e.g. x * (1 - s) at x = -inf) counts as 0, as in numr.
template <class T> T finite_or_zero(T d) { return select(d - d == T(0), d, T(0)); }

// ---- activation backward: grad_out * act'(x) ----
template <class T> T relu_bwd(T g, T x) { return g * finite_or_zero(relu_grad(x)); }
template <class T> T sigmoid_bwd(T g, T x) { return g * finite_or_zero(sigmoid_grad(x)); }
template <class T> T silu_bwd(T g, T x) { return g * finite_or_zero(silu_grad(x)); }
template <class T> T gelu_bwd(T g, T x) { return g * finite_or_zero(gelu_grad(x)); }
template <class T> T tanh_bwd(T g, T x) { return g * finite_or_zero(tanh_grad(x)); }

// ---- fused gates: act(a) * b, and their backward (d_a, d_b) ----
template <class T> T silu_mul(T a, T b) { return silu(a) * b; }
template <class T> T gelu_mul(T a, T b) { return gelu(a) * b; }
template <class T> T relu_mul(T a, T b) { return relu(a) * b; }
template <class T> T sigmoid_mul(T a, T b) { return sigmoid(a) * b; }
// d_a = g b act'(a), d_b = g act(a). For silu and gelu, act(a) is written as a times the
// sigmoid that act'(a) computes too, so a kernel evaluating both needs one exp and one
// division per element, not two of each (the product differs from act(a) by at most one
// rounding).
#define NUMR_ACT_MUL_BWD_A(act)                                                          \
  template <class T> T act##_mul_bwd_a(T g, T a, T b) { return g * b * finite_or_zero(act##_grad(a)); }
NUMR_ACT_MUL_BWD_A(silu)
NUMR_ACT_MUL_BWD_A(gelu)
NUMR_ACT_MUL_BWD_A(relu)
NUMR_ACT_MUL_BWD_A(sigmoid)
#undef NUMR_ACT_MUL_BWD_A
template <class T> T silu_mul_bwd_b(T g, T a, T) { return g * (a * sigmoid(a)); }
template <class T> T gelu_mul_bwd_b(T g, T a, T) { return g * (a * gelu_gate(a)); }
template <class T> T relu_mul_bwd_b(T g, T a, T) { return g * relu(a); }
template <class T> T sigmoid_mul_bwd_b(T g, T a, T) { return g * sigmoid(a); }

// ---- binary ----
template <class T> T add(T a, T b) { return a + b; }
template <class T> T sub(T a, T b) { return a - b; }
template <class T> T mul(T a, T b) { return a * b; }
template <class T> T div(T a, T b) { return a / b; }
// NaN in either input gives NaN.
template <class T> T maximum(T a, T b) { return select((a > b) | (a != a), a, b); }
template <class T> T minimum(T a, T b) { return select((a < b) | (a != a), a, b); }
template <class T> T fused_mul_add(T a, T b, T c) { return a * b + c; }
template <class T> T fused_add_mul(T a, T b, T c) { return (a + b) * c; }

// ---- compare and logical: 1 for true, 0 for false ----
template <class T> T eq(T a, T b) { return select(a == b, T(1), T(0)); }
template <class T> T ne(T a, T b) { return select(a != b, T(1), T(0)); }
template <class T> T lt(T a, T b) { return select(a < b, T(1), T(0)); }
template <class T> T le(T a, T b) { return select(a <= b, T(1), T(0)); }
template <class T> T gt(T a, T b) { return select(a > b, T(1), T(0)); }
template <class T> T ge(T a, T b) { return select(a >= b, T(1), T(0)); }
template <class T> T logical_and(T a, T b) { return select((a != T(0)) & (b != T(0)), T(1), T(0)); }
template <class T> T logical_or(T a, T b) { return select((a != T(0)) | (b != T(0)), T(1), T(0)); }
template <class T> T logical_xor(T a, T b) { return select((a != T(0)) ^ (b != T(0)), T(1), T(0)); }
template <class T> T where_cond(T c, T x, T y) { return select(c != T(0), x, y); }
// Bounds are applied only when present; NaN stays NaN.
template <class T> T clamp(T x, T lo, T hi, bool has_lo, bool has_hi) {
  if (has_lo) x = select(x < lo, lo, x);
  if (has_hi) x = select(x > hi, hi, x);
  return x;
}

// ---- tensor and scalar ----
template <class T> T add_scalar(T x, T s) { return x + s; }
template <class T> T sub_scalar(T x, T s) { return x - s; }
template <class T> T mul_scalar(T x, T s) { return x * s; }
template <class T> T div_scalar(T x, T s) { return x / s; }
template <class T> T pow_scalar(T x, T s) { return pow(x, s); }
template <class T> T rsub_scalar(T x, T s) { return s - x; }

// ---- activation derivatives from the output y = act(x), for a backward that saved only y ----
template <class T> T relu_grad_from_out(T y) { return select(y > T(0), T(1), T(0)); }
template <class T> T sigmoid_grad_from_out(T y) { return y * (T(1) - y); }
template <class T> T tanh_grad_from_out(T y) { return T(1) - y * y; }

}  // namespace numr::math::inline NUMR_MATH_ISA
