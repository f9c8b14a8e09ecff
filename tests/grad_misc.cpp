// Gradient checks of the shape and misc ops, first and second order. The linear ones are
// followed by a square, so the gradient reaching their rule has history and the
// second-order check differentiates the rule itself.
#include <gtest/gtest.h>

#include "numr/autograd.h"
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

Var sq(const Var& v) { return v * v; }

void check1(OpId op, const std::string& what, const std::function<Var(const Var&)>& f,
            const Tensor& x) {
  check_gradients(op, what, [&](const std::vector<Var>& v) { return sq(f(v[0])); }, {x});
}

TEST(GradMisc, Roll) {
  check1(
      OpId::roll, "[3,5] by (1,-2) on (0,1)",
      [](const Var& x) {
        return roll(x, {1, -2}, {0, 1});
      },
      input({3, 5}, 1));
  check1(
      OpId::roll, "transposed [3,4] flattened by 5", [](const Var& x) { return roll(x, {5}); },
      input({3, 4}, 2, Layout::Transposed));
  check1(
      OpId::roll, "[7] by 0", [](const Var& x) { return roll(x, {0}, {0}); }, input({7}, 3));
}

TEST(GradMisc, RepeatInterleave) {
  check1(
      OpId::repeat_interleave, "[2,3] by 2 on 1",
      [](const Var& x) { return repeat_interleave(x, 2, 1); }, input({2, 3}, 4));
  check1(
      OpId::repeat_interleave, "transposed [3,2] by 3 flattened",
      [](const Var& x) { return repeat_interleave(x, 3); }, input({3, 2}, 5, Layout::Transposed));
  check1(
      OpId::repeat_interleave, "[4] by 1", [](const Var& x) { return repeat_interleave(x, 1, 0); },
      input({4}, 6));
  const Tensor reps = Tensor::from_vector<int64_t>({2, 0, 3}, {3});
  check1(
      OpId::repeat_interleave, "[2,3] by [2,0,3] on 1",
      [&](const Var& x) { return repeat_interleave(x, test::like(reps, x), 1); },
      input({2, 3}, 7, Layout::Transposed));
}

TEST(GradMisc, Meshgrid) {
  for (const char* indexing : {"ij", "xy"}) {
    check_gradients(OpId::meshgrid, std::string("[3], [4], [2] ") + indexing,
                    [indexing](const std::vector<Var>& v) {
                      const std::vector<Var> g = meshgrid(v, indexing);
                      return sq(g[0]) * g[1] + g[2];
                    },
                    {input({3}, 7), input({4}, 8), input({2}, 9)});
  }
}

TEST(GradMisc, SliceAssign) {
  check_gradients(OpId::slice_assign, "[4,5] <- [4,2] at 2 of dim 1",
                  [](const std::vector<Var>& v) { return sq(slice_assign(v[0], v[1], 1, 2)); },
                  {input({4, 5}, 10), input({4, 2}, 11)});
  check_gradients(OpId::slice_assign, "transposed [3,4] <- [1,4] at -1 of dim 0",
                  [](const std::vector<Var>& v) { return sq(slice_assign(v[0], v[1], 0, -1)); },
                  {input({3, 4}, 12, Layout::Transposed), input({1, 4}, 13)});
}

TEST(GradMisc, MaskedFill) {
  const Tensor mask = test::make_input({3, 1}, DType::Bool, Device::cpu(), {}, 14);
  const Tensor full_mask = test::make_input({3, 4}, DType::Bool, Device::cpu(), {}, 15);
  check1(
      OpId::masked_fill, "[3,4] mask [3,1]",
      [&](const Var& x) { return masked_fill(x, like(mask, x), 1.5); }, input({3, 4}, 16));
  check1(
      OpId::masked_fill, "transposed [3,4] mask [3,4]",
      [&](const Var& x) { return masked_fill(x, like(full_mask, x), -0.5); },
      input({3, 4}, 17, Layout::Transposed));
}

TEST(GradMisc, Unfold) {
  using Case = std::tuple<Shape, int64_t, int64_t, int64_t>;
  for (const auto& [shape, dim, size, step] : std::vector<Case>{{{2, 7}, 1, 3, 2},
                                                                {{2, 7}, -1, 3, 1},
                                                                {{2, 7}, 1, 7, 1},
                                                                {{2, 7}, 1, 2, 5},
                                                                {{5, 3}, 0, 2, 3},
                                                                {{9}, 0, 4, 2}}) {
    check1(
        OpId::unfold,
        shape_str(shape) + " dim " + std::to_string(dim) + " size " + std::to_string(size) +
            " step " + std::to_string(step),
        [&](const Var& x) { return unfold(x, dim, size, step); }, input(shape, 18));
  }
  check1(
      OpId::unfold, "[] dim 0 size 1", [](const Var& x) { return unfold(x, 0, 1, 1); },
      input({}, 20));
  check1(
      OpId::unfold, "transposed [4,3] dim 0 size 2 step 1",
      [](const Var& x) { return unfold(x, 0, 2, 1); }, input({4, 3}, 19, Layout::Transposed));
}

TEST(GradMisc, Einsum) {
  using Case = std::pair<const char*, std::vector<Shape>>;
  for (const auto& [eq, shapes] : std::vector<Case>{{"ij,jk->ik", {{2, 3}, {3, 4}}},
                                                    {"bij,bkj->bik", {{2, 3, 2}, {2, 4, 2}}},
                                                    {"ij,jk", {{2, 3}, {1, 4}}},
                                                    {"ii->i", {{3, 3}}},
                                                    {"iij->ji", {{3, 3, 2}}},
                                                    {"ij->", {{3, 4}}},
                                                    {"i,j->ij", {{3}, {2}}},
                                                    {"...ij,...j->...i", {{2, 3, 4}, {4}}},
                                                    {"ij,jk,kl->il", {{2, 3}, {3, 2}, {2, 3}}},
                                                    {"ii,ij->j", {{3, 3}, {3, 2}}}}) {
    std::vector<Tensor> inputs;
    for (size_t i = 0; i < shapes.size(); ++i) inputs.push_back(input(shapes[i], 20 + i));
    const std::string e = eq;
    check_gradients(
        OpId::einsum, e, [e](const std::vector<Var>& v) { return sq(einsum(e, v)); }, inputs);
  }
  check_gradients(OpId::einsum, "transposed operands ij,jk->ki",
                  [](const std::vector<Var>& v) { return sq(einsum("ij,jk->ki", v)); },
                  {input({3, 2}, 30, Layout::Transposed), input({2, 4}, 31, Layout::Transposed)});
}

TEST(GradMisc, Dropout) {
  for (double p : {0.0, 0.3, 0.7, 1.0}) {
    // A fresh generator per evaluation: every call of f draws the same mask.
    check1(
        OpId::dropout, "[4,5] p = " + std::to_string(p),
        [p](const Var& x) {
          Generator gen(11);
          return dropout(x, p, gen);
        },
        input({4, 5}, 32));
  }
}

// The gradient uses the forward's mask: zero where the output was dropped, the scale
// where it was kept.
TEST(MiscOps, DropoutGradientUsesTheForwardMask) {
  const Var x(ones({1000}, DType::F32), true);
  Generator gen(3);
  const Var y = dropout(x, 0.4, gen);
  const Gradients g = backward(sum(y));
  EXPECT_EQ(g[x].to_vector<float>(), y.tensor().to_vector<float>());
}

}  // namespace
}  // namespace numr
