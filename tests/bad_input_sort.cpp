// Bad input to the Sort family (Tensor and Var forms).
#include "bad_input_table.h"

namespace numr::bad_input {
namespace {

using D = DType;

std::vector<Case> sort_cases() {
  const Tensor u;
  return {
      {"sort_dim",
       [] {
         sort(f32({3, 4}), 2);
       },
       NUMR_THROWS(InvalidDimension, "sort")},
      {"sort_neg_dim",
       [] {
         sort(f32({3, 4}), -3);
       },
       NUMR_THROWS(InvalidDimension, "sort")},
      {"sort_0d_dim", [] { sort(f32({}), 1); }, NUMR_THROWS(InvalidDimension, "sort")},
      {"sort_bool", [] { sort(t_of(D::Bool, {4})); }, NUMR_THROWS(UnsupportedDType, "sort")},
      {"sort_undefined", [u] { sort(u); }, NUMR_THROWS(InvalidArgument, "sort")},
      {"sort_0d_ok", [] { sort(f32({}), -1); }, NUMR_OK},
      {"sort_empty_ok",
       [] {
         sort(f32({0, 3}), 0);
       },
       NUMR_OK},
      {"argsort_dim", [] { argsort(f32({3}), 1); }, NUMR_THROWS(InvalidDimension, "argsort")},
      {"argsort_bool", [] { argsort(t_of(D::Bool, {4})); },
       NUMR_THROWS(UnsupportedDType, "argsort")},
      {"topk_k_big",
       [] {
         topk(f32({3, 4}), 5);
       },
       NUMR_THROWS(InvalidArgument, "topk")},
      {"topk_k_neg",
       [] {
         topk(f32({3, 4}), -1);
       },
       NUMR_THROWS(InvalidArgument, "topk")},
      {"topk_k_dim0",
       [] {
         topk(f32({3, 4}), 4, 0);
       },
       NUMR_THROWS(InvalidArgument, "topk")},
      {"topk_dim",
       [] {
         topk(f32({3, 4}), 1, 2);
       },
       NUMR_THROWS(InvalidDimension, "topk")},
      {"topk_bool", [] { topk(t_of(D::Bool, {4}), 1); }, NUMR_THROWS(UnsupportedDType, "topk")},
      {"topk_k_n_ok",
       [] {
         topk(f32({3, 4}), 4);
       },
       NUMR_OK},
      {"topk_k_0_ok",
       [] {
         topk(f32({3, 4}), 0);
       },
       NUMR_OK},
      {"searchsorted_0d_seq", [] { searchsorted(f32({}), f32({3})); },
       NUMR_THROWS(InvalidDimension, "searchsorted")},
      {"searchsorted_lead",
       [] {
         searchsorted(f32({2, 5}), f32({3, 4}));
       },
       NUMR_THROWS(ShapeMismatch, "searchsorted")},
      {"searchsorted_rank",
       [] {
         searchsorted(f32({2, 5}), f32({2, 3, 4}));
       },
       NUMR_THROWS(ShapeMismatch, "searchsorted")},
      {"searchsorted_values_0d",
       [] {
         searchsorted(f32({2, 5}), f32({}));
       },
       NUMR_THROWS(ShapeMismatch, "searchsorted")},
      {"searchsorted_dtype", [] { searchsorted(f32({5}), t_of(D::F64, {3})); },
       NUMR_THROWS(DTypeMismatch, "searchsorted")},
      {"searchsorted_bool", [] { searchsorted(t_of(D::Bool, {5}), t_of(D::Bool, {3})); },
       NUMR_THROWS(UnsupportedDType, "searchsorted")},
      {"searchsorted_undefined", [u] { searchsorted(f32({5}), u); },
       NUMR_THROWS(InvalidArgument, "searchsorted")},
      {"searchsorted_1d_any_values_ok",
       [] {
         searchsorted(f32({5}), f32({2, 3}));
       },
       NUMR_OK},
      {"unique_bool", [] { unique(t_of(D::Bool, {4})); }, NUMR_THROWS(UnsupportedDType, "unique")},
      {"unique_undefined", [u] { unique(u); }, NUMR_THROWS(InvalidArgument, "unique")},
      {"unique_with_counts_bool", [] { unique_with_counts(t_of(D::Bool, {4})); },
       NUMR_THROWS(UnsupportedDType, "unique_with_counts")},
      {"sort_var_dim",
       [] {
         sort(Var(f32({3, 4}), true), 2);
       },
       NUMR_THROWS(InvalidDimension, "sort")},
      {"sort_var_undefined", [] { sort(Var()); }, NUMR_THROWS(InvalidArgument, "sort")},
      {"topk_var_k",
       [] {
         topk(Var(f32({3, 4}), true), 5);
       },
       NUMR_THROWS(InvalidArgument, "topk")},
  };
}

INSTANTIATE_TEST_SUITE_P(BadInputSort, BadInput, ::testing::ValuesIn(sort_cases()), case_name);

}  // namespace
}  // namespace numr::bad_input
