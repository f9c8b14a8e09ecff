// The fused gates act(a) * b: numr's documented values, fused = unfused for every
// activation and dtype, gradients first and second order, and the backward shortcut.
#include <gtest/gtest.h>

#include <cmath>

#include "support/gradcheck.h"
#include "support/harness.h"

namespace numr::test {
namespace {

double silu_d(double x) { return x / (1.0 + std::exp(-x)); }

TEST(FusedGates, NumrExpectations) {
  const Tensor a = Tensor::from_vector<float>({0.f, 1.f, -1.f}, {3});
  const Tensor b = Tensor::from_vector<float>({1.f, 2.f, 3.f}, {3});
  const auto s = silu_mul(a, b).to_vector<float>();
  EXPECT_EQ(s[0], 0.f);
  EXPECT_NEAR(s[1], 2 * silu_d(1.0), 1e-6);
  EXPECT_NEAR(s[2], 3 * silu_d(-1.0), 1e-6);
  const auto r = relu_mul(Tensor::from_vector<float>({-1.f, 0.f, 2.f}, {3}), full({3}, 5.0))
                     .to_vector<float>();
  EXPECT_EQ(r, (std::vector<float>{0.f, 0.f, 10.f}));
  // sigmoid_mul backward at a = 0, b = 2: d_a = 2 * sigmoid'(0) = 0.5, d_b = sigmoid(0) = 0.5.
  Var va(Tensor::from_vector<double>({0.0}, {1}), true), vb(Tensor::from_vector<double>({2.0}, {1}), true);
  const Gradients g = backward(sum(sigmoid_mul(va, vb)));
  EXPECT_DOUBLE_EQ(g[va].item<double>(), 0.5);
  EXPECT_DOUBLE_EQ(g[vb].item<double>(), 0.5);
  // Inputs that do not require grad give a result that does not.
  const Var c = gelu_mul(Var(a), Var(b));
  EXPECT_FALSE(c.requires_grad());
}

TEST(FusedGates, NonFiniteDerivativeBecomesZero) {
  const double inf = INFINITY;
  const Tensor x = Tensor::from_vector<double>({-inf, inf, 0.5}, {3});
  const Tensor g = ones({3}, DType::F64);
  const auto [da, db] = silu_mul_bwd(g, x, ones({3}, DType::F64));
  const auto d = da.to_vector<double>();
  // x (1 - s) is -inf * 1 at -inf and inf * 0 at +inf: not finite, so 0, as in numr.
  EXPECT_EQ(d[0], 0.0);
  EXPECT_EQ(d[1], 0.0);
  EXPECT_TRUE(std::isfinite(d[2]));
  const auto sb = silu_bwd(g, x).to_vector<double>();
  EXPECT_EQ(sb[0], 0.0);
}

Tensor fused(OpId op, const Tensor& a, const Tensor& b) {
  switch (op) {
    case OpId::silu_mul: return silu_mul(a, b);
    case OpId::gelu_mul: return gelu_mul(a, b);
    case OpId::relu_mul: return relu_mul(a, b);
    default: return sigmoid_mul(a, b);
  }
}
Tensor unfused(OpId op, const Tensor& a, const Tensor& b) {
  switch (op) {
    case OpId::silu_mul: return mul(silu(a), b);
    case OpId::gelu_mul: return mul(gelu(a), b);
    case OpId::relu_mul: return mul(relu(a), b);
    default: return mul(sigmoid(a), b);
  }
}
Var fused_var(OpId op, const Var& a, const Var& b) {
  switch (op) {
    case OpId::silu_mul: return silu_mul(a, b);
    case OpId::gelu_mul: return gelu_mul(a, b);
    case OpId::relu_mul: return relu_mul(a, b);
    default: return sigmoid_mul(a, b);
  }
}
Var unfused_var(OpId op, const Var& a, const Var& b) {
  switch (op) {
    case OpId::silu_mul: return silu(a) * b;
    case OpId::gelu_mul: return gelu(a) * b;
    case OpId::relu_mul: return relu(a) * b;
    default: return sigmoid(a) * b;
  }
}

constexpr OpId kGates[] = {OpId::silu_mul, OpId::gelu_mul, OpId::relu_mul, OpId::sigmoid_mul};

TEST(FusedGates, FusedEqualsUnfusedForEveryDtype) {
  for (OpId op : kGates) {
    for (DType t : float_dtypes()) {
      for (const Shape& shape : {Shape{7}, Shape{33, 17}, Shape{5, 7, 11}}) {
        const Tensor a = make_input(shape, t, Device::cpu(), InputSpec{.specials = true}, 1);
        const Tensor b = make_input(shape, t, Device::cpu(), InputSpec{}, 2);
        // The composition rounds act(a) to the dtype before multiplying; allow that one
        // extra rounding on top of the dtype's tolerance.
        Tolerance tol = tolerance_for(t);
        tol.rtol *= 2;
        tol.rel_norm *= 2;
        EXPECT_EQ(compare(fused(op, a, b), to_ref(unfused(op, a, b)), tol), "")
            << op_name(op) << " " << t << " " << shape_str(shape);
      }
    }
  }
}

TEST(FusedGates, GradientsEqualTheComposition) {
  for (OpId op : kGates) {
    for (const auto& [sa, sb] : {std::pair<Shape, Shape>{{6, 5}, {6, 5}}, {{6, 5}, {5}}, {{6, 1}, {6, 5}}}) {
      Var a(make_input(sa, DType::F64, Device::cpu(), InputSpec{}, 3), true);
      Var b(make_input(sb, DType::F64, Device::cpu(), InputSpec{}, 4), true);
      const Tensor w = make_input(broadcast_shapes("test", sa, sb), DType::F64, Device::cpu(), InputSpec{}, 5);
      const Gradients gf = backward(sum(fused_var(op, a, b) * Var(w)));
      const Gradients gu = backward(sum(unfused_var(op, a, b) * Var(w)));
      EXPECT_EQ(compare(gf[a], to_ref(gu[a]), tolerance_for(DType::F64)), "") << op_name(op);
      EXPECT_EQ(compare(gf[b], to_ref(gu[b]), tolerance_for(DType::F64)), "") << op_name(op);
    }
  }
}

TEST(GradFused, FirstAndSecondOrder) {
  for (OpId op : kGates) {
    const VarFn f = [op](const std::vector<Var>& x) { return fused_var(op, x[0], x[1]); };
    auto smooth = [](const Shape& s, uint64_t seed) {
      Tensor t = make_input(s, DType::F64, Device::cpu(), InputSpec{.lo = 0.2, .hi = 2.0}, seed);
      // Away from relu's kink at 0: alternate signs with magnitude >= 0.2.
      std::vector<double> v = t.to_vector<double>();
      for (size_t i = 0; i < v.size(); i += 2) v[i] = -v[i];
      return Tensor::from_vector(v, s);
    };
    check_gradients(op, "same shapes", f, {smooth({7}, 1), smooth({7}, 2)});
    check_gradients(op, "broadcast b", f, {smooth({3, 4}, 3), smooth({4}, 4)});
  }
}

}  // namespace
}  // namespace numr::test
