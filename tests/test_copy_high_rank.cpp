// Copies of views with more unmergeable dims than the backends' kernels walk (16): the
// front end splits them, so contiguous, clone, cast and the shape ops work at any rank.
#include <gtest/gtest.h>

#include <cstdio>
#include <numeric>
#include <vector>

#include "core/backend.h"
#include "numr/numr.h"

namespace numr {
namespace {

// Row-major strides of `shape`, in elements.
std::vector<int64_t> row_major(const Shape& shape) {
  std::vector<int64_t> st(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;) st[d - 1] = st[d] * shape[d];
  return st;
}

// The values of permute(base, perm), computed on the host from base's row-major values.
std::vector<double> permuted_on_host(const std::vector<double>& base, const Shape& base_shape,
                                     const std::vector<int64_t>& perm) {
  const std::vector<int64_t> bst = row_major(base_shape);
  Shape out_shape;
  for (int64_t p : perm) out_shape.push_back(base_shape[size_t(p)]);
  const size_t n = base.size(), r = out_shape.size();
  std::vector<double> out(n);
  std::vector<int64_t> idx(r, 0);
  for (size_t i = 0; i < n; ++i) {
    int64_t src = 0;
    for (size_t d = 0; d < r; ++d) src += idx[d] * bst[size_t(perm[d])];
    out[i] = base[size_t(src)];
    for (size_t d = r; d-- > 0;) {  // next index, last dim fastest
      if (++idx[d] < out_shape[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}

// A 20-dim view whose dims cannot merge: the base's dims in reverse order.
struct HighRankView {
  Shape base_shape;
  std::vector<double> base_values;
  std::vector<int64_t> perm;
  Tensor view;
};

HighRankView reversed_view(const Shape& base_shape) {
  HighRankView v;
  v.base_shape = base_shape;
  int64_t n = 1;
  for (int64_t e : base_shape) n *= e;
  v.base_values.resize(size_t(n));
  std::iota(v.base_values.begin(), v.base_values.end(), 0.0);
  v.perm.resize(base_shape.size());
  for (size_t d = 0; d < base_shape.size(); ++d) v.perm[d] = int64_t(base_shape.size() - 1 - d);
  v.view = permute(Tensor::from_vector<double>(v.base_values, base_shape), v.perm);
  return v;
}

TEST(CopyHighRank, ContiguousOfATwentyDimView) {
  Shape shape(20, 2);
  shape[3] = 3;   // not all extents equal
  shape[17] = 1;  // a unit dim among them
  const HighRankView v = reversed_view(shape);
  ASSERT_FALSE(v.view.is_contiguous());
  const std::vector<double> want = permuted_on_host(v.base_values, v.base_shape, v.perm);

  const Tensor c = contiguous(v.view);
  EXPECT_TRUE(c.is_contiguous());
  EXPECT_EQ(c.shape(), v.view.shape());
  EXPECT_EQ(c.to_vector<double>(), want);

  EXPECT_EQ(clone(v.view).to_vector<double>(), want);
  const std::vector<float> as_f32 = v.view.cast(DType::F32).to_vector<float>();
  ASSERT_EQ(as_f32.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) ASSERT_EQ(double(as_f32[i]), want[i]) << i;
  // to_vector goes through contiguous as well.
  EXPECT_EQ(v.view.to_vector<double>(), want);
}

TEST(CopyHighRank, OffsetViewAndShapeOps) {
  // A narrowed (offset) view of 18 unmergeable dims, then cat and repeat of it.
  const HighRankView v = reversed_view(Shape(18, 2));
  const Tensor part = narrow(v.view, 0, 1, 1);
  std::vector<double> want = permuted_on_host(v.base_values, v.base_shape, v.perm);
  want.erase(want.begin(), want.begin() + ptrdiff_t(want.size() / 2));  // index 1 of dim 0
  EXPECT_EQ(contiguous(part).to_vector<double>(), want);

  std::vector<double> twice = want;
  twice.insert(twice.end(), want.begin(), want.end());
  EXPECT_EQ(cat({part, part}, 0).to_vector<double>(), twice);
  std::vector<int64_t> reps(18, 1);
  reps[0] = 2;
  EXPECT_EQ(repeat(part, reps).to_vector<double>(), twice);
}

TEST(CopyHighRank, EveryDevice) {
  const std::vector<Device> devices = available_devices();
  if (devices.size() == 1) GTEST_SKIP() << "no device besides the CPU";
  const HighRankView v = reversed_view(Shape(19, 2));
  const std::vector<double> want = permuted_on_host(v.base_values, v.base_shape, v.perm);
  for (const Device dev : devices) {
    if (!backend_for(dev).supports_dtype(DType::F64)) {
      std::printf("skipped %s: its backend has no F64\n", dev.str().c_str());
      continue;
    }
    const Tensor on_dev = v.view.contiguous().to(dev);
    // The same 19-dim view of the data on dev.
    const Tensor base = permute(on_dev, v.perm);  // reversing twice gives the base's layout
    const Tensor view = permute(contiguous(base), v.perm);
    ASSERT_FALSE(view.is_contiguous());
    EXPECT_EQ(contiguous(view).to(Device::cpu()).to_vector<double>(), want) << dev.str();
    EXPECT_EQ(view.cast(DType::F32).to(Device::cpu()).cast(DType::F64).to_vector<double>(), want)
        << dev.str();
  }
}

}  // namespace
}  // namespace numr
