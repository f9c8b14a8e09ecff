// The autograd engine: accumulation over paths, broadcasting, detach, NoGradGuard, hooks,
// higher order, and errors.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

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

TEST(AutogradCore, CheckpointOfAVarPassedTwice) {
  // d/dx sum(x * x) = 2x, with or without the checkpoint, for a leaf and an inner Var.
  Var x(vec({0.3, -1.2, 2.0}), true);
  const auto square_of = [](const std::vector<Var>& in) -> std::vector<Var> {
    return {in[0] * in[1]};
  };
  EXPECT_EQ(backward(sum(checkpoint(square_of, {x, x})[0]))[x].to_vector<double>(),
            (std::vector<double>{0.6, -2.4, 4.0}));
  const Var h = x * 1.0;
  EXPECT_EQ(backward(sum(checkpoint(square_of, {h, h})[0]))[x].to_vector<double>(),
            (std::vector<double>{0.6, -2.4, 4.0}));
}

TEST(AutogradCore, CheckpointRejectsVarsThatBypassItsInputs) {
  // A parameter captured by f would get no gradient from the recomputed graph.
  Var w(vec({0.5, -0.5, 2.0}), true);
  Var x(vec({1.0, 2.0, 3.0}), true);
  const Tensor c = vec({1.0, 1.0, 1.0});
  const auto scaled = [w](const std::vector<Var>& in) -> std::vector<Var> { return {in[0] * w}; };
  EXPECT_THROW(checkpoint(scaled, {x}), InvalidArgument);
  EXPECT_THROW(checkpoint(scaled, {Var(c, false)}), InvalidArgument);
  // Passed as an input, it gets its gradient; with recording off there is nothing to lose.
  const auto both = [](const std::vector<Var>& in) -> std::vector<Var> { return {in[0] * in[1]}; };
  const Gradients g = backward(sum(checkpoint(both, {x, w})[0]));
  EXPECT_EQ(g[w].to_vector<double>(), (std::vector<double>{1.0, 2.0, 3.0}));
  NoGradGuard off;
  EXPECT_NO_THROW(checkpoint(scaled, {x}));
}

TEST(AutogradCore, HookFiresWhenANodeOnAnotherPathGetsNoGradient) {
  // z reaches the loss directly and through h, whose checkpoint output the loss ignores.
  Var x(vec({1.0, 2.0}), true), z(vec({3.0, 4.0}), true);
  int calls = 0;
  z.register_hook([&](const Tensor&) { ++calls; });
  const Var h = z * 3.0;
  const auto out = checkpoint(
      [](const std::vector<Var>& in) -> std::vector<Var> {
        return {in[0] * 2.0, in[1] * 2.0};
      },
      {x, h});
  const Gradients g = backward(sum(out[0]) + sum(z));
  EXPECT_EQ(g[z].to_vector<double>(), (std::vector<double>{1.0, 1.0}));
  EXPECT_EQ(calls, 1);
}

TEST(AutogradCore, PowGradientsAtZeroBase) {
  // As PyTorch: d/da a^b is 0 where b = 0, d/db is 0 where a = 0 and b >= 0.
  Var a(vec({0.0, 0.0, 2.0}), true), b(vec({2.0, 0.0, 3.0}), true);
  const Gradients g = backward(sum(pow(a, b)));
  EXPECT_EQ(g[a].to_vector<double>(), (std::vector<double>{0.0, 0.0, 12.0}));
  const auto db = g[b].to_vector<double>();
  EXPECT_EQ(db[0], 0.0);
  EXPECT_EQ(db[1], 0.0);
  EXPECT_NEAR(db[2], 8.0 * std::log(2.0), 1e-15);
  Var x(vec({0.0, 1.0}), true);
  EXPECT_EQ(backward(sum(pow_scalar(x, 0.0)))[x].to_vector<double>(),
            (std::vector<double>{0.0, 0.0}));
  EXPECT_EQ(test::gradcheck([](const std::vector<Var>& v) { return pow(v[0], v[1]); },
                            {vec({0.5, 1.5}), vec({2.0, -0.5})}),
            "");
}

TEST(AutogradCore, CreateGraphGivesThePlainFirstDerivativeAtInfinities) {
  // A non-finite activation derivative is 0 on both paths (at x = +-inf the composed
  // forms meet 0 * inf).
  const Tensor t = vec({-INFINITY, 1.0, INFINITY});
  const Var one(vec({1.0, 1.0, 1.0}), false);
  const std::vector<std::function<Var(const Var&)>> fs = {
      [](const Var& v) { return silu(v); }, [](const Var& v) { return gelu(v); },
      [&](const Var& v) { return silu_mul(v, one); },
      [&](const Var& v) { return gelu_mul(v, one); }};
  for (const auto& f : fs) {
    Var x(t, true), y(t, true);
    const auto plain = backward(sum(f(x)))[x].to_vector<double>();
    const auto graph = backward(sum(f(y)), {.create_graph = true})[y].tensor().to_vector<double>();
    EXPECT_EQ(plain[0], 0.0);
    EXPECT_EQ(plain[2], 0.0);
    EXPECT_EQ(graph, plain);
  }
}

TEST(AutogradCore, StdOfConstantValuesHasGradientZero) {
  Var x(vec({2.0, 2.0, 2.0}), true);
  EXPECT_EQ(backward(std(x))[x].to_vector<double>(), (std::vector<double>{0.0, 0.0, 0.0}));
  Var y(vec({1.0, 3.0}), true);
  const auto gy = backward(std(y))[y].to_vector<double>();  // std = sqrt(2): +-1 / sqrt(2)
  EXPECT_NEAR(gy[0], -1.0 / std::sqrt(2.0), 1e-15);
  EXPECT_NEAR(gy[1], 1.0 / std::sqrt(2.0), 1e-15);
}

TEST(AutogradCore, CumsumOfAZeroDimTensor) {
  Var x(Tensor::from_vector<double>({0.7}, {}), true);
  EXPECT_EQ(backward(cumsum(x, 0) * 3.0)[x].item<double>(), 3.0);
  EXPECT_DOUBLE_EQ(backward(cumprod(x, -1) * 3.0)[x].item<double>(), 3.0);
}

}  // namespace
}  // namespace numr
