// In-place writes and autograd: a tensor a recorded node saved, written in place before
// backward, makes backward throw instead of computing a gradient from the new values;
// writes before recording, and an optimizer's steps between graphs, do not.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "numr/numr.h"

namespace numr {
namespace {

Tensor vec(const std::vector<double>& v) { return Tensor::from_vector(v, {int64_t(v.size())}); }

// Runs f, which must throw InvalidArgument with exactly `message`.
void expect_backward_error(const std::function<void()>& f, const std::string& message) {
  try {
    f();
    ADD_FAILURE() << "expected: " << message;
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(std::string(e.what()).rfind(message, 0), 0u) << e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "wrong error: " << e.what();
  }
}

TEST(InPlaceAutograd, WritingASavedInputThrowsInBackward) {
  Tensor xt = vec({1, 2, 3}), wt = vec({4, 5, 6});
  const Var x(xt, true), w(wt);
  const Var loss = sum(x * w);  // d/dx = w: mul saved w (and x)
  wt.mul_(2.0);
  expect_backward_error([&] { backward(loss); },
                        "[backward] a tensor saved by mul was modified in place after it was "
                        "saved (version 1, expected 0)");
  // The leaf's own tensor, through a view, twice.
  const Var y(vec({1, 2, 3}), true);
  const Var loss2 = sum(y * y);
  Tensor(y.tensor()).narrow(0, 0, 1).fill_(7);
  Tensor(y.tensor()).add_(1.0);
  expect_backward_error([&] { backward(loss2); },
                        "[backward] a tensor saved by mul was modified in place after it was "
                        "saved (version 2, expected 0)");
}

TEST(InPlaceAutograd, WritingASavedOutputThrowsInBackward) {
  const Var x(vec({0.5, 1.0}), true);
  const Var y = exp(x);  // exp's gradient reads its output
  Tensor(y.tensor()).zero_();
  const Var loss = sum(y);  // recorded after the write: sum saved version 1
  expect_backward_error([&] { backward(loss); },
                        "[backward] a tensor saved by exp was modified in place after it was "
                        "saved (version 1, expected 0)");
}

TEST(InPlaceAutograd, OutFormsCountAsWrites) {
  Tensor at = Tensor::from_vector<double>({1, 2, 3, 4}, {2, 2});
  const Var a(at, true);
  const Var b(Tensor::from_vector<double>({1, 0, 0, 1}, {2, 2}), true);
  const Var loss = sum(matmul(a, b));
  matmul(b.tensor(), b.tensor(), at);  // into a's tensor
  expect_backward_error([&] { backward(loss); },
                        "[backward] a tensor saved by matmul was modified in place");
}

TEST(InPlaceAutograd, SecondOrderPassChecksToo) {
  Tensor xt = vec({1.0, 2.0});
  const Var x(xt, true);
  const Var loss = sum(x * x * x);
  const VarGradients g = backward(loss, {.create_graph = true});  // 3 x^2, recorded
  xt.sub_(1.0);
  expect_backward_error([&] { backward(sum(g[x])); }, "[backward] a tensor saved by mul");
}

TEST(InPlaceAutograd, CheckpointedInputsAreChecked) {
  Tensor xt = vec({1.0, -2.0});
  const Var x(xt, true);
  const std::vector<Var> out =
      checkpoint([](const std::vector<Var>& in) { return std::vector<Var>{square(in[0])}; }, {x});
  xt.fill_(0);
  expect_backward_error([&] { backward(sum(out[0])); }, "[backward] a tensor saved by checkpoint");
}

TEST(InPlaceAutograd, WritesBeforeRecordingOrElsewhereAreFine) {
  Tensor xt = vec({1, 2, 3});
  xt.mul_(2.0);  // before the graph: it sees 2, 4, 6
  const Var x(xt, true);
  Tensor unrelated = vec({1, 1, 1});
  const Var loss = sum(x * x);
  unrelated.add_(1.0);
  // A copy of the saved tensor's values is a different storage.
  Tensor copy = xt.clone();
  copy.zero_();
  const Gradients g = backward(loss);
  EXPECT_EQ(g[x].to_vector<double>(), (std::vector<double>{4, 8, 12}));
  // Writing after backward is fine; a new graph sees the new values.
  xt.fill_(1);
  EXPECT_EQ(backward(sum(x * x))[x].to_vector<double>(), (std::vector<double>{2, 2, 2}));
}

TEST(InPlaceAutograd, GradientsMayShareMemory) {
  // sum's gradient is a broadcast of one element and add passes it on to both inputs:
  // writing into one gradient in place is refused; a clone can be written.
  const Var a(vec({1, 2, 3}), true), b(vec({4, 5, 6}), true);
  const Gradients g = backward(sum(a + b));
  Tensor ga = g[a];
  EXPECT_THROW(ga.mul_(0.5), InvalidArgument);
  Tensor own = ga.clone();
  own.mul_(0.5);
  EXPECT_EQ(own.to_vector<double>(), (std::vector<double>{0.5, 0.5, 0.5}));
  EXPECT_EQ(g[b].to_vector<double>(), (std::vector<double>{1, 1, 1}));
}

TEST(InPlaceAutograd, TrainingLoopWithAdamWAndInPlaceBuffers) {
  // A two-layer model; the batch is refilled in place every step and the weights are
  // clipped in place after each optimizer step, between graphs.
  Generator gen(11);
  const Tensor w_true = Tensor::from_vector<float>({0.5f, -1.0f, 0.25f}, {3, 1});
  Var w1(randn({3, 8}, DType::F32, Device::cpu(), gen) * 0.5, true);
  Var b1(zeros({8}), true);
  Var w2(randn({8, 1}, DType::F32, Device::cpu(), gen) * 0.5, true);
  AdamW opt({w1, b1, w2}, {.lr = 0.02, .weight_decay = 0.0});
  Tensor batch = Tensor::empty({32, 3}, DType::F32);
  Tensor target = Tensor::empty({32, 1}, DType::F32);
  std::vector<double> losses;
  for (int step = 0; step < 60; ++step) {
    batch.copy_(randn({32, 3}, DType::F32, Device::cpu(), gen));
    matmul(batch, w_true, target);
    const Var h = relu(matmul(Var(batch), w1) + b1);
    const Var loss = mean(square(matmul(h, w2) - Var(target)));
    losses.push_back(loss.tensor().item<float>());
    opt.step(backward(loss));
    for (const Var* p : {&w1, &w2}) Tensor(p->tensor()).clamp_(-2.0, 2.0);
  }
  EXPECT_LT(losses.back(), 0.2 * losses.front());
  for (double l : losses) EXPECT_TRUE(std::isfinite(l));
}

}  // namespace
}  // namespace numr
