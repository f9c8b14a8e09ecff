// numr::fft on tensors: against a direct DFT in double, round trips, the n-dimensional
// forms against the 1-D ones, NumPy where CI has it, and gradient checks.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <filesystem>
#include <numbers>
#include <random>

#include "io_test_util.h"
#include "numr/numr.h"
#include "support/gradcheck.h"
#include "support/harness.h"

namespace numr {
namespace {

using C = std::complex<double>;

std::vector<C> cvalues(const Tensor& z) { return z.cast(DType::Complex128).to_vector<C>(); }

Tensor random_complex(const Shape& shape, uint64_t seed, DType t = DType::Complex128) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<C> v(size_t(shape_numel(shape)));
  for (C& c : v) c = C(u(rng), u(rng));
  return Tensor::from_vector(v, shape).cast(t);
}

Tensor random_real(const Shape& shape, uint64_t seed, DType t = DType::F64) {
  return real(random_complex(shape, seed)).contiguous().cast(t);
}

// The DFT of each row of [rows, n] values, with the sign and scale given.
std::vector<C> dft_rows(const std::vector<C>& x, int64_t rows, int64_t n, double sign, double scale) {
  std::vector<C> out(x.size());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t k = 0; k < n; ++k) {
      C s = 0;
      for (int64_t j = 0; j < n; ++j)
        s += x[size_t(r * n + j)] *
             std::polar(1.0, sign * 2 * std::numbers::pi * double((j * k) % n) / double(n));
      out[size_t(r * n + k)] = s * scale;
    }
  return out;
}

double max_err(const std::vector<C>& a, const std::vector<C>& b) {
  EXPECT_EQ(a.size(), b.size());
  double e = 0;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) e = std::max(e, std::abs(a[i] - b[i]));
  return e;
}

TEST(Fft, MatchesADirectDft) {
  for (int64_t n : {1, 2, 5, 12, 16, 97, 210}) {
    const Tensor x = random_complex({3, n}, uint64_t(n));
    const std::vector<C> xv = cvalues(x);
    EXPECT_LT(max_err(cvalues(fft::fft(x)), dft_rows(xv, 3, n, -1, 1)), 1e-12 * double(n)) << n;
    EXPECT_LT(max_err(cvalues(fft::ifft(x)), dft_rows(xv, 3, n, 1, 1.0 / double(n))), 1e-13) << n;
    EXPECT_LT(max_err(cvalues(fft::fft(x, std::nullopt, -1, fft::Norm::Ortho)),
                      dft_rows(xv, 3, n, -1, 1 / std::sqrt(double(n)))),
              1e-12)
        << n;
    EXPECT_LT(max_err(cvalues(fft::ifft(x, std::nullopt, -1, fft::Norm::Forward)),
                      dft_rows(xv, 3, n, 1, 1)),
              1e-12 * double(n))
        << n;
    // Complex64: the same within float rounding.
    EXPECT_LT(max_err(cvalues(fft::fft(x.cast(DType::Complex64))), dft_rows(xv, 3, n, -1, 1)),
              2e-6 * double(n))
        << n;
  }
}

TEST(Fft, AlongAnyDimOfAView) {
  // Transforming dim 0 of a transposed view equals transforming rows of the copy.
  const Tensor x = random_complex({6, 10}, 7);
  const Tensor along0 = fft::fft(x.transpose(0, 1), std::nullopt, 0);  // [6, 10] over dim 0 of [10, 6]
  const Tensor rows = fft::fft(x.contiguous(), std::nullopt, 1).transpose(0, 1);
  EXPECT_LT(max_err(cvalues(along0), cvalues(rows)), 1e-13);
  // n pads with zeros or cuts.
  const Tensor padded = fft::fft(x, 16);
  const Tensor manual = fft::fft(cat({x, zeros({6, 6}, DType::Complex128)}, 1));
  EXPECT_EQ(padded.shape(), (Shape{6, 16}));
  EXPECT_LT(max_err(cvalues(padded), cvalues(manual)), 1e-13);
  EXPECT_LT(max_err(cvalues(fft::fft(x, 4)), cvalues(fft::fft(x.narrow(1, 0, 4)))), 1e-14);
  // Real input is taken as complex: F32 gives Complex64, F64 Complex128.
  EXPECT_EQ(fft::fft(random_real({5}, 1, DType::F32)).dtype(), DType::Complex64);
  EXPECT_EQ(fft::fft(random_real({5}, 1, DType::F16)).dtype(), DType::Complex64);
  EXPECT_EQ(fft::fft(random_real({5}, 1)).dtype(), DType::Complex128);
}

