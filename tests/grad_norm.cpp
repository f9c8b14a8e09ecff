// Gradient checks of rms_norm and layer_norm, first and second order, in float64: through
// the fused kernel's path (the saved statistics and the fused backward for the plain
// backward, Var ops with create_graph) and through the composition.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "core/composition.h"
#include "numr/numr.h"
#include "support/gradcheck.h"
#include "support/harness.h"

namespace numr {
namespace {

using test::check_gradients;
using test::Layout;
using test::like;

Tensor input(const Shape& shape, uint64_t seed, Layout layout = Layout::Contiguous) {
  return test::grad_input(shape, seed, layout);
}

struct Case {
  Shape shape;
  Layout layout;
};

void check_norm(OpId op) {
  const std::vector<Case> cases = {{{5}, Layout::Contiguous},    {{3, 4}, Layout::Contiguous},
                                   {{4, 3}, Layout::Transposed}, {{2, 3, 7}, Layout::Contiguous},
                                   {{3, 9}, Layout::Strided},    {{4, 1}, Layout::Contiguous}};
  for (bool force : {false, true}) {
    const ForceComposition fc(force, {op});
    uint64_t seed = 1;
    for (const Case& c : cases) {
      const int64_t d = c.shape.back();
      const std::string what = shape_str(c.shape) + (force ? " composition" : " kernel") +
                               (c.layout == Layout::Contiguous ? "" : " view");
      const Tensor x = input(c.shape, seed++, c.layout), w = input({d}, seed++),
                   b = input({d}, seed++);
      if (op == OpId::rms_norm) {
        check_gradients(
            op, what, [](const std::vector<Var>& v) { return rms_norm(v[0], v[1], 0.1); }, {x, w});
      } else {
        check_gradients(op, what,
                        [](const std::vector<Var>& v) { return layer_norm(v[0], v[1], v[2], 0.1); },
                        {x, w, b});
      }
    }
  }
}

TEST(GradNorm, RmsNorm) { check_norm(OpId::rms_norm); }

// The composed ops, through both outputs of the fused adds.
TEST(GradNorm, FusedAddNorms) {
  uint64_t seed = 50;
  for (const Shape& s : {Shape{5}, Shape{3, 4}, Shape{2, 3, 7}}) {
    const int64_t d = s.back();
    const Tensor x = input(s, seed++), r = input(s, seed++), w = input({d}, seed++),
                 b = input({d}, seed++), c = input(s, seed++);
    check_gradients(OpId::fused_add_rms_norm, shape_str(s),
                    [c](const std::vector<Var>& v) {
                      const AddNormVar a = fused_add_rms_norm(v[0], v[1], v[2], 0.1);
                      return a.out + a.residual * Var(like(c, v[0]));
                    },
                    {x, r, w});
    check_gradients(OpId::fused_add_layer_norm, shape_str(s),
                    [c](const std::vector<Var>& v) {
                      const AddNormVar a = fused_add_layer_norm(v[0], v[1], v[2], v[3], 0.1);
                      return a.out + a.residual * Var(like(c, v[0]));
                    },
                    {x, r, w, b});
  }
}

TEST(GradNorm, GroupNorm) {
  uint64_t seed = 80;
  for (const auto& [s, groups] : std::vector<std::pair<Shape, int64_t>>{
           {{2, 4}, 2}, {{2, 6, 3}, 3}, {{1, 4, 2, 3}, 2}, {{2, 3, 4}, 1}}) {
    const Tensor x = input(s, seed++), w = input({s[1]}, seed++), b = input({s[1]}, seed++);
    const int64_t g = groups;
    check_gradients(OpId::group_norm, shape_str(s) + " groups " + std::to_string(g),
                    [g](const std::vector<Var>& v) { return group_norm(v[0], g, v[1], v[2], 0.1); },
                    {x, w, b});
  }
  const Tensor xt = input({3, 4}, 99, Layout::Transposed), w = input({4}, 100), b = input({4}, 101);
  check_gradients(OpId::group_norm, "transposed view",
                  [](const std::vector<Var>& v) { return group_norm(v[0], 2, v[1], v[2], 0.1); },
                  {xt, w, b});
}
TEST(GradNorm, LayerNorm) { check_norm(OpId::layer_norm); }

// Only some inputs requiring grad, and an F32 input through the whole graph.
TEST(GradNorm, PartialAndF32) {
  for (bool force : {false, true}) {
    const ForceComposition fc(force, {OpId::rms_norm, OpId::layer_norm});
    const Var x(Tensor::from_vector<float>({1, 2, 3, 6}, {1, 4}), true);
    const Var w(ones({4}), false), b(zeros({4}), false);
    const Gradients g = backward(sum(square(layer_norm(x, w, b, 0.0))));
    // sum(xhat^2) = D for every x: its gradient is 0 (up to rounding).
    for (float v : g[x].to_vector<float>()) EXPECT_NEAR(v, 0.f, 1e-6f);
    // rms_norm is scale invariant: its gradient is orthogonal to x.
    const Gradients g2 =
        backward(sum(rms_norm(x, w, 0.0) * Tensor::from_vector<float>({1, -2, 0.5, 3}, {4})));
    EXPECT_EQ(g2[x].dtype(), DType::F32);
    const std::vector<float> gx = g2[x].to_vector<float>(), xv = x.tensor().to_vector<float>();
    float dot = 0, norm = 0;
    for (size_t i = 0; i < gx.size(); ++i) dot += gx[i] * xv[i], norm += std::fabs(gx[i]);
    EXPECT_GT(norm, 0.1f);
    EXPECT_NEAR(dot, 0.f, 1e-5f);
  }
}

}  // namespace
}  // namespace numr
