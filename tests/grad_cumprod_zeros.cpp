// Gradients of cumprod, and the second derivative of prod (which goes through cumprod's
// rule), where the input has zeros: first and second order against central differences,
// and exact values worked out by hand.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "numr/autograd.h"
#include "support/gradcheck.h"

namespace numr {
namespace {

using test::check_gradients;

// Values uniform in [-2, 2] (a fixed seed), with exact zeros at the given flat indices.
Tensor with_zeros(const Shape& shape, uint64_t seed, const std::vector<size_t>& zero_at) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-2.0, 2.0);
  std::vector<double> v(size_t(shape_numel(shape)));
  for (double& x : v) x = u(rng);
  for (size_t i : zero_at) v.at(i) = 0.0;
  return Tensor::from_vector(v, shape);
}

std::string zeros_str(const std::vector<size_t>& zero_at) {
  // Appended piece by piece: GCC 12 warns (-Wrestrict, falsely) on "," + std::string.
  std::string s = " zeros at {";
  for (size_t i = 0; i < zero_at.size(); ++i) {
    if (i) s += ',';
    s += std::to_string(zero_at[i]);
  }
  s += '}';
  return s;
}

void check_cumprod(const Shape& shape, int64_t dim, const std::vector<size_t>& zero_at,
                   uint64_t seed) {
  const std::string what = shape_str(shape) + " dim " + std::to_string(dim) + zeros_str(zero_at);
  check_gradients(OpId::cumprod, what,
                  [dim](const std::vector<Var>& v) { return cumprod(v[0], dim); },
                  {with_zeros(shape, seed, zero_at)});
}

TEST(GradCumprodZeros, ExactValueAtTheZero) {
  // d/dx of sum(cumprod(x)) at x = [1.5, 0, 2, -1]:
  //   x_0: 1 + x_1 + x_1 x_2 + x_1 x_2 x_3 = 1
  //   x_1: x_0 + x_0 x_2 + x_0 x_2 x_3 = 1.5 + 3 - 3 = 1.5
  //   x_2, x_3: every term has the factor x_1 = 0.
  Var x(Tensor::from_vector<double>({1.5, 0.0, 2.0, -1.0}, {4}), true);
  const std::vector<double> g = backward(sum(cumprod(x, 0)))[x].to_vector<double>();
  EXPECT_EQ(g, (std::vector<double>{1.0, 1.5, 0.0, 0.0}));
}

TEST(GradCumprodZeros, ExactSecondDerivativeAtTheZero) {
  // The gradient at x_1 is x_0 + x_0 x_2 + x_0 x_2 x_3; its derivatives at the same point:
  // by x_0: 1 + x_2 + x_2 x_3 = 1, by x_1: 0, by x_2: x_0 + x_0 x_3 = 0, by x_3: x_0 x_2 = 3.
  Var x(Tensor::from_vector<double>({1.5, 0.0, 2.0, -1.0}, {4}), true);
  const VarGradients g = backward(sum(cumprod(x, 0)), {.create_graph = true});
  const std::vector<double> h = backward(sum(narrow(g[x], 0, 1, 1)))[x].to_vector<double>();
  EXPECT_EQ(h, (std::vector<double>{1.0, 0.0, 0.0, 3.0}));
}

TEST(GradCumprodZeros, Vectors) {
  uint64_t seed = 1;
  check_cumprod({4}, 0, {1}, seed++);
  check_cumprod({5}, 0, {0}, seed++);     // first position
  check_cumprod({5}, 0, {4}, seed++);     // last position
  check_cumprod({6}, 0, {1, 4}, seed++);  // two zeros
  check_cumprod({6}, 0, {2, 3}, seed++);  // two adjacent zeros
  check_cumprod({5}, 0, {0, 4}, seed++);  // first and last
  check_cumprod({5}, 0, {0, 1, 2, 3, 4}, seed++);
  // Lengths around the powers of two the rule's doubling steps cross.
  for (int64_t n : {1, 2, 3, 7, 8, 9, 16, 17}) check_cumprod({n}, 0, {size_t(n / 2)}, seed++);
}

