// The indexing ops against NumPy: inputs and results saved by scripts/indexing_fixtures.py
// (take_along_axis, take, add.at, maximum.at, minimum.at, array indexing, argwhere,
// bincount). NumPy's ufunc.at applies values one by one in the index's order, as numr's
// scatter does, so even the sums must agree bit for bit.
#include <gtest/gtest.h>

#include <string>

#include "io_test_util.h"
#include "numr/numr.h"

namespace numr {
namespace {

Tensor npy(const std::string& name) {
  return load_npy(io_test::fixture_in("indexing", name + ".npy"));
}

void expect_equal(const Tensor& got, const std::string& want_name) {
  const Tensor want = npy(want_name);
  ASSERT_EQ(got.shape(), want.shape()) << want_name;
  ASSERT_EQ(got.dtype(), want.dtype()) << want_name;
  EXPECT_EQ(got.cast(DType::F64).to_vector<double>(), want.cast(DType::F64).to_vector<double>())
      << want_name;
}

TEST(IndexingNumpy, Reads) {
  const Tensor x = npy("x");
  expect_equal(gather(x, 0, npy("gather0_index")), "gather0");
  expect_equal(gather(x, -1, npy("gather1_index")), "gather1");
  expect_equal(index_select(x, 1, npy("select1_index")), "select1");
  expect_equal(take(x, npy("take_index")), "take");
  expect_equal(masked_select(x, npy("mask")), "masked_select");
  expect_equal(nonzero(npy("z")), "nonzero");
  expect_equal(gather_nd(npy("x3"), npy("gather_nd_index")), "gather_nd");
  expect_equal(embedding_lookup(x, npy("tokens")), "embedding");
}

TEST(IndexingNumpy, Writes) {
  const Tensor x = npy("x"), idx = npy("scatter_index"), src = npy("scatter_src");
  expect_equal(scatter_reduce(x, 0, idx, src, ScatterReduce::Sum), "scatter_sum");
  expect_equal(scatter_reduce(x, 0, idx, src, ScatterReduce::Amax), "scatter_amax");
  expect_equal(scatter_reduce(x, 0, idx, src, ScatterReduce::Amin), "scatter_amin");
  expect_equal(index_put(x, {npy("put_i0"), npy("put_i1")}, npy("put_values"), true),
               "index_put_acc");
  expect_equal(bincount(npy("bins"), npy("bin_weights"), 10), "bincount");
  expect_equal(bincount(npy("bins")), "bincount_counts");
}

}  // namespace
}  // namespace numr
