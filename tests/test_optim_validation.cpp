// Optimizer hyper-parameters are checked (finite, in range), and a step either applies
// completely or, when it throws, changes nothing.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "numr/optim.h"

namespace numr {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

void expect_invalid(const std::string& message, const std::function<void()>& f) {
  try {
    f();
    ADD_FAILURE() << "expected InvalidArgument: " << message;
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(std::string(e.what()), message);
  }
}

Var param(std::vector<double> values) {
  const int64_t n = int64_t(values.size());
  return Var(Tensor::from_vector<double>(std::move(values), {n}), true);
}

TEST(OptimValidation, AdamWHyperParameters) {
  const Var p = param({1.0, 2.0});
  expect_invalid("[AdamW] lr must be finite and >= 0, got inf", [&] { AdamW({p}, {.lr = kInf}); });
  expect_invalid("[AdamW] lr must be finite and >= 0, got nan", [&] { AdamW({p}, {.lr = kNaN}); });
  expect_invalid("[AdamW] lr must be finite and >= 0, got -1", [&] { AdamW({p}, {.lr = -1}); });
  expect_invalid("[AdamW] weight_decay must be finite and >= 0, got nan",
                 [&] { AdamW({p}, {.weight_decay = kNaN}); });
  expect_invalid("[AdamW] weight_decay must be finite and >= 0, got -0.5",
                 [&] { AdamW({p}, {.weight_decay = -0.5}); });
  expect_invalid("[AdamW] eps must be finite, got inf", [&] { AdamW({p}, {.eps = kInf}); });
  expect_invalid("[AdamW] eps must be finite and > 0, got 0", [&] { AdamW({p}, {.eps = 0}); });
  expect_invalid("[AdamW] beta1 must be finite and in [0, 1), got 1",
                 [&] { AdamW({p}, {.beta1 = 1.0}); });
  expect_invalid("[AdamW] beta1 must be finite and in [0, 1), got -0.1",
                 [&] { AdamW({p}, {.beta1 = -0.1}); });
  expect_invalid("[AdamW] beta2 must be finite and in [0, 1), got nan",
                 [&] { AdamW({p}, {.beta2 = kNaN}); });
  expect_invalid("[AdamW] lr * weight_decay must be finite, got 1e+200 * 1e+200",
                 [&] { AdamW({p}, {.lr = 1e200, .weight_decay = 1e200}); });
  // Edges that are allowed.
  EXPECT_NO_THROW(AdamW({p}, {.lr = 0, .beta1 = 0, .beta2 = 0, .weight_decay = 0}));
}

TEST(OptimValidation, SgdHyperParameters) {
  const Var p = param({1.0, 2.0});
  expect_invalid("[Sgd] lr must be finite and >= 0, got inf", [&] { Sgd({p}, {.lr = kInf}); });
  expect_invalid("[Sgd] momentum must be finite and >= 0, got nan",
                 [&] { Sgd({p}, {.momentum = kNaN}); });
  expect_invalid("[Sgd] momentum must be finite and >= 0, got -0.9",
                 [&] { Sgd({p}, {.momentum = -0.9}); });
  expect_invalid("[Sgd] weight_decay must be finite and >= 0, got inf",
                 [&] { Sgd({p}, {.weight_decay = kInf}); });
  EXPECT_NO_THROW(Sgd({p}, {.lr = 0}));
}

TEST(OptimValidation, SetLrIsCheckedAndUsed) {
  const Var p = param({1.0, -2.0});
  Sgd sgd({p}, {.lr = 0.1});
  expect_invalid("[Sgd] lr must be finite and >= 0, got nan", [&] { sgd.set_lr(kNaN); });
  EXPECT_EQ(sgd.options().lr, 0.1);  // unchanged by the refused value
  sgd.set_lr(0.5);
  EXPECT_EQ(sgd.options().lr, 0.5);
  Gradients g;
  g.map()[p.id()] = Tensor::from_vector<double>({1.0, 1.0}, {2});
  sgd.step(g);
  EXPECT_EQ(p.tensor().to_vector<double>(), (std::vector<double>{0.5, -2.5}));

  const Var q = param({1.0});
  AdamW adam({q}, {.lr = 0.1, .weight_decay = 10});
  expect_invalid("[AdamW] lr must be finite and >= 0, got inf", [&] { adam.set_lr(kInf); });
  expect_invalid("[AdamW] lr * weight_decay must be finite, got 1e+308 * 10",
                 [&] { adam.set_lr(1e308); });
  EXPECT_EQ(adam.options().lr, 0.1);
  adam.set_lr(0.0);
  Gradients gq;
  gq.map()[q.id()] = Tensor::from_vector<double>({3.0}, {1});
  adam.step(gq);
  EXPECT_EQ(q.tensor().item<double>(), 1.0);  // lr 0: no move, no decay
}

bool same_bits(const Tensor& a, const Tensor& b) {
  if (a.defined() != b.defined()) return false;
  if (!a.defined()) return true;
  if (a.shape() != b.shape() || a.dtype() != b.dtype()) return false;
  const std::vector<double> x = a.to_vector<double>(), y = b.to_vector<double>();
  return std::memcmp(x.data(), y.data(), x.size() * sizeof(double)) == 0;
}

// Gradients for p and q (given explicitly, so a bad one can be made).
Gradients grads(const Var& p, Tensor gp, const Var& q, Tensor gq) {
  Gradients g;
  if (gp.defined()) g.map()[p.id()] = std::move(gp);
  g.map()[q.id()] = std::move(gq);
  return g;
}

Tensor vec(std::vector<double> v) {
  const int64_t n = int64_t(v.size());
  return Tensor::from_vector<double>(std::move(v), {n});
}

// Bad gradients for q (the second parameter, so p would be updated first).
std::vector<std::pair<std::string, Tensor>> bad_gradients() {
  return {{"broadcastable shape [1]", vec({5.0})},
          {"wrong shape [3, 1]", Tensor::from_vector<double>({1, 2, 3}, {3, 1})},
          {"wrong dtype", Tensor::from_vector<float>({1.f, 2.f, 3.f}, {3})},
          {"undefined", Tensor()}};
}

TEST(OptimValidation, AdamWStepIsAtomic) {
  for (const auto& [what, bad] : bad_gradients()) {
    SCOPED_TRACE(what);
    // Two optimizers with the same history; only `a` sees the bad step.
    const Var pa = param({0.5, -1.0, 2.0}), qa = param({1.0, 1.5, -0.5});
    const Var pb = param({0.5, -1.0, 2.0}), qb = param({1.0, 1.5, -0.5});
    AdamW a({pa, qa}, {.lr = 0.1, .weight_decay = 0.01});
    AdamW b({pb, qb}, {.lr = 0.1, .weight_decay = 0.01});
    a.step(grads(pa, vec({0.1, 0.2, 0.3}), qa, vec({-1, 0.5, 2})));
    b.step(grads(pb, vec({0.1, 0.2, 0.3}), qb, vec({-1, 0.5, 2})));

    const Tensor p0 = pa.tensor(), q0 = qa.tensor();
    const Tensor m0 = a.exp_avg(0), v0 = a.exp_avg_sq(0), mq0 = a.exp_avg(1);
    EXPECT_THROW(a.step(grads(pa, vec({1, 1, 1}), qa, bad)), Error);
    EXPECT_TRUE(same_bits(pa.tensor(), p0));
    EXPECT_TRUE(same_bits(qa.tensor(), q0));
    EXPECT_TRUE(same_bits(a.exp_avg(0), m0));
    EXPECT_TRUE(same_bits(a.exp_avg_sq(0), v0));
    EXPECT_TRUE(same_bits(a.exp_avg(1), mq0));
    EXPECT_EQ(a.steps(), 1);
    EXPECT_EQ(a.updates(0), 1);
    EXPECT_EQ(a.updates(1), 1);

    a.step(grads(pa, vec({-0.3, 0.1, 0.4}), qa, vec({2, -1, 0.25})));
    b.step(grads(pb, vec({-0.3, 0.1, 0.4}), qb, vec({2, -1, 0.25})));
    EXPECT_TRUE(same_bits(pa.tensor(), pb.tensor()));
    EXPECT_TRUE(same_bits(qa.tensor(), qb.tensor()));
    EXPECT_TRUE(same_bits(a.exp_avg(1), b.exp_avg(1)));
    EXPECT_EQ(a.steps(), b.steps());
  }
}

TEST(OptimValidation, SgdStepIsAtomic) {
  for (const auto& [what, bad] : bad_gradients()) {
    SCOPED_TRACE(what);
    const Var pa = param({0.5, -1.0, 2.0}), qa = param({1.0, 1.5, -0.5});
    const Var pb = param({0.5, -1.0, 2.0}), qb = param({1.0, 1.5, -0.5});
    const SgdOptions o{.lr = 0.1, .momentum = 0.9, .weight_decay = 0.01};
    Sgd a({pa, qa}, o), b({pb, qb}, o);
    a.step(grads(pa, vec({0.1, 0.2, 0.3}), qa, vec({-1, 0.5, 2})));
    b.step(grads(pb, vec({0.1, 0.2, 0.3}), qb, vec({-1, 0.5, 2})));

    const Tensor p0 = pa.tensor(), q0 = qa.tensor(), vel0 = a.velocity(0);
    EXPECT_THROW(a.step(grads(pa, vec({1, 1, 1}), qa, bad)), Error);
    EXPECT_TRUE(same_bits(pa.tensor(), p0));
    EXPECT_TRUE(same_bits(qa.tensor(), q0));
    EXPECT_TRUE(same_bits(a.velocity(0), vel0));

    a.step(grads(pa, vec({-0.3, 0.1, 0.4}), qa, vec({2, -1, 0.25})));
    b.step(grads(pb, vec({-0.3, 0.1, 0.4}), qb, vec({2, -1, 0.25})));
    EXPECT_TRUE(same_bits(pa.tensor(), pb.tensor()));
    EXPECT_TRUE(same_bits(qa.tensor(), qb.tensor()));
    EXPECT_TRUE(same_bits(a.velocity(0), b.velocity(0)));
  }
}

TEST(OptimValidation, StepErrorsNameTheOptimizerAndTheParameter) {
  const Var p = param({1.0, 2.0, 3.0}), q = param({1.0, 2.0, 3.0});
  AdamW opt({p, q}, {});
  try {
    opt.step(grads(p, vec({1, 1, 1}), q, vec({5.0})));
    ADD_FAILURE() << "a [1] gradient for a [3] parameter was accepted";
  } catch (const ShapeMismatch& e) {
    EXPECT_EQ(std::string(e.what()),
              "[AdamW] the gradient of parameter 1 has shape [1], the parameter [3]");
  }
  Sgd sgd({p, q}, {});
  EXPECT_THROW(sgd.step(grads(p, vec({1, 1, 1}), q, Tensor::from_vector<float>({1, 2, 3}, {3}))),
               DTypeMismatch);
  // A parameter without a gradient is skipped, as documented.
  const Tensor before = q.tensor();
  Gradients only_p;
  only_p.map()[p.id()] = vec({1, 1, 1});
  opt.step(only_p);
  EXPECT_TRUE(same_bits(q.tensor(), before));
  EXPECT_FALSE(same_bits(p.tensor(), vec({1.0, 2.0, 3.0})));
}

}  // namespace
}  // namespace numr
