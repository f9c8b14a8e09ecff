// Errors raised by shared code (allocation, output size, device lookup, undefined Vars)
// carry the name of the public op the user called.
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "numr/numr.h"

namespace numr {
namespace {

// Sizes far beyond any address space but within the element limit (2^60): the allocation
// fails at once, nothing is touched.
constexpr int64_t kHuge = int64_t(1) << 50;

template <class E>
void expect_prefix(const std::string& op, const std::function<void()>& f) {
  SCOPED_TRACE(op);
  try {
    f();
    ADD_FAILURE() << "expected an error from " << op;
  } catch (const E& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.rfind("[" + op + "] ", 0), 0u) << msg;
  } catch (const std::exception& e) {
    ADD_FAILURE() << op << " threw the wrong error: " << e.what();
  }
}

// A tensor of `shape` whose storage is one element (a broadcast scalar).
Tensor broadcast_scalar(const Shape& shape, DType dtype = DType::F32) {
  return full({}, 1.0, dtype).broadcast_to(shape);
}

bool has_gpu() { return available_devices().size() > 1; }

TEST(ErrorPrefix, OutOfMemoryNamesTheOp) {
  const Shape huge = {int64_t(1) << 40, int64_t(1) << 20};  // 2^60 elements
  expect_prefix<OutOfMemory>("zeros", [&] { zeros(huge); });
  expect_prefix<OutOfMemory>("ones", [&] { ones(huge); });
  expect_prefix<OutOfMemory>("full", [&] { full(huge, 2.0); });
  expect_prefix<OutOfMemory>("arange", [] { arange(0, 9e15, 1, DType::F64); });
  expect_prefix<OutOfMemory>("linspace", [] { linspace(0, 1, kHuge); });
  expect_prefix<OutOfMemory>("eye", [] { eye(int64_t(1) << 30); });
  Generator gen(1);
  expect_prefix<OutOfMemory>("rand", [&] { rand(huge, DType::F32, Device::cpu(), gen); });
  expect_prefix<OutOfMemory>("randn", [&] { randn(huge, DType::F32, Device::cpu(), gen); });
  expect_prefix<OutOfMemory>("empty", [&] { Tensor::empty(huge, DType::F32); });

  const Tensor view = broadcast_scalar({kHuge});
  expect_prefix<OutOfMemory>("contiguous", [&] { contiguous(view); });
  expect_prefix<OutOfMemory>("contiguous", [&] { view.contiguous(); });
  expect_prefix<OutOfMemory>("clone", [&] { clone(view); });
  expect_prefix<OutOfMemory>("cast", [&] { view.cast(DType::F64); });
  expect_prefix<OutOfMemory>("cat", [&] { cat({view, view}, 0); });
  expect_prefix<OutOfMemory>("stack", [&] { stack({view, view}, 0); });
  const Tensor one = Tensor::from_vector<float>({1.f}, {1});
  expect_prefix<OutOfMemory>("repeat", [&] { repeat(one, {kHuge}); });
  expect_prefix<OutOfMemory>("pad", [&] { pad(one, {0, kHuge}); });
  expect_prefix<OutOfMemory>("matmul", [] {
    matmul(broadcast_scalar({int64_t(1) << 25, 1}), broadcast_scalar({1, int64_t(1) << 25}));
  });
  expect_prefix<OutOfMemory>("add", [&] { add(view, view); });
  expect_prefix<OutOfMemory>("relu", [&] { relu(view); });
  expect_prefix<OutOfMemory>("cumsum", [&] { cumsum(view, 0); });
}

TEST(ErrorPrefix, OutputSizeNamesTheOp) {
  // Each input is within the 2^60 limit, the output is not.
  const Tensor big = broadcast_scalar({int64_t(1) << 60});
  expect_prefix<InvalidArgument>("cat", [&] { cat({big, big}, 0); });
  expect_prefix<InvalidArgument>("matmul", [] {
    matmul(broadcast_scalar({int64_t(1) << 40, 1}), broadcast_scalar({1, int64_t(1) << 40}));
  });
  // Extents whose sum overflows int64.
  expect_prefix<InvalidArgument>("cat", [&] { cat(std::vector<Tensor>(9, big), 0); });
}

TEST(ErrorPrefix, DeviceErrorsNameTheOp) {
  const Device webgpu = Device::webgpu(99), cpu1{DeviceType::Cpu, 1};  // never present
  for (const Device dev : {webgpu, cpu1}) {
    SCOPED_TRACE(dev.str());
    expect_prefix<BackendUnavailable>("zeros", [&] { zeros({2}, DType::F32, dev); });
    expect_prefix<BackendUnavailable>("empty", [&] { Tensor::empty({2}, DType::F32, dev); });
    expect_prefix<BackendUnavailable>("to_device",
                                      [&] { Tensor::from_vector<float>({1.f}, {1}).to(dev); });
  }
  if (has_gpu()) GTEST_SKIP() << "a CUDA device is usable here";
  const Device cuda = Device::cuda(0);
  expect_prefix<BackendUnavailable>("zeros", [&] { zeros({2}, DType::F32, cuda); });
  expect_prefix<BackendUnavailable>("ones", [&] { ones({2}, DType::F32, cuda); });
  expect_prefix<BackendUnavailable>("full", [&] { full({2}, 1.0, DType::F32, cuda); });
  expect_prefix<BackendUnavailable>("arange", [&] { arange(0, 4, 1, DType::F32, cuda); });
  expect_prefix<BackendUnavailable>("linspace", [&] { linspace(0, 1, 3, DType::F32, cuda); });
  expect_prefix<BackendUnavailable>("eye", [&] { eye(3, std::nullopt, DType::F32, cuda); });
  Generator gen(1);
  expect_prefix<BackendUnavailable>("rand", [&] { rand({2}, DType::F32, cuda, gen); });
  expect_prefix<BackendUnavailable>("randint", [&] { randint(0, 4, {2}, DType::I64, cuda, gen); });
  expect_prefix<BackendUnavailable>("empty", [&] { Tensor::empty({2}, DType::F32, cuda); });
  expect_prefix<BackendUnavailable>("to_device",
                                    [&] { Tensor::from_vector<float>({1.f}, {1}).to(cuda); });
  // Asked again, the cached reason is given with the new op's name.
  expect_prefix<BackendUnavailable>("zeros", [&] { zeros({2}, DType::F32, cuda); });
}

TEST(ErrorPrefix, UndefinedVarNamesTheOp) {
  const Var u;
  const Var v(Tensor::from_vector<float>({1.f, 2.f}, {1, 2}), true);
  expect_prefix<InvalidArgument>("sum", [&] { sum(u); });
  expect_prefix<InvalidArgument>("mean", [&] { mean(u); });
  expect_prefix<InvalidArgument>("add", [&] { add(v, u); });
  expect_prefix<InvalidArgument>("add", [&] { (void)(u + v); });
  expect_prefix<InvalidArgument>("mul", [&] { (void)(v * u); });
  expect_prefix<InvalidArgument>("relu", [&] { relu(u); });
  expect_prefix<InvalidArgument>("matmul", [&] { matmul(u, v); });
  expect_prefix<InvalidArgument>("matmul", [&] { matmul(v, u); });
  expect_prefix<InvalidArgument>("cat", [&] { cat({v, u}, 0); });
  expect_prefix<InvalidArgument>("reshape", [&] { reshape(u, {2}); });
  expect_prefix<InvalidArgument>("contiguous", [&] { contiguous(u); });
  expect_prefix<InvalidArgument>("eq", [&] { eq(u, v); });
  // Outside any op, the accessor itself is named.
  expect_prefix<InvalidArgument>("Var", [&] { (void)u.tensor(); });
}

TEST(ErrorPrefix, AScopeEndsWithItsOp) {
  // A failed op leaves no name behind: the next error outside any op has its own prefix.
  expect_prefix<OutOfMemory>("zeros", [] { zeros({int64_t(1) << 40, int64_t(1) << 20}); });
  expect_prefix<InvalidArgument>("Var", [] { (void)Var().tensor(); });
  expect_prefix<OutOfMemory>("empty", [] { Tensor::empty({kHuge}, DType::F32); });
  // And an op that succeeds leaves none either.
  (void)zeros({2});
  expect_prefix<InvalidArgument>("Var", [] { (void)Var().tensor(); });
}

}  // namespace
}  // namespace numr
