// Operands and the float64 oracle for the GEMM kernel tests: operands made on the CPU in a
// given layout (plain, transposed, strided) with the same view of their copy on a device,
// and a float64 product with Σ|a||b| per output element, for the bound of f32
// accumulation |got - exact| <= γ_K Σ|a||b| (γ_K = Ku/(1-Ku), u = 2^-24), which holds for
// any summation order.
#pragma once

#include <algorithm>
#include <cmath>
#include <functional>
#include <utility>
#include <vector>

#include "math/activation.h"
#include "numr/numr.h"

namespace numr::test {

inline constexpr double kF32Unit = 0x1p-24;  // f32's unit roundoff
inline double gamma_f32(int64_t n) { return double(n) * kF32Unit / (1.0 - double(n) * kF32Unit); }

// A base tensor and the view of it the product takes.
struct MatmulOperand {
  Shape base;
  std::function<Tensor(const Tensor&)> view = [](const Tensor& t) { return t; };
};
inline MatmulOperand plain(Shape s) { return {std::move(s)}; }
// The last two dims of a base [.., cols, rows] swapped: the matrix is read column-major.
inline MatmulOperand transposed(Shape s) {
  std::swap(s[s.size() - 1], s[s.size() - 2]);
  return {s, [](const Tensor& t) { return t.transpose(t.dim() - 2, t.dim() - 1); }};
}
// Every other column of a base with one more row, from the second row on: strides
// (2·cols, 2), neither of them 1, and an offset.
inline MatmulOperand strided(Shape s) {
  const int64_t rows = s[s.size() - 2], cols = s.back();
  Shape base = s, split = s;
  base[base.size() - 2] = rows + 1;
  base.back() = 2 * cols;
  split[split.size() - 2] = rows + 1;
  split.push_back(2);
  return {base, [split, rows](const Tensor& t) {
            return t.view(split).narrow(-1, 1, 1).squeeze(-1).narrow(-2, 1, rows);
          }};
}

// The CPU operand (values uniform in [-1, 1) rounded to t) and the same view of its copy on
// the device.
struct OperandPair {
  Tensor cpu, gpu;
};
inline OperandPair make_operand(const MatmulOperand& o, DType t, Device dev, uint64_t seed) {
  Generator g(seed);
  const Tensor base = (rand(o.base, DType::F32, Device::cpu(), g) * 2.0 - 1.0).cast(t);
  return {o.view(base), o.view(base.to(dev))};
}

// t broadcast to `full`, contiguous, as floats.
inline std::vector<float> float_values(const Tensor& t, const Shape& full) {
  return broadcast_to(t, full).contiguous().cast(DType::F32).to_vector<float>();
}

// exact[i] and Σ|a||b| of each element of a @ b (batch dims broadcast), in float64.
struct ExactProduct {
  std::vector<double> value, magnitude;
};
inline ExactProduct exact_product(const Tensor& a, const Tensor& b) {
  const Shape& sa = a.shape();
  const int64_t m = sa[sa.size() - 2], k = sa.back(), n = b.shape().back();
  const Shape batch = broadcast_shapes("matmul", Shape(sa.begin(), sa.end() - 2),
                                       Shape(b.shape().begin(), b.shape().end() - 2));
  Shape fa = batch, fb = batch;
  fa.insert(fa.end(), {m, k});
  fb.insert(fb.end(), {k, n});
  const std::vector<float> av = float_values(a, fa), bv = float_values(b, fb);
  const int64_t items = shape_numel(batch);
  ExactProduct e;
  e.value.assign(size_t(items * m * n), 0.0);
  e.magnitude.assign(e.value.size(), 0.0);
  for (int64_t t = 0; t < items; ++t)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t p = 0; p < k; ++p) {
        const double x = av[size_t((t * m + i) * k + p)];
        for (int64_t j = 0; j < n; ++j) {
          const double y = bv[size_t((t * k + p) * n + j)];
          const size_t o = size_t((t * m + i) * n + j);
          e.value[o] += x * y;
          e.magnitude[o] += std::fabs(x * y);
        }
      }
  return e;
}

// Runs the epilogue under test: act(a @ b + bias) with its saved pre-activation (where the
// activation keeps one), or a @ b + bias + residual.
struct EpilogueRun {
  Tensor out, pre;
};
inline EpilogueRun run_epilogue(const Tensor& a, const Tensor& b, const Tensor& bias,
                                const Tensor& residual, Activation act, bool with_residual) {
  if (with_residual) return {matmul_bias_residual(a, b, bias, residual), Tensor()};
  const EpilogueForward f = matmul_bias_activation_fwd(a, b, bias, act);
  return {f.out, needs_preactivation(act) ? f.saved : Tensor()};
}

// The rounding to the stored dtype of a value v: u|v| with u its unit roundoff, or half the
// spacing of F16's subnormals below its normal range; F32 results are stored as
// accumulated.
inline double store_err(DType t, double v) {
  if (t == DType::F16) return std::max(0x1p-11 * v, 0x1p-25);
  return t == DType::BF16 ? 0x1p-8 * v : 0.0;
}

// The largest slope of each activation: an error d in its argument moves it at most L·d.
inline double slope(Activation act) {
  switch (act) {
    case Activation::Gelu: return 1.13;  // Φ(x) + xφ(x) peaks at 1.1289 (x = √2)
    case Activation::Silu: return 1.1;   // peaks at 1.0998
    case Activation::Sigmoid: return 0.25;
    default: return 1.0;  // None, Relu, Tanh
  }
}

// The expected pre-activation a @ b + bias and output act(pre) (+ residual) of a GEMM
// epilogue in dtype t, each with its bound: pre is off by at most γ_{K+1}(Σ|a||b| + |bias|);
// the activation moves that by its slope and adds its own f32 rounding, a few units of its
// argument and result (formulas such as x·(1 + erf(x/√2)) round on the argument's scale); the
// residual adds one rounding; each result adds its rounding to t.
struct EpilogueExpected {
  std::vector<double> pre, pre_bound, out, out_bound;
};
inline EpilogueExpected epilogue_expected(const ExactProduct& e, const std::vector<float>& bias,
                                          const std::vector<float>* residual, int64_t k,
                                          Activation act, DType t) {
  const size_t count = e.value.size(), n = bias.size();
  EpilogueExpected x{std::vector<double>(count), std::vector<double>(count),
                     std::vector<double>(count), std::vector<double>(count)};
  for (size_t i = 0; i < count; ++i) {
    const double bi = bias[i % n];
    x.pre[i] = e.value[i] + bi;
    const double pb = gamma_f32(k + 1) * (e.magnitude[i] + std::fabs(bi));
    x.pre_bound[i] = pb + store_err(t, std::fabs(x.pre[i]) + pb);
    const double y = math::activate(act, x.pre[i]);
    const double r = residual ? double((*residual)[i]) : 0.0;
    x.out[i] = y + r;
    double ob = slope(act) * pb + 8 * kF32Unit * (std::fabs(x.pre[i]) + std::fabs(y));
    if (residual) ob += kF32Unit * (std::fabs(y) + std::fabs(r));
    x.out_bound[i] = ob + store_err(t, std::fabs(x.out[i]) + ob);
  }
  return x;
}

}  // namespace numr::test
