// DLPack: zero-copy export and import, deleters run exactly once, strides kept, and the
// refusals of dtypes and devices numr cannot hold.
#include <algorithm>
#include <vector>

#include "io_test_util.h"

namespace numr {
namespace {

using namespace io_test;

const char* base_ptr(const Tensor& t) {
  return static_cast<const char*>(t.storage()->handle()) +
         t.offset() * int64_t(dtype_size(t.dtype()));
}

TEST(IoDlpack, ExportDescribesTheTensorWithoutCopying) {
  const struct {
    DType dtype;
    uint8_t code, bits;
  } cases[] = {{DType::F64, kDLFloat, 64},   {DType::F32, kDLFloat, 32}, {DType::F16, kDLFloat, 16},
               {DType::BF16, kDLBfloat, 16}, {DType::I64, kDLInt, 64},   {DType::I32, kDLInt, 32},
               {DType::U8, kDLUInt, 8},      {DType::Bool, kDLBool, 8}};
  for (const auto& c : cases) {
    SCOPED_TRACE(dtype_name(c.dtype));
    const Tensor x = fx_tensor(c.dtype, {2, 3});
    DLManagedTensor* m = to_dlpack(x);
    const DLTensor& d = m->dl_tensor;
    EXPECT_EQ(d.data, base_ptr(x));
    EXPECT_EQ(d.byte_offset, 0u);
    EXPECT_EQ(d.device.device_type, kDLCPU);
    EXPECT_EQ(d.device.device_id, 0);
    EXPECT_EQ(d.ndim, 2);
    EXPECT_EQ(d.dtype.code, c.code);
    EXPECT_EQ(d.dtype.bits, c.bits);
    EXPECT_EQ(d.dtype.lanes, 1);
    EXPECT_EQ(Shape(d.shape, d.shape + 2), (Shape{2, 3}));
    EXPECT_EQ(Strides(d.strides, d.strides + 2), (Strides{3, 1}));
    m->deleter(m);
  }
}

TEST(IoDlpack, ExportKeepsStorageAliveUntilDeleter) {
  DLManagedTensor* m = nullptr;
  std::weak_ptr<Storage> weak;
  {
    const Tensor x = fx_tensor(DType::I32, {6});
    weak = x.storage();
    m = to_dlpack(x);
  }
  EXPECT_FALSE(weak.expired());  // the DLManagedTensor holds it
  EXPECT_EQ(static_cast<int32_t*>(m->dl_tensor.data)[5], fx_i32(5));
  m->deleter(m);
  EXPECT_TRUE(weak.expired());
}

TEST(IoDlpack, RoundTripSharesMemoryAndStrides) {
  const Tensor base = fx_tensor(DType::F32, {4, 6});
  for (const Tensor& v :
       {base, base.transpose(0, 1), base.narrow(1, 2, 3), base.flip({0, 1}),
        base.narrow(0, 1, 2).broadcast_to({3, 2, 6}), full({}, 2.0), zeros({0, 5})}) {
    SCOPED_TRACE(shape_str(v.shape()) + " strides " + shape_str(v.strides()));
    DLManagedTensor* m = to_dlpack(v);
    EXPECT_EQ(Strides(m->dl_tensor.strides, m->dl_tensor.strides + v.dim()), v.strides());
    const Tensor back = from_dlpack(m);
    EXPECT_EQ(back.shape(), v.shape());
    EXPECT_EQ(back.dtype(), v.dtype());
    if (v.numel() > 0) {
      EXPECT_EQ(back.strides(), v.strides());
      EXPECT_EQ(base_ptr(back), base_ptr(v));  // zero-copy
    }
    EXPECT_EQ(bytes_of(back), bytes_of(v));
  }
}

TEST(IoDlpack, WritesAreVisibleBothWays) {
  Tensor x = fx_tensor(DType::F64, {2, 3});
  Tensor y = from_dlpack(to_dlpack(x.transpose(0, 1)));
  y.add_(10.0);
  EXPECT_EQ(x.to_vector<double>()[1], fx_float(1) + 10.0);
  x.zero_();
  EXPECT_EQ(y.sum().item<double>(), 0.0);
}

// A foreign DLManagedTensor over a host buffer, counting its deleter's calls.
struct Foreign {
  std::vector<float> buffer;
  std::vector<int64_t> shape, strides;
  int deleted = 0;
  DLManagedTensor managed{};

