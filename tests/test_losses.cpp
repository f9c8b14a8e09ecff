// cross_entropy, nll_loss and mse_loss: values against float64 computed here by hand,
// gradients against central differences, and the argument checks.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "numr/numr.h"
#include "support/gradcheck.h"

namespace numr {
namespace {

std::vector<double> values(const Tensor& t) { return t.cast(DType::F64).to_vector<double>(); }

void expect_near(const std::vector<double>& got, const std::vector<double>& want,
                 double tol = 1e-12) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << "index " << i;
}

const Tensor& logits() {
  static const Tensor t = Tensor::from_vector<double>({1, 2, 3, 1, -1, 0}, {2, 3});
  return t;
}
const Tensor& target() {
  static const Tensor t = Tensor::from_vector<int64_t>({2, 0}, {2});
  return t;
}
// -log softmax(row)[k] = log(sum exp(row)) - row[k].
std::vector<double> expected_ce() {
  const double lse0 = std::log(std::exp(1.0) + std::exp(2.0) + std::exp(3.0));
  const double lse1 = std::log(std::exp(1.0) + std::exp(-1.0) + std::exp(0.0));
  return {lse0 - 3.0, lse1 - 1.0};
}

// Checks that f throws E with a message starting with prefix.
template <class E, class F>
void expect_error(F f, const std::string& prefix) {
  try {
    f();
    ADD_FAILURE() << "no exception, expected " << prefix;
  } catch (const E& e) {
    EXPECT_EQ(std::string(e.what()).rfind(prefix, 0), 0u) << e.what();
  }
}

TEST(Losses, CrossEntropyValues) {
  const std::vector<double> ce = expected_ce();
  expect_near(values(cross_entropy(logits(), target(), Reduction::None)), ce);
  expect_near(values(cross_entropy(logits(), target())), {(ce[0] + ce[1]) / 2});
  expect_near(values(cross_entropy(logits(), target(), Reduction::Sum)), {ce[0] + ce[1]});
  EXPECT_EQ(cross_entropy(logits(), target()).dim(), 0);
  EXPECT_EQ(cross_entropy(logits(), target(), Reduction::None).shape(), (Shape{2}));
  // F32 within float rounding of the same values.
  const Tensor f = cross_entropy(logits().cast(DType::F32), target(), Reduction::None);
  EXPECT_EQ(f.dtype(), DType::F32);
  expect_near(values(f), ce, 1e-6);
  // Large logits: the log-sum-exp is shifted, no overflow.
  const Tensor big = Tensor::from_vector<float>({1000, 0, -1000, 1000}, {2, 2});
  expect_near(
      values(cross_entropy(big, Tensor::from_vector<int64_t>({1, 1}, {2}), Reduction::None)),
      {1000, 0}, 1e-3);
}

TEST(Losses, CrossEntropyGradient) {
  // d mean / d logits = (softmax - one_hot) / N.
  const Var x(logits(), true);
  const Gradients g = backward(cross_entropy(x, target()));
  std::vector<double> want;
  const std::vector<double> l = values(logits());
  const int64_t tgt[2] = {2, 0};
  for (int n = 0; n < 2; ++n) {
    double z = 0;
    for (int c = 0; c < 3; ++c) z += std::exp(l[size_t(n * 3 + c)]);
    for (int c = 0; c < 3; ++c)
      want.push_back((std::exp(l[size_t(n * 3 + c)]) / z - (c == tgt[n] ? 1.0 : 0.0)) / 2);
  }
  expect_near(values(g[x]), want);
  for (Reduction r : {Reduction::Mean, Reduction::Sum, Reduction::None}) {
    const auto f = [r](const std::vector<Var>& in) { return cross_entropy(in[0], target(), r); };
    EXPECT_EQ(test::gradcheck(f, {logits()}), "");
    EXPECT_EQ(test::gradgradcheck(f, {logits()}), "");
  }
}

TEST(Losses, NllLoss) {
  const Tensor lp = Tensor::from_vector<double>({-0.5, -1, -2, -3, -0.1, -0.7}, {2, 3});
  const Tensor t = Tensor::from_vector<int64_t>({1, 2}, {2});
  expect_near(values(nll_loss(lp, t, Reduction::None)), {1, 0.7});
  expect_near(values(nll_loss(lp, t)), {0.85});
  expect_near(values(nll_loss(lp, t, Reduction::Sum)), {1.7});
  // A -inf in a class that is not the target does not leak into the loss.
  const Tensor with_inf = Tensor::from_vector<double>({-INFINITY, -1, -0.5, -2}, {2, 2});
  expect_near(values(nll_loss(with_inf, Tensor::from_vector<int64_t>({1, 0}, {2}))), {0.75});
  // cross_entropy is nll_loss of log_softmax.
  expect_near(values(nll_loss(log_softmax(logits(), 1), target(), Reduction::None)), expected_ce());
  const Var v(lp, true);
  const Gradients g = backward(nll_loss(v, t, Reduction::Sum));
  expect_near(values(g[v]), {0, -1, 0, 0, 0, -1});
  const auto f = [&](const std::vector<Var>& in) { return nll_loss(in[0], t); };
  EXPECT_EQ(test::gradcheck(f, {lp}), "");
}

TEST(Losses, MseLoss) {
  const Tensor a = Tensor::from_vector<double>({1, 2, 3}, {3});
  const Tensor b = Tensor::from_vector<double>({0, 4, 3.5}, {3});
  expect_near(values(mse_loss(a, b, Reduction::None)), {1, 4, 0.25});
  expect_near(values(mse_loss(a, b)), {1.75});
  expect_near(values(mse_loss(a, b, Reduction::Sum)), {5.25});
  const Var va(a, true), vb(b, true);
  const Gradients g = backward(mse_loss(va, vb));
  expect_near(values(g[va]), {2.0 / 3, -4.0 / 3, -1.0 / 3});  // 2 (a - b) / N
  expect_near(values(g[vb]), {-2.0 / 3, 4.0 / 3, 1.0 / 3});
  expect_near(values(mse_loss(va, b, Reduction::Sum).tensor()), {5.25});
  const auto f = [](const std::vector<Var>& in) { return mse_loss(in[0], in[1]); };
  const Tensor m = Tensor::from_vector<double>({0.5, -1, 2, 0.25, 3, -2}, {2, 3});
  const Tensor n = Tensor::from_vector<double>({1, 1, -1, 0, 2, 2}, {2, 3});
  EXPECT_EQ(test::gradcheck(f, {m, n}), "");
  EXPECT_EQ(test::gradgradcheck(f, {m, n}), "");
  expect_error<ShapeMismatch>([&] { (void)mse_loss(a, m); }, "[mse_loss]");
  expect_error<DTypeMismatch>([&] { (void)mse_loss(a, b.cast(DType::F32)); }, "[mse_loss]");
}

TEST(Losses, EmptyBatch) {
  const Tensor l = zeros({0, 3}, DType::F64);
  const Tensor t = zeros({0}, DType::I64);
  EXPECT_TRUE(std::isnan(cross_entropy(l, t).item<double>()));  // mean of nothing
  EXPECT_EQ(cross_entropy(l, t, Reduction::Sum).item<double>(), 0.0);
  EXPECT_EQ(cross_entropy(l, t, Reduction::None).shape(), (Shape{0}));
}

TEST(Losses, Errors) {
  const Tensor bad_high = Tensor::from_vector<int64_t>({2, 3}, {2});
  expect_error<IndexOutOfBounds>([&] { (void)cross_entropy(logits(), bad_high); },
                                 "[cross_entropy] target[1] = 3 is outside [0, 3)");
  const Tensor bad_low = Tensor::from_vector<int64_t>({-1, 0}, {2});
  expect_error<IndexOutOfBounds>([&] { (void)cross_entropy(Var(logits(), true), bad_low); },
                                 "[cross_entropy] target[0] = -1");
  expect_error<IndexOutOfBounds>([&] { (void)nll_loss(logits(), bad_high); }, "[nll_loss]");
  expect_error<DTypeMismatch>([&] { (void)cross_entropy(logits(), target().cast(DType::I32)); },
                              "[cross_entropy]");
  expect_error<ShapeMismatch>(
      [&] {
        (void)cross_entropy(logits(), Tensor::from_vector<int64_t>({0, 1, 2}, {3}));
      },
      "[cross_entropy]");
  expect_error<ShapeMismatch>(
      [&] {
        (void)cross_entropy(logits(), target().reshape({2, 1}));
      },
      "[cross_entropy]");
  expect_error<InvalidArgument>([&] { (void)cross_entropy(logits().reshape({6}), target()); },
                                "[cross_entropy]");
  expect_error<UnsupportedDType>([&] { (void)cross_entropy(logits().cast(DType::I64), target()); },
                                 "[cross_entropy]");
  expect_error<InvalidArgument>([&] { (void)cross_entropy(Tensor(), target()); },
                                "[cross_entropy]");
}

}  // namespace
}  // namespace numr