TEST(GradCumprodZeros, AlongDimsOf2d) {
  uint64_t seed = 40;
  // [3, 5]: row 0 has one zero, row 1 two, row 2 none (flat index r * 5 + c).
  check_cumprod({3, 5}, 1, {2, 5, 9}, seed++);
  check_cumprod({3, 5}, -1, {0, 6, 7}, seed++);
  // Along dim 0: column 0 zero at the first row, column 3 at the last, column 4 twice.
  check_cumprod({3, 5}, 0, {0, 13, 4, 14}, seed++);
  check_cumprod({3, 5}, -2, {5, 6, 7, 8, 9}, seed++);  // a whole row of zeros
}

TEST(GradCumprodZeros, AlongDimsOf3d) {
  uint64_t seed = 60;
  // [2, 3, 4], flat index i * 12 + j * 4 + k.
  const std::vector<size_t> zs = {0, 5, 7, 11, 13, 14, 20};
  for (int64_t d : {0, 1, 2, -1}) check_cumprod({2, 3, 4}, d, zs, seed++);
}

TEST(GradCumprodZeros, TransposedInput) {
  const Tensor x = with_zeros({5, 3}, 80, {1, 6, 7, 14}).transpose(0, 1);  // [3, 5] view
  for (int64_t d : {0, 1})
    check_gradients(OpId::cumprod, std::string("transposed [3,5] dim ").append(std::to_string(d)),
                    [d](const std::vector<Var>& v) { return cumprod(v[0], d); }, {x});
}

TEST(GradCumprodZeros, ZeroDimAndEmpty) {
  Var s(Tensor::from_vector<double>({0.0}, {}), true);
  EXPECT_EQ(backward(cumprod(s, 0) * 3.0)[s].item<double>(), 3.0);
  Var e(Tensor::from_vector<double>({}, {0, 3}), true);
  const Tensor ge = backward(sum(cumprod(e, 0)))[e];
  EXPECT_EQ(ge.shape(), (Shape{0, 3}));
}

TEST(GradProdZeros, SecondOrder) {
  uint64_t seed = 90;
  const auto prod_last = [](const std::vector<Var>& v) { return prod(v[0], {-1}, false); };
  // Rows with no zero, one zero (first, middle, last) and two zeros.
  check_gradients(OpId::prod, "[5,4] dim -1 with zeros", prod_last,
                  {with_zeros({5, 4}, seed++, {4, 10, 15, 16, 18})});
  check_gradients(OpId::prod, "[2,3,4] dims {0,2} with zeros",
                  [](const std::vector<Var>& v) {
                    return prod(v[0], {0, 2}, true);
                  },
                  {with_zeros({2, 3, 4}, seed++, {1, 6, 18})});
  check_gradients(OpId::prod, "[6] all with one zero",
                  [](const std::vector<Var>& v) { return prod(v[0]); },
                  {with_zeros({6}, seed++, {3})});
  check_gradients(OpId::prod, "[6] all with two zeros",
                  [](const std::vector<Var>& v) { return prod(v[0]); },
                  {with_zeros({6}, seed++, {0, 5})});
}

TEST(GradProdZeros, ExactSecondDerivative) {
  // prod(x) at x = [2, 0, 3, 0.5]: d/dx_1 = 2 * 3 * 0.5 = 3, and its derivatives are
  // 3 * 0.5 = 1.5 by x_0, 0 by x_1, 2 * 0.5 = 1 by x_2, 2 * 3 = 6 by x_3.
  Var x(Tensor::from_vector<double>({2.0, 0.0, 3.0, 0.5}, {4}), true);
  const VarGradients g = backward(prod(x), {.create_graph = true});
  EXPECT_EQ(g[x].tensor().to_vector<double>(), (std::vector<double>{0.0, 3.0, 0.0, 0.0}));
  const std::vector<double> h = backward(sum(narrow(g[x], 0, 1, 1)))[x].to_vector<double>();
  EXPECT_EQ(h, (std::vector<double>{1.5, 0.0, 1.0, 6.0}));
}

}  // namespace
}  // namespace numr
