// Errors of the Reduce, Scan and Softmax front ends: each is the documented exception
// type and its message starts with the op's name in brackets.
#include <gtest/gtest.h>

#include <functional>
#include <optional>
#include <string>

#include "numr/numr.h"

namespace numr {
namespace {

// Runs f, which must throw E with a message starting "[op]".
template <class E>
void expect_error(const std::string& op, const std::function<void()>& f) {
  EXPECT_THROW(f(), E) << op;
  try {
    f();
  } catch (const E& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("[" + op + "]", 0), 0u) << "message: " << what;
  } catch (...) {
  }
}

TEST(ErrorsReduce, UnsupportedDType) {
  const Tensor i32 = zeros({2, 3}, DType::I32);
  const Tensor b = zeros({2, 3}, DType::Bool);
  expect_error<UnsupportedDType>("mean", [&] { mean(i32); });
  expect_error<UnsupportedDType>("var", [&] { var(i32); });
  expect_error<UnsupportedDType>("std", [&] { numr::std(i32); });
  expect_error<UnsupportedDType>("logsumexp", [&] { logsumexp(i32); });
  expect_error<UnsupportedDType>("sum", [&] { sum(b); });
  expect_error<UnsupportedDType>("prod", [&] { prod(b); });
  expect_error<UnsupportedDType>("max", [&] { max(b); });
  expect_error<UnsupportedDType>("argmax", [&] { argmax(b); });
}

TEST(ErrorsReduce, BadDim) {
  const Tensor x = zeros({2, 3}, DType::F32);
  expect_error<InvalidDimension>("sum", [&] { sum(x, {2}); });
  expect_error<InvalidDimension>("sum", [&] { sum(x, {-3}); });
  expect_error<InvalidDimension>("mean", [&] { mean(x, {0, 5}); });
  expect_error<InvalidDimension>("argmax", [&] { argmax(x, 2); });
  expect_error<InvalidDimension>("argmin", [&] { argmin(x, -3); });
  expect_error<InvalidDimension>("var", [&] { var(x, {7}); });
  const Tensor s = zeros({}, DType::F32);
  expect_error<InvalidDimension>("sum", [&] { sum(s, {1}); });
  expect_error<InvalidDimension>("logsumexp", [&] { logsumexp(s, {0, -1}); });
}

TEST(ErrorsReduce, RepeatedDim) {
  const Tensor x = zeros({2, 3, 4}, DType::F32);
  expect_error<InvalidDimension>("sum", [&] { sum(x, {0, 0}); });
  expect_error<InvalidDimension>("max", [&] { max(x, {1, -2}); });
  expect_error<InvalidDimension>("std", [&] { numr::std(x, {2, -1}); });
}

TEST(ErrorsReduce, EmptyDimWithoutIdentity) {
  const Tensor e = zeros({0, 3}, DType::F32);
  expect_error<InvalidArgument>("max", [&] { max(e); });
  expect_error<InvalidArgument>("min", [&] { min(e, {0}); });
  expect_error<InvalidArgument>("argmax", [&] { argmax(e); });
  expect_error<InvalidArgument>("argmin", [&] { argmin(e, 0); });
  try {
    max(e, {0});
    ADD_FAILURE() << "max of an empty dim did not throw";
  } catch (const InvalidArgument& err) {
    EXPECT_EQ(std::string(err.what()), "[max] cannot reduce an empty dim");
  }
  // Reducing a non-empty dim of an empty tensor is fine.
  EXPECT_EQ(max(e, {1}).shape(), Shape({0}));
  EXPECT_EQ(argmax(e, 1).shape(), Shape({0}));
}

TEST(ErrorsReduce, UndefinedTensor) {
  const Tensor u;
  expect_error<InvalidArgument>("sum", [&] { sum(u); });
  expect_error<InvalidArgument>("argmax", [&] { argmax(u); });
  expect_error<InvalidArgument>("softmax", [&] { softmax(u, 0); });
}

TEST(ErrorsAxis, DTypeAndDim) {
  const Tensor i64 = zeros({2, 3}, DType::I64);
  const Tensor b = zeros({2, 3}, DType::Bool);
  expect_error<UnsupportedDType>("softmax", [&] { softmax(i64, 0); });
  expect_error<UnsupportedDType>("log_softmax", [&] { log_softmax(i64, 1); });
  expect_error<UnsupportedDType>("cumsum", [&] { cumsum(b, 0); });
  expect_error<UnsupportedDType>("cumprod", [&] { cumprod(b, 0); });
  const Tensor x = zeros({2, 3}, DType::F32);
  expect_error<InvalidDimension>("cumsum", [&] { cumsum(x, 2); });
  expect_error<InvalidDimension>("cumprod", [&] { cumprod(x, -3); });
  expect_error<InvalidDimension>("softmax", [&] { softmax(x, 5); });
  expect_error<InvalidDimension>("log_softmax", [&] { log_softmax(zeros({}, DType::F32), 1); });
}

}  // namespace
}  // namespace numr