TEST(Fft, RealTransformsAndRoundTrips) {
  for (int64_t n : {1, 2, 7, 8, 97, 100}) {
    const Tensor x = random_real({4, n}, uint64_t(n) + 100);
    const Tensor r = fft::rfft(x);
    EXPECT_EQ(r.shape(), (Shape{4, n / 2 + 1})) << n;
    EXPECT_LT(max_err(cvalues(r), cvalues(fft::fft(x).narrow(1, 0, n / 2 + 1))), 1e-12 * double(n)) << n;
    const Tensor back = fft::irfft(r, n);
    EXPECT_LT(max_err(cvalues(back.cast(DType::Complex128)), cvalues(x.cast(DType::Complex128))), 1e-14 * double(n + 8)) << n;
    const Tensor z = random_complex({2, n}, uint64_t(n) + 200);
    EXPECT_LT(max_err(cvalues(fft::ifft(fft::fft(z))), cvalues(z)), 1e-14 * double(n + 8)) << n;
  }
  // irfft's default length is 2 (m - 1), and the imaginary parts at 0 and n/2 are ignored.
  const Tensor spec = random_complex({5}, 3);
  EXPECT_EQ(fft::irfft(spec).shape(), (Shape{8}));
  const Tensor cleaned = complex(real(spec), imag(spec) * Tensor::from_vector(std::vector<double>{0, 1, 1, 1, 0}, {5}));
  EXPECT_LT(max_err(cvalues(fft::irfft(spec).cast(DType::Complex128)),
                    cvalues(fft::irfft(cleaned).cast(DType::Complex128))),
            1e-15);
}

TEST(Fft, NDimensionalFormsAreOneDimTransformsInTurn) {
  const Tensor x = random_complex({3, 5, 6}, 11);
  const Tensor step = fft::fft(fft::fft(fft::fft(x, std::nullopt, 0), std::nullopt, 1), std::nullopt, 2);
  EXPECT_LT(max_err(cvalues(fft::fftn(x)), cvalues(step)), 1e-12);
  const Tensor two = fft::fft(fft::fft(x, std::nullopt, 1), std::nullopt, 2);
  EXPECT_LT(max_err(cvalues(fft::fft2(x)), cvalues(two)), 1e-12);
  EXPECT_LT(max_err(cvalues(fft::ifftn(fft::fftn(x, {}, {}, fft::Norm::Ortho), {}, {}, fft::Norm::Ortho)),
                    cvalues(x)),
            1e-13);
  // s pads or cuts each dim; dims may be given in any order.
  const Tensor s = fft::fftn(x, {4, 8}, {2, 0});
  EXPECT_EQ(s.shape(), (Shape{8, 5, 4}));
  const Tensor xr = random_real({4, 6, 10}, 12);
  const Tensor r2 = fft::rfft2(xr);
  EXPECT_EQ(r2.shape(), (Shape{4, 6, 6}));
  EXPECT_LT(max_err(cvalues(r2), cvalues(fft::fft2(xr).narrow(2, 0, 6))), 1e-12);
  EXPECT_LT(max_err(cvalues(fft::irfft2(r2, {6, 10}).cast(DType::Complex128)),
                    cvalues(xr.cast(DType::Complex128))),
            1e-13);
  const Tensor rn = fft::rfftn(xr, {5, 9});
  EXPECT_EQ(rn.shape(), (Shape{4, 5, 5}));
  EXPECT_EQ(fft::irfftn(rn, {5, 9}).shape(), (Shape{4, 5, 9}));
}

TEST(Fft, Errors) {
  auto throws = [](auto f, const char* prefix) {
    try {
      f();
      ADD_FAILURE() << prefix << ": no exception";
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()).rfind(prefix, 0), 0u) << e.what();
    }
  };
  throws([] { fft::fft(zeros({4}, DType::I32)); }, "[fft]");
  throws([] { fft::rfft(zeros({4}, DType::Complex64)); }, "[rfft]");
  throws([] { fft::fft(zeros({}, DType::F32)); }, "[fft]");
  throws([] { fft::fft(zeros({4}), 0); }, "[fft]");
  throws([] { fft::fft(zeros({4}), std::nullopt, 1); }, "[fft]");
  throws([] { fft::irfft(zeros({1}, DType::Complex64)); }, "[irfft]");
  throws([] { fft::fftn(zeros({2, 2}), {2, 2, 2}); }, "[fftn]");
  throws([] { fft::fftn(zeros({2, 2}), {}, {0, 0}); }, "[fftn]");
  throws([] { fft::fft2(zeros({2})); }, "[fft2]");
}

