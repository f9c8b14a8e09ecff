// Gradient checks of views, copies and shape ops, first and second order. These ops are
// linear, so each is followed by a square: the gradient reaching the op's rule then has
// history, and the second-order check differentiates the rule itself.
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
Tensor transposed(const Shape& shape, uint64_t seed) {
  return input(shape, seed, Layout::Transposed);
}

Var sq(const Var& v) { return v * v; }

// Checks sq(f(x)) for one input.
void check1(OpId op, const std::string& what, const std::function<Var(const Var&)>& f,
            const Tensor& x) {
  check_gradients(op, what, [&](const std::vector<Var>& v) { return sq(f(v[0])); }, {x});
}

// ---- views ----
TEST(GradView, Reshape) {
  check1(
      OpId::reshape, "[2,3,4] -> [4,6]",
      [](const Var& x) {
        return reshape(x, {4, 6});
      },
      input({2, 3, 4}, 1));
  check1(
      OpId::reshape, "[2,3,4] -> [-1]", [](const Var& x) { return reshape(x, {-1}); },
      input({2, 3, 4}, 2));
  check1(
      OpId::reshape, "transposed [3,5] -> [5,3]",
      [](const Var& x) {
        return reshape(x, {5, 3});
      },
      transposed({3, 5}, 3));
}

TEST(GradView, View) {
  check1(
      OpId::view, "[2,3,4] -> [6,4]",
      [](const Var& x) {
        return view(x, {6, 4});
      },
      input({2, 3, 4}, 4));
  check1(
      OpId::view, "[7] -> [7,1]",
      [](const Var& x) {
        return view(x, {7, 1});
      },
      input({7}, 5));
}

TEST(GradView, Transpose) {
  check1(
      OpId::transpose, "[2,3,4] (0,2)", [](const Var& x) { return transpose(x, 0, 2); },
      input({2, 3, 4}, 6));
  check1(
      OpId::transpose, "transposed [3,5] (-1,-2)",
      [](const Var& x) { return transpose(x, -1, -2); }, transposed({3, 5}, 7));
}

TEST(GradView, Permute) {
  check1(
      OpId::permute, "[2,3,4] {2,0,1}",
      [](const Var& x) {
        return permute(x, {2, 0, 1});
      },
      input({2, 3, 4}, 8));
  check1(
      OpId::permute, "transposed [2,3,4] {-1,0,1}",
      [](const Var& x) {
        return permute(x, {-1, 0, 1});
      },
      transposed({2, 3, 4}, 9));
}

TEST(GradView, Narrow) {
  check1(
      OpId::narrow, "[3,5] dim 1 [1,3)", [](const Var& x) { return narrow(x, 1, 1, 2); },
      input({3, 5}, 10));
  check1(
      OpId::narrow, "[2,3,4] dim -1 start -3", [](const Var& x) { return narrow(x, -1, -3, 2); },
      input({2, 3, 4}, 11));
  check1(
      OpId::narrow, "transposed [3,5] dim 0 [0,1)", [](const Var& x) { return narrow(x, 0, 0, 1); },
      transposed({3, 5}, 12));
  check1(
      OpId::narrow, "[7] dim 0 [4,7)", [](const Var& x) { return narrow(x, 0, 4, 3); },
      input({7}, 13));
}

TEST(GradView, BroadcastTo) {
  check1(
      OpId::broadcast_to, "[3,1] -> [2,3,4]",
      [](const Var& x) {
        return broadcast_to(x, {2, 3, 4});
      },
      input({3, 1}, 14));
  check1(
      OpId::broadcast_to, "[7] -> [3,7]",
      [](const Var& x) {
        return broadcast_to(x, {3, 7});
      },
      input({7}, 15));
}

