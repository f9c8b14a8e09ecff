// matmul's argument errors: each throws the documented type with a message that starts
// with "[matmul]", and leaves nothing half-done.
#include <gtest/gtest.h>

#include <string>

#include "numr/numr.h"

namespace numr {
namespace {

template <class E, class F>
void expect_matmul_error(F&& f) {
  try {
    f();
    ADD_FAILURE() << "no exception";
  } catch (const E& e) {
    EXPECT_EQ(std::string(e.what()).rfind("[matmul]", 0), 0u) << e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "wrong exception type: " << e.what();
  }
}

Tensor t(const Shape& s, DType d = DType::F32) { return Tensor::empty(s, d); }

TEST(ErrorsMatmul, ZeroDimensionalOperand) {
  expect_matmul_error<InvalidArgument>([] { matmul(t({}), t({3})); });
  expect_matmul_error<InvalidArgument>([] { matmul(t({2, 3}), t({})); });
  expect_matmul_error<InvalidArgument>([] { matmul(t({}), t({1, 1})); });
}

TEST(ErrorsMatmul, InnerDimMismatch) {
  expect_matmul_error<ShapeMismatch>([] { matmul(t({2, 3}), t({4, 5})); });
  expect_matmul_error<ShapeMismatch>([] { matmul(t({2, 2, 3}), t({2, 2, 5})); });
  expect_matmul_error<ShapeMismatch>([] { matmul(t({3}), t({4})); });
  expect_matmul_error<ShapeMismatch>([] { matmul(t({2, 3}), t({4})); });
}

TEST(ErrorsMatmul, BatchDimsDoNotBroadcast) {
  expect_matmul_error<BroadcastError>([] { matmul(t({2, 4, 3}), t({3, 3, 5})); });
}

TEST(ErrorsMatmul, DTypeMismatch) {
  expect_matmul_error<DTypeMismatch>([] { matmul(t({2, 3}), t({3, 4}, DType::F64)); });
  expect_matmul_error<DTypeMismatch>(
      [] { matmul(t({2, 3}, DType::BF16), t({3, 4}, DType::F16)); });
}

TEST(ErrorsMatmul, IntegerAndBoolRejected) {
  for (DType d : {DType::I64, DType::I32, DType::U8, DType::Bool})
    expect_matmul_error<UnsupportedDType>([d] { matmul(t({2, 3}, d), t({3, 4}, d)); });
}

TEST(ErrorsMatmul, UndefinedTensor) {
  expect_matmul_error<InvalidArgument>([] { matmul(Tensor(), t({3, 4})); });
  expect_matmul_error<InvalidArgument>([] { matmul(t({3, 4}), Tensor()); });
}

}  // namespace
}  // namespace numr
