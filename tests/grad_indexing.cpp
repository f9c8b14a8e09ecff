// Gradient checks of the indexing family, first and second order, with repeated indexes
// (their gradients accumulate; of values written to one place only the one kept gets a
// gradient). Each op is followed by a square, so the second-order check differentiates the
// rule itself.
#include <gtest/gtest.h>

#include "numr/autograd.h"
#include "support/gradcheck.h"
#include "support/harness.h"

namespace numr {
namespace {

using test::check_gradients;
using test::like;

Tensor input(const Shape& shape, uint64_t seed) {
  return test::make_input(shape, DType::F64, Device::cpu(), {.lo = -2.0, .hi = 2.0}, seed);
}
Tensor index(const std::vector<int64_t>& v, const Shape& shape) {
  return Tensor::from_vector<int64_t>(v, shape);
}
Var sq(const Var& v) { return v * v; }

TEST(GradIndexing, Gather) {
  const Tensor idx = index({0, 2, 2, 1, 0, 0}, {2, 3});  // repeats
  check_gradients(OpId::gather, "[3,4] dim 0",
                  [&](const std::vector<Var>& v) { return sq(gather(v[0], 0, like(idx, v[0]))); },
                  {input({3, 4}, 1)});
  check_gradients(OpId::gather, "[2,5] dim -1",
                  [&](const std::vector<Var>& v) { return sq(gather(v[0], -1, like(idx, v[0]))); },
                  {input({2, 5}, 2)});
}

TEST(GradIndexing, Scatter) {
  const Tensor idx = index({0, 2, 2, 1, 0, 3}, {2, 3});  // repeats in column 1
  check_gradients(
      OpId::scatter, "[4,3] dim 0, src [2,4]",
      [&](const std::vector<Var>& v) { return sq(scatter(v[0], 0, like(idx, v[0]), v[1])); },
      {input({4, 3}, 3), input({2, 4}, 4)});
}

TEST(GradIndexing, ScatterReduce) {
  const Tensor idx = index({0, 2, 2, 1, 0, 0, 2, 1}, {4, 2});
  for (ScatterReduce r :
       {ScatterReduce::Sum, ScatterReduce::Mean, ScatterReduce::Amax, ScatterReduce::Amin})
    for (bool self : {true, false})
      check_gradients(OpId::scatter_reduce,
                      "reduce " + std::to_string(int(r)) + (self ? "" : " without self"),
                      [&](const std::vector<Var>& v) {
                        return sq(scatter_reduce(v[0], 0, like(idx, v[0]), v[1], r, self));
                      },
                      {input({4, 2}, 5), input({4, 3}, 6)});
}

TEST(GradIndexing, ScatterReduceProdHasNoGradient) {
  const Var x(input({3}, 7), true), s(input({2}, 8), true);
  EXPECT_THROW(scatter_reduce(x, 0, index({0, 0}, {2}), s, ScatterReduce::Prod), InvalidArgument);
  // Without inputs that require grad the forward runs.
  EXPECT_EQ(
      scatter_reduce(Var(x.tensor()), 0, index({0, 0}, {2}), Var(s.tensor()), ScatterReduce::Prod)
          .shape(),
      Shape({3}));
}

TEST(GradIndexing, IndexSelect) {
  const Tensor idx = index({2, 0, 2, 1}, {4});
  check_gradients(
      OpId::index_select, "[3,4] dim 1",
      [&](const std::vector<Var>& v) { return sq(index_select(v[0], 1, like(idx, v[0]))); },
      {input({3, 4}, 9)});
}

TEST(GradIndexing, Take) {
  const Tensor idx = index({5, 0, 5, 11, 3, 3}, {2, 3});
  check_gradients(OpId::take, "[3,4]",
                  [&](const std::vector<Var>& v) { return sq(take(v[0], like(idx, v[0]))); },
                  {input({3, 4}, 10)});
}

TEST(GradIndexing, EmbeddingLookup) {
  const Tensor idx = index({4, 1, 1, 0, 4, 4}, {3, 2});
  check_gradients(
      OpId::embedding_lookup, "[5,3]",
      [&](const std::vector<Var>& v) { return sq(embedding_lookup(v[0], like(idx, v[0]))); },
      {input({5, 3}, 11)});
}

TEST(GradIndexing, GatherNd) {
  const Tensor idx = index({0, 1, 2, 3, 0, 1}, {3, 2});
  check_gradients(OpId::gather_nd, "[3,4,2] k 2",
                  [&](const std::vector<Var>& v) { return sq(gather_nd(v[0], like(idx, v[0]))); },
                  {input({3, 4, 2}, 12)});
}

TEST(GradIndexing, IndexPut) {
  const Tensor i0 = index({0, 2, 0}, {3, 1}), i1 = index({1, 1}, {1, 2});  // broadcast [3,2]
  for (bool acc : {false, true})
    check_gradients(OpId::index_put, acc ? "accumulate" : "assign",
                    [&](const std::vector<Var>& v) {
                      return sq(index_put(v[0], {like(i0, v[0]), like(i1, v[0])}, v[1], acc));
                    },
                    {input({3, 4, 2}, 13), input({2, 2}, 14)});  // values broadcast over [3, 2, 2]
}

TEST(GradIndexing, Put) {
  const Tensor idx = index({3, 0, 3, 7}, {2, 2});
  for (bool acc : {false, true})
    check_gradients(
        OpId::put, acc ? "accumulate" : "assign",
        [&](const std::vector<Var>& v) { return sq(put(v[0], like(idx, v[0]), v[1], acc)); },
        {input({2, 4}, 15), input({4}, 16)});
}

TEST(GradIndexing, MaskedSelect) {
  const Tensor mask = Tensor::from_vector<bool>({true, false, true, true, false, true}, {2, 3});
  check_gradients(
      OpId::masked_select, "[2,3]",
      [&](const std::vector<Var>& v) { return sq(masked_select(v[0], like(mask, v[0]))); },
      {input({2, 3}, 17)});
  check_gradients(
      OpId::masked_select, "x [3] broadcast with mask [2,3]",
      [&](const std::vector<Var>& v) { return sq(masked_select(v[0], like(mask, v[0]))); },
      {input({3}, 18)});
}

}  // namespace
}  // namespace numr
