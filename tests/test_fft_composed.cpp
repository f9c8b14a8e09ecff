// The FFT composed from Tensor ops (src/ops/fft_composed.cpp), which backends without FFT
// kernels run: checked on the CPU against numr's engine for every length to 70, primes and
// composites beyond, both precisions, any dim; and through numr::fft on WebGPU.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "numr/numr.h"
#include "ops/fft_compose.h"
#include "support/harness.h"

namespace numr {
namespace {

using fft::detail::composed_c2c;
using fft::detail::composed_c2r;
using fft::detail::composed_r2c;

// max |a - b| / max |b|, in F64 on the host.
double rel_diff(const Tensor& a, const Tensor& b) {
  const auto as_real = [](const Tensor& t) {
    const Tensor h = t.to(Device::cpu());
    return is_complex(h.dtype()) ? view_as_real(h.contiguous()).cast(DType::F64)
                                 : h.cast(DType::F64);
  };
  const Tensor x = as_real(a), y = as_real(b);
  const double scale = std::max(max(abs(y)).item<double>(), 1e-300);
  return max(abs(x - y)).item<double>() / scale;
}

std::vector<int64_t> lengths() {
  std::vector<int64_t> out;
  for (int64_t n = 1; n <= 70; ++n) out.push_back(n);
  for (int64_t n : {97, 128, 143, 243, 251, 256, 289, 1000, 1009, 2048, 4099}) out.push_back(n);
  return out;
}

TEST(FftComposed, MatchesTheEngine) {
  Generator gen(3);
  for (DType part : {DType::F64, DType::F32}) {
    const DType cplx = part == DType::F64 ? DType::Complex128 : DType::Complex64;
    for (int64_t n : lengths()) {
      const double tol = (part == DType::F64 ? 4e-15 : 2e-6) * (std::log2(double(n)) + 1) * 4;
      const std::string what = std::string(dtype_name(part)) + " n " + std::to_string(n);
      const Tensor z =
          complex(randn({3, n}, part, Device::cpu(), gen), randn({3, n}, part, Device::cpu(), gen));
      ASSERT_EQ(z.dtype(), cplx);
      EXPECT_LT(rel_diff(composed_c2c(z, 1, true), fft::fft(z)), tol) << what;
      EXPECT_LT(
          rel_diff(composed_c2c(z, 1, false), fft::ifft(z, std::nullopt, -1, fft::Norm::Forward)),
          tol)
          << what;
      // Along dim 0 of a view.
      const Tensor zt = z.transpose(0, 1);
      EXPECT_LT(rel_diff(composed_c2c(zt, 0, true), fft::fft(zt, std::nullopt, 0)), tol) << what;
      const Tensor x = randn({n, 2}, part, Device::cpu(), gen);
      EXPECT_LT(rel_diff(composed_r2c(x, 0), fft::rfft(x, std::nullopt, 0)), tol) << what;
      // c2r of a spectrum that is not Hermitian at 0 and n/2: their imaginary parts are dropped.
      const Tensor half = complex(randn({2, n / 2 + 1}, part, Device::cpu(), gen),
                                  randn({2, n / 2 + 1}, part, Device::cpu(), gen));
      EXPECT_LT(rel_diff(composed_c2r(half, 1, n), fft::irfft(half, n, -1, fft::Norm::Forward)),
                tol)
          << what;
    }
  }
}

TEST(FftComposed, EmptyInputs) {
  const Tensor z = zeros({0, 8}, DType::Complex64);
  EXPECT_EQ(composed_c2c(z, 1, true).shape(), (Shape{0, 8}));
  EXPECT_EQ(composed_r2c(zeros({0, 8}), 1).shape(), (Shape{0, 5}));
  EXPECT_EQ(composed_c2r(zeros({2, 0}, DType::Complex64), 1, 0).shape(), (Shape{2, 0}));
}

// numr::fft on each test device without FFT kernels (WebGPU) equals the CPU's.
TEST(FftComposed, OnDevicesWithoutFftKernels) {
  bool ran = false;
  std::string why = "no test device without FFT kernels";
  for (const test::TestDevice& td : test::test_devices()) {
    if (td.device.type != DeviceType::WebGpu) continue;
    if (!td.available) {
      why = td.reason;
      continue;
    }
    ran = true;
    Generator gen(9);
    for (int64_t n : {1, 5, 16, 60, 97, 256, 1000}) {
      const double tol = 2e-6 * (std::log2(double(n)) + 1) * 4;
      const std::string what = "n " + std::to_string(n);
      const Tensor re = randn({4, n}, DType::F32, Device::cpu(), gen);
      const Tensor im = randn({4, n}, DType::F32, Device::cpu(), gen);
      const Tensor z = complex(re, im);
      const Tensor zd = z.to(td.device), rd = re.to(td.device);
      const Tensor f = fft::fft(zd);
      EXPECT_EQ(f.device(), td.device);
      EXPECT_LT(rel_diff(f, fft::fft(z)), tol) << what;
      EXPECT_LT(rel_diff(fft::ifft(zd, std::nullopt, 0, fft::Norm::Ortho),
                         fft::ifft(z, std::nullopt, 0, fft::Norm::Ortho)),
                tol)
          << what;
      EXPECT_LT(rel_diff(fft::rfft(rd), fft::rfft(re)), tol) << what;
      EXPECT_LT(rel_diff(fft::irfft(fft::rfft(rd), n), re), tol) << what;
    }
    const Tensor img = randn({2, 12, 20}, DType::F32, Device::cpu(), gen);
    EXPECT_LT(rel_diff(fft::rfft2(img.to(td.device)), fft::rfft2(img)), 1e-5);
  }
  if (!ran) GTEST_SKIP() << why;
}

}  // namespace
}  // namespace numr
