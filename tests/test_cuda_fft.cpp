// numr::fft on CUDA (cuFFT) against the CPU engine: every transform kind, both precisions,
// lengths with large prime factors, any dim of a view, and gradients.
#include <gtest/gtest.h>

#include <complex>

#include "numr/numr.h"
#include "support/harness.h"

namespace numr {
namespace {

double max_diff(const Tensor& a, const Tensor& b) {
  const Tensor d = a.to(Device::cpu()) - b.to(Device::cpu());
  return max(abs(d).cast(DType::F64)).item<double>();
}

TEST(CudaFft, MatchesTheCpu) {
  bool ran = false;
  for (const test::TestDevice& td : test::test_devices()) {
    if (td.device.type != DeviceType::Cuda) continue;
    if (!td.available) GTEST_SKIP() << td.reason;
    ran = true;
    Generator gen(5);
    for (DType part : {DType::F32, DType::F64}) {
      const double tol = part == DType::F64 ? 1e-11 : 5e-4;
      for (int64_t n : {1, 8, 97, 1000, 1009, 4096}) {
        const Tensor re = randn({3, n, 4}, part, Device::cpu(), gen);
        const Tensor im = randn({3, n, 4}, part, Device::cpu(), gen);
        const Tensor z = complex(re, im);
        const Tensor zg = z.to(td.device), rg = re.to(td.device);
        EXPECT_LT(max_diff(fft::fft(zg, std::nullopt, 1), fft::fft(z, std::nullopt, 1)), tol * double(n))
            << part << " n " << n;
        EXPECT_LT(max_diff(fft::ifft(zg.transpose(0, 2), std::nullopt, 1, fft::Norm::Ortho),
                           fft::ifft(z.transpose(0, 2), std::nullopt, 1, fft::Norm::Ortho)),
                  tol)
            << part << " n " << n;
        EXPECT_LT(max_diff(fft::rfft(rg, std::nullopt, 1), fft::rfft(re, std::nullopt, 1)), tol * double(n))
            << part << " n " << n;
        const Tensor spec = fft::rfft(re, std::nullopt, 1);
        const Tensor spec_g = spec.to(td.device);
        EXPECT_LT(max_diff(fft::irfft(spec_g, n, 1), fft::irfft(spec, n, 1)), tol) << part << " n " << n;
        // C2R must leave its input as it was.
        EXPECT_EQ(max_diff(spec_g, spec), 0.0) << part << " n " << n;
      }
      const Tensor img = randn({2, 30, 40}, part, Device::cpu(), gen);
      EXPECT_LT(max_diff(fft::irfft2(fft::rfft2(img.to(td.device)), {30, 40}), img), tol * 10) << part;
    }
    // Gradients on the device equal the CPU's.
    const Tensor x = randn({4, 12}, DType::F64, Device::cpu(), gen);
    auto grad_of = [](const Tensor& t) {
      const Var v(t, true);
      const Var y = fft::irfft(fft::fft(v) * 0.5, 12) + abs(fft::rfft(v, 16, -1, fft::Norm::Ortho)).sum();
      return backward(sum(y * y))[v];
    };
    EXPECT_LT(max_diff(grad_of(x.to(td.device)), grad_of(x)), 1e-10);
  }
  if (!ran) GTEST_SKIP() << "no CUDA device in the test devices";
}

}  // namespace
}  // namespace numr