TEST(Fft, NumpyOracle) {
  const auto python = io_test::python_with_numpy();
  if (!python) GTEST_SKIP() << "no python3 with numpy (Debian: python3-numpy)";
  const std::string dir = ::testing::TempDir() + "/numr_fft_np";
  std::filesystem::create_directories(dir);
  const Tensor z = random_complex({3, 7, 10}, 21), x = random_real({5, 12}, 22);
  save_npy(dir + "/z.npy", z);
  save_npy(dir + "/x.npy", x);
  const std::string script = R"(
import sys
import numpy as np
d = sys.argv[1]
z = np.load(d + "/z.npy"); x = np.load(d + "/x.npy")
np.save(d + "/fftn.npy", np.fft.fftn(z, s=(6, 11), axes=(0, 2), norm="ortho"))
np.save(d + "/ifft.npy", np.fft.ifft(z, n=9, axis=1))
np.save(d + "/rfft.npy", np.fft.rfft(x, n=15, norm="forward"))
np.save(d + "/irfft.npy", np.fft.irfft(z, n=13, axis=-1))
np.save(d + "/rfft2.npy", np.fft.rfft2(x))
print("ok")
)";
  ASSERT_EQ(io_test::run_python(*python, script, dir), "ok\n");
  auto near = [&](const Tensor& got, const std::string& name) {
    const Tensor want = load_npy(dir + "/" + name + ".npy");
    ASSERT_EQ(got.shape(), want.shape()) << name;
    EXPECT_LT(max_err(cvalues(got.cast(is_complex(got.dtype()) ? got.dtype() : DType::Complex128)),
                      cvalues(want.cast(is_complex(want.dtype()) ? want.dtype() : DType::Complex128))),
              1e-12)
        << name;
  };
  near(fft::fftn(z, {6, 11}, {0, 2}, fft::Norm::Ortho), "fftn");
  near(fft::ifft(z, 9, 1), "ifft");
  near(fft::rfft(x, 15, -1, fft::Norm::Forward), "rfft");
  near(fft::irfft(z, 13), "irfft");
  near(fft::rfft2(x), "rfft2");
}

// First and second order against central differences; complex inputs are view_as_complex
// of F64 pairs and complex outputs are compared through view_as_real.
TEST(FftGrad, Checks) {
  auto check = [](const char* what, const test::VarFn& f, const std::vector<Tensor>& in) {
    EXPECT_EQ(test::gradcheck(f, in), "") << what;
    EXPECT_EQ(test::gradgradcheck(f, in), "") << what;
  };
  const Tensor pairs = test::grad_input({3, 6, 2}, 61), real_in = test::grad_input({3, 7}, 62);
  check("fft of complex, padded",
        [](const std::vector<Var>& v) { return view_as_real(fft::fft(view_as_complex(v[0]), 8)); },
        {pairs});
  check("ifft ortho along dim 0",
        [](const std::vector<Var>& v) {
          return view_as_real(fft::ifft(view_as_complex(v[0]), std::nullopt, 0, fft::Norm::Ortho));
        },
        {pairs});
  check("fft of real", [](const std::vector<Var>& v) { return view_as_real(fft::fft(v[0])); },
        {real_in});
  check("rfft, cut", [](const std::vector<Var>& v) { return view_as_real(fft::rfft(v[0], 5)); },
        {real_in});
  check("irfft even", [](const std::vector<Var>& v) { return fft::irfft(view_as_complex(v[0]), 10); },
        {pairs});
  check("irfft odd", [](const std::vector<Var>& v) { return fft::irfft(view_as_complex(v[0]), 11); },
        {pairs});
  check("irfft of a cut spectrum",
        [](const std::vector<Var>& v) { return fft::irfft(view_as_complex(v[0]), 4); }, {pairs});
  check("rfftn then irfftn",
        [](const std::vector<Var>& v) { return fft::irfftn(fft::rfftn(v[0]) * 1.5, {3, 7}); },
        {real_in});
  check("fftn forward norm",
        [](const std::vector<Var>& v) {
          return view_as_real(fft::fftn(view_as_complex(v[0]), {}, {}, fft::Norm::Forward));
        },
        {pairs});
}

}  // namespace
}  // namespace numr
