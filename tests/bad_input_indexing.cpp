// Bad input to the indexing family: indexes out of range (negative ones included), index and
// mask dtypes, shapes, dims, devices; each raises its error naming the op, and leaves its
// inputs as they were.
#include <string>

#include "bad_input_table.h"

namespace numr::bad_input {
namespace {

using D = DType;

Tensor i64(std::initializer_list<int64_t> v, const Shape& s) {
  return Tensor::from_vector<int64_t>(std::vector<int64_t>(v), s);
}

std::vector<Case> indexing_cases() {
  const Tensor u;
  return {
      {"gather_index_high",
       [] {
         gather(f32({2, 5}), 1, i64({0, 5}, {2, 1}));
       },
       NUMR_THROWS(IndexOutOfBounds, "gather")},
      {"gather_index_negative",
       [] {
         gather(f32({2, 5}), 1, i64({0, -1}, {2, 1}));
       },
       NUMR_THROWS(IndexOutOfBounds, "gather")},
      {"gather_index_f32",
       [] {
         gather(f32({2, 5}), 1, f32({2, 1}));
       },
       NUMR_THROWS(DTypeMismatch, "gather")},
      {"gather_index_u8",
       [] {
         gather(f32({2, 5}), 1, t_of(D::U8, {2, 1}));
       },
       NUMR_THROWS(DTypeMismatch, "gather")},
      {"gather_rank",
       [] {
         gather(f32({2, 5}), 1, i64({0, 1}, {2}));
       },
       NUMR_THROWS(ShapeMismatch, "gather")},
      {"gather_index_larger",
       [] {
         gather(f32({2, 5}), 1, t_of(D::I64, {3, 1}));
       },
       NUMR_THROWS(ShapeMismatch, "gather")},
      {"gather_dim",
       [] {
         gather(f32({2, 5}), 2, t_of(D::I64, {2, 1}));
       },
       NUMR_THROWS(InvalidDimension, "gather")},
      {"gather_dim_negative",
       [] {
         gather(f32({2, 5}), -3, t_of(D::I64, {2, 1}));
       },
       NUMR_THROWS(InvalidDimension, "gather")},
      {"gather_0d", [] { gather(f32({}), 0, t_of(D::I64, {})); },
       NUMR_THROWS(InvalidDimension, "gather")},
      {"gather_undefined_index",
       [u] {
         gather(f32({2, 5}), 1, u);
       },
       NUMR_THROWS(InvalidArgument, "gather")},
      {"gather_empty_index_ok",
       [] {
         gather(f32({2, 5}), 1, t_of(D::I64, {2, 0}));
       },
       NUMR_OK},
      {"gather_i32_index_ok",
       [] {
         gather(f32({2, 5}), 1, t_of(D::I32, {2, 3}));
       },
       NUMR_OK},
      {"scatter_index_high",
       [] {
         scatter(f32({2, 5}), 0, i64({2}, {1, 1}), f32({1, 1}));
       },
       NUMR_THROWS(IndexOutOfBounds, "scatter")},
      {"scatter_src_dtype",
       [] {
         scatter(f32({2, 5}), 0, i64({1}, {1, 1}), t_of(D::F64, {1, 1}));
       },
       NUMR_THROWS(DTypeMismatch, "scatter")},
      {"scatter_src_smaller",
       [] {
         scatter(f32({2, 5}), 0, t_of(D::I64, {2, 3}), f32({2, 2}));
       },
       NUMR_THROWS(ShapeMismatch, "scatter")},
      {"scatter_reduce_negative",
       [] { scatter_reduce(f32({4}), 0, i64({-4}, {1}), f32({1}), ScatterReduce::Sum); },
       NUMR_THROWS(IndexOutOfBounds, "scatter_reduce")},
      {"scatter_reduce_bool",
       [] {
         scatter_reduce(t_of(D::Bool, {4}), 0, i64({0}, {1}), t_of(D::Bool, {1}),
                        ScatterReduce::Sum);
       },
       NUMR_THROWS(UnsupportedDType, "scatter_reduce")},
      {"scatter_reduce_bad_enum",
       [] { scatter_reduce(f32({4}), 0, i64({0}, {1}), f32({1}), ScatterReduce(9)); },
       NUMR_THROWS(InvalidArgument, "scatter_reduce")},
      {"index_select_2d_index",
       [] {
         index_select(f32({4, 3}), 0, t_of(D::I64, {2, 2}));
       },
       NUMR_THROWS(ShapeMismatch, "index_select")},
      {"index_select_high",
       [] {
         index_select(f32({4, 3}), -1, i64({3}, {1}));
       },
       NUMR_THROWS(IndexOutOfBounds, "index_select")},
      {"take_high",
       [] {
         take(f32({4, 3}), i64({12}, {1}));
       },
       NUMR_THROWS(IndexOutOfBounds, "take")},
      {"take_negative",
       [] {
         take(f32({4, 3}), i64({-1}, {1}));
       },
       NUMR_THROWS(IndexOutOfBounds, "take")},
      {"embedding_weight_1d", [] { embedding_lookup(f32({4}), i64({0}, {1})); },
       NUMR_THROWS(InvalidDimension, "embedding_lookup")},
      {"embedding_high",
       [] {
         embedding_lookup(f32({4, 2}), i64({4}, {1}));
       },
       NUMR_THROWS(IndexOutOfBounds, "embedding_lookup")},
      {"gather_nd_k_too_large",
       [] {
         gather_nd(f32({4, 2}), t_of(D::I64, {3, 3}));
       },
       NUMR_THROWS(ShapeMismatch, "gather_nd")},
      {"gather_nd_component_high",
       [] {
         gather_nd(f32({4, 2}), i64({3, 2}, {1, 2}));
       },
       NUMR_THROWS(IndexOutOfBounds, "gather_nd")},
      {"index_put_too_many",
       [] {
         index_put(f32({4}), {t_of(D::I64, {1}), t_of(D::I64, {1})}, f32({1}));
       },
       NUMR_THROWS(InvalidArgument, "index_put")},
      {"index_put_no_broadcast",
       [] {
         index_put(f32({4, 4}), {t_of(D::I64, {2}), t_of(D::I64, {3})}, f32({}));
       },
       NUMR_THROWS(BroadcastError, "index_put")},
      {"index_put_values_shape",
       [] {
         index_put(f32({4, 3}), {t_of(D::I64, {2})}, f32({2, 2}));
       },
       NUMR_THROWS(BroadcastError, "index_put")},
      {"index_put_high",
       [] {
         index_put(f32({4, 3}), {i64({4}, {1})}, f32({}));
       },
       NUMR_THROWS(IndexOutOfBounds, "index_put")},
      {"index_put_bool_accumulate",
       [] { index_put(t_of(D::Bool, {4}), {t_of(D::I64, {1})}, t_of(D::Bool, {1}), true); },
       NUMR_THROWS(UnsupportedDType, "index_put")},
      {"put_values_count", [] { put(f32({4}), t_of(D::I64, {2}), f32({3})); },
       NUMR_THROWS(ShapeMismatch, "put")},
      {"put_negative", [] { put(f32({4}), i64({-2}, {1}), f32({1})); },
       NUMR_THROWS(IndexOutOfBounds, "put")},
      {"masked_select_mask_dtype", [] { masked_select(f32({4}), t_of(D::U8, {4})); },
       NUMR_THROWS(DTypeMismatch, "masked_select")},
      {"masked_select_shapes", [] { masked_select(f32({4}), t_of(D::Bool, {3})); },
       NUMR_THROWS(BroadcastError, "masked_select")},
      {"nonzero_undefined", [u] { nonzero(u); }, NUMR_THROWS(InvalidArgument, "nonzero")},
      {"bincount_negative",
       [] {
         bincount(i64({1, -1}, {2}));
       },
       NUMR_THROWS(IndexOutOfBounds, "bincount")},
      {"bincount_float", [] { bincount(f32({3})); }, NUMR_THROWS(DTypeMismatch, "bincount")},
      {"bincount_2d",
       [] {
         bincount(t_of(D::I64, {2, 2}));
       },
       NUMR_THROWS(InvalidDimension, "bincount")},
      {"bincount_weights_shape", [] { bincount(t_of(D::I64, {3}), f32({2})); },
       NUMR_THROWS(ShapeMismatch, "bincount")},
      {"bincount_weights_bool", [] { bincount(t_of(D::I64, {3}), t_of(D::Bool, {3})); },
       NUMR_THROWS(UnsupportedDType, "bincount")},
      {"bincount_minlength", [] { bincount(t_of(D::I64, {3}), std::nullopt, -1); },
       NUMR_THROWS(InvalidArgument, "bincount")},
      {"scatter_reduce_prod_var",
       [] {
         scatter_reduce(Var(f32({3}), true), 0, i64({0}, {1}), Var(f32({1})), ScatterReduce::Prod);
       },
       NUMR_THROWS(InvalidArgument, "scatter_reduce")},
      {"gather_nd_var_0d_index", [] { gather_nd(Var(f32({3}), true), t_of(D::I64, {})); },
       NUMR_THROWS(InvalidDimension, "gather_nd")},
      {"gather_var_index_high", [] { gather(Var(f32({3}), true), 0, i64({3}, {1})); },
       NUMR_THROWS(IndexOutOfBounds, "gather")},
  };
}

INSTANTIATE_TEST_SUITE_P(BadInputIndexing, BadInput, ::testing::ValuesIn(indexing_cases()),
                         case_name);

// The message names the op, the index, the dim and its size; a failed call leaves x, src
// and values as they were.
TEST(BadInputIndexingState, MessagesAndUntouchedInputs) {
  const Tensor x = Tensor::from_vector<float>({1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, {2, 5});
  const std::vector<float> before = x.to_vector<float>();
  const Tensor src = ones({2, 1}, DType::F32);
  try {
    gather(x, 1, i64({0, 7}, {2, 1}));
    ADD_FAILURE() << "no exception";
  } catch (const IndexOutOfBounds& e) {
    EXPECT_EQ(std::string(e.what()), "[gather] index 7 out of range for dim 1 of size 5");
  }
  try {
    take(x, i64({-1}, {1}));
    ADD_FAILURE() << "no exception";
  } catch (const IndexOutOfBounds& e) {
    EXPECT_EQ(std::string(e.what()), "[take] index -1 out of range for a tensor of 10 elements");
  }
  EXPECT_THROW(scatter(x, 1, i64({0, 5}, {2, 1}), src), IndexOutOfBounds);
  EXPECT_THROW(scatter_reduce(x, 1, i64({-1, 0}, {2, 1}), src, ScatterReduce::Amax),
               IndexOutOfBounds);
  EXPECT_THROW(put(x, i64({3, 10}, {2}), src.reshape({2}), true), IndexOutOfBounds);
  EXPECT_THROW(index_put(x, {i64({2}, {1})}, ones({5}, DType::F32)), IndexOutOfBounds);
  EXPECT_EQ(x.to_vector<float>(), before);
  EXPECT_EQ(src.to_vector<float>(), std::vector<float>({1, 1}));
}

}  // namespace
}  // namespace numr::bad_input
