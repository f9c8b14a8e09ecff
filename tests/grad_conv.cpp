// Gradient checks of convolution and distance, first and second order, in x, w and bias.
// Each result is squared, so the gradient reaching the composition has history and the
// second-order check differentiates through it.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "numr/numr.h"
#include "support/gradcheck.h"
#include "support/harness.h"

namespace numr {
namespace {

using test::check_gradients;
using test::Layout;

Tensor input(const Shape& shape, uint64_t seed, Layout layout = Layout::Contiguous) {
  return test::grad_input(shape, seed, layout, 1.0);
}

Var sq(const Var& v) { return v * v; }

TEST(GradConv, Conv1d) {
  check_gradients(
      OpId::conv1d, "[2,4,7] * [4,2,3] + bias, stride 2, padding 1, dilation 2, groups 2",
      [](const std::vector<Var>& v) { return sq(conv1d(v[0], v[1], v[2], 2, 1, 2, 2)); },
      {input({2, 4, 7}, 1, Layout::Transposed), input({4, 2, 3}, 2), input({4}, 3)});
  check_gradients(OpId::conv1d, "unbatched [3,5] * [2,3,2]",
                  [](const std::vector<Var>& v) { return sq(conv1d(v[0], v[1])); },
                  {input({3, 5}, 4), input({2, 3, 2}, 5)});
}

TEST(GradConv, Conv2d) {
  check_gradients(OpId::conv2d,
                  "[1,4,5,4] * [4,2,2,3] + bias, stride (2,1), padding (1,1), dilation (1,2)",
                  [](const std::vector<Var>& v) {
                    return sq(conv2d(v[0], v[1], v[2], {2, 1}, {1, 1}, {1, 2}, 2));
                  },
                  {input({1, 4, 5, 4}, 6, Layout::Strided), input({4, 2, 2, 3}, 7), input({4}, 8)});
  check_gradients(OpId::conv2d, "unbatched [2,3,3] * [3,2,2,2]",
                  [](const std::vector<Var>& v) { return sq(conv2d(v[0], v[1])); },
                  {input({2, 3, 3}, 9), input({3, 2, 2, 2}, 10)});
}

TEST(GradConv, DepthwiseConv2d) {
  check_gradients(OpId::depthwise_conv2d, "[2,2,4,4] * [4,1,2,2] + bias, padding (1,0)",
                  [](const std::vector<Var>& v) {
                    return sq(depthwise_conv2d(v[0], v[1], v[2], {1, 2}, {1, 0}));
                  },
                  {input({2, 2, 4, 4}, 11), input({4, 1, 2, 2}, 12), input({4}, 13)});
}

TEST(GradConv, ConvTranspose1d) {
  check_gradients(
      OpId::conv_transpose1d,
      "[2,4,3] * [4,2,3] + bias, stride 2, padding 1, output_padding 1, groups 2, dilation 2",
      [](const std::vector<Var>& v) {
        return sq(conv_transpose1d(v[0], v[1], v[2], 2, 1, 1, 2, 2));
      },
      {input({2, 4, 3}, 14, Layout::Transposed), input({4, 2, 3}, 15), input({4}, 16)});
  check_gradients(
      OpId::conv_transpose1d, "unbatched [2,3] * [2,3,2], padding cropping",
      [](const std::vector<Var>& v) { return sq(conv_transpose1d(v[0], v[1], Var(), 2, 2)); },
      {input({2, 3}, 17), input({2, 3, 2}, 18)});
}

TEST(GradConv, Cdist) {
  for (double p : {2.0, 1.0, 3.0, 1.5, 0.5, std::numeric_limits<double>::infinity()}) {
    check_gradients(OpId::cdist, "[2,3,4] to [5,4], p " + std::to_string(p),
                    [p](const std::vector<Var>& v) { return sq(cdist(v[0], v[1], p)); },
                    {input({2, 3, 4}, 19), input({5, 4}, 20, Layout::Transposed)});
  }
}

TEST(GradConv, CdistThroughTheGemm) {
  check_gradients(
      OpId::cdist, "[2,3,4] to [5,4] through the GEMM",
      [](const std::vector<Var>& v) { return sq(cdist(v[0], v[1], 2.0, CdistCompute::Matmul)); },
      {input({2, 3, 4}, 22), input({5, 4}, 23, Layout::Transposed)});
  check_gradients(OpId::cdist, "[30,3] to [4,3], the GEMM as the default takes it",
                  [](const std::vector<Var>& v) { return sq(cdist(v[0], v[1])); },
                  {input({30, 3}, 24), input({4, 3}, 25)});
}

// At zero distance the gradient is 0 (PyTorch's), not NaN: the square root and the powers
// are guarded.
TEST(GradConv, CdistZeroDistanceGradientIsZero) {
  const Tensor a = input({2, 3}, 21);
  for (double p : {2.0, 3.0, 0.5, 1.0}) {
    const Var x1(a, true), x2(a.clone(), true);
    const Var d = cdist(x1, x2, p, CdistCompute::Differences);
    // Only the diagonal (identical rows) takes part.
    const Var loss = sum(d * Tensor::from_vector(std::vector<double>{1, 0, 0, 1}, {2, 2}));
    const Gradients g = backward(loss);
    for (double v : g[x1].to_vector<double>()) EXPECT_EQ(v, 0.0) << "p " << p;
    for (double v : g[x2].to_vector<double>()) EXPECT_EQ(v, 0.0) << "p " << p;
    // The second order through all pairs, the identical ones included, stays finite (p = 1's
    // gradient is a constant sign, without history).
    if (p == 1.0) continue;
    const VarGradients gg =
        backward(sum(cdist(x1, x2, p, CdistCompute::Differences)), {.create_graph = true});
    const Gradients g2 = backward(sum(gg[x1] * gg[x1]) + sum(gg[x2] * gg[x2]));
    for (const Var* leaf : {&x1, &x2})
      for (double v : g2[*leaf].to_vector<double>()) EXPECT_TRUE(std::isfinite(v)) << "p " << p;
  }
}

TEST(GradConv, Pdist) {
  for (double p : {2.0, 1.0, 0.5, std::numeric_limits<double>::infinity()}) {
    check_gradients(OpId::pdist, "[4,3], p " + std::to_string(p),
                    [p](const std::vector<Var>& v) { return sq(pdist(v[0], p)); },
                    {input({4, 3}, 22)});
  }
}

}  // namespace
}  // namespace numr