TEST(GradView, SqueezeUnsqueezeFlatten) {
  check1(
      OpId::squeeze, "[3,1,5] all", [](const Var& x) { return squeeze(x); }, input({3, 1, 5}, 16));
  check1(
      OpId::squeeze, "[3,1,5] dim -2", [](const Var& x) { return squeeze(x, -2); },
      input({3, 1, 5}, 17));
  check1(
      OpId::squeeze, "[3,5] dim 0 (not size 1)", [](const Var& x) { return squeeze(x, 0); },
      input({3, 5}, 18));
  check1(
      OpId::unsqueeze, "[3,5] dim 0", [](const Var& x) { return unsqueeze(x, 0); },
      input({3, 5}, 19));
  check1(
      OpId::unsqueeze, "transposed [3,5] dim -1", [](const Var& x) { return unsqueeze(x, -1); },
      transposed({3, 5}, 20));
  check1(
      OpId::flatten, "[2,3,4]", [](const Var& x) { return flatten(x); }, input({2, 3, 4}, 21));
  check1(
      OpId::flatten, "transposed [2,3,4] dims 1..2", [](const Var& x) { return flatten(x, 1, 2); },
      transposed({2, 3, 4}, 22));
}

TEST(GradView, Flip) {
  check1(
      OpId::flip, "[7] {0}", [](const Var& x) { return flip(x, {0}); }, input({7}, 23));
  check1(
      OpId::flip, "[2,3,4] {-1,0}",
      [](const Var& x) {
        return flip(x, {-1, 0});
      },
      input({2, 3, 4}, 24));
  check1(
      OpId::flip, "transposed [3,5] {1}", [](const Var& x) { return flip(x, {1}); },
      transposed({3, 5}, 25));
}

// ---- copies ----
TEST(GradCopy, ContiguousClone) {
  check1(
      OpId::contiguous, "transposed [3,5]", [](const Var& x) { return contiguous(x); },
      transposed({3, 5}, 26));
  check1(
      OpId::contiguous, "[7]", [](const Var& x) { return contiguous(x); }, input({7}, 27));
  check1(
      OpId::clone, "transposed [2,3,4]", [](const Var& x) { return clone(x); },
      transposed({2, 3, 4}, 28));
}

TEST(GradCopy, Cast) {
  check1(
      OpId::cast, "F64 -> F64", [](const Var& x) { return cast(x, DType::F64); },
      input({3, 5}, 29));
  // Through F32 and back: the differences are taken in F32, hence the larger step.
  check_gradients(
      OpId::cast, "F64 -> F32 -> F64",
      [](const std::vector<Var>& v) { return cast(sq(cast(v[0], DType::F32)), DType::F64); },
      {input({2, 3, 4}, 30)}, {.eps = 1e-2, .atol = 1e-4, .rtol = 1e-3});
  // The gradient comes back in the input's dtype.
  Var x(input({3, 5}, 31), true);
  const Gradients g = backward(sum(cast(x, DType::F32) * 2.0));
  EXPECT_EQ(g[x].dtype(), DType::F64);
  EXPECT_EQ(g[x].to_vector<double>(), std::vector<double>(15, 2.0));
  // Integer and Bool results have no gradient.
  EXPECT_FALSE(cast(x, DType::I64).requires_grad());
  EXPECT_FALSE(cast(x, DType::Bool).requires_grad());
}

TEST(GradCopy, ToDevice) {
  check1(
      OpId::to_device, "cpu -> cpu", [](const Var& x) { return to_device(x, Device::cpu()); },
      transposed({3, 5}, 32));
}

// ---- shape ops ----
TEST(GradShape, Cat) {
  check_gradients(OpId::cat, "[3,2] [3,1] [3,4] dim 1",
                  [](const std::vector<Var>& v) {
                    return sq(cat({v[0], v[1], v[2]}, 1));
                  },
                  {input({3, 2}, 33), transposed({3, 1}, 34), transposed({3, 4}, 35)});
  check_gradients(OpId::cat, "[2,3,4] [2,3,1] dim -1",
                  [](const std::vector<Var>& v) {
                    return sq(cat({v[0], v[1]}, -1));
                  },
                  {input({2, 3, 4}, 36), input({2, 3, 1}, 37)});
  // An input that does not require grad between two that do.
  const Var fixed(input({2, 5}, 38), false);
  check_gradients(OpId::cat, "[7] const [5] dim 0",
                  [&](const std::vector<Var>& v) {
                    const Var here(like(fixed.tensor(), v[0]), false);
                    return sq(cat({v[0], reshape(here, {10}), v[1]}, 0));
                  },
                  {input({7}, 39), input({3}, 40)});
}

