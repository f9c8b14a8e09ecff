// Bad input to scaled_dot_product_attention (Tensor and Var forms).
#include "bad_input_table.h"

namespace numr::bad_input {
namespace {

using D = DType;
constexpr const char* kOp = "scaled_dot_product_attention";

Tensor sdpa(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask = Tensor(),
            bool causal = false, std::optional<double> scale = std::nullopt) {
  return scaled_dot_product_attention(q, k, v, mask, causal, scale);
}

std::vector<Case> attention_cases() {
  const Tensor u;
  return {
      {"sdpa_1d",
       [] {
         sdpa(f32({4}), f32({3, 4}), f32({3, 4}));
       },
       NUMR_THROWS(InvalidDimension, kOp)},
      {"sdpa_head_dim",
       [] {
         sdpa(f32({2, 4}), f32({3, 5}), f32({3, 4}));
       },
       NUMR_THROWS(ShapeMismatch, kOp)},
      {"sdpa_v_seq",
       [] {
         sdpa(f32({2, 4}), f32({3, 4}), f32({2, 4}));
       },
       NUMR_THROWS(ShapeMismatch, kOp)},
      {"sdpa_batch",
       [] {
         sdpa(f32({2, 2, 4}), f32({3, 3, 4}), f32({3, 3, 4}));
       },
       NUMR_THROWS(BroadcastError, kOp)},
      {"sdpa_dtype",
       [] {
         sdpa(f32({2, 4}), t_of(D::F64, {3, 4}), f32({3, 4}));
       },
       NUMR_THROWS(DTypeMismatch, kOp)},
      {"sdpa_i32",
       [] {
         sdpa(t_of(D::I32, {2, 4}), t_of(D::I32, {3, 4}), t_of(D::I32, {3, 4}));
       },
       NUMR_THROWS(UnsupportedDType, kOp)},
      {"sdpa_undefined",
       [u] {
         sdpa(f32({2, 4}), u, f32({3, 4}));
       },
       NUMR_THROWS(InvalidArgument, kOp)},
      {"sdpa_mask_dtype",
       [] {
         sdpa(f32({2, 4}), f32({3, 4}), f32({3, 4}), t_of(D::I64, {2, 3}));
       },
       NUMR_THROWS(DTypeMismatch, kOp)},
      {"sdpa_mask_f64",
       [] {
         sdpa(f32({2, 4}), f32({3, 4}), f32({3, 4}), t_of(D::F64, {2, 3}));
       },
       NUMR_THROWS(DTypeMismatch, kOp)},
      {"sdpa_mask_shape",
       [] {
         sdpa(f32({2, 4}), f32({3, 4}), f32({3, 4}), t_of(D::Bool, {2, 4}));
       },
       NUMR_THROWS(BroadcastError, kOp)},
      {"sdpa_mask_bigger",
       [] {
         sdpa(f32({2, 4}), f32({3, 4}), f32({3, 4}), t_of(D::Bool, {5, 2, 3}));
       },
       NUMR_THROWS(ShapeMismatch, kOp)},
      {"sdpa_scale_nan",
       [] {
         sdpa(f32({2, 4}), f32({3, 4}), f32({3, 4}), Tensor(), false, kNaN);
       },
       NUMR_THROWS(InvalidArgument, kOp)},
      {"sdpa_var_head_dim",
       [] {
         scaled_dot_product_attention(Var(f32({2, 4}), true), Var(f32({3, 5})), Var(f32({3, 4})));
       },
       NUMR_THROWS(ShapeMismatch, kOp)},
      {"sdpa_var_undefined",
       [] {
         scaled_dot_product_attention(Var(f32({2, 4}), true), Var(), Var(f32({3, 4})));
       },
       NUMR_THROWS(InvalidArgument, kOp)},
      {"sdpa_empty_ok",
       [] {
         sdpa(f32({0, 4}), f32({0, 4}), f32({0, 2}), Tensor(), true);
       },
       NUMR_OK},
      {"sdpa_broadcast_mask_ok",
       [] {
         sdpa(f32({2, 3, 4}), f32({2, 5, 4}), f32({2, 5, 4}), t_of(D::Bool, {5}));
       },
       NUMR_OK},
  };
}

INSTANTIATE_TEST_SUITE_P(BadInputAttention, BadInput, ::testing::ValuesIn(attention_cases()),
                         case_name);

}  // namespace
}  // namespace numr::bad_input
