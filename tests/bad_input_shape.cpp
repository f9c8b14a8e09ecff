// Bad input to the shape ops, views, copies, factories and the Tensor methods.
#include <cstdint>
#include <limits>

#include "bad_input_table.h"

namespace numr::bad_input {
namespace {

using D = DType;
constexpr int64_t kI64Min = std::numeric_limits<int64_t>::min();
constexpr int64_t kI64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t k2p62 = int64_t(1) << 62;
constexpr int64_t k2p31 = int64_t(1) << 31;

std::vector<Case> shape_op_cases() {
  const Tensor u;
  return {
      {"cat_empty_list", [] { cat(std::vector<Tensor>{}, 0); }, NUMR_THROWS(InvalidArgument, "cat")},
      {"cat_dim", [] { cat({f32({2}), f32({3})}, 1); }, NUMR_THROWS(InvalidDimension, "cat")},
      {"cat_dim_i64_min", [] { cat({f32({2}), f32({3})}, kI64Min); },
       NUMR_THROWS(InvalidDimension, "cat")},
      {"cat_0d", [] { cat({f32({}), f32({})}, 0); }, NUMR_THROWS(InvalidDimension, "cat")},
      {"cat_shape", [] { cat({f32({2, 3}), f32({2, 4})}, 0); }, NUMR_THROWS(ShapeMismatch, "cat")},
      {"cat_rank", [] { cat({f32({2, 3}), f32({3})}, 0); }, NUMR_THROWS(ShapeMismatch, "cat")},
      {"cat_dtype", [] { cat({f32({2}), t_of(D::I32, {2})}, 0); }, NUMR_THROWS(DTypeMismatch, "cat")},
      {"cat_undefined", [u] { cat({f32({2}), u}, 0); }, NUMR_THROWS(InvalidArgument, "cat")},
      {"stack_shape", [] { stack({f32({2}), f32({3})}, 0); }, NUMR_THROWS(ShapeMismatch, "stack")},
      {"stack_dim", [] { stack({f32({2}), f32({2})}, 3); }, NUMR_THROWS(InvalidDimension, "stack")},
      {"stack_empty_list", [] { stack(std::vector<Tensor>{}, 0); },
       NUMR_THROWS(InvalidArgument, "stack")},
      {"stack_dtype", [] { stack({t_of(D::Bool, {2}), t_of(D::U8, {2})}, 0); },
       NUMR_THROWS(DTypeMismatch, "stack")},
      {"split_zero", [] { split(f32({4}), 0, 0); }, NUMR_THROWS(InvalidArgument, "split")},
      {"split_negative", [] { split(f32({4}), -2, 0); }, NUMR_THROWS(InvalidArgument, "split")},
      {"split_dim", [] { split(f32({4}), 2, 1); }, NUMR_THROWS(InvalidDimension, "split")},
      {"split_undefined", [u] { split(u, 1, 0); }, NUMR_THROWS(InvalidArgument, "split")},
      {"chunk_zero", [] { chunk(f32({4}), 0, 0); }, NUMR_THROWS(InvalidArgument, "chunk")},
      {"chunk_dim", [] { chunk(f32({4}), 2, -2); }, NUMR_THROWS(InvalidDimension, "chunk")},
      {"repeat_count", [] { repeat(f32({2, 2}), {2}); }, NUMR_THROWS(InvalidArgument, "repeat")},
      {"repeat_negative", [] { repeat(f32({2}), {-1}); }, NUMR_THROWS(InvalidArgument, "repeat")},
      {"repeat_huge", [] { repeat(f32({2}), {k2p62}); }, NUMR_THROWS(InvalidArgument, "repeat")},
      {"repeat_overflow", [] { repeat(f32({2, 2}), {k2p62, k2p62}); },
       NUMR_THROWS(InvalidArgument, "repeat")},
      {"pad_odd", [] { pad(f32({2}), {1}); }, NUMR_THROWS(InvalidArgument, "pad")},
      {"pad_too_many", [] { pad(f32({2}), {1, 1, 1, 1}); }, NUMR_THROWS(InvalidArgument, "pad")},
      {"pad_negative", [] { pad(f32({2}), {-1, 0}); }, NUMR_THROWS(InvalidArgument, "pad")},
      {"pad_huge", [] { pad(f32({2}), {kI64Max, kI64Max}); }, NUMR_THROWS(InvalidArgument, "pad")},
      {"pad_i32_fraction", [] { pad(t_of(D::I32, {2}), {1, 1}, 0.5); },
       NUMR_THROWS(InvalidArgument, "pad")},
      {"pad_undefined", [u] { pad(u, {1, 1}); }, NUMR_THROWS(InvalidArgument, "pad")},
      // Valid edge cases.
      {"cat_empty_parts_ok", [] { cat({f32({0, 3}), f32({2, 3})}, 0); }, NUMR_OK},
      {"stack_0d_ok", [] { stack({f32({}), f32({})}, 0); }, NUMR_OK},
      {"split_empty_ok", [] { split(f32({0}), 3, 0); }, NUMR_OK},
      {"chunk_more_than_size_ok", [] { chunk(f32({2}), 5, 0); }, NUMR_OK},
      {"repeat_zero_ok", [] { repeat(f32({2}), {0}); }, NUMR_OK},
      {"repeat_0d_ok", [] { repeat(f32({}), {2, 3}); }, NUMR_OK},
      {"pad_empty_ok", [] { pad(f32({0}), {1, 2}); }, NUMR_OK},
      {"pad_0d_none_ok", [] { pad(f32({}), {}); }, NUMR_OK},
      {"pad_nan_f32_ok", [] { pad(f32({1}), {1, 0}, kNaN); }, NUMR_OK},
  };
}

std::vector<Case> view_cases() {
  const Tensor u;
  return {
      {"reshape_count", [] { reshape(f32({2, 3}), {4}); }, NUMR_THROWS(ShapeMismatch, "reshape")},
      {"reshape_two_infer", [] { reshape(f32({4}), {-1, -1}); },
       NUMR_THROWS(InvalidArgument, "reshape")},
      {"reshape_negative", [] { reshape(f32({4}), {-2, -2}); },
       NUMR_THROWS(InvalidArgument, "reshape")},
      {"reshape_overflow", [] { reshape(f32({0}), {k2p62, k2p62, 0}); },
       NUMR_THROWS(InvalidArgument, "reshape")},
      {"reshape_i64_min", [] { reshape(f32({1}), {kI64Min}); },
       NUMR_THROWS(InvalidArgument, "reshape")},
      {"reshape_infer_empty", [] { reshape(f32({0}), {0, -1}); },
       NUMR_THROWS(ShapeMismatch, "reshape")},
      {"reshape_undefined", [u] { reshape(u, {1}); }, NUMR_THROWS(InvalidArgument, "reshape")},
      {"method_reshape_count", [] { f32({2}).reshape({3}); }, NUMR_THROWS(ShapeMismatch, "reshape")},
      {"view_not_contiguous", [] { view(f32({2, 3}).transpose(0, 1), {6}); },
       NUMR_THROWS(NotContiguous, "view")},
      {"view_count", [] { f32({2, 3}).view({5}); }, NUMR_THROWS(ShapeMismatch, "view")},
      {"transpose_dim", [] { transpose(f32({2, 3}), 0, 2); }, NUMR_THROWS(InvalidDimension, "transpose")},
      {"transpose_0d", [] { f32({}).transpose(0, 1); }, NUMR_THROWS(InvalidDimension, "transpose")},
      {"transpose_i64_max", [] { f32({2}).transpose(kI64Max, 0); },
       NUMR_THROWS(InvalidDimension, "transpose")},
      {"permute_count", [] { permute(f32({2, 3}), {0}); }, NUMR_THROWS(InvalidArgument, "permute")},
      {"permute_repeat", [] { f32({2, 3}).permute({1, -1}); }, NUMR_THROWS(InvalidArgument, "permute")},
      {"permute_dim", [] { f32({2, 3}).permute({0, 2}); }, NUMR_THROWS(InvalidDimension, "permute")},
      {"narrow_range", [] { narrow(f32({4}), 0, 2, 3); }, NUMR_THROWS(IndexOutOfBounds, "narrow")},
      {"narrow_negative_length", [] { f32({4}).narrow(0, 0, -1); },
       NUMR_THROWS(IndexOutOfBounds, "narrow")},
      {"narrow_start_i64_min", [] { f32({4}).narrow(0, kI64Min, 1); },
       NUMR_THROWS(IndexOutOfBounds, "narrow")},
      {"narrow_length_i64_max", [] { f32({4}).narrow(0, 1, kI64Max); },
       NUMR_THROWS(IndexOutOfBounds, "narrow")},
      {"narrow_dim", [] { f32({4}).narrow(1, 0, 1); }, NUMR_THROWS(InvalidDimension, "narrow")},
      {"narrow_0d", [] { f32({}).narrow(0, 0, 1); }, NUMR_THROWS(InvalidDimension, "narrow")},
      {"broadcast_to_rank", [] { broadcast_to(f32({2, 3}), {3}); },
       NUMR_THROWS(BroadcastError, "broadcast_to")},
      {"broadcast_to_extent", [] { f32({2}).broadcast_to({3}); },
       NUMR_THROWS(BroadcastError, "broadcast_to")},
      {"broadcast_to_huge", [] { f32({1}).broadcast_to({k2p62}); },
       NUMR_THROWS(InvalidArgument, "broadcast_to")},
      {"broadcast_to_overflow", [] { f32({1, 1}).broadcast_to({k2p31 * 4, k2p31 * 4}); },
       NUMR_THROWS(InvalidArgument, "broadcast_to")},
      {"broadcast_to_negative", [] { f32({1}).broadcast_to({-1}); },
       NUMR_THROWS(InvalidArgument, "broadcast_to")},
      {"squeeze_dim", [] { f32({1}).squeeze(1); }, NUMR_THROWS(InvalidDimension, "squeeze")},
      {"unsqueeze_dim", [] { f32({2}).unsqueeze(3); }, NUMR_THROWS(InvalidDimension, "unsqueeze")},
      {"unsqueeze_negative", [] { f32({2}).unsqueeze(-3); },
       NUMR_THROWS(InvalidDimension, "unsqueeze")},
      {"flatten_order", [] { f32({2, 3, 4}).flatten(2, 1); }, NUMR_THROWS(InvalidDimension, "flatten")},
      {"flatten_dim", [] { f32({2, 3}).flatten(0, 2); }, NUMR_THROWS(InvalidDimension, "flatten")},
      {"flip_repeat", [] { f32({2, 3}).flip({0, -2}); }, NUMR_THROWS(InvalidArgument, "flip")},
      {"flip_dim", [] { flip(f32({2}), {1}); }, NUMR_THROWS(InvalidDimension, "flip")},
      {"squeeze_undefined", [u] { squeeze(u); }, NUMR_THROWS(InvalidArgument, "squeeze")},
      {"flip_undefined", [u] { flip(u, {}); }, NUMR_THROWS(InvalidArgument, "flip")},
      {"transpose_undefined", [u] { u.transpose(0, 0); }, NUMR_THROWS(InvalidArgument, "transpose")},
      // Valid edge cases.
      {"reshape_empty_infer_ok", [] { reshape(f32({0, 3}), {-1}); }, NUMR_OK},
      {"reshape_0d_ok", [] { reshape(f32({1, 1}), {}); }, NUMR_OK},
      {"reshape_view_copy_ok", [] { f32({3, 4}).transpose(0, 1).reshape({12}); }, NUMR_OK},
      {"narrow_empty_ok", [] { f32({4}).narrow(0, 4, 0); }, NUMR_OK},
      {"narrow_negative_start_ok", [] { f32({4}).narrow(-1, -2, 2); }, NUMR_OK},
      {"broadcast_to_zero_ok", [] { f32({1}).broadcast_to({0}); }, NUMR_OK},
      {"broadcast_to_big_view_ok", [] { f32({1}).broadcast_to({int64_t(1) << 59}); }, NUMR_OK},
      {"squeeze_0d_ok", [] { f32({}).squeeze(); }, NUMR_OK},
      {"squeeze_0d_dim", [] { f32({}).squeeze(-1); }, NUMR_THROWS(InvalidDimension, "squeeze")},
      {"unsqueeze_0d_ok", [] { f32({}).unsqueeze(0); }, NUMR_OK},
      {"flatten_0d_ok", [] { f32({}).flatten(); }, NUMR_OK},
      {"flip_0d_dim", [] { f32({}).flip({0}); }, NUMR_THROWS(InvalidDimension, "flip")},
      {"flip_empty_ok", [] { f32({0, 2}).flip({0, 1}); }, NUMR_OK},
      {"permute_0d_ok", [] { f32({}).permute({}); }, NUMR_OK},
  };
}

std::vector<Case> copy_factory_cases() {
  const Tensor u;
  return {
      {"contiguous_undefined", [u] { contiguous(u); }, NUMR_THROWS(InvalidArgument, "contiguous")},
      {"clone_undefined", [u] { u.clone(); }, NUMR_THROWS(InvalidArgument, "clone")},
      {"cast_undefined", [u] { cast(u, D::F32); }, NUMR_THROWS(InvalidArgument, "cast")},
      {"to_device_undefined", [u] { to_device(u, Device::cpu()); },
       NUMR_THROWS(InvalidArgument, "to_device")},
      {"cast_empty_ok", [] { f32({0}).cast(D::Bool); }, NUMR_OK},
      {"cast_0d_view_ok", [] { t_of(D::I64, {}).cast(D::BF16); }, NUMR_OK},
      {"clone_broadcast_ok", [] { f32({1}).broadcast_to({3, 2}).clone(); }, NUMR_OK},
      {"zeros_negative", [] { zeros({-1}); }, NUMR_THROWS(InvalidArgument, "zeros")},
      {"zeros_negative_with_zero", [] { zeros({0, -5}); }, NUMR_THROWS(InvalidArgument, "zeros")},
      {"zeros_2p62", [] { zeros({k2p62}); }, NUMR_THROWS(InvalidArgument, "zeros")},
      {"zeros_overflow", [] { zeros({k2p31, k2p31, k2p31}); }, NUMR_THROWS(InvalidArgument, "zeros")},
      {"zeros_i64_max_times_zero", [] { zeros({kI64Max, 0}); },
       NUMR_THROWS(InvalidArgument, "zeros")},
      {"ones_i64_min", [] { ones({kI64Min}); }, NUMR_THROWS(InvalidArgument, "ones")},
      {"full_nan_i32", [] { full({2}, kNaN, D::I32); }, NUMR_THROWS(InvalidArgument, "full")},
      {"full_two_bool", [] { full({2}, 2.0, D::Bool); }, NUMR_THROWS(InvalidArgument, "full")},
      {"full_256_u8", [] { full({2}, 256.0, D::U8); }, NUMR_THROWS(InvalidArgument, "full")},
      {"full_negative", [] { full({-3}, 1.0); }, NUMR_THROWS(InvalidArgument, "full")},
      {"empty_negative", [] { Tensor::empty({-1}, D::F32); }, NUMR_THROWS(InvalidArgument, "empty")},
      {"empty_2p62", [] { Tensor::empty({k2p62}, D::F32); }, NUMR_THROWS(InvalidArgument, "empty")},
      {"arange_nan_end", [] { arange(0, kNaN); }, NUMR_THROWS(InvalidArgument, "arange")},
      {"arange_inf_step", [] { arange(0, 1, kInf); }, NUMR_THROWS(InvalidArgument, "arange")},
      {"arange_nan_step", [] { arange(0, 1, kNaN); }, NUMR_THROWS(InvalidArgument, "arange")},
      {"arange_zero_step", [] { arange(0, 1, 0); }, NUMR_THROWS(InvalidArgument, "arange")},
      {"arange_too_many", [] { arange(0, 1e300, 1e-300); }, NUMR_THROWS(InvalidArgument, "arange")},
      {"arange_fraction_i32", [] { arange(0, 3, 0.5, D::I32); },
       NUMR_THROWS(InvalidArgument, "arange")},
      {"arange_beyond_i32", [] { arange(0x1p31, 0x1p31 + 2, 1, D::I32); },
       NUMR_THROWS(InvalidArgument, "arange")},
      {"arange_bool", [] { arange(0, 2, 1, D::Bool); }, NUMR_THROWS(UnsupportedDType, "arange")},
      {"arange_away_ok", [] { arange(0, 10, -1); }, NUMR_OK},
      {"linspace_negative", [] { linspace(0, 1, -1); }, NUMR_THROWS(InvalidArgument, "linspace")},
      {"linspace_2p62", [] { linspace(0, 1, k2p62); }, NUMR_THROWS(InvalidArgument, "linspace")},
      {"linspace_i32", [] { linspace(0, 1, 3, D::I32); }, NUMR_THROWS(UnsupportedDType, "linspace")},
      {"linspace_zero_ok", [] { linspace(0, 1, 0); }, NUMR_OK},
      {"linspace_one_ok", [] { linspace(0, 1, 1, D::BF16); }, NUMR_OK},
      {"eye_negative", [] { eye(-1); }, NUMR_THROWS(InvalidArgument, "eye")},
      {"eye_negative_m", [] { eye(2, -1); }, NUMR_THROWS(InvalidArgument, "eye")},
      {"eye_overflow", [] { eye(k2p62, k2p62); }, NUMR_THROWS(InvalidArgument, "eye")},
      {"eye_zero_ok", [] { eye(0, 3, D::Bool); }, NUMR_OK},
      {"rand_i32", [] {
         Generator g(1);
         rand({2}, D::I32, Device::cpu(), g);
       },
       NUMR_THROWS(UnsupportedDType, "rand")},
      {"rand_negative", [] {
         Generator g(1);
         rand({-2}, D::F32, Device::cpu(), g);
       },
       NUMR_THROWS(InvalidArgument, "rand")},
      {"randn_overflow", [] {
         Generator g(1);
         randn({k2p31, k2p31, k2p31}, D::F32, Device::cpu(), g);
       },
       NUMR_THROWS(InvalidArgument, "randn")},
      {"randn_bool", [] {
         Generator g(1);
         randn({2}, D::Bool, Device::cpu(), g);
       },
       NUMR_THROWS(UnsupportedDType, "randn")},
      {"randint_empty_range", [] {
         Generator g(1);
         randint(3, 3, {2}, D::I64, Device::cpu(), g);
       },
       NUMR_THROWS(InvalidArgument, "randint")},
      {"randint_f16_range", [] {
         Generator g(1);
         randint(0, 5000, {2}, D::F16, Device::cpu(), g);
       },
       NUMR_THROWS(InvalidArgument, "randint")},
      {"randint_u8_range", [] {
         Generator g(1);
         randint(-1, 5, {2}, D::U8, Device::cpu(), g);
       },
       NUMR_THROWS(InvalidArgument, "randint")},
      {"randint_bool", [] {
         Generator g(1);
         randint(0, 2, {2}, D::Bool, Device::cpu(), g);
       },
       NUMR_THROWS(UnsupportedDType, "randint")},
      {"randint_negative_shape", [] {
         Generator g(1);
         randint(0, 2, {-1}, D::I32, Device::cpu(), g);
       },
       NUMR_THROWS(InvalidArgument, "randint")},
      {"randint_full_i64_ok", [] {
         Generator g(1);
         randint(kI64Min, kI64Max, {4}, D::I64, Device::cpu(), g);
       },
       NUMR_OK},
      {"rand_empty_ok", [] {
         Generator g(~uint64_t(0));
         g.set_offset(~uint64_t(0));
         rand({0}, D::BF16, Device::cpu(), g);
       },
       NUMR_OK},
      {"rand_offset_wrap_ok", [] {
         Generator g(~uint64_t(0));
         g.set_offset(~uint64_t(0) - 1);
         randn({5}, D::F16, Device::cpu(), g);
       },
       NUMR_OK},
  };
}

std::vector<Case> tensor_method_cases() {
  const Tensor u;
  return {
      {"from_vector_count", [] { Tensor::from_vector(std::vector<float>{1, 2, 3}, {2, 2}); },
       NUMR_THROWS(ShapeMismatch, "from_vector")},
      {"from_vector_negative_shape", [] { Tensor::from_vector(std::vector<float>{}, {-1, 0}); },
       NUMR_THROWS(InvalidArgument, "from_vector")},
      {"from_vector_empty_ok", [] { Tensor::from_vector(std::vector<int32_t>{}, {0, 4}); }, NUMR_OK},
      {"from_vector_0d_ok", [] { Tensor::from_vector(std::vector<bool>{true}, {}); }, NUMR_OK},
      {"to_vector_dtype", [] { f32({2}).to_vector<double>(); },
       NUMR_THROWS(DTypeMismatch, "to_vector")},
      {"to_vector_undefined", [u] { u.to_vector<float>(); },
       NUMR_THROWS(InvalidArgument, "to_vector")},
      {"to_vector_view_ok", [] { f32({3, 2}).transpose(0, 1).flip({1}).to_vector<float>(); },
       NUMR_OK},
      {"item_count", [] { f32({2}).item<float>(); }, NUMR_THROWS(InvalidArgument, "item")},
      {"item_empty", [] { f32({0}).item<float>(); }, NUMR_THROWS(InvalidArgument, "item")},
      {"item_dtype", [] { f32({}).item<int32_t>(); }, NUMR_THROWS(DTypeMismatch, "item")},
      {"item_undefined", [u] { u.item<float>(); }, NUMR_THROWS(InvalidArgument, "item")},
      {"item_double_count", [] { f32({2}).item_double(); },
       NUMR_THROWS(InvalidArgument, "item_double")},
      {"item_double_undefined", [u] { u.item_double(); },
       NUMR_THROWS(InvalidArgument, "item_double")},
      {"item_bool_ok", [] { t_of(D::Bool, {1, 1}).item<bool>(); }, NUMR_OK},
      {"size_dim", [] { f32({2}).size(1); }, NUMR_THROWS(InvalidDimension, "size")},
      {"size_0d", [] { f32({}).size(0); }, NUMR_THROWS(InvalidDimension, "size")},
      {"size_i64_min", [] { f32({2}).size(kI64Min); }, NUMR_THROWS(InvalidDimension, "size")},
      {"device_undefined", [u] { (void)u.device(); }, NUMR_THROWS(InvalidArgument, "device")},
      {"to_string_undefined_ok", [u] { (void)u.to_string(); }, NUMR_OK},
      {"to_string_empty_ok", [] { (void)f32({0, 3}).to_string(); }, NUMR_OK},
      {"to_string_big_view_ok", [] { (void)f32({1}).broadcast_to({int64_t(1) << 50}).to_string(); },
       NUMR_OK},
      {"is_contiguous_undefined_ok", [u] { (void)u.is_contiguous(); }, NUMR_OK},
  };
}

INSTANTIATE_TEST_SUITE_P(BadInputShape, BadInput, ::testing::ValuesIn(shape_op_cases()), case_name);
INSTANTIATE_TEST_SUITE_P(BadInputView, BadInput, ::testing::ValuesIn(view_cases()), case_name);
INSTANTIATE_TEST_SUITE_P(BadInputFactory, BadInput, ::testing::ValuesIn(copy_factory_cases()),
                         case_name);
INSTANTIATE_TEST_SUITE_P(BadInputTensor, BadInput, ::testing::ValuesIn(tensor_method_cases()),
                         case_name);

}  // namespace
}  // namespace numr::bad_input
