// numr::fft's real-valued helpers (fftfreq, rfftfreq, fftshift, ifftshift) on every backend
// of the machine, against their definitions in torch.fft computed here in double.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <vector>

#include "core/backend.h"
#include "numr/numr.h"
#include "support/harness.h"

namespace numr {
namespace {

std::vector<Device> devices_for(DType t) {
  std::vector<Device> out;
  for (const test::TestDevice& d : test::test_devices()) {
    if (!d.available) continue;
    if (backend_for(d.device).supports_dtype(t))
      out.push_back(d.device);
    else
      std::printf("fft helpers: %s skipped on %s\n", dtype_name(t).data(), d.device.str().c_str());
  }
  return out;
}

double eps_of(DType t) {
  return t == DType::F64 ? std::numeric_limits<double>::epsilon()
                         : std::numeric_limits<float>::epsilon();
}

// Each value within 2 ulps of k / (d n): the scale and the product are rounded once each.
void expect_freqs(const Tensor& got, const std::vector<int64_t>& k, int64_t n, double d, DType t) {
  ASSERT_EQ(got.dtype(), t);
  ASSERT_EQ(got.shape(), Shape{int64_t(k.size())});
  const std::vector<double> v = got.to(Device::cpu()).cast(DType::F64).to_vector<double>();
  for (size_t i = 0; i < k.size(); ++i) {
    const double want = double(k[i]) / (double(n) * d);
    EXPECT_NEAR(v[i], want, 2 * eps_of(t) * std::abs(want)) << "n=" << n << " i=" << i;
  }
}

TEST(FftHelpers, Fftfreq) {
  for (DType t : {DType::F32, DType::F64})
    for (Device dev : devices_for(t))
      for (int64_t n : {0, 1, 2, 3, 4, 5, 8, 17, 100})
        for (double d : {1.0, 0.1, 2.5}) {
          std::vector<int64_t> k;  // torch: [0, .., (n - 1) / 2, -(n / 2), .., -1]
          for (int64_t i = 0; i < n; ++i) k.push_back(i < (n + 1) / 2 ? i : i - n);
          expect_freqs(fft::fftfreq(n, d, t, dev), k, n, d, t);
          std::vector<int64_t> kr;
          for (int64_t i = 0; i <= n / 2; ++i) kr.push_back(i);
          if (n > 0) expect_freqs(fft::rfftfreq(n, d, t, dev), kr, n, d, t);
        }
}

// out[i] = x[(i - s) mod n] along each rolled dim.
std::vector<double> rolled(const std::vector<double>& x, int64_t n0, int64_t n1, int64_t s0,
                           int64_t s1) {
  std::vector<double> out(x.size());
  for (int64_t i = 0; i < n0; ++i)
    for (int64_t j = 0; j < n1; ++j)
      out[i * n1 + j] = x[((i - s0) % n0 + n0) % n0 * n1 + ((j - s1) % n1 + n1) % n1];
  return out;
}

TEST(FftHelpers, ShiftsRollByHalf) {
  for (Device dev : devices_for(DType::F32))
    for (auto [n0, n1] : {std::pair<int64_t, int64_t>{4, 6}, {5, 7}, {1, 3}, {6, 1}}) {
      std::vector<double> xv(n0 * n1);
      for (size_t i = 0; i < xv.size(); ++i) xv[i] = double(i);
      const Tensor x = Tensor::from_vector<double>(xv, Shape{n0, n1}).cast(DType::F32).to(dev);
      const auto values = [](const Tensor& y) {
        return y.to(Device::cpu()).cast(DType::F64).to_vector<double>();
      };
      const int64_t h0 = n0 / 2, h1 = n1 / 2;
      EXPECT_EQ(values(fft::fftshift(x)), rolled(xv, n0, n1, h0, h1));
      EXPECT_EQ(values(fft::fftshift(x, {0})), rolled(xv, n0, n1, h0, 0));
      EXPECT_EQ(values(fft::fftshift(x, {-1})), rolled(xv, n0, n1, 0, h1));
      EXPECT_EQ(values(fft::ifftshift(x)), rolled(xv, n0, n1, -h0, -h1));
      EXPECT_EQ(values(fft::ifftshift(x, {1})), rolled(xv, n0, n1, 0, -h1));
      EXPECT_EQ(values(fft::ifftshift(fft::fftshift(x))), xv);
      // A view: x transposed.
      const Tensor xt = x.transpose(0, 1);
      std::vector<double> xtv(n0 * n1);
      for (int64_t i = 0; i < n1; ++i)
        for (int64_t j = 0; j < n0; ++j) xtv[i * n0 + j] = xv[j * n1 + i];
      EXPECT_EQ(values(fft::fftshift(xt)), rolled(xtv, n1, n0, h1, h0));
    }
}

TEST(FftHelpers, ShiftOfFreqsIsAscending) {
  // fftshift(fftfreq(n)) runs from -(n / 2) / n upwards in steps of 1 / n.
  for (int64_t n : {1, 6, 9}) {
    const std::vector<double> v =
        fft::fftshift(fft::fftfreq(n, 1.0, DType::F64)).to_vector<double>();
    for (int64_t i = 0; i < n; ++i)
      EXPECT_NEAR(v[i], double(i - n / 2) / double(n), 2 * eps_of(DType::F64)) << n;
  }
}

TEST(FftHelpers, ScalarAndErrors) {
  const Tensor s = full(Shape{}, 3.0, DType::F32);
  EXPECT_EQ(fft::fftshift(s).item<float>(), 3.0f);
  EXPECT_THROW(fft::fftfreq(-1), InvalidArgument);
  EXPECT_THROW(fft::rfftfreq(4, 1.0, DType::I32), UnsupportedDType);
  try {
    fft::fftshift(zeros(Shape{2, 3}), {2});
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("[fftshift]", 0), 0u) << e.what();
  }
}

}  // namespace
}  // namespace numr
