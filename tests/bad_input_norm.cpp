// Bad input to the Norm family (Tensor, Var and the backward entry points).
#include "bad_input_table.h"

namespace numr::bad_input {
namespace {

using D = DType;

std::vector<Case> norm_cases() {
  const Tensor u;
  return {
      {"rms_norm_0d", [] { rms_norm(f32({}), f32({1})); },
       NUMR_THROWS(InvalidDimension, "rms_norm")},
      {"rms_norm_weight_shape",
       [] {
         rms_norm(f32({2, 3}), f32({2}));
       },
       NUMR_THROWS(ShapeMismatch, "rms_norm")},
      {"rms_norm_weight_2d",
       [] {
         rms_norm(f32({2, 3}), f32({1, 3}));
       },
       NUMR_THROWS(ShapeMismatch, "rms_norm")},
      {"rms_norm_weight_dtype",
       [] {
         rms_norm(f32({2, 3}), t_of(D::F64, {3}));
       },
       NUMR_THROWS(DTypeMismatch, "rms_norm")},
      {"rms_norm_i32",
       [] {
         rms_norm(t_of(D::I32, {2, 3}), t_of(D::I32, {3}));
       },
       NUMR_THROWS(UnsupportedDType, "rms_norm")},
      {"rms_norm_eps_nan",
       [] {
         rms_norm(f32({2, 3}), f32({3}), kNaN);
       },
       NUMR_THROWS(InvalidArgument, "rms_norm")},
      {"rms_norm_eps_inf",
       [] {
         rms_norm(f32({2, 3}), f32({3}), kInf);
       },
       NUMR_THROWS(InvalidArgument, "rms_norm")},
      {"rms_norm_eps_negative",
       [] {
         rms_norm(f32({2, 3}), f32({3}), -1e-5);
       },
       NUMR_THROWS(InvalidArgument, "rms_norm")},
      {"rms_norm_undefined", [u] { rms_norm(u, f32({3})); },
       NUMR_THROWS(InvalidArgument, "rms_norm")},
      {"rms_norm_weight_undefined", [u] { rms_norm(f32({3}), u); },
       NUMR_THROWS(InvalidArgument, "rms_norm")},
      {"layer_norm_bias_shape",
       [] {
         layer_norm(f32({2, 3}), f32({3}), f32({2}));
       },
       NUMR_THROWS(ShapeMismatch, "layer_norm")},
      {"layer_norm_bias_dtype",
       [] {
         layer_norm(f32({2, 3}), f32({3}), t_of(D::F16, {3}));
       },
       NUMR_THROWS(DTypeMismatch, "layer_norm")},
      {"layer_norm_bias_undefined",
       [u] {
         layer_norm(f32({2, 3}), f32({3}), u);
       },
       NUMR_THROWS(InvalidArgument, "layer_norm")},
      {"layer_norm_0d", [] { layer_norm(f32({}), f32({1}), f32({1})); },
       NUMR_THROWS(InvalidDimension, "layer_norm")},
      {"layer_norm_eps_negative",
       [] {
         layer_norm(f32({2, 3}), f32({3}), f32({3}), -1.0);
       },
       NUMR_THROWS(InvalidArgument, "layer_norm")},
      {"layer_norm_bool",
       [] { layer_norm(t_of(D::Bool, {3}), t_of(D::Bool, {3}), t_of(D::Bool, {3})); },
       NUMR_THROWS(UnsupportedDType, "layer_norm")},
      {"rms_norm_var_weight_shape",
       [] {
         rms_norm(Var(f32({2, 3}), true), Var(f32({4}), true));
       },
       NUMR_THROWS(ShapeMismatch, "rms_norm")},
      {"layer_norm_var_eps_nan",
       [] {
         layer_norm(Var(f32({2, 3}), true), Var(f32({3})), Var(f32({3})), kNaN);
       },
       NUMR_THROWS(InvalidArgument, "layer_norm")},
      {"rms_norm_bwd_grad_shape",
       [] {
         rms_norm_bwd(f32({2, 4}), f32({2, 3}), f32({3}), f32({2}));
       },
       NUMR_THROWS(ShapeMismatch, "rms_norm")},
      {"rms_norm_bwd_rstd_shape",
       [] {
         rms_norm_bwd(f32({2, 3}), f32({2, 3}), f32({3}), f32({3}));
       },
       NUMR_THROWS(ShapeMismatch, "rms_norm")},
      {"rms_norm_bwd_rstd_dtype",
       [] {
         rms_norm_bwd(t_of(D::F16, {2, 3}), t_of(D::F16, {2, 3}), t_of(D::F16, {3}),
                      t_of(D::F16, {2}));
       },
       NUMR_THROWS(DTypeMismatch, "rms_norm")},
      {"layer_norm_bwd_mean_undefined",
       [u] {
         layer_norm_bwd(f32({2, 3}), f32({2, 3}), f32({3}), u, f32({2}));
       },
       NUMR_THROWS(InvalidArgument, "layer_norm")},
      // Valid edge cases.
      {"rms_norm_empty_rows_ok",
       [] {
         rms_norm(f32({0, 3}), f32({3}));
       },
       NUMR_OK},
      {"layer_norm_empty_dim_ok",
       [] {
         layer_norm(f32({2, 0}), f32({0}), f32({0}));
       },
       NUMR_OK},
      {"rms_norm_1d_ok", [] { rms_norm(f32({5}), f32({5}), 0.0); }, NUMR_OK},
      // The fused adds: the residual is checked like x.
      {"fused_add_rms_norm_residual_shape",
       [] {
         fused_add_rms_norm(f32({2, 3}), f32({3}), f32({3}));
       },
       NUMR_THROWS(ShapeMismatch, "fused_add_rms_norm")},
      {"fused_add_rms_norm_residual_dtype",
       [] {
         fused_add_rms_norm(f32({2, 3}), t_of(D::F64, {2, 3}), f32({3}));
       },
       NUMR_THROWS(DTypeMismatch, "fused_add_rms_norm")},
      {"fused_add_rms_norm_residual_undefined",
       [u] {
         fused_add_rms_norm(f32({2, 3}), u, f32({3}));
       },
       NUMR_THROWS(InvalidArgument, "fused_add_rms_norm")},
      {"fused_add_layer_norm_weight_shape",
       [] {
         fused_add_layer_norm(f32({2, 3}), f32({2, 3}), f32({2}), f32({3}));
       },
       NUMR_THROWS(ShapeMismatch, "fused_add_layer_norm")},
      {"fused_add_layer_norm_eps_nan",
       [] {
         fused_add_layer_norm(f32({2, 3}), f32({2, 3}), f32({3}), f32({3}), kNaN);
       },
       NUMR_THROWS(InvalidArgument, "fused_add_layer_norm")},
      {"fused_add_layer_norm_var_residual_shape",
       [] {
         fused_add_layer_norm(Var(f32({2, 3}), true), Var(f32({1, 3})), Var(f32({3})),
                              Var(f32({3})));
       },
       NUMR_THROWS(ShapeMismatch, "fused_add_layer_norm")},
      {"fused_add_rms_norm_i64",
       [] {
         fused_add_rms_norm(t_of(D::I64, {2, 3}), t_of(D::I64, {2, 3}), t_of(D::I64, {3}));
       },
       NUMR_THROWS(UnsupportedDType, "fused_add_rms_norm")},
      // group_norm.
      {"group_norm_1d", [] { group_norm(f32({4}), 2, f32({4}), f32({4})); },
       NUMR_THROWS(InvalidDimension, "group_norm")},
      {"group_norm_groups_not_dividing",
       [] {
         group_norm(f32({2, 6, 3}), 4, f32({6}), f32({6}));
       },
       NUMR_THROWS(InvalidArgument, "group_norm")},
      {"group_norm_groups_zero",
       [] {
         group_norm(f32({2, 6, 3}), 0, f32({6}), f32({6}));
       },
       NUMR_THROWS(InvalidArgument, "group_norm")},
      {"group_norm_groups_negative",
       [] {
         group_norm(f32({2, 6, 3}), -2, f32({6}), f32({6}));
       },
       NUMR_THROWS(InvalidArgument, "group_norm")},
      {"group_norm_weight_shape",
       [] {
         group_norm(f32({2, 6, 3}), 3, f32({3}), f32({6}));
       },
       NUMR_THROWS(ShapeMismatch, "group_norm")},
      {"group_norm_bias_shape",
       [] {
         group_norm(f32({2, 6, 3}), 3, f32({6}), f32({6, 1}));
       },
       NUMR_THROWS(ShapeMismatch, "group_norm")},
      {"group_norm_weight_dtype",
       [] {
         group_norm(f32({2, 6, 3}), 3, t_of(D::F64, {6}), f32({6}));
       },
       NUMR_THROWS(DTypeMismatch, "group_norm")},
      {"group_norm_eps_inf",
       [] {
         group_norm(f32({2, 6, 3}), 3, f32({6}), f32({6}), kInf);
       },
       NUMR_THROWS(InvalidArgument, "group_norm")},
      {"group_norm_bias_undefined",
       [u] {
         group_norm(f32({2, 6, 3}), 3, f32({6}), u);
       },
       NUMR_THROWS(InvalidArgument, "group_norm")},
      {"group_norm_u8",
       [] {
         group_norm(t_of(D::U8, {2, 6}), 3, t_of(D::U8, {6}), t_of(D::U8, {6}));
       },
       NUMR_THROWS(UnsupportedDType, "group_norm")},
      {"group_norm_var_groups",
       [] {
         group_norm(Var(f32({2, 6}), true), 5, Var(f32({6})), Var(f32({6})));
       },
       NUMR_THROWS(InvalidArgument, "group_norm")},
      {"group_norm_empty_batch_ok",
       [] {
         group_norm(f32({0, 6, 3}), 3, f32({6}), f32({6}));
       },
       NUMR_OK},
      {"group_norm_no_positions_ok",
       [] {
         group_norm(f32({2, 6, 0}), 2, f32({6}), f32({6}));
       },
       NUMR_OK},
  };
}

INSTANTIATE_TEST_SUITE_P(BadInputNorm, BadInput, ::testing::ValuesIn(norm_cases()), case_name);

}  // namespace
}  // namespace numr::bad_input
