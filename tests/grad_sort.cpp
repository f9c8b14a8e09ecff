// Gradient checks of sort and topk values in x, first and second order, in float64, on
// distinct values (ties would make the central differences jump): each dim, both directions,
// several k, a 0-d input and a transposed view.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "numr/numr.h"
#include "support/gradcheck.h"
#include "support/harness.h"

namespace numr {
namespace {

using test::check_gradients;
using test::Layout;

// Values spread far apart relative to the central-difference step, so no two swap places.
Tensor input(const Shape& shape, uint64_t seed, Layout layout = Layout::Contiguous) {
  return test::grad_input(shape, seed, layout, 3.0);
}

TEST(GradSort, SortValues) {
  struct C {
    std::string what;
    Shape shape;
    int64_t dim;
    bool desc;
    Layout layout = Layout::Contiguous;
  };
  const std::vector<C> cases = {
      {"1-D", {7}, 0, false},      {"rows, descending", {3, 5}, -1, true},
      {"dim 0", {4, 3}, 0, false}, {"middle dim", {2, 4, 3}, 1, true},
      {"0-d", {}, -1, false},      {"transposed", {5, 4}, -1, false, Layout::Transposed},
  };
  uint64_t seed = 1;
  for (const C& c : cases)
    check_gradients(OpId::sort, c.what,
                    [c](const std::vector<Var>& x) { return sort(x[0], c.dim, c.desc).values; },
                    {input(c.shape, ++seed, c.layout)});
}

TEST(GradSort, TopkValues) {
  struct C {
    std::string what;
    Shape shape;
    int64_t k, dim;
    bool largest;
  };
  const std::vector<C> cases = {
      {"largest 3 of 7", {7}, 3, 0, true}, {"smallest 2, rows", {3, 6}, 2, -1, false},
      {"dim 0", {5, 3}, 4, 0, true},       {"k = n", {2, 3, 4}, 3, 1, false},
      {"k = 0", {4, 5}, 0, -1, true},      {"0-d, k = 1", {}, 1, 0, true},
  };
  uint64_t seed = 100;
  for (const C& c : cases)
    check_gradients(
        OpId::topk, c.what,
        [c](const std::vector<Var>& x) { return topk(x[0], c.k, c.dim, c.largest).values; },
        {input(c.shape, ++seed)});
}

// topk with k = 0 selects nothing: x's gradient is zeros of x's shape, a 0-d x included.
TEST(GradSort, TopkOfNothingGivesZeros) {
  for (const Shape& shape : {Shape{}, Shape{3, 4}}) {
    const Var x(full(shape, 2.0, DType::F64), true);
    const Gradients g = backward(sum(topk(x, 0).values));
    EXPECT_EQ(g[x].shape(), shape);
    for (double v : g[x].to_vector<double>()) EXPECT_EQ(v, 0.0);
  }
}

}  // namespace
}  // namespace numr
