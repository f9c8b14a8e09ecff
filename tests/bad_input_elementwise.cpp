// Bad input to the elementwise ops (unary, binary, scalar, compare, logical, ternary,
// fused gates, where_cond, clamp) and to the operators.
#include <cmath>

#include "bad_input_table.h"

namespace numr::bad_input {
namespace {

using D = DType;

std::vector<Case> elementwise_cases() {
  const Tensor u;  // undefined
  return {
      // Unary.
      {"sqrt_i32", [] { sqrt(t_of(D::I32, {3})); }, NUMR_THROWS(UnsupportedDType, "sqrt")},
      {"exp_bool", [] { exp(t_of(D::Bool, {3})); }, NUMR_THROWS(UnsupportedDType, "exp")},
      {"erf_i64", [] { erf(t_of(D::I64, {3})); }, NUMR_THROWS(UnsupportedDType, "erf")},
      {"erfc_u8", [] { erfc(t_of(D::U8, {3})); }, NUMR_THROWS(UnsupportedDType, "erfc")},
      {"erfinv_bool", [] { erfinv(t_of(D::Bool, {3})); },
       NUMR_THROWS(UnsupportedDType, "erfinv")},
      {"erfinv_undefined", [u] { erfinv(u); }, NUMR_THROWS(InvalidArgument, "erfinv")},
      {"neg_u8", [] { neg(t_of(D::U8, {3})); }, NUMR_THROWS(UnsupportedDType, "neg")},
      {"abs_bool", [] { abs(t_of(D::Bool, {2})); }, NUMR_THROWS(UnsupportedDType, "abs")},
      {"sqrt_undefined", [u] { sqrt(u); }, NUMR_THROWS(InvalidArgument, "sqrt")},
      {"relu_i64", [] { relu(t_of(D::I64, {2})); }, NUMR_THROWS(UnsupportedDType, "relu")},
      {"isnan_i32", [] { isnan(t_of(D::I32, {2})); }, NUMR_THROWS(UnsupportedDType, "isnan")},
      {"logical_not_undefined", [u] { logical_not(u); },
       NUMR_THROWS(InvalidArgument, "logical_not")},
      {"leaky_relu_nan_slope", [] { leaky_relu(f32({2}), kNaN); },
       NUMR_THROWS(InvalidArgument, "leaky_relu")},
      {"elu_inf_alpha", [] { elu(f32({2}), kInf); }, NUMR_THROWS(InvalidArgument, "elu")},
      {"elu_undefined", [u] { elu(u, 1.0); }, NUMR_THROWS(InvalidArgument, "elu")},
      {"sqrt_empty_ok", [] { sqrt(f32({0, 3})); }, NUMR_OK},
      {"exp_0d_ok", [] { exp(f32({})); }, NUMR_OK},
      {"logical_not_bool_ok", [] { logical_not(t_of(D::Bool, {0})); }, NUMR_OK},
      {"neg_view_ok", [] { neg(f32({4, 3}).transpose(0, 1).flip({0})); }, NUMR_OK},
      // Binary.
      {"add_dtype_mismatch", [] { add(f32({3}), t_of(D::F64, {3})); },
       NUMR_THROWS(DTypeMismatch, "add")},
      {"add_broadcast", [] { add(f32({3}), f32({4})); }, NUMR_THROWS(BroadcastError, "add")},
      {"add_empty_vs_2", [] { add(f32({0}), f32({2})); }, NUMR_THROWS(BroadcastError, "add")},
      {"add_undefined_lhs", [u] { add(u, f32({1})); }, NUMR_THROWS(InvalidArgument, "add")},
      {"add_undefined_rhs", [u] { add(f32({1}), u); }, NUMR_THROWS(InvalidArgument, "add")},
      {"add_bool", [] { add(t_of(D::Bool, {1}), t_of(D::Bool, {1})); },
       NUMR_THROWS(UnsupportedDType, "add")},
      {"div_i32", [] { div(t_of(D::I32, {1}), t_of(D::I32, {1})); },
       NUMR_THROWS(UnsupportedDType, "div")},
      {"pow_u8", [] { pow(t_of(D::U8, {1}), t_of(D::U8, {1})); },
       NUMR_THROWS(UnsupportedDType, "pow")},
      {"atan2_mismatch", [] { atan2(f32({2, 3}), f32({3, 2})); },
       NUMR_THROWS(BroadcastError, "atan2")},
      {"maximum_dtype", [] { maximum(t_of(D::I32, {2}), t_of(D::I64, {2})); },
       NUMR_THROWS(DTypeMismatch, "maximum")},
      {"add_empty_broadcast_ok", [] { add(f32({0, 1}), f32({1, 5})); }, NUMR_OK},
      {"add_0d_ok", [] { add(f32({}), f32({2, 3})); }, NUMR_OK},
      {"op_plus_mismatch", [] { (void)(f32({2}) + f32({3})); }, NUMR_THROWS(BroadcastError, "add")},
      {"op_div_i64", [] { (void)(t_of(D::I64, {2}) / t_of(D::I64, {2})); },
       NUMR_THROWS(UnsupportedDType, "div")},
      {"op_neg_bool", [] { (void)(-t_of(D::Bool, {2})); }, NUMR_THROWS(UnsupportedDType, "neg")},
      // Compare and logical.
      {"eq_dtype", [] { eq(f32({2}), t_of(D::I32, {2})); }, NUMR_THROWS(DTypeMismatch, "eq")},
      {"lt_broadcast", [] { lt(f32({2}), f32({3})); }, NUMR_THROWS(BroadcastError, "lt")},
      {"ge_undefined", [u] { ge(u, u); }, NUMR_THROWS(InvalidArgument, "ge")},
      {"logical_or_broadcast", [] { logical_or(t_of(D::Bool, {2}), t_of(D::Bool, {5})); },
       NUMR_THROWS(BroadcastError, "logical_or")},
      {"logical_xor_dtype", [] { logical_xor(t_of(D::Bool, {2}), t_of(D::U8, {2})); },
       NUMR_THROWS(DTypeMismatch, "logical_xor")},
      {"ne_bool_ok", [] { ne(t_of(D::Bool, {2}), t_of(D::Bool, {})); }, NUMR_OK},
      // Ternary.
      {"fma_dtype", [] { fused_mul_add(f32({2}), f32({2}), t_of(D::F16, {2})); },
       NUMR_THROWS(DTypeMismatch, "fused_mul_add")},
      {"fam_broadcast", [] { fused_add_mul(f32({2}), f32({3}), f32({2})); },
       NUMR_THROWS(BroadcastError, "fused_add_mul")},
      {"fma_bool", [] {
         const Tensor b = t_of(D::Bool, {2});
         fused_mul_add(b, b, b);
       },
       NUMR_THROWS(UnsupportedDType, "fused_mul_add")},
      {"fma_undefined", [u] { fused_mul_add(f32({2}), u, f32({2})); },
       NUMR_THROWS(InvalidArgument, "fused_mul_add")},
      // Scalar.
      {"add_scalar_fraction_i32", [] { add_scalar(t_of(D::I32, {2}), 0.5); },
       NUMR_THROWS(InvalidArgument, "add_scalar")},
      {"add_scalar_nan_i32", [] { add_scalar(t_of(D::I32, {2}), kNaN); },
       NUMR_THROWS(InvalidArgument, "add_scalar")},
      {"sub_scalar_negative_u8", [] { sub_scalar(t_of(D::U8, {2}), -1.0); },
       NUMR_THROWS(InvalidArgument, "sub_scalar")},
      {"mul_scalar_huge_i32", [] { mul_scalar(t_of(D::I32, {2}), 3e9); },
       NUMR_THROWS(InvalidArgument, "mul_scalar")},
      {"mul_scalar_2p63_i64", [] { mul_scalar(t_of(D::I64, {2}), 0x1p63); },
       NUMR_THROWS(InvalidArgument, "mul_scalar")},
      {"rsub_scalar_inf_i64", [] { rsub_scalar(t_of(D::I64, {2}), -kInf); },
       NUMR_THROWS(InvalidArgument, "rsub_scalar")},
      {"div_scalar_i32", [] { div_scalar(t_of(D::I32, {2}), 2.0); },
       NUMR_THROWS(UnsupportedDType, "div_scalar")},
      {"pow_scalar_undefined", [u] { pow_scalar(u, 2.0); },
       NUMR_THROWS(InvalidArgument, "pow_scalar")},
      {"polygamma_negative_n", [] { polygamma(-1, f32({2})); },
       NUMR_THROWS(InvalidArgument, "polygamma")},
      {"polygamma_fractional_n", [] { polygamma(f32({2}), 1.5); },
       NUMR_THROWS(InvalidArgument, "polygamma")},
      {"polygamma_nan_n", [] { polygamma(f32({2}), std::nan("")); },
       NUMR_THROWS(InvalidArgument, "polygamma")},
      {"lgamma_i64", [] { lgamma(t_of(D::I64, {3})); }, NUMR_THROWS(UnsupportedDType, "lgamma")},
      {"zeta_mixed_dtypes", [] { zeta(f32({2}), t_of(D::F64, {2})); },
       NUMR_THROWS(DTypeMismatch, "zeta")},
      {"bessel_k0_i32", [] { bessel_k0(t_of(D::I32, {3})); },
       NUMR_THROWS(UnsupportedDType, "bessel_k0")},
      {"gammainc_mixed_dtypes", [] { gammainc(f32({2}), t_of(D::F64, {2})); },
       NUMR_THROWS(DTypeMismatch, "gammainc")},
      {"betainc_bad_broadcast", [] { betainc(f32({2}), f32({3}), f32({2})); },
       NUMR_THROWS(BroadcastError, "betainc")},
      {"betainc_i64", [] { betainc(t_of(D::I64, {2}), t_of(D::I64, {2}), t_of(D::I64, {2})); },
       NUMR_THROWS(UnsupportedDType, "betainc")},
      {"add_scalar_bool", [] { add_scalar(t_of(D::Bool, {2}), 1.0); },
       NUMR_THROWS(UnsupportedDType, "add_scalar")},
      {"op_times_fraction_i32", [] { (void)(t_of(D::I32, {2}) * 0.5); },
       NUMR_THROWS(InvalidArgument, "mul_scalar")},
      {"op_rsub_fraction_i64", [] { (void)(1.5 - t_of(D::I64, {2})); },
       NUMR_THROWS(InvalidArgument, "rsub_scalar")},
      {"add_scalar_nan_f32_ok", [] { add_scalar(f32({2}), kNaN); }, NUMR_OK},
      {"div_scalar_zero_f64_ok", [] { div_scalar(t_of(D::F64, {2}), 0.0); }, NUMR_OK},
      {"add_scalar_i64_min_ok", [] { add_scalar(t_of(D::I64, {2}), -0x1p63); }, NUMR_OK},
      // Fused gates.
      {"silu_mul_dtype", [] { silu_mul(f32({2}), t_of(D::F64, {2})); },
       NUMR_THROWS(DTypeMismatch, "silu_mul")},
      {"gelu_mul_i32", [] { gelu_mul(t_of(D::I32, {2}), t_of(D::I32, {2})); },
       NUMR_THROWS(UnsupportedDType, "gelu_mul")},
      {"relu_mul_broadcast", [] { relu_mul(f32({3}), f32({4})); },
       NUMR_THROWS(BroadcastError, "relu_mul")},
      {"relu_bwd_dtype", [] { relu_bwd(f32({2}), t_of(D::BF16, {2})); },
       NUMR_THROWS(DTypeMismatch, "relu_bwd")},
      {"tanh_bwd_undefined", [u] { tanh_bwd(u, f32({2})); },
       NUMR_THROWS(InvalidArgument, "tanh_bwd")},
      {"silu_mul_bwd_dtype", [] { silu_mul_bwd(f32({2}), f32({2}), t_of(D::F16, {2})); },
       NUMR_THROWS(DTypeMismatch, "silu_mul_bwd")},
      {"sigmoid_mul_bwd_broadcast", [] { sigmoid_mul_bwd(f32({2}), f32({3}), f32({3})); },
       NUMR_THROWS(BroadcastError, "sigmoid_mul_bwd")},
      {"gelu_mul_bwd_u8", [] {
         const Tensor b = t_of(D::U8, {2});
         gelu_mul_bwd(b, b, b);
       },
       NUMR_THROWS(UnsupportedDType, "gelu_mul_bwd")},
      {"silu_mul_empty_ok", [] { silu_mul(f32({0, 4}), f32({4})); }, NUMR_OK},
      // where_cond.
      {"where_cond_not_bool", [] { where_cond(f32({2}), f32({2}), f32({2})); },
       NUMR_THROWS(DTypeMismatch, "where_cond")},
      {"where_values_dtype", [] { where_cond(t_of(D::Bool, {2}), f32({2}), t_of(D::F64, {2})); },
       NUMR_THROWS(DTypeMismatch, "where_cond")},
      {"where_broadcast", [] { where_cond(t_of(D::Bool, {3}), f32({2}), f32({2})); },
       NUMR_THROWS(BroadcastError, "where_cond")},
      {"where_undefined_cond", [u] { where_cond(u, f32({2}), f32({2})); },
       NUMR_THROWS(InvalidArgument, "where_cond")},
      {"where_undefined_value", [u] { where_cond(t_of(D::Bool, {2}), u, f32({2})); },
       NUMR_THROWS(InvalidArgument, "where_cond")},
      {"where_bool_values_ok", [] {
         const Tensor b = t_of(D::Bool, {2, 1});
         where_cond(b, b, t_of(D::Bool, {0}));
       },
       NUMR_OK},
      // clamp.
      {"clamp_lo_above_hi", [] { clamp(f32({2}), 2.0, 1.0); }, NUMR_THROWS(InvalidArgument, "clamp")},
      {"clamp_nan_bound", [] { clamp(f32({2}), kNaN, std::nullopt); },
       NUMR_THROWS(InvalidArgument, "clamp")},
      {"clamp_fraction_i32", [] { clamp(t_of(D::I32, {2}), 0.5, std::nullopt); },
       NUMR_THROWS(InvalidArgument, "clamp")},
      {"clamp_bool", [] { clamp(t_of(D::Bool, {2}), 0.0, 1.0); },
       NUMR_THROWS(UnsupportedDType, "clamp")},
      {"clamp_undefined", [u] { clamp(u, 0.0, 1.0); }, NUMR_THROWS(InvalidArgument, "clamp")},
      {"clamp_no_bounds_ok", [] { clamp(f32({2}), std::nullopt, std::nullopt); }, NUMR_OK},
      {"clamp_inf_bounds_ok", [] { clamp(f32({0}), -kInf, kInf); }, NUMR_OK},
  };
}

INSTANTIATE_TEST_SUITE_P(BadInputElementwise, BadInput, ::testing::ValuesIn(elementwise_cases()),
                         case_name);

}  // namespace
}  // namespace numr::bad_input
