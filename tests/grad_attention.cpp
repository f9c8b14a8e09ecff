// Gradient checks of scaled_dot_product_attention in q, k and v, first and second order,
// in float64: plain, causal with Lq != Lk, Bool and additive masks (a fully masked query
// included), broadcast batch dims and a transposed view.
#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

#include "numr/numr.h"
#include "support/gradcheck.h"
#include "support/harness.h"

namespace numr {
namespace {

using test::check_gradients;
using test::Layout;

Tensor input(const Shape& shape, uint64_t seed, Layout layout = Layout::Contiguous) {
  return test::grad_input(shape, seed, layout, 1.5);
}

void check(const std::string& what, const Shape& qs, const Shape& ks, const Shape& vs,
           const Tensor& mask, bool causal, uint64_t seed, Layout layout = Layout::Contiguous) {
  check_gradients(OpId::scaled_dot_product_attention, what,
                  [mask, causal](const std::vector<Var>& x) {
                    return scaled_dot_product_attention(x[0], x[1], x[2], test::like(mask, x[0]),
                                                        causal);
                  },
                  {input(qs, seed, layout), input(ks, seed + 1, layout), input(vs, seed + 2)});
}

TEST(GradAttention, ScaledDotProductAttention) {
  check("plain", {2, 3, 4}, {2, 5, 4}, {2, 5, 3}, Tensor(), false, 1);
  check("causal Lq < Lk", {3, 4}, {5, 4}, {5, 2}, Tensor(), true, 10);
  check("causal Lq > Lk", {2, 5, 3}, {2, 3, 3}, {2, 3, 4}, Tensor(), true, 20);
  check("broadcast batch", {2, 1, 3, 4}, {1, 2, 4, 4}, {1, 2, 4, 2}, Tensor(), false, 30);
  check("transposed", {4, 4}, {4, 4}, {4, 3}, Tensor(), true, 40, Layout::Transposed);
  const Tensor keep = Tensor::from_vector(std::vector<bool>{true, false, true, true, false, false,
                                                            false, false, true, true, false, true},
                                          {3, 4});
  check("Bool mask, a fully masked query", {3, 2}, {4, 2}, {4, 3}, keep, false, 50);
  const Tensor add = where_cond(keep, input({3, 4}, 60), -std::numeric_limits<double>::infinity());
  check("additive mask", {2, 3, 2}, {2, 4, 2}, {2, 4, 3}, add, true, 70);
}

}  // namespace
}  // namespace numr
