// Gradient checks of matmul, first and second order, with batched and broadcast batch dims.
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

const test::VarFn kMatmul = [](const std::vector<Var>& v) { return matmul(v[0], v[1]); };

TEST(GradMatmul, Plain) {
  check_gradients(OpId::matmul, "[3,4] @ [4,5]", kMatmul, {input({3, 4}, 1), input({4, 5}, 2)});
  check_gradients(OpId::matmul, "[1,7] @ [7,1]", kMatmul, {input({1, 7}, 3), input({7, 1}, 4)});
}

TEST(GradMatmul, NonContiguous) {
  check_gradients(OpId::matmul, "transposed [3,4] @ transposed [4,5]", kMatmul,
                  {input({3, 4}, 5, Layout::Transposed), input({4, 5}, 6, Layout::Transposed)});
  check_gradients(OpId::matmul, "strided [2,3,4] @ [4,2]", kMatmul,
                  {input({2, 3, 4}, 7, Layout::Strided), input({4, 2}, 8)});
}

TEST(GradMatmul, Batched) {
  check_gradients(OpId::matmul, "[2,3,4] @ [2,4,5]", kMatmul,
                  {input({2, 3, 4}, 9), input({2, 4, 5}, 10)});
  check_gradients(OpId::matmul, "[2,1,3,4] @ [3,4,5]", kMatmul,
                  {input({2, 1, 3, 4}, 11), input({3, 4, 5}, 12)});
  check_gradients(OpId::matmul, "[3,4] @ transposed [2,4,5]", kMatmul,
                  {input({3, 4}, 13), input({2, 4, 5}, 14, Layout::Transposed)});
}

TEST(GradMatmul, OneOperandConstant) {
  // Squared, so the gradient reaching the rule has history for the second order.
  const Var b(input({4, 5}, 15), false);
  check_gradients(OpId::matmul, "[2,3,4] @ const [4,5]",
                  [&](const std::vector<Var>& v) {
                    const Var y = matmul(v[0], Var(like(b.tensor(), v[0])));
                    return y * y;
                  },
                  {input({2, 3, 4}, 16)});
  const Var a(input({3, 4}, 17), false);
  check_gradients(OpId::matmul, "const [3,4] @ [2,4,5]",
                  [&](const std::vector<Var>& v) {
                    const Var y = matmul(Var(like(a.tensor(), v[0])), v[0]);
                    return y * y;
                  },
                  {input({2, 4, 5}, 18)});
}

}  // namespace
}  // namespace numr
