// Bad input to the elementwise front ends: the documented exception, a message that
// starts with the op's name, and nothing crashes.
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
    ADD_FAILURE() << op << ": wrong exception: " << e.what();
  }
}

Tensor one_of(DType t, const Shape& shape = {3}) { return zeros(shape, t); }

// Calls an op of the uniform elementwise families by id with tensors of dtype t.
void call_with(OpId op, const std::vector<Tensor>& in) {
  switch (op) {
#define NUMR_UNARY(name, d, g) \
  case OpId::name: name(in[0]); return;
#define NUMR_UNARY_PRED(name, d, g) NUMR_UNARY(name, d, g)
#define NUMR_BINARY(name, d, g) \
  case OpId::name: name(in[0], in[1]); return;
#define NUMR_COMPARE(name, d, g) NUMR_BINARY(name, d, g)
#define NUMR_LOGICAL(name, d, g) NUMR_BINARY(name, d, g)
#define NUMR_TERNARY(name, d, g) \
  case OpId::name: name(in[0], in[1], in[2]); return;
#define NUMR_SCALAR(name, d, g) \
  case OpId::name: name(in[0], 1.0); return;
#define NUMR_ACT_MUL(name, d, g) \
  case OpId::name: name(in[0], in[1]); return;
#define NUMR_ACT_BWD(name, d, g) NUMR_ACT_MUL(name, d, g)
#define NUMR_ACT_MUL_BWD(name, d, g) \
  case OpId::name: name(in[0], in[1], in[2]); return;
#define NUMR_ACTIVATION(name, d, g) \
  case OpId::name: name(in[0]); return;
#include "numr/op_table.def"
    default: return;
  }
}

int arity(OpFamily f) {
  switch (f) {
    case OpFamily::Binary: case OpFamily::Compare: case OpFamily::Logical:
    case OpFamily::ActMul: case OpFamily::ActBwd: return 2;
    case OpFamily::Ternary: case OpFamily::ActMulBwd: return 3;
    default: return 1;
  }
}

bool uniform(OpFamily f) {
  switch (f) {
    case OpFamily::Unary: case OpFamily::UnaryPred: case OpFamily::Activation:
    case OpFamily::Binary: case OpFamily::Ternary: case OpFamily::Scalar:
    case OpFamily::Compare: case OpFamily::Logical: case OpFamily::ActMul:
    case OpFamily::ActBwd: case OpFamily::ActMulBwd: return true;
    default: return false;
  }
}

TEST(ElementwiseErrors, EveryRejectedDTypeThrowsUnsupportedDType) {
  for (const OpInfo& info : all_ops()) {
    if (!uniform(info.family)) continue;
    for (DType t : kAllDTypes) {
      if (op_accepts(info.id, t)) continue;
      std::vector<Tensor> in(size_t(arity(info.family)), one_of(t));
      expect_error<UnsupportedDType>(std::string(info.name), [&] { call_with(info.id, in); });
    }
  }
}

TEST(ElementwiseErrors, MixedDTypesThrowDTypeMismatch) {
  for (const OpInfo& info : all_ops()) {
    if (!uniform(info.family) || arity(info.family) < 2) continue;
    std::vector<Tensor> in(size_t(arity(info.family)), one_of(DType::F32));
    in.back() = one_of(DType::F64);
    expect_error<DTypeMismatch>(std::string(info.name), [&] { call_with(info.id, in); });
  }
}

TEST(ElementwiseErrors, ShapesThatDoNotBroadcastThrowBroadcastError) {
  for (const OpInfo& info : all_ops()) {
    if (!uniform(info.family) || arity(info.family) < 2) continue;
    std::vector<Tensor> in(size_t(arity(info.family)), one_of(DType::F32, {3}));
    in.back() = one_of(DType::F32, {4});
    expect_error<BroadcastError>(std::string(info.name), [&] { call_with(info.id, in); });
  }
}

TEST(ElementwiseErrors, UndefinedTensorThrowsInvalidArgument) {
  expect_error<InvalidArgument>("exp", [] { exp(Tensor()); });
  expect_error<InvalidArgument>("add", [] { add(Tensor(), one_of(DType::F32)); });
}

TEST(ElementwiseErrors, SpecialSignatures) {
  const Tensor f = one_of(DType::F32), i = one_of(DType::I32);
  expect_error<DTypeMismatch>("where_cond", [&] { where_cond(f, f, f); });
  expect_error<DTypeMismatch>("where_cond", [&] { where_cond(one_of(DType::Bool), f, i); });
  expect_error<BroadcastError>("where_cond",
                               [&] { where_cond(one_of(DType::Bool, {2}), f, f); });
  expect_error<InvalidArgument>("clamp", [&] { clamp(f, 2.0, 1.0); });
  expect_error<InvalidArgument>("clamp", [&] { clamp(f, NAN, 1.0); });
  expect_error<InvalidArgument>("clamp", [&] { clamp(i, 0.5, 1.0); });
  expect_error<UnsupportedDType>("clamp", [&] { clamp(one_of(DType::Bool), 0.0, 1.0); });
  expect_error<InvalidArgument>("add_scalar", [&] { add_scalar(i, 0.5); });
  expect_error<InvalidArgument>("mul_scalar", [&] { mul_scalar(one_of(DType::U8), -1.0); });
  expect_error<InvalidArgument>("leaky_relu", [&] { leaky_relu(f, INFINITY); });
}

TEST(ElementwiseErrors, UnavailableDeviceThrowsBackendUnavailable) {
  bool cuda = false;
  for (Device d : available_devices()) cuda |= d.type == DeviceType::Cuda;
  if (cuda) GTEST_SKIP() << "a CUDA device is present";
  EXPECT_THROW(zeros({2}, DType::F32, Device::cuda(0)), BackendUnavailable);
  EXPECT_THROW(Tensor::from_vector<float>({1.f}, {1}, Device::cuda(0)), BackendUnavailable);
}

TEST(ElementwiseErrors, InputsAreUntouchedAfterAnError) {
  const Tensor a = Tensor::from_vector<float>({1.f, 2.f, 3.f}, {3});
  const Tensor b = Tensor::from_vector<float>({1.f, 2.f}, {2});
  EXPECT_THROW(add(a, b), BroadcastError);
  EXPECT_EQ(a.to_vector<float>(), (std::vector<float>{1.f, 2.f, 3.f}));
  EXPECT_EQ(b.to_vector<float>(), (std::vector<float>{1.f, 2.f}));
}

}  // namespace
}  // namespace numr
