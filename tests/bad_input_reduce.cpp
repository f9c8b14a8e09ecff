// Bad input to the reductions, scans, softmax, matmul and the GEMM epilogues.
#include <cstdint>
#include <limits>

#include "bad_input_table.h"

namespace numr::bad_input {
namespace {

using D = DType;
constexpr int64_t kI64Min = std::numeric_limits<int64_t>::min();
constexpr int64_t kI64Max = std::numeric_limits<int64_t>::max();

std::vector<Case> reduce_cases() {
  const Tensor u;
  return {
      {"sum_dim_out_of_range", [] { sum(f32({2, 3}), {2}); },
       NUMR_THROWS(InvalidDimension, "sum")},
      {"sum_dim_negative_out_of_range", [] { sum(f32({2, 3}), {-3}); },
       NUMR_THROWS(InvalidDimension, "sum")},
      {"sum_dim_duplicate", [] { sum(f32({2, 3}), {1, -1}); }, NUMR_THROWS(InvalidDimension, "sum")},
      {"sum_dim_i64_min", [] { sum(f32({2, 3}), {kI64Min}); }, NUMR_THROWS(InvalidDimension, "sum")},
      {"sum_dim_i64_max", [] { sum(f32({2, 3}), {kI64Max}); }, NUMR_THROWS(InvalidDimension, "sum")},
      {"sum_0d_dim", [] { sum(f32({}), {1}); }, NUMR_THROWS(InvalidDimension, "sum")},
      {"sum_0d_duplicate", [] { sum(f32({}), {0, 0}); }, NUMR_THROWS(InvalidDimension, "sum")},
      {"sum_bool", [] { sum(t_of(D::Bool, {2})); }, NUMR_THROWS(UnsupportedDType, "sum")},
      {"sum_undefined", [u] { sum(u); }, NUMR_THROWS(InvalidArgument, "sum")},
      {"mean_i32", [] { mean(t_of(D::I32, {2})); }, NUMR_THROWS(UnsupportedDType, "mean")},
      {"prod_duplicate", [] { prod(f32({2, 2}), {0, 0}); }, NUMR_THROWS(InvalidDimension, "prod")},
      {"max_empty_dim", [] { max(f32({0, 3}), {0}); }, NUMR_THROWS(InvalidArgument, "max")},
      {"min_empty_all", [] { min(t_of(D::I32, {0})); }, NUMR_THROWS(InvalidArgument, "min")},
      {"max_bool", [] { max(t_of(D::Bool, {2})); }, NUMR_THROWS(UnsupportedDType, "max")},
      {"any_dim_out_of_range", [] { any(t_of(D::Bool, {2}), {5}); },
       NUMR_THROWS(InvalidDimension, "any")},
      {"all_undefined", [u] { all(u); }, NUMR_THROWS(InvalidArgument, "all")},
      {"argmax_dim", [] { argmax(f32({2, 3}), 2); }, NUMR_THROWS(InvalidDimension, "argmax")},
      {"argmin_empty", [] { argmin(f32({0})); }, NUMR_THROWS(InvalidArgument, "argmin")},
      {"argmax_empty_dim", [] { argmax(f32({3, 0}), 1); }, NUMR_THROWS(InvalidArgument, "argmax")},
      {"argmax_bool", [] { argmax(t_of(D::Bool, {2})); }, NUMR_THROWS(UnsupportedDType, "argmax")},
      {"argmax_0d_dim1", [] { argmax(f32({}), 1); }, NUMR_THROWS(InvalidDimension, "argmax")},
      {"var_i64", [] { var(t_of(D::I64, {3})); }, NUMR_THROWS(UnsupportedDType, "var")},
      {"var_dim", [] { var(f32({3}), {1}); }, NUMR_THROWS(InvalidDimension, "var")},
      {"std_duplicate", [] { std(f32({3, 2}), {0, -2}); }, NUMR_THROWS(InvalidDimension, "std")},
      {"logsumexp_i32", [] { logsumexp(t_of(D::I32, {2})); },
       NUMR_THROWS(UnsupportedDType, "logsumexp")},
      {"logsumexp_dim", [] { logsumexp(f32({2}), {-2}); },
       NUMR_THROWS(InvalidDimension, "logsumexp")},
      // Valid edge cases.
      {"sum_empty_ok", [] { sum(f32({0, 3}), {0}); }, NUMR_OK},
      {"sum_0d_ok", [] { sum(f32({}), {}, true); }, NUMR_OK},
      {"sum_0d_dim0_ok", [] { sum(f32({}), {0}); }, NUMR_OK},
      {"sum_0d_dim_minus1_ok", [] { sum(f32({}), {-1}); }, NUMR_OK},
      {"prod_empty_ok", [] { prod(t_of(D::I32, {0})); }, NUMR_OK},
      {"mean_empty_ok", [] { mean(f32({0})); }, NUMR_OK},
      {"var_correction_large_ok", [] { var(f32({3}), {}, 10); }, NUMR_OK},
      {"any_empty_ok", [] { any(t_of(D::Bool, {0, 2}), {0}, true); }, NUMR_OK},
      {"argmax_0d_ok", [] { argmax(f32({}), 0); }, NUMR_OK},
      {"max_keepdim_view_ok", [] { max(f32({3, 4}).transpose(0, 1), {0}, true); }, NUMR_OK},
      // Scans and softmax.
      {"cumsum_dim", [] { cumsum(f32({2, 3}), 2); }, NUMR_THROWS(InvalidDimension, "cumsum")},
      {"cumsum_i64_min_dim", [] { cumsum(f32({2}), kI64Min); },
       NUMR_THROWS(InvalidDimension, "cumsum")},
      {"cumprod_bool", [] { cumprod(t_of(D::Bool, {2}), 0); },
       NUMR_THROWS(UnsupportedDType, "cumprod")},
      {"cumsum_undefined", [u] { cumsum(u, 0); }, NUMR_THROWS(InvalidArgument, "cumsum")},
      {"softmax_i32", [] { softmax(t_of(D::I32, {2}), 0); },
       NUMR_THROWS(UnsupportedDType, "softmax")},
      {"softmax_dim", [] { softmax(f32({2}), 1); }, NUMR_THROWS(InvalidDimension, "softmax")},
      {"log_softmax_0d_dim1", [] { log_softmax(f32({}), 1); },
       NUMR_THROWS(InvalidDimension, "log_softmax")},
      {"log_softmax_undefined", [u] { log_softmax(u, 0); },
       NUMR_THROWS(InvalidArgument, "log_softmax")},
      {"cumsum_empty_ok", [] { cumsum(f32({0, 2}), 0); }, NUMR_OK},
      {"softmax_empty_ok", [] { softmax(f32({3, 0}), 1); }, NUMR_OK},
      {"softmax_0d_ok", [] { softmax(f32({}), 0); }, NUMR_OK},
      {"cumprod_0d_ok", [] { cumprod(t_of(D::I64, {}), -1); }, NUMR_OK},
  };
}

std::vector<Case> matmul_cases() {
  const Tensor u;
  const Activation bad_act = static_cast<Activation>(200);
  return {
      {"matmul_1d", [] { matmul(f32({3}), f32({3, 2})); }, NUMR_OK},
      {"matmul_0d", [] { matmul(f32({}), f32({})); }, NUMR_THROWS(InvalidArgument, "matmul")},
      {"matmul_inner", [] { matmul(f32({2, 3}), f32({4, 2})); }, NUMR_THROWS(ShapeMismatch, "matmul")},
      {"matmul_batch", [] { matmul(f32({2, 2, 3}), f32({3, 3, 2})); },
       NUMR_THROWS(BroadcastError, "matmul")},
      {"matmul_dtype", [] { matmul(f32({2, 2}), t_of(D::F64, {2, 2})); },
       NUMR_THROWS(DTypeMismatch, "matmul")},
      {"matmul_i32", [] { matmul(t_of(D::I32, {2, 2}), t_of(D::I32, {2, 2})); },
       NUMR_THROWS(UnsupportedDType, "matmul")},
      {"matmul_undefined", [u] { matmul(u, f32({2, 2})); }, NUMR_THROWS(InvalidArgument, "matmul")},
      {"matmul_empty_k_ok", [] { matmul(f32({2, 0}), f32({0, 3})); }, NUMR_OK},
      {"matmul_empty_m_ok", [] { matmul(f32({0, 4}), f32({4, 3})); }, NUMR_OK},
      {"matmul_empty_batch_ok", [] { matmul(f32({0, 2, 2}), f32({2, 2})); }, NUMR_OK},
      {"matmul_views_ok", [] { matmul(f32({2, 3}).transpose(0, 1), f32({2, 4}).flip({0, 1})); },
       NUMR_OK},
      // Epilogues.
      {"mba_bias_shape", [] { matmul_bias_activation(f32({2, 3}), f32({3, 4}), f32({3}), Activation::Relu); },
       NUMR_THROWS(ShapeMismatch, "matmul_bias_activation")},
      {"mba_inner", [] { matmul_bias_activation(f32({2, 3}), f32({2, 4}), f32({4}), Activation::None); },
       NUMR_THROWS(ShapeMismatch, "matmul_bias_activation")},
      {"mba_a_1d", [] { matmul_bias_activation(f32({3}), f32({3, 4}), f32({4}), Activation::None); },
       NUMR_THROWS(InvalidArgument, "matmul_bias_activation")},
      {"mba_a_4d", [] { matmul_bias_activation(f32({1, 1, 2, 3}), f32({3, 4}), f32({4}), Activation::None); },
       NUMR_THROWS(InvalidArgument, "matmul_bias_activation")},
      {"mba_bad_activation", [bad_act] { matmul_bias_activation(f32({2, 3}), f32({3, 4}), f32({4}), bad_act); },
       NUMR_THROWS(InvalidArgument, "matmul_bias_activation")},
      {"mba_dtype", [] { matmul_bias_activation(f32({2, 3}), f32({3, 4}), t_of(D::F16, {4}), Activation::Gelu); },
       NUMR_THROWS(DTypeMismatch, "matmul_bias_activation")},
      {"mba_i64", [] {
         matmul_bias_activation(t_of(D::I64, {2, 3}), t_of(D::I64, {3, 4}), t_of(D::I64, {4}),
                                Activation::None);
       },
       NUMR_THROWS(UnsupportedDType, "matmul_bias_activation")},
      {"mba_batches", [] { matmul_bias_activation(f32({2, 2, 3}), f32({3, 3, 4}), f32({4}), Activation::Silu); },
       NUMR_THROWS(ShapeMismatch, "matmul_bias_activation")},
      {"mba_undefined_bias", [u] { matmul_bias_activation(f32({2, 3}), f32({3, 4}), u, Activation::None); },
       NUMR_THROWS(InvalidArgument, "matmul_bias_activation")},
      {"mbr_residual", [] { matmul_bias_residual(f32({2, 3}), f32({3, 4}), f32({4}), f32({2, 5})); },
       NUMR_THROWS(ShapeMismatch, "matmul_bias_residual")},
      {"mbr_residual_dtype", [] { matmul_bias_residual(f32({2, 3}), f32({3, 4}), f32({4}), t_of(D::F64, {2, 4})); },
       NUMR_THROWS(DTypeMismatch, "matmul_bias_residual")},
      {"mba_fwd_bias", [] { matmul_bias_activation_fwd(f32({2, 3}), f32({3, 4}), f32({5}), Activation::Tanh); },
       NUMR_THROWS(ShapeMismatch, "matmul_bias_activation_fwd")},
      {"mba_bwd_grad_shape", [] {
         matmul_bias_activation_bwd(f32({2, 5}), f32({2, 3}), f32({3, 4}), f32({4}), Activation::Relu);
       },
       NUMR_THROWS(ShapeMismatch, "matmul_bias_activation_bwd")},
      {"mba_bwd_saved_shape", [] {
         matmul_bias_activation_bwd_saved(f32({2, 4}), f32({2, 3}), f32({3, 4}), f32({2, 5}),
                                          Activation::Gelu);
       },
       NUMR_THROWS(ShapeMismatch, "matmul_bias_activation_bwd_saved")},
      {"bab_scalar_grad", [] { bias_activation_bwd(f32({}), f32({}), Activation::Relu); },
       NUMR_THROWS(InvalidArgument, "bias_activation_bwd")},
      {"bab_saved_shape", [] { bias_activation_bwd(f32({2, 3}), f32({3, 2}), Activation::Relu); },
       NUMR_THROWS(ShapeMismatch, "bias_activation_bwd")},
      {"bab_dtype", [] { bias_activation_bwd(f32({2, 3}), t_of(D::F64, {2, 3}), Activation::Silu); },
       NUMR_THROWS(DTypeMismatch, "bias_activation_bwd")},
      {"bab_bad_activation", [bad_act] { bias_activation_bwd(f32({2, 3}), f32({2, 3}), bad_act); },
       NUMR_THROWS(InvalidArgument, "bias_activation_bwd")},
      {"mba_empty_ok", [] { matmul_bias_activation(f32({0, 3}), f32({3, 4}), f32({4}), Activation::Relu); },
       NUMR_OK},
      {"mba_empty_k_ok", [] { matmul_bias_activation(f32({2, 0}), f32({0, 4}), f32({4}), Activation::Gelu); },
       NUMR_OK},
      {"bab_empty_ok", [] { bias_activation_bwd(f32({0, 3}), f32({0, 3}), Activation::Tanh); }, NUMR_OK},
  };
}

INSTANTIATE_TEST_SUITE_P(BadInputReduce, BadInput, ::testing::ValuesIn(reduce_cases()), case_name);
INSTANTIATE_TEST_SUITE_P(BadInputMatmul, BadInput, ::testing::ValuesIn(matmul_cases()), case_name);

}  // namespace
}  // namespace numr::bad_input
