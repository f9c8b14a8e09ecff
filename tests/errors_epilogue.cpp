// The GEMM epilogues' argument errors: each throws the documented type with a message that
// starts with "[<op>]".
#include <gtest/gtest.h>

#include <string>

#include "numr/numr.h"

namespace numr {
namespace {

template <class E, class F>
void expect_error(const std::string& op, F&& f) {
  try {
    f();
    ADD_FAILURE() << op << ": no exception";
  } catch (const E& e) {
    EXPECT_EQ(std::string(e.what()).rfind("[" + op + "]", 0), 0u) << e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << op << ": wrong exception type: " << e.what();
  }
}

Tensor t(const Shape& s, DType d = DType::F32) { return Tensor::empty(s, d); }

constexpr Activation kAct = Activation::Gelu;

// Every op that takes (a, b) with a bias of N, called with the given a, b, bias.
template <class E>
void expect_all_gemm_ops(const Tensor& a, const Tensor& b, const Tensor& bias,
                         const Shape& out) {
  const DType d = a.dtype();
  expect_error<E>("matmul_bias_activation",
                  [&] { matmul_bias_activation(a, b, bias, kAct); });
  expect_error<E>("matmul_bias_residual", [&] { matmul_bias_residual(a, b, bias, t(out, d)); });
  expect_error<E>("matmul_bias_activation_fwd",
                  [&] { matmul_bias_activation_fwd(a, b, bias, kAct); });
  expect_error<E>("matmul_bias_activation_bwd",
                  [&] { matmul_bias_activation_bwd(t(out, d), a, b, bias, kAct); });
}

// The backward from a saved tensor (no bias argument).
template <class E>
void expect_bwd_saved(const Tensor& a, const Tensor& b, const Shape& out) {
  const DType d = a.dtype();
  expect_error<E>("matmul_bias_activation_bwd_saved", [&] {
    matmul_bias_activation_bwd_saved(t(out, d), a, b, t(out, d), kAct);
  });
}

TEST(ErrorsEpilogue, OperandRanks) {
  expect_all_gemm_ops<InvalidArgument>(t({3}), t({3, 2}), t({2}), {2});
  expect_all_gemm_ops<InvalidArgument>(t({2, 3}), t({3}), t({1}), {2});
  expect_all_gemm_ops<InvalidArgument>(t({2, 2, 2, 3}), t({3, 2}), t({2}), {2, 2, 2, 2});
  // A per-batch b needs a batched a.
  expect_all_gemm_ops<InvalidArgument>(t({2, 3}), t({4, 3, 5}), t({5}), {2, 5});
  expect_bwd_saved<InvalidArgument>(t({3}), t({3, 2}), {2});
  expect_bwd_saved<InvalidArgument>(t({2, 3}), t({4, 3, 5}), {2, 5});
}

TEST(ErrorsEpilogue, InnerDimMismatch) {
  expect_all_gemm_ops<ShapeMismatch>(t({2, 3}), t({4, 5}), t({5}), {2, 5});
  expect_all_gemm_ops<ShapeMismatch>(t({2, 2, 3}), t({4, 5}), t({5}), {2, 2, 5});
  expect_bwd_saved<ShapeMismatch>(t({2, 3}), t({4, 5}), {2, 5});
}

TEST(ErrorsEpilogue, PerBatchBWithWrongBatch) {
  expect_all_gemm_ops<ShapeMismatch>(t({2, 4, 3}), t({3, 3, 5}), t({5}), {2, 4, 5});
  expect_bwd_saved<ShapeMismatch>(t({2, 4, 3}), t({3, 3, 5}), {2, 4, 5});
}

TEST(ErrorsEpilogue, BiasOfWrongLength) {
  expect_all_gemm_ops<ShapeMismatch>(t({2, 3}), t({3, 5}), t({4}), {2, 5});
  expect_all_gemm_ops<ShapeMismatch>(t({2, 3}), t({3, 5}), t({1, 5}), {2, 5});
  expect_all_gemm_ops<ShapeMismatch>(t({2, 3}), t({3, 5}), t({}), {2, 5});
}

TEST(ErrorsEpilogue, ResidualGradAndSavedShapes) {
  expect_error<ShapeMismatch>("matmul_bias_residual",
                              [] { matmul_bias_residual(t({2, 3}), t({3, 5}), t({5}), t({5})); });
  expect_error<ShapeMismatch>("matmul_bias_residual", [] {
    matmul_bias_residual(t({2, 2, 3}), t({3, 5}), t({5}), t({2, 5}));
  });
  expect_error<ShapeMismatch>("matmul_bias_activation_bwd", [] {
    matmul_bias_activation_bwd(t({2, 4}), t({2, 3}), t({3, 5}), t({5}), kAct);
  });
  expect_error<ShapeMismatch>("matmul_bias_activation_bwd_saved", [] {
    matmul_bias_activation_bwd_saved(t({2, 5}), t({2, 3}), t({3, 5}), t({5, 2}), kAct);
  });
  expect_error<ShapeMismatch>("matmul_bias_activation_bwd_saved", [] {
    matmul_bias_activation_bwd_saved(t({1, 2, 5}), t({2, 3}), t({3, 5}), t({2, 5}), kAct);
  });
  expect_error<ShapeMismatch>("bias_activation_bwd",
                              [] { bias_activation_bwd(t({2, 5}), t({2, 4}), kAct); });
  expect_error<InvalidArgument>("bias_activation_bwd",
                                [] { bias_activation_bwd(t({}), t({}), kAct); });
}

TEST(ErrorsEpilogue, IntegerAndBoolRejected) {
  for (DType d : {DType::I64, DType::I32, DType::U8, DType::Bool}) {
    expect_all_gemm_ops<UnsupportedDType>(t({2, 3}, d), t({3, 5}, d), t({5}, d), {2, 5});
    expect_bwd_saved<UnsupportedDType>(t({2, 3}, d), t({3, 5}, d), {2, 5});
    expect_error<UnsupportedDType>("bias_activation_bwd",
                                   [d] { bias_activation_bwd(t({2, 5}, d), t({2, 5}, d), kAct); });
  }
}

TEST(ErrorsEpilogue, MixedDTypes) {
  expect_all_gemm_ops<DTypeMismatch>(t({2, 3}), t({3, 5}, DType::F64), t({5}), {2, 5});
  expect_all_gemm_ops<DTypeMismatch>(t({2, 3}, DType::BF16), t({3, 5}, DType::BF16),
                                     t({5}, DType::F16), {2, 5});
  expect_bwd_saved<DTypeMismatch>(t({2, 3}), t({3, 5}, DType::F64), {2, 5});
  expect_error<DTypeMismatch>("matmul_bias_residual", [] {
    matmul_bias_residual(t({2, 3}), t({3, 5}), t({5}), t({2, 5}, DType::F64));
  });
  expect_error<DTypeMismatch>("matmul_bias_activation_bwd_saved", [] {
    matmul_bias_activation_bwd_saved(t({2, 5}, DType::F64), t({2, 3}), t({3, 5}), t({2, 5}),
                                     kAct);
  });
  expect_error<DTypeMismatch>("bias_activation_bwd", [] {
    bias_activation_bwd(t({2, 5}), t({2, 5}, DType::BF16), kAct);
  });
}

TEST(ErrorsEpilogue, UndefinedTensor) {
  expect_all_gemm_ops<InvalidArgument>(Tensor(), t({3, 5}), t({5}), {2, 5});
  expect_all_gemm_ops<InvalidArgument>(t({2, 3}), t({3, 5}), Tensor(), {2, 5});
  expect_error<InvalidArgument>("bias_activation_bwd",
                                [] { bias_activation_bwd(Tensor(), t({2, 5}), kAct); });
}

TEST(ErrorsEpilogue, ActivationNames) {
  EXPECT_EQ(activation_name(Activation::Gelu), "gelu");
  EXPECT_EQ(activation_name(Activation::None), "none");
  EXPECT_TRUE(needs_preactivation(Activation::Silu));
  EXPECT_TRUE(needs_preactivation(Activation::Gelu));
  EXPECT_FALSE(needs_preactivation(Activation::Relu));
  EXPECT_FALSE(needs_preactivation(Activation::Sigmoid));
  EXPECT_FALSE(needs_preactivation(Activation::Tanh));
  EXPECT_FALSE(needs_preactivation(Activation::None));
}

}  // namespace
}  // namespace numr
