// Bad input to the shape and misc ops (roll, repeat_interleave, meshgrid, slice_assign,
// masked_fill, unfold, one_hot, einsum, dropout), for the Tensor and the Var forms, and
// that no call, failing or not, writes into its inputs.
#include <cstdint>
#include <limits>

#include "bad_input_table.h"

namespace numr::bad_input {
namespace {

using D = DType;
constexpr int64_t kI64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t k2p62 = int64_t(1) << 62;
constexpr int64_t k2p31 = int64_t(1) << 31;

Tensor idx(std::vector<int64_t> v) { return Tensor::from_vector(v, {int64_t(v.size())}); }
Var leaf(const Shape& shape) { return Var(f32(shape), true); }

std::vector<Case> shape_misc_cases() {
  const Tensor u;
  return {
      {"roll_pairs",
       [] {
         roll(f32({2, 3}), {1, 2}, {0});
       },
       NUMR_THROWS(InvalidArgument, "roll")},
      {"roll_flat_two_shifts",
       [] {
         roll(f32({2, 3}), {1, 2});
       },
       NUMR_THROWS(InvalidArgument, "roll")},
      {"roll_dim",
       [] {
         roll(f32({2, 3}), {1}, {2});
       },
       NUMR_THROWS(InvalidDimension, "roll")},
      {"roll_undefined", [u] { roll(u, {1}); }, NUMR_THROWS(InvalidArgument, "roll")},
      {"roll_var_dim", [] { roll(leaf({2}), {1}, {-2}); }, NUMR_THROWS(InvalidDimension, "roll")},
      {"roll_huge_shift_ok", [] { roll(f32({3}), {kI64Max}, {0}); }, NUMR_OK},
      {"roll_empty_ok", [] { roll(f32({0}), {3}); }, NUMR_OK},
      {"repeat_interleave_negative", [] { repeat_interleave(f32({2}), -1, 0); },
       NUMR_THROWS(InvalidArgument, "repeat_interleave")},
      {"repeat_interleave_dim", [] { repeat_interleave(f32({2}), 2, 1); },
       NUMR_THROWS(InvalidDimension, "repeat_interleave")},
      {"repeat_interleave_overflow", [] { repeat_interleave(f32({4}), k2p62, 0); },
       NUMR_THROWS(InvalidArgument, "repeat_interleave")},
      {"repeat_interleave_var_negative", [] { repeat_interleave(leaf({2}), -3); },
       NUMR_THROWS(InvalidArgument, "repeat_interleave")},
      {"repeat_interleave_zero_ok",
       [] {
         repeat_interleave(f32({2, 3}), 0, 1);
       },
       NUMR_OK},
      {"repeat_interleave_tensor_negative",
       [] {
         repeat_interleave(f32({3}), idx({1, -1, 2}), 0);
       },
       NUMR_THROWS(InvalidArgument, "repeat_interleave")},
      {"repeat_interleave_tensor_length",
       [] {
         repeat_interleave(f32({2, 3}), idx({1, 2}), 1);
       },
       NUMR_THROWS(InvalidArgument, "repeat_interleave")},
      {"repeat_interleave_tensor_dtype", [] { repeat_interleave(f32({3}), f32({3}), 0); },
       NUMR_THROWS(DTypeMismatch, "repeat_interleave")},
      {"repeat_interleave_tensor_2d",
       [] {
         repeat_interleave(f32({3}), idx({1, 1, 1}).view({3, 1}), 0);
       },
       NUMR_THROWS(InvalidArgument, "repeat_interleave")},
      {"repeat_interleave_tensor_overflow",
       [] {
         repeat_interleave(f32({2}), idx({k2p62, k2p62}), 0);
       },
       NUMR_THROWS(InvalidArgument, "repeat_interleave")},
      {"repeat_interleave_tensor_undefined", [u] { repeat_interleave(f32({2}), u, 0); },
       NUMR_THROWS(InvalidArgument, "repeat_interleave")},
      {"repeat_interleave_tensor_var_negative",
       [] {
         repeat_interleave(leaf({2}), idx({-1, 1}));
       },
       NUMR_THROWS(InvalidArgument, "repeat_interleave")},
      {"repeat_interleave_tensor_ok",
       [] {
         repeat_interleave(f32({2, 3}), idx({0, 2, 1}), 1);
       },
       NUMR_OK},
      {"meshgrid_indexing",
       [] {
         meshgrid({f32({2}), f32({3})}, "ji");
       },
       NUMR_THROWS(InvalidArgument, "meshgrid")},
      {"meshgrid_empty", [] { meshgrid(std::vector<Tensor>{}); },
       NUMR_THROWS(InvalidArgument, "meshgrid")},
      {"meshgrid_2d",
       [] {
         meshgrid({f32({2, 2}), f32({3})});
       },
       NUMR_THROWS(InvalidArgument, "meshgrid")},
      {"meshgrid_dtype",
       [] {
         meshgrid({f32({2}), t_of(D::I32, {3})});
       },
       NUMR_THROWS(DTypeMismatch, "meshgrid")},
      {"meshgrid_undefined",
       [u] {
         meshgrid({f32({2}), u});
       },
       NUMR_THROWS(InvalidArgument, "meshgrid")},
      {"meshgrid_var_indexing", [] { meshgrid(std::vector<Var>{leaf({2})}, "IJ"); },
       NUMR_THROWS(InvalidArgument, "meshgrid")},
      {"meshgrid_huge",
       [] {
         meshgrid({f32({1}).broadcast_to({k2p31}), f32({1}).broadcast_to({k2p31})});
       },
       NUMR_THROWS(InvalidArgument, "meshgrid")},
      {"slice_assign_shape",
       [] {
         slice_assign(f32({4, 5}), f32({3, 2}), 1, 0);
       },
       NUMR_THROWS(ShapeMismatch, "slice_assign")},
      {"slice_assign_rank",
       [] {
         slice_assign(f32({4, 5}), f32({2}), 1, 0);
       },
       NUMR_THROWS(ShapeMismatch, "slice_assign")},
      {"slice_assign_past_end",
       [] {
         slice_assign(f32({4, 5}), f32({4, 2}), 1, 4);
       },
       NUMR_THROWS(IndexOutOfBounds, "slice_assign")},
      {"slice_assign_start_too_negative", [] { slice_assign(f32({4}), f32({1}), 0, -5); },
       NUMR_THROWS(IndexOutOfBounds, "slice_assign")},
      {"slice_assign_start_huge", [] { slice_assign(f32({4}), f32({1}), 0, kI64Max); },
       NUMR_THROWS(IndexOutOfBounds, "slice_assign")},
      {"slice_assign_too_long", [] { slice_assign(f32({4}), f32({5}), 0, 0); },
       NUMR_THROWS(IndexOutOfBounds, "slice_assign")},
      {"slice_assign_dtype", [] { slice_assign(f32({4}), t_of(D::F64, {1}), 0, 0); },
       NUMR_THROWS(DTypeMismatch, "slice_assign")},
      {"slice_assign_dim", [] { slice_assign(f32({4}), f32({1}), 1, 0); },
       NUMR_THROWS(InvalidDimension, "slice_assign")},
      {"slice_assign_0d", [] { slice_assign(f32({}), f32({}), 0, 0); },
       NUMR_THROWS(InvalidDimension, "slice_assign")},
      {"slice_assign_var_past_end", [] { slice_assign(leaf({3}), leaf({2}), 0, 2); },
       NUMR_THROWS(IndexOutOfBounds, "slice_assign")},
      {"slice_assign_empty_at_end_ok", [] { slice_assign(f32({4}), f32({0}), 0, 4); }, NUMR_OK},
      {"masked_fill_mask_dtype", [] { masked_fill(f32({3}), t_of(D::U8, {3}), 1.0); },
       NUMR_THROWS(DTypeMismatch, "masked_fill")},
      {"masked_fill_broadcast",
       [] {
         masked_fill(f32({3}), t_of(D::Bool, {2, 3}), 1.0);
       },
       NUMR_THROWS(BroadcastError, "masked_fill")},
      {"masked_fill_shape", [] { masked_fill(f32({3}), t_of(D::Bool, {2}), 1.0); },
       NUMR_THROWS(BroadcastError, "masked_fill")},
      {"masked_fill_value_fraction",
       [] { masked_fill(t_of(D::I32, {3}), t_of(D::Bool, {3}), 0.5); },
       NUMR_THROWS(InvalidArgument, "masked_fill")},
      {"masked_fill_value_u8", [] { masked_fill(t_of(D::U8, {3}), t_of(D::Bool, {3}), 256.0); },
       NUMR_THROWS(InvalidArgument, "masked_fill")},
      {"masked_fill_undefined_mask", [u] { masked_fill(f32({3}), u, 1.0); },
       NUMR_THROWS(InvalidArgument, "masked_fill")},
      {"masked_fill_var_mask", [] { masked_fill(leaf({3}), f32({3}), 1.0); },
       NUMR_THROWS(DTypeMismatch, "masked_fill")},
      {"masked_fill_nan_ok", [] { masked_fill(f32({3}), t_of(D::Bool, {}), kNaN); }, NUMR_OK},
      {"unfold_size", [] { unfold(f32({4}), 0, 5, 1); }, NUMR_THROWS(InvalidArgument, "unfold")},
      {"unfold_negative_size", [] { unfold(f32({4}), 0, -1, 1); },
       NUMR_THROWS(InvalidArgument, "unfold")},
      {"unfold_step", [] { unfold(f32({4}), 0, 2, 0); }, NUMR_THROWS(InvalidArgument, "unfold")},
      {"unfold_dim", [] { unfold(f32({4}), 1, 2, 1); }, NUMR_THROWS(InvalidDimension, "unfold")},
      {"unfold_0d_size", [] { unfold(f32({}), 0, 2, 1); }, NUMR_THROWS(InvalidArgument, "unfold")},
      {"unfold_0d_dim", [] { unfold(f32({}), 1, 1, 1); }, NUMR_THROWS(InvalidDimension, "unfold")},
      {"unfold_0d_step", [] { unfold(f32({}), 0, 1, 0); }, NUMR_THROWS(InvalidArgument, "unfold")},
      {"unfold_0d_ok", [] { unfold(f32({}), -1, 1, 1); }, NUMR_OK},
      {"unfold_undefined", [u] { unfold(u, 0, 1, 1); }, NUMR_THROWS(InvalidArgument, "unfold")},
      {"unfold_var_step", [] { unfold(leaf({4}), 0, 2, -1); },
       NUMR_THROWS(InvalidArgument, "unfold")},
      {"unfold_huge_step_ok", [] { unfold(f32({4}), 0, 2, kI64Max); }, NUMR_OK},
      {"unfold_write", [] { unfold(f32({4}), 0, 2, 1).fill_(1.0); },
       NUMR_THROWS(InvalidArgument, "fill_")},
  };
}

std::vector<Case> misc_cases() {
  const Tensor u;
  return {
      {"one_hot_dtype", [] { one_hot(f32({3}), 4); }, NUMR_THROWS(UnsupportedDType, "one_hot")},
      {"one_hot_u8", [] { one_hot(t_of(D::U8, {3}), 4); },
       NUMR_THROWS(UnsupportedDType, "one_hot")},
      {"one_hot_negative_index",
       [] {
         one_hot(idx({0, -1, 2}), 4);
       },
       NUMR_THROWS(IndexOutOfBounds, "one_hot")},
      {"one_hot_index_too_large",
       [] {
         one_hot(idx({0, 4}), 4);
       },
       NUMR_THROWS(IndexOutOfBounds, "one_hot")},
      {"one_hot_i32_too_large", [] { one_hot(idx({7}).cast(D::I32), 3); },
       NUMR_THROWS(IndexOutOfBounds, "one_hot")},
      {"one_hot_classes", [] { one_hot(idx({0}), -2); }, NUMR_THROWS(InvalidArgument, "one_hot")},
      {"one_hot_empty_infer", [] { one_hot(t_of(D::I64, {0}), -1); },
       NUMR_THROWS(InvalidArgument, "one_hot")},
      {"one_hot_max_index", [] { one_hot(idx({kI64Max}), -1); },
       NUMR_THROWS(InvalidArgument, "one_hot")},
      {"one_hot_huge", [] { one_hot(t_of(D::I64, {1 << 20}), k2p62); },
       NUMR_THROWS(InvalidArgument, "one_hot")},
      {"one_hot_undefined", [u] { one_hot(u, 3); }, NUMR_THROWS(InvalidArgument, "one_hot")},
      {"one_hot_var_range", [] { one_hot(Var(idx({5})), 2); },
       NUMR_THROWS(IndexOutOfBounds, "one_hot")},
      {"one_hot_empty_ok",
       [] {
         one_hot(t_of(D::I32, {0, 2}), 3);
       },
       NUMR_OK},
      {"einsum_no_operands", [] { einsum("", std::vector<Tensor>{}); },
       NUMR_THROWS(InvalidArgument, "einsum")},
      {"einsum_operand_count",
       [] {
         einsum("ij,jk->ik", {f32({2, 3})});
       },
       NUMR_THROWS(InvalidArgument, "einsum")},
      {"einsum_rank",
       [] {
         einsum("ijk", {f32({2, 3})});
       },
       NUMR_THROWS(InvalidArgument, "einsum")},
      {"einsum_rank_ellipsis",
       [] {
         einsum("ijk...", {f32({2, 3})});
       },
       NUMR_THROWS(InvalidArgument, "einsum")},
      {"einsum_character",
       [] {
         einsum("i1->i", {f32({2, 3})});
       },
       NUMR_THROWS(InvalidArgument, "einsum")},
      {"einsum_lone_dot",
       [] {
         einsum("i.j", {f32({2, 3})});
       },
       NUMR_THROWS(InvalidArgument, "einsum")},
      {"einsum_two_ellipses",
       [] {
         einsum("...i...", {f32({2, 3})});
       },
       NUMR_THROWS(InvalidArgument, "einsum")},
      {"einsum_two_arrows",
       [] {
         einsum("ij->ij->ij", {f32({2, 3})});
       },
       NUMR_THROWS(InvalidArgument, "einsum")},
      {"einsum_lone_dash",
       [] {
         einsum("ij-ji", {f32({2, 3})});
       },
       NUMR_THROWS(InvalidArgument, "einsum")},
      {"einsum_output_unknown",
       [] {
         einsum("ij->ik", {f32({2, 3})});
       },
       NUMR_THROWS(InvalidArgument, "einsum")},
      {"einsum_output_repeat",
       [] {
         einsum("ij->ii", {f32({2, 3})});
       },
       NUMR_THROWS(InvalidArgument, "einsum")},
      {"einsum_arrow_in_output",
       [] {
         einsum("ij->i>", {f32({2, 3})});
       },
       NUMR_THROWS(InvalidArgument, "einsum")},
      {"einsum_extent",
       [] {
         einsum("ij,jk", {f32({2, 3}), f32({4, 2})});
       },
       NUMR_THROWS(ShapeMismatch, "einsum")},
      {"einsum_diagonal_extent",
       [] {
         einsum("ii", {f32({2, 3})});
       },
       NUMR_THROWS(ShapeMismatch, "einsum")},
      {"einsum_ellipsis_broadcast",
       [] {
         einsum("...i,...i", {f32({2, 3}), f32({4, 3})});
       },
       NUMR_THROWS(BroadcastError, "einsum")},
      {"einsum_dtype",
       [] {
         einsum("i,i", {f32({2}), t_of(D::F64, {2})});
       },
       NUMR_THROWS(DTypeMismatch, "einsum")},
      {"einsum_integer",
       [] {
         einsum("i,i", {t_of(D::I64, {2}), t_of(D::I64, {2})});
       },
       NUMR_THROWS(UnsupportedDType, "einsum")},
      {"einsum_undefined",
       [u] {
         einsum("i,i", {f32({2}), u});
       },
       NUMR_THROWS(InvalidArgument, "einsum")},
      {"einsum_var_equation",
       [] {
         einsum("ij,jk->il", std::vector<Var>{leaf({2, 3}), leaf({3, 2})});
       },
       NUMR_THROWS(InvalidArgument, "einsum")},
      {"einsum_spaces_ok",
       [] {
         einsum(" ij , jk -> ik ", {f32({2, 3}), f32({3, 4})});
       },
       NUMR_OK},
      {"einsum_scalar_ok", [] { einsum("->", {f32({})}); }, NUMR_OK},
      {"einsum_empty_extent_ok",
       [] {
         einsum("ij,jk", {f32({0, 3}), f32({3, 4})});
       },
       NUMR_OK},
      {"dropout_p_negative",
       [] {
         Generator g;
         dropout(f32({3}), -0.1, g);
       },
       NUMR_THROWS(InvalidArgument, "dropout")},
      {"dropout_p_above_one",
       [] {
         Generator g;
         dropout(f32({3}), 1.5, g);
       },
       NUMR_THROWS(InvalidArgument, "dropout")},
      {"dropout_p_nan",
       [] {
         Generator g;
         dropout(f32({3}), kNaN, g);
       },
       NUMR_THROWS(InvalidArgument, "dropout")},
      {"dropout_integer",
       [] {
         Generator g;
         dropout(t_of(D::I32, {3}), 0.5, g);
       },
       NUMR_THROWS(UnsupportedDType, "dropout")},
      {"dropout_undefined",
       [u] {
         Generator g;
         dropout(u, 0.5, g);
       },
       NUMR_THROWS(InvalidArgument, "dropout")},
      {"dropout_var_p",
       [] {
         Generator g;
         dropout(leaf({3}), 2.0, g);
       },
       NUMR_THROWS(InvalidArgument, "dropout")},
      {"dropout_empty_ok",
       [] {
         Generator g;
         dropout(f32({0}), 0.5, g);
       },
       NUMR_OK},
  };
}

INSTANTIATE_TEST_SUITE_P(BadInputShapeMisc, BadInput, ::testing::ValuesIn(shape_misc_cases()),
                         case_name);
INSTANTIATE_TEST_SUITE_P(BadInputMisc, BadInput, ::testing::ValuesIn(misc_cases()), case_name);

// Inputs keep their values and versions through every call, failing or not.
TEST(BadInputMiscInputs, AreUntouched) {
  const Tensor x = arange(0, 12, 1, D::F32).reshape({3, 4});
  const Tensor src = full({3, 2}, 9.0, D::F32);
  const Tensor mask = arange(0, 4, 1, D::I64).reshape({4}).cast(D::Bool);
  const Tensor index = Tensor::from_vector(std::vector<int64_t>{0, 2, 1, 7}, {4});
  const std::vector<float> x_before = x.to_vector<float>(), src_before = src.to_vector<float>();
  const std::vector<int64_t> index_before = index.to_vector<int64_t>();
  const uint64_t version = x.storage()->version();
  const std::vector<std::function<void()>> calls = {
      [&] {
        roll(x, {1, 2}, {0, 1});
      },
      [&] {
        roll(x, {1, 2}, {0});
      },
      [&] { repeat_interleave(x, 2, 0); },
      [&] { repeat_interleave(x, -2, 0); },
      [&] {
        meshgrid({x.flatten(), src.flatten()});
      },
      [&] { slice_assign(x, src, 1, 1); },
      [&] { slice_assign(x, src, 1, 3); },
      [&] { masked_fill(x, mask, -1.0); },
      [&] {
        masked_fill(x, mask.reshape({2, 2}), -1.0);
      },
      [&] { unfold(x, 1, 2, 1); },
      [&] { one_hot(index, 8); },
      [&] { one_hot(index, 5); },
      [&] {
        einsum("ij,kj->ik", {x, x});
      },
      [&] {
        einsum("ij,jk->ik", {x, x});
      },
      [&] {
        Generator g(1);
        dropout(x, 0.5, g);
      },
  };
  for (size_t i = 0; i < calls.size(); ++i) {
    try {
      calls[i]();
    } catch (const Error&) {
    }
    EXPECT_EQ(x.to_vector<float>(), x_before) << "call " << i;
    EXPECT_EQ(src.to_vector<float>(), src_before) << "call " << i;
    EXPECT_EQ(index.to_vector<int64_t>(), index_before) << "call " << i;
    EXPECT_EQ(x.storage()->version(), version) << "call " << i;
  }
}

}  // namespace
}  // namespace numr::bad_input
