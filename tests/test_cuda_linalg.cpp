// numr::linalg on CUDA (cuSOLVER and cuBLAS) against the CPU's LAPACK results, which the
// NumPy/SciPy fixture checks: both precisions, single matrices and batches (the batched
// routines for small matrices, the per-matrix ones above their limits), square and
// rectangular shapes, reconstructions, the singular and non-positive-definite errors and
// gradients.
#include <gtest/gtest.h>

#include <complex>
#include <string>

#include "numr/linalg.h"
#include "numr/numr.h"
#include "support/harness.h"

namespace numr {
namespace {

Tensor host(const Tensor& t) { return t.to(Device::cpu()).cast(DType::F64); }

double max_diff(const Tensor& a, const Tensor& b) {
  return max(abs(host(a) - host(b))).item<double>();
}

double max_abs(const Tensor& a) { return max(abs(host(a))).item<double>(); }

Tensor mT(const Tensor& a) { return a.transpose(-2, -1); }

Tensor random_matrix(const Shape& shape, DType t, uint64_t seed) {
  Generator g(seed);
  return randn(shape, DType::F64, Device::cpu(), g).cast(t);
}

// A symmetric positive-definite batch: x x^T + n I.
Tensor spd(const Shape& lead, int64_t n, DType t, uint64_t seed) {
  Shape s = lead;
  s.push_back(n);
  s.push_back(n);
  const Tensor x = random_matrix(s, DType::F64, seed);
  return (matmul(x, mT(x)) + eye(n, n, DType::F64) * double(n)).cast(t);
}

std::string label(const Shape& s, DType t) {
  return shape_str(s) + " " + std::string(dtype_name(t));
}

// Relative tolerance per unit of matrix size: cuSOLVER's blocked and Jacobi routines round
// differently from LAPACK's, by a few ulps times the size.
double eps(DType t) { return t == DType::F64 ? 1e-13 : 2e-5; }

// The CUDA test device, or nullopt (after recording why) when there is none.
std::optional<Device> cuda_or_skip(std::string* why) {
  for (const test::TestDevice& td : test::test_devices()) {
    if (td.device.type != DeviceType::Cuda) continue;
    if (!td.available) {
      *why = td.reason;
      return std::nullopt;
    }
    return td.device;
  }
  *why = "no CUDA device in the test devices";
  return std::nullopt;
}

#define NUMR_CUDA_OR_SKIP(dev)                                 \
  std::string why_;                                            \
  const std::optional<Device> dev##_opt = cuda_or_skip(&why_); \
  if (!dev##_opt) GTEST_SKIP() << why_;                        \
  const Device dev = *dev##_opt

struct Sq {
  Shape lead;
  int64_t n;
};
// Single matrices and batches on both sides of the batched paths' limits (32 and 64).
const std::vector<Sq> kSquare = {{{}, 1},      {{}, 7},   {{}, 65},  {{}, 150}, {{6}, 1},  {{6}, 5},
                                 {{2, 3}, 17}, {{4}, 32}, {{3}, 33}, {{3}, 64}, {{2}, 100}};

TEST(CudaLinalg, FactorizationsMatchTheCpu) {
  NUMR_CUDA_OR_SKIP(dev);
  for (DType t : {DType::F32, DType::F64}) {
    for (const Sq& c : kSquare) {
      Shape s = c.lead;
      s.push_back(c.n);
      s.push_back(c.n);
      const std::string what = label(s, t);
      const double tol = eps(t) * double(c.n + 1) * 10;
      const Tensor a = spd(c.lead, c.n, t, 7 + uint64_t(c.n));
      const Tensor ag = a.to(dev);
      // Cholesky: the factor is unique.
      for (bool upper : {false, true}) {
        const Tensor l = linalg::cholesky(ag, upper);
        EXPECT_EQ(l.device(), dev);
        EXPECT_LT(max_diff(l, linalg::cholesky(a, upper)), tol * max_abs(a)) << what << upper;
      }
      // LU with partial pivoting: P L U == A, and the solves equal the CPU's.
      const Tensor g = random_matrix(s, t, 11 + uint64_t(c.n));
      const Tensor gg = g.to(dev);
      const linalg::Lu lu = linalg::lu(gg);
      EXPECT_LT(max_diff(matmul(lu.P, matmul(lu.L, lu.U)), g), tol * max_abs(g) * 10) << what;
      Shape bs = c.lead;
      bs.push_back(c.n);
      bs.push_back(3);
      const Tensor b = random_matrix(bs, t, 13);
      const Tensor x = linalg::solve(gg, b.to(dev));
      const double scale = max_abs(linalg::solve(g, b));
      EXPECT_LT(max_diff(x, linalg::solve(g, b)), tol * scale * 100) << what;
      EXPECT_LT(max_diff(linalg::inv(gg), linalg::inv(g)), tol * max_abs(linalg::inv(g)) * 100)
          << what;
      const linalg::Slogdet sd = linalg::slogdet(gg), sc = linalg::slogdet(g);
      EXPECT_EQ(max_diff(sd.sign, sc.sign), 0.0) << what;
      EXPECT_LT(max_diff(sd.logabsdet, sc.logabsdet), tol * double(c.n) + 1e-12) << what;
      // Triangular solves, every side and triangle.
      for (bool upper : {false, true})
        for (bool left : {false, true})
          for (bool unit : {false, true}) {
            // With a unit diagonal, off-diagonals shrunk to keep the system well conditioned.
            const Tensor part = upper ? triu(a) : tril(a);
            const Tensor tri = unit ? part / double(c.n * c.n) : part;
            const Tensor rhs = left ? b : mT(b);
            const Tensor want = linalg::solve_triangular(tri, rhs, upper, left, unit);
            const Tensor got =
                linalg::solve_triangular(tri.to(dev), rhs.to(dev), upper, left, unit);
            EXPECT_LT(max_diff(got, want), tol * max_abs(want) * 10)
                << what << " upper " << upper << " left " << left << " unit " << unit;
          }
      // eigh: eigenvalues equal the CPU's; V diag(w) V^T == A with V orthonormal.
      const linalg::Eigh e = linalg::eigh(ag);
      EXPECT_LT(max_diff(e.eigenvalues, linalg::eigvalsh(a)), tol * max_abs(a) * 10) << what;
      const Tensor v = e.eigenvectors;
      EXPECT_LT(max_diff(matmul(v * e.eigenvalues.unsqueeze(-2), mT(v)), a), tol * max_abs(a) * 10)
          << what;
      EXPECT_LT(max_diff(matmul(mT(v), v), eye(c.n, c.n, t)), tol * 10) << what;
    }
  }
}

struct Rect {
  Shape lead;
  int64_t m, n;
};
const std::vector<Rect> kRect = {{{}, 5, 3},    {{}, 3, 5},  {{}, 200, 120}, {{}, 97, 131},
                                 {{4}, 8, 5},   {{4}, 5, 8}, {{3}, 32, 32},  {{3}, 40, 17},
                                 {{2}, 17, 40}, {{5}, 1, 6}};

TEST(CudaLinalg, QrAndSvdReconstruct) {
  NUMR_CUDA_OR_SKIP(dev);
  for (DType t : {DType::F32, DType::F64}) {
    for (const Rect& c : kRect) {
      Shape s = c.lead;
      s.push_back(c.m);
      s.push_back(c.n);
      const std::string what = label(s, t);
      const int64_t k = std::min(c.m, c.n);
      const double tol = eps(t) * double(std::max(c.m, c.n) + 1) * 10;
      const Tensor a = random_matrix(s, t, 17 + uint64_t(c.m * 131 + c.n));
      const Tensor ag = a.to(dev);
      const double scale = max_abs(a);
      for (const char* mode : {"reduced", "complete"}) {
        const linalg::Qr qr = linalg::qr(ag, mode);
        const int64_t qc = std::string(mode) == "complete" ? c.m : k;
        EXPECT_LT(max_diff(matmul(qr.Q, qr.R), a), tol * scale * 10) << what << mode;
        EXPECT_LT(max_diff(matmul(mT(qr.Q), qr.Q), eye(qc, qc, t)), tol * 10) << what << mode;
        EXPECT_EQ(max_abs(qr.R - triu(qr.R)), 0.0) << what << mode;
        // Householder QR is unique up to the signs of R's rows.
        EXPECT_LT(max_diff(abs(qr.R), abs(linalg::qr(a, mode).R)), tol * scale * 10) << what;
      }
      EXPECT_EQ(max_diff(linalg::qr(ag, "r").R, linalg::qr(ag).R), 0.0) << what;
      for (bool full : {false, true}) {
        const linalg::Svd d = linalg::svd(ag, full);
        const Tensor u = d.U.narrow(-1, 0, k), vh = d.Vh.narrow(-2, 0, k);
        EXPECT_LT(max_diff(d.S, linalg::svdvals(a)), tol * scale * 10) << what << full;
        EXPECT_LT(max_diff(matmul(u * d.S.unsqueeze(-2), vh), a), tol * scale * 10) << what << full;
        const int64_t uc = full ? c.m : k, vr = full ? c.n : k;
        EXPECT_EQ(d.U.size(-1), uc);
        EXPECT_EQ(d.Vh.size(-2), vr);
        EXPECT_LT(max_diff(matmul(mT(d.U), d.U), eye(uc, uc, t)), tol * 10) << what << full;
        EXPECT_LT(max_diff(matmul(d.Vh, mT(d.Vh)), eye(vr, vr, t)), tol * 10) << what << full;
      }
      EXPECT_LT(max_diff(linalg::svdvals(ag), linalg::svdvals(a)), tol * scale * 10) << what;
    }
  }
}

TEST(CudaLinalg, CompositionsMatchTheCpu) {
  NUMR_CUDA_OR_SKIP(dev);
  const Tensor a = random_matrix({3, 30, 20}, DType::F64, 23);
  const Tensor b = random_matrix({3, 30, 4}, DType::F64, 29);
  const Tensor ag = a.to(dev), bg = b.to(dev);
  EXPECT_LT(max_diff(linalg::pinv(ag), linalg::pinv(a)), 1e-11);
  EXPECT_LT(max_diff(linalg::lstsq(ag, bg), linalg::lstsq(a, b)), 1e-11);
  EXPECT_EQ(max_diff(linalg::matrix_rank(ag), linalg::matrix_rank(a)), 0.0);
  EXPECT_LT(max_diff(linalg::cond(ag), linalg::cond(a)), 1e-10);
  EXPECT_LT(max_diff(linalg::matrix_norm(ag, 2.0), linalg::matrix_norm(a, 2.0)), 1e-11);
  EXPECT_LT(max_diff(linalg::matrix_norm(ag, "nuc"), linalg::matrix_norm(a, "nuc")), 1e-10);
  const Tensor sq = random_matrix({2, 6, 6}, DType::F64, 31) * 0.3;
  EXPECT_LT(max_diff(linalg::matrix_exp(sq.to(dev)), linalg::matrix_exp(sq)), 1e-12);
  EXPECT_LT(max_diff(linalg::det(sq.to(dev)), linalg::det(sq)), 1e-13);
}

TEST(CudaLinalg, SingularAndNotPositiveDefinite) {
  NUMR_CUDA_OR_SKIP(dev);
  // The second matrix of the batch is singular / indefinite: the errors name the op and the
  // batch element, as on the CPU.
  std::vector<double> ident(3 * 16, 0.0);
  for (int b = 0; b < 3; ++b)
    for (int i = 0; i < 4; ++i) ident[size_t(b * 16 + i * 5)] = 1.0;
  const Tensor a = Tensor::from_vector(ident, Shape{3, 4, 4});
  ident[16 + 2 * 5] = 0.0;
  const Tensor sing = Tensor::from_vector(ident, Shape{3, 4, 4});
  EXPECT_THROW(
      {
        try {
          linalg::inv(sing.to(dev));
        } catch (const InvalidArgument& e) {
          EXPECT_NE(std::string(e.what()).find("[linalg.inv]"), std::string::npos) << e.what();
          EXPECT_NE(std::string(e.what()).find("1"), std::string::npos) << e.what();
          throw;
        }
      },
      InvalidArgument);
  EXPECT_THROW(linalg::cholesky((a - sing * 2.0).to(dev)), InvalidArgument);
  // det of a singular matrix is 0, not an error.
  EXPECT_EQ(linalg::det(sing.to(dev)).to(Device::cpu()).to_vector<double>()[1], 0.0);
  // Inputs are left as they were.
  const Tensor g = random_matrix({5, 5}, DType::F64, 3);
  const Tensor gg = g.to(dev);
  (void)linalg::svd(gg);
  (void)linalg::qr(gg);
  (void)linalg::eigh(gg + mT(gg));
  EXPECT_EQ(max_diff(gg, g), 0.0);
}

TEST(CudaLinalg, GradientsMatchTheCpu) {
  NUMR_CUDA_OR_SKIP(dev);
  const Tensor a = spd({2}, 5, DType::F64, 41);
  const Tensor r = random_matrix({2, 5, 5}, DType::F64, 43);
  auto grads = [](const Tensor& at, const Tensor& rt) {
    const Var va(at, true), vr(rt, true);
    Var loss = sum(linalg::cholesky(va)) + sum(linalg::inv(vr)) + sum(linalg::det(vr));
    const linalg::SvdVar d = linalg::svd(vr, false);
    loss = loss + sum(d.S) + sum(linalg::eigvalsh(va));
    const linalg::QrVar q = linalg::qr(vr);
    loss = loss + sum(q.R * q.R);
    const auto g = backward(loss);
    return std::make_pair(g[va], g[vr]);
  };
  const auto [ga, gr] = grads(a.to(dev), r.to(dev));
  const auto [ca, cr] = grads(a, r);
  EXPECT_LT(max_diff(ga, ca), 1e-9);
  EXPECT_LT(max_diff(gr, cr), 1e-9);
}

// ---- complex operands and the general eigenproblem ----

// max |a - b| for complex (or real) tensors, on the host in F64.
double cmax_diff(const Tensor& a, const Tensor& b) {
  const Tensor d = a.to(Device::cpu()) - b.to(Device::cpu());
  return max(abs(d)).cast(DType::F64).item<double>();
}
double cmax_abs(const Tensor& a) {
  return max(abs(a.to(Device::cpu()))).cast(DType::F64).item<double>();
}

Tensor mH(const Tensor& a) { return conj(a.transpose(-2, -1)); }

Tensor random_complex(const Shape& shape, DType t, uint64_t seed) {
  const DType part = t == DType::Complex128 ? DType::F64 : DType::F32;
  return complex(random_matrix(shape, part, seed), random_matrix(shape, part, seed + 1000));
}

TEST(CudaLinalg, ComplexMatchesTheCpu) {
  NUMR_CUDA_OR_SKIP(dev);
  const std::vector<Sq> cases = {{{}, 1}, {{}, 7}, {{}, 33}, {{4}, 5}, {{3}, 32}, {{2}, 100}};
  for (DType t : {DType::Complex64, DType::Complex128}) {
    const DType part = t == DType::Complex128 ? DType::F64 : DType::F32;
    for (const Sq& c : cases) {
      Shape s = c.lead;
      s.push_back(c.n);
      s.push_back(c.n);
      const std::string what = shape_str(s) + " " + std::string(dtype_name(t));
      const double tol = eps(part) * double(c.n + 1) * 10;
      const Tensor x = random_complex(s, t, 50 + uint64_t(c.n));
      const Tensor h =
          matmul(x, mH(x)) + eye(c.n, c.n, part).cast(t) * double(c.n);  // Hermitian PD
      const Tensor hg = h.to(dev), xg = x.to(dev);
      const double hs = cmax_abs(h), xs = cmax_abs(x);
      EXPECT_LT(cmax_diff(linalg::cholesky(hg), linalg::cholesky(h)), tol * hs) << what;
      EXPECT_LT(cmax_diff(linalg::cholesky(hg, true), linalg::cholesky(h, true)), tol * hs) << what;
      const linalg::Lu lu = linalg::lu(xg);
      EXPECT_LT(cmax_diff(matmul(lu.P.cast(t), matmul(lu.L, lu.U)), x), tol * xs * 10) << what;
      const Tensor b = random_complex(Shape(s.begin(), s.end() - 1), t, 77).unsqueeze(-1);
      const Tensor want = linalg::solve(x, b);
      EXPECT_LT(cmax_diff(linalg::solve(xg, b.to(dev)), want), tol * cmax_abs(want) * 100) << what;
      // |det| of a 100 x 100 overflows F32: there the sign and log |det| are compared alone.
      const linalg::Slogdet sd = linalg::slogdet(xg), sc = linalg::slogdet(x);
      EXPECT_LT(cmax_diff(sd.sign, sc.sign), tol * 100) << what;
      EXPECT_LT(cmax_diff(sd.logabsdet, sc.logabsdet), tol * 100) << what;
      if (c.n <= 33) {
        EXPECT_LT(cmax_diff(linalg::det(xg), linalg::det(x)), tol * cmax_abs(linalg::det(x)) * 100)
            << what;
      }
      const Tensor tri = tril(h);
      EXPECT_LT(cmax_diff(linalg::solve_triangular(tri.to(dev), b.to(dev), false),
                          linalg::solve_triangular(tri, b, false)),
                tol * 100)
          << what;
      const linalg::Qr qr = linalg::qr(xg);
      EXPECT_LT(cmax_diff(matmul(qr.Q, qr.R), x), tol * xs * 10) << what;
      EXPECT_LT(cmax_diff(matmul(mH(qr.Q), qr.Q), eye(c.n, c.n, part).cast(t)), tol * 10) << what;
      const linalg::Svd d = linalg::svd(xg, false);
      EXPECT_LT(cmax_diff(d.S, linalg::svdvals(x)), tol * xs * 10) << what;
      EXPECT_LT(cmax_diff(matmul(d.U * d.S.cast(t).unsqueeze(-2), d.Vh), x), tol * xs * 10) << what;
      const linalg::Eigh e = linalg::eigh(hg);
      EXPECT_LT(cmax_diff(e.eigenvalues, linalg::eigvalsh(h)), tol * hs * 10) << what;
      const Tensor v = e.eigenvectors;
      EXPECT_LT(cmax_diff(matmul(v * e.eigenvalues.cast(t).unsqueeze(-2), mH(v)), h), tol * hs * 10)
          << what;
    }
  }
}

// Largest distance from an eigenvalue of one set to the nearest of the other, both ways.
double eigenvalue_gap(const Tensor& a, const Tensor& b, int64_t n) {
  const auto va = a.to(Device::cpu()).cast(DType::Complex128).to_vector<std::complex<double>>();
  const auto vb = b.to(Device::cpu()).cast(DType::Complex128).to_vector<std::complex<double>>();
  double worst = 0;
  for (size_t base = 0; base < va.size(); base += size_t(n))
    for (int dir = 0; dir < 2; ++dir)
      for (size_t i = 0; i < size_t(n); ++i) {
        double best = 1e300;
        for (size_t j = 0; j < size_t(n); ++j)
          best = std::min(best, std::abs((dir ? vb : va)[base + i] - (dir ? va : vb)[base + j]));
        worst = std::max(worst, best);
      }
  return worst;
}

TEST(CudaLinalg, EigMatchesTheCpu) {
  NUMR_CUDA_OR_SKIP(dev);
  for (DType t : {DType::F32, DType::F64, DType::Complex64, DType::Complex128}) {
    const bool cplx = is_complex(t);
    const DType part = t == DType::F64 || t == DType::Complex128 ? DType::F64 : DType::F32;
    for (const Sq& c : std::vector<Sq>{{{}, 1}, {{}, 9}, {{3}, 6}, {{}, 80}}) {
      Shape s = c.lead;
      s.push_back(c.n);
      s.push_back(c.n);
      const std::string what = shape_str(s) + " " + std::string(dtype_name(t));
      const Tensor a = cplx ? random_complex(s, t, 90) : random_matrix(s, t, 90);
      const linalg::Eig g = linalg::eig(a.to(dev));
      EXPECT_EQ(g.eigenvalues.dtype(), cplx ? t : complex_dtype_for(t)) << what;
      const Tensor ac = a.cast(g.eigenvalues.dtype());
      const double tol = (part == DType::F64 ? 1e-11 : 2e-3) * double(c.n) * cmax_abs(a);
      EXPECT_LT(cmax_diff(matmul(ac.to(dev), g.eigenvectors),
                          g.eigenvectors * g.eigenvalues.unsqueeze(-2)),
                tol)
          << what;
      EXPECT_LT(eigenvalue_gap(g.eigenvalues, linalg::eigvals(a), c.n), tol) << what;
      EXPECT_LT(eigenvalue_gap(linalg::eigvals(a.to(dev)), g.eigenvalues, c.n), tol) << what;
    }
  }
}

}  // namespace
}  // namespace numr