TEST(GradShape, Stack) {
  check_gradients(OpId::stack, "3 x [3,5] dim 0",
                  [](const std::vector<Var>& v) {
                    return sq(stack({v[0], v[1], v[2]}, 0));
                  },
                  {input({3, 5}, 41), transposed({3, 5}, 42), input({3, 5}, 43)});
  check_gradients(OpId::stack, "2 x [2,3] dim -1",
                  [](const std::vector<Var>& v) {
                    return sq(stack({v[0], v[1]}, -1));
                  },
                  {input({2, 3}, 44), input({2, 3}, 45)});
  check_gradients(OpId::stack, "2 x [7] dim 1",
                  [](const std::vector<Var>& v) {
                    return sq(stack({v[1], v[0]}, 1));
                  },
                  {input({7}, 46), input({7}, 47)});
}

TEST(GradShape, SplitChunk) {
  // Gradients flow through only some of the pieces.
  check_gradients(OpId::split, "[3,5] size 2 dim 1, pieces 0 and 2",
                  [](const std::vector<Var>& v) {
                    const std::vector<Var> p = split(v[0], 2, 1);
                    return sum(sq(p[0])) + sum(sq(p[2]));
                  },
                  {input({3, 5}, 48)});
  check_gradients(OpId::split, "transposed [2,3,4] size 2 dim -2, all pieces",
                  [](const std::vector<Var>& v) {
                    const std::vector<Var> p = split(v[0], 2, -2);
                    return sum(sq(p[0])) * sum(p[1]);
                  },
                  {transposed({2, 3, 4}, 49)});
  check_gradients(OpId::chunk, "[7] 3 chunks, piece 1",
                  [](const std::vector<Var>& v) { return sq(chunk(v[0], 3, 0)[1]); },
                  {input({7}, 50)});
  check_gradients(OpId::chunk, "[2,3,4] 3 chunks dim -1 (two of 2), pieces 1 and 0",
                  [](const std::vector<Var>& v) {
                    const std::vector<Var> p = chunk(v[0], 3, -1);
                    return sq(p[1]) * p[0];
                  },
                  {input({2, 3, 4}, 51)});
}

TEST(GradShape, SplitPieceGradientIsZeroElsewhere) {
  Var x(Tensor::from_vector<double>({1, 2, 3, 4, 5, 6, 7}, {7}), true);
  const std::vector<Var> p = split(x, 3, 0);
  ASSERT_EQ(p.size(), 3u);
  const Gradients g = backward(sum(p[1] * p[1]));
  EXPECT_EQ(g[x].to_vector<double>(), (std::vector<double>{0, 0, 0, 8, 10, 12, 0}));
  const std::vector<Var> c = chunk(x, 2, -1);
  const Gradients h = backward(sum(c[1]) * 3.0);
  EXPECT_EQ(h[x].to_vector<double>(), (std::vector<double>{0, 0, 0, 0, 3, 3, 3}));
}

TEST(GradShape, Repeat) {
  check1(
      OpId::repeat, "[3,5] x {2,1}",
      [](const Var& x) {
        return repeat(x, {2, 1});
      },
      input({3, 5}, 52));
  check1(
      OpId::repeat, "transposed [2,3] x {2,1,3}",
      [](const Var& x) {
        return repeat(x, {2, 1, 3});
      },
      transposed({2, 3}, 53));
  check1(
      OpId::repeat, "[7] x {2}", [](const Var& x) { return repeat(x, {2}); }, input({7}, 54));
}

TEST(GradShape, Pad) {
  check1(
      OpId::pad, "[3,5] {1,2}",
      [](const Var& x) {
        return pad(x, {1, 2});
      },
      input({3, 5}, 55));
  check1(
      OpId::pad, "[2,3,4] {0,1,2,0} value 0.5",
      [](const Var& x) {
        return pad(x, {0, 1, 2, 0}, 0.5);
      },
      input({2, 3, 4}, 56));
  check1(
      OpId::pad, "transposed [2,3,4] {1,1,1,1,1,1}",
      [](const Var& x) {
        return pad(x, {1, 1, 1, 1, 1, 1});
      },
      transposed({2, 3, 4}, 57));
}

}  // namespace
}  // namespace numr
