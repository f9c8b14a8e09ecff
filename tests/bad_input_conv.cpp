// Bad input to convolution and distance (conv1d, conv2d, depthwise_conv2d,
// conv_transpose1d, cdist, pdist), for the Tensor and the Var forms.
#include <cstdint>
#include <limits>

#include "bad_input_table.h"

namespace numr::bad_input {
namespace {

using D = DType;
constexpr int64_t kI64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t k2p59 = int64_t(1) << 59;

Var leaf(const Shape& shape) { return Var(f32(shape), true); }

std::vector<Case> conv_cases() {
  const Tensor u;
  return {
      {"conv1d_ok",
       [] {
         conv1d(f32({2, 4, 5}), f32({6, 2, 3}), f32({6}), 2, 1, 1, 2);
       },
       NUMR_OK},
      {"conv1d_empty_batch_ok",
       [] {
         conv1d(f32({0, 2, 5}), f32({3, 2, 2}), f32({3}));
       },
       NUMR_OK},
      {"conv2d_empty_batch_var_ok",
       [] {
         conv2d(leaf({0, 2, 3, 3}), leaf({3, 2, 2, 2}));
       },
       NUMR_OK},
      {"cdist_empty_rows_ok",
       [] {
         cdist(f32({0, 3}), f32({4, 3}));
       },
       NUMR_OK},
      {"pdist_empty_ok",
       [] {
         pdist(f32({0, 3}));
       },
       NUMR_OK},
      {"conv1d_unbatched_ok",
       [] {
         conv1d(f32({4, 5}), f32({3, 4, 5}));
       },
       NUMR_OK},
      {"conv1d_x_dims",
       [] {
         conv1d(f32({5}), f32({3, 1, 2}));
       },
       NUMR_THROWS(InvalidDimension, "conv1d")},
      {"conv1d_x_4d",
       [] {
         conv1d(f32({1, 1, 1, 5}), f32({3, 1, 2}));
       },
       NUMR_THROWS(InvalidDimension, "conv1d")},
      {"conv1d_w_dims",
       [] {
         conv1d(f32({1, 2, 5}), f32({3, 2}));
       },
       NUMR_THROWS(InvalidDimension, "conv1d")},
      {"conv1d_bias_dims",
       [] {
         conv1d(f32({1, 2, 5}), f32({3, 2, 1}), f32({3, 1}));
       },
       NUMR_THROWS(InvalidDimension, "conv1d")},
      {"conv1d_bias_len",
       [] {
         conv1d(f32({1, 2, 5}), f32({3, 2, 1}), f32({2}));
       },
       NUMR_THROWS(ShapeMismatch, "conv1d")},
      {"conv1d_channels",
       [] {
         conv1d(f32({1, 3, 5}), f32({3, 2, 1}));
       },
       NUMR_THROWS(ShapeMismatch, "conv1d")},
      {"conv1d_groups_channels",
       [] {
         conv1d(f32({1, 4, 5}), f32({4, 4, 1}), Tensor(), 1, 0, 1, 2);
       },
       NUMR_THROWS(ShapeMismatch, "conv1d")},
      {"conv1d_groups_out",
       [] {
         conv1d(f32({1, 4, 5}), f32({3, 2, 1}), Tensor(), 1, 0, 1, 2);
       },
       NUMR_THROWS(InvalidArgument, "conv1d")},
      {"conv1d_groups_zero",
       [] {
         conv1d(f32({1, 4, 5}), f32({4, 4, 1}), Tensor(), 1, 0, 1, 0);
       },
       NUMR_THROWS(InvalidArgument, "conv1d")},
      {"conv1d_stride_zero",
       [] {
         conv1d(f32({1, 2, 5}), f32({3, 2, 1}), Tensor(), 0);
       },
       NUMR_THROWS(InvalidArgument, "conv1d")},
      {"conv1d_padding_negative",
       [] {
         conv1d(f32({1, 2, 5}), f32({3, 2, 1}), Tensor(), 1, -1);
       },
       NUMR_THROWS(InvalidArgument, "conv1d")},
      {"conv1d_dilation_zero",
       [] {
         conv1d(f32({1, 2, 5}), f32({3, 2, 1}), Tensor(), 1, 0, 0);
       },
       NUMR_THROWS(InvalidArgument, "conv1d")},
      {"conv1d_kernel_zero",
       [] {
         conv1d(f32({1, 2, 5}), f32({3, 2, 0}));
       },
       NUMR_THROWS(InvalidArgument, "conv1d")},
      {"conv1d_output_empty",
       [] {
         conv1d(f32({1, 2, 5}), f32({3, 2, 6}));
       },
       NUMR_THROWS(InvalidArgument, "conv1d")},
      {"conv1d_output_empty_dilated",
       [] {
         conv1d(f32({1, 2, 5}), f32({3, 2, 3}), Tensor(), 1, 0, 3);
       },
       NUMR_THROWS(InvalidArgument, "conv1d")},
      {"conv1d_output_one_ok",
       [] {
         conv1d(f32({1, 2, 5}), f32({3, 2, 3}), Tensor(), 1, 0, 2);
       },
       NUMR_OK},
      {"conv1d_padding_huge",
       [] {
         conv1d(f32({1, 2, 5}), f32({3, 2, 1}), Tensor(), 1, kI64Max);
       },
       NUMR_THROWS(InvalidArgument, "conv1d")},
      {"conv1d_padded_too_big",
       [] {
         conv1d(f32({1, 2, 5}), f32({3, 2, 1}), Tensor(), 1, k2p59);
       },
       NUMR_THROWS(InvalidArgument, "conv1d")},
      {"conv1d_dilation_huge",
       [] {
         conv1d(f32({1, 2, 5}), f32({3, 2, 3}), Tensor(), 1, 0, kI64Max);
       },
       NUMR_THROWS(InvalidArgument, "conv1d")},
      {"conv1d_stride_huge_ok",
       [] {
         conv1d(f32({1, 2, 5}), f32({3, 2, 3}), Tensor(), kI64Max);
       },
       NUMR_OK},
      {"conv_transpose1d_stride_huge",
       [] {
         conv_transpose1d(f32({1, 2, 3}), f32({2, 2, 2}), Tensor(), kI64Max);
       },
       NUMR_THROWS(InvalidArgument, "conv_transpose1d")},
      {"conv_transpose1d_dilation_huge",
       [] {
         conv_transpose1d(f32({1, 2, 3}), f32({2, 2, 3}), Tensor(), 1, 0, 0, 1, kI64Max);
       },
       NUMR_THROWS(InvalidArgument, "conv_transpose1d")},
      {"conv_transpose1d_output_padding_huge",
       [] {
         conv_transpose1d(f32({1, 2, 3}), f32({2, 2, 3}), Tensor(), kI64Max, 0, kI64Max - 1);
       },
       NUMR_THROWS(InvalidArgument, "conv_transpose1d")},
      {"conv1d_int",
       [] {
         conv1d(t_of(D::I32, {1, 2, 5}), t_of(D::I32, {3, 2, 1}));
       },
       NUMR_THROWS(UnsupportedDType, "conv1d")},
      {"conv1d_dtype_mismatch",
       [] {
         conv1d(f32({1, 2, 5}), t_of(D::F64, {3, 2, 1}));
       },
       NUMR_THROWS(DTypeMismatch, "conv1d")},
      {"conv1d_bias_dtype",
       [] {
         conv1d(f32({1, 2, 5}), f32({3, 2, 1}), t_of(D::F64, {3}));
       },
       NUMR_THROWS(DTypeMismatch, "conv1d")},
      {"conv1d_undefined",
       [u] {
         conv1d(u, f32({3, 2, 1}));
       },
       NUMR_THROWS(InvalidArgument, "conv1d")},
      {"conv1d_var_channels",
       [] {
         conv1d(leaf({1, 3, 5}), leaf({3, 2, 1}));
       },
       NUMR_THROWS(ShapeMismatch, "conv1d")},
      {"conv2d_ok",
       [] {
         conv2d(f32({1, 2, 5, 4}), f32({4, 1, 3, 2}), f32({4}), {2, 1}, {1, 0}, {1, 2}, 2);
       },
       NUMR_OK},
      {"conv2d_x_dims",
       [] {
         conv2d(f32({2, 5}), f32({3, 2, 1, 1}));
       },
       NUMR_THROWS(InvalidDimension, "conv2d")},
      {"conv2d_w_dims",
       [] {
         conv2d(f32({1, 2, 5, 5}), f32({3, 2, 1}));
       },
       NUMR_THROWS(InvalidDimension, "conv2d")},
      {"conv2d_channels",
       [] {
         conv2d(f32({1, 2, 5, 5}), f32({3, 1, 1, 1}));
       },
       NUMR_THROWS(ShapeMismatch, "conv2d")},
      {"conv2d_stride_w",
       [] {
         conv2d(f32({1, 2, 5, 5}), f32({3, 2, 1, 1}), Tensor(), {1, 0});
       },
       NUMR_THROWS(InvalidArgument, "conv2d")},
      {"conv2d_padding_h",
       [] {
         conv2d(f32({1, 2, 5, 5}), f32({3, 2, 1, 1}), Tensor(), {1, 1}, {-2, 0});
       },
       NUMR_THROWS(InvalidArgument, "conv2d")},
      {"conv2d_output_w_empty",
       [] {
         conv2d(f32({1, 2, 5, 2}), f32({3, 2, 1, 3}));
       },
       NUMR_THROWS(InvalidArgument, "conv2d")},
      {"conv2d_var_dilation",
       [] {
         conv2d(leaf({1, 2, 5, 5}), leaf({3, 2, 1, 1}), Var(), {1, 1}, {0, 0}, {1, -1});
       },
       NUMR_THROWS(InvalidArgument, "conv2d")},
      {"depthwise_ok",
       [] {
         depthwise_conv2d(f32({1, 3, 4, 4}), f32({6, 1, 2, 2}));
       },
       NUMR_OK},
      {"depthwise_w_channels",
       [] {
         depthwise_conv2d(f32({1, 3, 4, 4}), f32({6, 3, 2, 2}));
       },
       NUMR_THROWS(ShapeMismatch, "depthwise_conv2d")},
      {"depthwise_multiplier",
       [] {
         depthwise_conv2d(f32({1, 3, 4, 4}), f32({4, 1, 2, 2}));
       },
       NUMR_THROWS(InvalidArgument, "depthwise_conv2d")},
      {"depthwise_x_dims",
       [] {
         depthwise_conv2d(f32({4, 4}), f32({4, 1, 2, 2}));
       },
       NUMR_THROWS(InvalidDimension, "depthwise_conv2d")},
      {"depthwise_undefined",
       [u] {
         depthwise_conv2d(u, f32({4, 1, 2, 2}));
       },
       NUMR_THROWS(InvalidArgument, "depthwise_conv2d")},
      {"conv_transpose1d_ok",
       [] {
         conv_transpose1d(f32({2, 4, 3}), f32({4, 3, 2}), f32({6}), 2, 1, 1, 2);
       },
       NUMR_OK},
      {"conv_transpose1d_x_dims",
       [] {
         conv_transpose1d(f32({3}), f32({1, 2, 2}));
       },
       NUMR_THROWS(InvalidDimension, "conv_transpose1d")},
      {"conv_transpose1d_w_dims",
       [] {
         conv_transpose1d(f32({1, 2, 3}), f32({2, 2}));
       },
       NUMR_THROWS(InvalidDimension, "conv_transpose1d")},
      {"conv_transpose1d_channels",
       [] {
         conv_transpose1d(f32({1, 2, 3}), f32({3, 2, 2}));
       },
       NUMR_THROWS(ShapeMismatch, "conv_transpose1d")},
      {"conv_transpose1d_groups",
       [] {
         conv_transpose1d(f32({1, 3, 3}), f32({3, 2, 2}), Tensor(), 1, 0, 0, 2);
       },
       NUMR_THROWS(InvalidArgument, "conv_transpose1d")},
      {"conv_transpose1d_output_padding",
       [] {
         conv_transpose1d(f32({1, 2, 3}), f32({2, 2, 2}), Tensor(), 2, 0, 2);
       },
       NUMR_THROWS(InvalidArgument, "conv_transpose1d")},
      {"conv_transpose1d_output_padding_dilation_ok",
       [] {
         conv_transpose1d(f32({1, 2, 3}), f32({2, 2, 2}), Tensor(), 1, 0, 1, 1, 2);
       },
       NUMR_OK},
      {"conv_transpose1d_bias_len",
       [] {
         conv_transpose1d(f32({1, 2, 3}), f32({2, 2, 2}), f32({3}), 1, 0, 0, 2);
       },
       NUMR_THROWS(ShapeMismatch, "conv_transpose1d")},
      {"conv_transpose1d_output_empty",
       [] {
         conv_transpose1d(f32({1, 2, 1}), f32({2, 2, 1}), Tensor(), 1, 1);
       },
       NUMR_THROWS(InvalidArgument, "conv_transpose1d")},
      {"conv_transpose1d_input_empty",
       [] {
         conv_transpose1d(f32({1, 2, 0}), f32({2, 2, 3}));
       },
       NUMR_THROWS(InvalidArgument, "conv_transpose1d")},
      {"conv_transpose1d_stride",
       [] {
         conv_transpose1d(f32({1, 2, 3}), f32({2, 2, 2}), Tensor(), 0);
       },
       NUMR_THROWS(InvalidArgument, "conv_transpose1d")},
      {"conv_transpose1d_f16_mismatch",
       [] {
         conv_transpose1d(t_of(D::F16, {1, 2, 3}), f32({2, 2, 2}));
       },
       NUMR_THROWS(DTypeMismatch, "conv_transpose1d")},
      {"conv_transpose1d_var_padding",
       [] {
         conv_transpose1d(leaf({1, 2, 3}), leaf({2, 2, 2}), Var(), 1, -1);
       },
       NUMR_THROWS(InvalidArgument, "conv_transpose1d")},
      {"cdist_ok",
       [] {
         cdist(f32({2, 3, 4}), f32({5, 4}));
       },
       NUMR_OK},
      {"cdist_dims",
       [] {
         cdist(f32({4}), f32({5, 4}));
       },
       NUMR_THROWS(InvalidDimension, "cdist")},
      {"cdist_cols",
       [] {
         cdist(f32({3, 4}), f32({5, 3}));
       },
       NUMR_THROWS(ShapeMismatch, "cdist")},
      {"cdist_batch",
       [] {
         cdist(f32({2, 3, 4}), f32({3, 5, 4}));
       },
       NUMR_THROWS(BroadcastError, "cdist")},
      {"cdist_p_negative",
       [] {
         cdist(f32({3, 4}), f32({5, 4}), -1.0);
       },
       NUMR_THROWS(InvalidArgument, "cdist")},
      {"cdist_p_nan",
       [] {
         cdist(f32({3, 4}), f32({5, 4}), kNaN);
       },
       NUMR_THROWS(InvalidArgument, "cdist")},
      {"cdist_p_inf_ok",
       [] {
         cdist(f32({3, 4}), f32({5, 4}), kInf);
       },
       NUMR_OK},
      {"cdist_int",
       [] {
         cdist(t_of(D::I64, {3, 4}), t_of(D::I64, {5, 4}));
       },
       NUMR_THROWS(UnsupportedDType, "cdist")},
      {"cdist_dtype",
       [] {
         cdist(f32({3, 4}), t_of(D::F64, {5, 4}));
       },
       NUMR_THROWS(DTypeMismatch, "cdist")},
      {"cdist_undefined",
       [u] {
         cdist(u, f32({5, 4}));
       },
       NUMR_THROWS(InvalidArgument, "cdist")},
      {"cdist_var_cols",
       [] {
         cdist(leaf({3, 4}), leaf({5, 3}));
       },
       NUMR_THROWS(ShapeMismatch, "cdist")},
      {"pdist_ok",
       [] {
         pdist(f32({4, 3}));
       },
       NUMR_OK},
      {"pdist_one_row_ok",
       [] {
         pdist(f32({1, 3}));
       },
       NUMR_OK},
      {"pdist_dims",
       [] {
         pdist(f32({2, 4, 3}));
       },
       NUMR_THROWS(InvalidDimension, "pdist")},
      {"pdist_p",
       [] {
         pdist(f32({4, 3}), -0.5);
       },
       NUMR_THROWS(InvalidArgument, "pdist")},
      {"pdist_int",
       [] {
         pdist(t_of(D::I32, {4, 3}));
       },
       NUMR_THROWS(UnsupportedDType, "pdist")},
      {"pdist_var_dims", [] { pdist(leaf({3})); }, NUMR_THROWS(InvalidDimension, "pdist")},
  };
}

INSTANTIATE_TEST_SUITE_P(BadInputConv, BadInput, ::testing::ValuesIn(conv_cases()), case_name);

}  // namespace
}  // namespace numr::bad_input
