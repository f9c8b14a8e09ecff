// The autograd engine: accumulation over paths, broadcasting, detach, NoGradGuard, hooks,
// higher order, and errors.
#include <gtest/gtest.h>

#include <cmath>

#include "numr/autograd.h"
#include "support/gradcheck.h"

namespace numr {
namespace {

Tensor vec(std::vector<double> v) {
  const int64_t n = int64_t(v.size());
  return Tensor::from_vector(v, {n});
}

TEST(AutogradCore, GradientsAccumulateOverPaths) {
  Var x(vec({1.0, 2.0, 3.0}), true);
  const Var y = x * x + exp(x) * x;  // d/dx = 2x + e^x (1 + x)
  const Gradients g = backward(sum(y));
  const auto got = g[x].to_vector<double>();
  for (int i = 0; i < 3; ++i) {
    const double v = i + 1.0;
    EXPECT_NEAR(got[size_t(i)], 2 * v + std::exp(v) * (1 + v), 1e-12);
  }
}

TEST(AutogradCore, BroadcastInputsGetReducedGradients) {
  Var a(Tensor::from_vector<double>({1, 2, 3, 4, 5, 6}, {2, 3}), true);
  Var b(vec({10.0, 20.0, 30.0}), true);
  const Gradients g = backward(sum(a * b));
  EXPECT_EQ(g[b].shape(), (Shape{3}));
  EXPECT_EQ(g[b].to_vector<double>(), (std::vector<double>{5, 7, 9}));
  EXPECT_EQ(g[a].to_vector<double>(), (std::vector<double>{10, 20, 30, 10, 20, 30}));
}

TEST(AutogradCore, DetachAndNoGradStopGradients) {
  Var x(vec({1.0, 2.0}), true);
  const Gradients g = backward(sum(x * detach(x)));
  EXPECT_EQ(g[x].to_vector<double>(), (std::vector<double>{1, 2}));
  Var y;
  {
    NoGradGuard guard;
    EXPECT_FALSE(grad_enabled());
    y = x * x;
  }
  EXPECT_TRUE(grad_enabled());
  EXPECT_FALSE(y.requires_grad());
  EXPECT_THROW(backward(sum(y)), MissingGradient);
}

TEST(AutogradCore, HigherOrder) {
  Var x(vec({0.5, -1.0}), true);
  const Var y = sum(x * x * x);  // dy = 3x^2, d2y = 6x, d3y = 6
  const VarGradients g1 = backward(y, {.create_graph = true});
  const VarGradients g2 = backward(sum(g1[x]), {.create_graph = true});
  EXPECT_EQ(g2[x].tensor().to_vector<double>(), (std::vector<double>{3.0, -6.0}));
  const Gradients g3 = backward(sum(g2[x]));
  EXPECT_EQ(g3[x].to_vector<double>(), (std::vector<double>{6.0, 6.0}));
}

TEST(AutogradCore, LeafHookSeesFinalGradient) {
  Var x(vec({1.0, 2.0}), true);
  int calls = 0;
  std::vector<double> seen;
  x.register_hook([&](const Tensor& g) {
    ++calls;
    seen = g.to_vector<double>();
  });
  backward(sum(x * 3.0 + x * x));
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(seen, (std::vector<double>{5.0, 7.0}));
}

TEST(AutogradCore, Errors) {
  Var x(vec({1.0, 2.0}), true);
  EXPECT_THROW(backward(x * 2.0), InvalidArgument);  // not a scalar
  EXPECT_THROW(Var(Tensor::from_vector<int32_t>({1}, {1}), true), UnsupportedDType);
  const Gradients g = backward(sum(x));
  Var other(vec({1.0}), true);
  EXPECT_THROW(g[other], MissingGradient);
  EXPECT_THROW(backward(Var()), InvalidArgument);
}

TEST(AutogradCore, GradcheckHarnessCatchesAWrongRule) {
  // d/dx of x * x checked against central differences, first and second order.
  const test::VarFn f = [](const std::vector<Var>& v) { return v[0] * v[0] * v[1]; };
  EXPECT_EQ(test::gradcheck(f, {vec({0.3, -1.2}), vec({2.0, 0.7})}), "");
  EXPECT_EQ(test::gradgradcheck(f, {vec({0.3, -1.2}), vec({2.0, 0.7})}), "");
  // A function whose recorded gradient is wrong: detach hides a dependency.
  const test::VarFn wrong = [](const std::vector<Var>& v) { return v[0] * detach(v[0]); };
  EXPECT_NE(test::gradcheck(wrong, {vec({0.3, -1.2})}), "");
}

}  // namespace
}  // namespace numr

namespace numr {
namespace {

TEST(AutogradCore, CheckpointGivesTheSameGradients) {
  const Tensor t0 = Tensor::from_vector<double>({0.3, -0.7, 1.1, 0.2}, {2, 2});
  const Tensor t1 = Tensor::from_vector<double>({0.5, 0.25}, {2});
  auto block = [](const std::vector<Var>& v) -> std::vector<Var> {
    const Var h = silu(matmul(v[0], v[0]) + v[1]);
    return {tanh(h) * v[1], sum(h)};
  };
  Var a(t0, true), b(t1, true);
  const auto plain = block({a, b});
  const Gradients g1 = backward(sum(plain[0]) + plain[1] * 2.0);
  Var c(t0, true), d(t1, true);
  const auto ck = checkpoint(block, {c, d});
  EXPECT_FALSE(ck[0].grad_fn() == nullptr);
  const Gradients g2 = backward(sum(ck[0]) + ck[1] * 2.0);
  // Equal up to the order in which contributions are summed.
  auto near = [](const Tensor& x, const Tensor& y) {
    const auto u = x.to_vector<double>(), v = y.to_vector<double>();
    for (size_t i = 0; i < u.size(); ++i) EXPECT_NEAR(u[i], v[i], 1e-14 * (1 + std::fabs(u[i])));
  };
  near(g1[a], g2[c]);
  near(g1[b], g2[d]);
  // Second order through a checkpoint.
  const test::VarFn f = [&](const std::vector<Var>& v) {
    const auto o = checkpoint(block, v);
    return o[0] * o[1];
  };
  EXPECT_EQ(test::gradcheck(f, {t0, t1}), "");
  EXPECT_EQ(test::gradgradcheck(f, {t0, t1}), "");
}

TEST(AutogradCore, HookFiresOncePerBackwardEvenThroughCheckpoint) {
  Var x(Tensor::from_vector<double>({1.0, 2.0}, {2}), true);
  int calls = 0;
  x.register_hook([&](const Tensor&) { ++calls; });
  const auto o = checkpoint([](const std::vector<Var>& v) -> std::vector<Var> { return {v[0] * v[0]}; }, {x});
  backward(sum(o[0] + x));
  EXPECT_EQ(calls, 1);
}

}  // namespace
}  // namespace numr