  Foreign(std::vector<int64_t> shape_, std::vector<int64_t> strides_, size_t n)
      : buffer(n), shape(std::move(shape_)), strides(std::move(strides_)) {
    for (size_t i = 0; i < n; ++i) buffer[i] = float(i);
    DLTensor& d = managed.dl_tensor;
    d.data = buffer.data();
    d.device = {kDLCPU, 0};
    d.ndim = int32_t(shape.size());
    d.dtype = {kDLFloat, 32, 1};
    d.shape = shape.data();
    d.strides = strides.empty() ? nullptr : strides.data();
    d.byte_offset = 0;
    managed.manager_ctx = this;
    managed.deleter = [](DLManagedTensor* self) {
      ++static_cast<Foreign*>(self->manager_ctx)->deleted;
    };
  }
};

TEST(IoDlpack, ImportCallsTheDeleterOnceWhenTheLastTensorGoes) {
  Foreign f({2, 3}, {}, 6);  // null strides: row-major
  {
    Tensor t = from_dlpack(&f.managed);
    EXPECT_EQ(base_ptr(t), reinterpret_cast<const char*>(f.buffer.data()));
    EXPECT_EQ(t.strides(), (Strides{3, 1}));
    EXPECT_EQ(t.to_vector<float>(), (std::vector<float>{0, 1, 2, 3, 4, 5}));
    Tensor view = t.transpose(0, 1);
    const Tensor copy = t;
    t = Tensor();
    EXPECT_EQ(f.deleted, 0);
    EXPECT_EQ(view.to_vector<float>(), (std::vector<float>{0, 3, 1, 4, 2, 5}));
  }
  EXPECT_EQ(f.deleted, 1);
}

TEST(IoDlpack, ImportNegativeStridesAndByteOffset) {
  // A [3, 2] view starting at element 5 of a 6-element buffer, reading backwards.
  Foreign f({3, 2}, {-2, -1}, 6);
  f.managed.dl_tensor.byte_offset = 5 * sizeof(float);
  {
    const Tensor t = from_dlpack(&f.managed);
    EXPECT_EQ(t.strides(), (Strides{-2, -1}));
    EXPECT_EQ(t.to_vector<float>(), (std::vector<float>{5, 4, 3, 2, 1, 0}));
    EXPECT_EQ(t.storage()->nbytes(), 6 * sizeof(float));
  }
  EXPECT_EQ(f.deleted, 1);
}

TEST(IoDlpack, RefusalsCallTheDeleterOnce) {
  const auto refused = [](auto&& setup, auto expect_type_tag, const std::string& needle) {
    using E = typename decltype(expect_type_tag)::type;
    Foreign f({4}, {}, 4);
    setup(f.managed.dl_tensor);
    expect_error<E>(
        "from_dlpack", [&] { from_dlpack(&f.managed); }, needle);
    EXPECT_EQ(f.deleted, 1) << needle;
  };
  struct Unsupported {
    using type = UnsupportedDType;
  };
  struct Unavailable {
    using type = BackendUnavailable;
  };
  struct Invalid {
    using type = InvalidArgument;
  };
  refused([](DLTensor& d) { d.dtype = {kDLInt, 8, 1}; }, Unsupported{}, "code 0, 8 bits");
  refused([](DLTensor& d) { d.dtype = {kDLUInt, 16, 1}; }, Unsupported{}, "code 1, 16 bits");
  refused([](DLTensor& d) { d.dtype = {kDLComplex, 32, 1}; }, Unsupported{}, "code 5, 32 bits");
  refused([](DLTensor& d) { d.dtype = {kDLFloat, 32, 4}; }, Unsupported{}, "4 lanes");
  refused([](DLTensor& d) { d.dtype = {kDLFloat, 8, 1}; }, Unsupported{}, "8 bits");
  refused([](DLTensor& d) { d.dtype = {kDLBool, 1, 1}; }, Unsupported{}, "1 bits");
  refused([](DLTensor& d) { d.device = {kDLMetal, 0}; }, Unavailable{}, "device type 8");
  refused([](DLTensor& d) { d.device = {kDLROCM, 0}; }, Unavailable{}, "device type 10");
  refused([](DLTensor& d) { d.ndim = -1; }, Invalid{}, "negative ndim");
  refused([](DLTensor& d) { d.shape = nullptr; }, Invalid{}, "null shape");
  refused([](DLTensor& d) { d.shape[0] = -3; }, Invalid{}, "");
  refused([](DLTensor& d) { d.data = nullptr; }, Invalid{}, "null data");
  refused([](DLTensor& d) { d.byte_offset = 2; }, Invalid{}, "aligned");
  if (available_devices().size() == 1)  // no GPU: CUDA memory has no backend here
    refused([](DLTensor& d) { d.device = {kDLCUDA, 0}; }, Unavailable{}, "");
  expect_error<InvalidArgument>(
      "from_dlpack", [] { from_dlpack(nullptr); }, "null");
  expect_error<InvalidArgument>(
      "to_dlpack", [] { to_dlpack(Tensor()); }, "undefined");
}

TEST(IoDlpack, CudaRoundTripWhenAvailable) {
  const std::vector<Device> devs = available_devices();
  if (std::find(devs.begin(), devs.end(), Device::cuda(0)) == devs.end())
    GTEST_SKIP() << "no CUDA device";
  const Tensor x = fx_tensor(DType::BF16, {3, 4}).to(Device::cuda()).transpose(0, 1);
  DLManagedTensor* m = to_dlpack(x);
  EXPECT_EQ(m->dl_tensor.device.device_type, kDLCUDA);
  const Tensor back = from_dlpack(m);
  EXPECT_EQ(back.device(), x.device());
  EXPECT_EQ(base_ptr(back), base_ptr(x));
  EXPECT_EQ(bytes_of(back), bytes_of(x));
}

}  // namespace
}  // namespace numr
