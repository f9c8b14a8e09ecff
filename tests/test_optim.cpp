// Optimizers against hand-computed updates, and convergence on a small problem.
#include <gtest/gtest.h>

#include <cmath>

#include "numr/optim.h"

namespace numr {
namespace {

TEST(Optim, SgdMomentumMatchesTheFormula) {
  Var p(Tensor::from_vector<double>({1.0, -2.0}, {2}), true);
  Sgd opt({p}, {.lr = 0.1, .momentum = 0.9, .weight_decay = 0.01});
  // loss = sum(p^2): g = 2p.
  double v0 = 0, v1 = 0, p0 = 1.0, p1 = -2.0;
  for (int t = 0; t < 3; ++t) {
    opt.step(backward(sum(square(p))));
    const double d0 = 2 * p0 + 0.01 * p0, d1 = 2 * p1 + 0.01 * p1;
    v0 = 0.9 * v0 + d0;
    v1 = 0.9 * v1 + d1;
    p0 -= 0.1 * v0;
    p1 -= 0.1 * v1;
    const auto got = p.tensor().to_vector<double>();
    EXPECT_NEAR(got[0], p0, 1e-14);
    EXPECT_NEAR(got[1], p1, 1e-14);
  }
}

TEST(Optim, AdamWMatchesTheFormula) {
  Var p(Tensor::from_vector<double>({0.5, -1.5}, {2}), true);
  AdamW opt({p}, {.lr = 0.01, .weight_decay = 0.1});
  double m[2] = {0, 0}, v[2] = {0, 0}, q[2] = {0.5, -1.5};
  for (int t = 1; t <= 3; ++t) {
    opt.step(backward(sum(square(p) * 3.0)));
    for (int i = 0; i < 2; ++i) {
      const double g = 6 * q[i];
      m[i] = 0.9 * m[i] + 0.1 * g;
      v[i] = 0.999 * v[i] + 0.001 * g * g;
      const double mh = m[i] / (1 - std::pow(0.9, t)), vh = v[i] / (1 - std::pow(0.999, t));
      q[i] = q[i] * (1 - 0.01 * 0.1) - 0.01 * mh / (std::sqrt(vh) + 1e-8);
    }
    const auto got = p.tensor().to_vector<double>();
    EXPECT_NEAR(got[0], q[0], 1e-12);
    EXPECT_NEAR(got[1], q[1], 1e-12);
  }
  EXPECT_EQ(opt.steps(), 3);
}

TEST(Optim, AdamWCorrectsEachParameterForItsOwnUpdates) {
  // q gets no gradient in the first two steps: its first update is a first step's
  // (m / (1 - beta1) = g, v / (1 - beta2) = g^2: a move of lr * g / (|g| + eps)).
  Var p(Tensor::from_vector<double>({1.0}, {1}), true);
  Var q(Tensor::from_vector<double>({1.0}, {1}), true);
  AdamW opt({p, q}, {.lr = 0.1, .weight_decay = 0.0});
  opt.step(backward(sum(p * 2.0)));
  opt.step(backward(sum(p * 2.0)));
  EXPECT_EQ(q.tensor().item<double>(), 1.0);  // untouched without a gradient
  opt.step(backward(sum(p * 2.0) + sum(q * 2.0)));
  EXPECT_NEAR(q.tensor().item<double>(), 1.0 - 0.1 * 2.0 / (2.0 + 1e-8), 1e-15);
  EXPECT_EQ(opt.steps(), 3);
}

TEST(Optim, AdamWFitsALinearModel) {
  Generator gen(3);
  const Tensor x = randn({256, 4}, DType::F32, Device::cpu(), gen);
  const Tensor w_true = Tensor::from_vector<float>({1.f, -2.f, 0.5f, 3.f}, {4, 1});
  const Tensor y = matmul(x, w_true);
  Var w(zeros({4, 1}), true);
  AdamW opt({w}, {.lr = 0.05, .weight_decay = 0.0});
  double loss = 0;
  for (int i = 0; i < 400; ++i) {
    const Var l = mean(square(matmul(Var(x), w) - Var(y)));
    loss = l.tensor().item<float>();
    opt.step(backward(l));
  }
  EXPECT_LT(loss, 1e-4);
}

TEST(Optim, Errors) {
  Var leaf(zeros({2}, DType::F64), true), frozen(zeros({2}, DType::F64), false);
  EXPECT_THROW(Sgd({frozen}, {}), InvalidArgument);
  EXPECT_THROW(AdamW({leaf}, {.lr = -1}), InvalidArgument);
  EXPECT_THROW(Sgd({leaf, leaf}, {}), InvalidArgument);  // would be updated twice a step
  EXPECT_THROW(AdamW({leaf, leaf}, {}), InvalidArgument);
  EXPECT_THROW(leaf.assign(zeros({3}, DType::F64)), InvalidArgument);
  EXPECT_THROW((leaf * 2.0).assign(zeros({2}, DType::F64)), InvalidArgument);
}

}  // namespace
}  // namespace numr
