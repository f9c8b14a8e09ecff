// numr::linalg on complex matrices and the general eigendecomposition: reconstructions
// (L Lᴴ, P L U, Q R, U diag(S) Vh, V diag(w) Vᴴ, A V = V diag(w), a inv(a) = I) at sizes
// 1 to 97 (primes among them) and a batch, in Complex64 and Complex128, with bounds of the
// form c n eps (times cond(a) where the quantity is a forward error); NumPy's results for
// fixed matrices (tests/data/linalg_oracle.inc, scripts/linalg_oracle.py); eig of real
// matrices; errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "numr/numr.h"

namespace numr {
namespace {

constexpr double kC = 8.0;
constexpr double kInf = std::numeric_limits<double>::infinity();
using cd = std::complex<double>;

const DType kComplexTypes[] = {DType::Complex64, DType::Complex128};
const DType kRealTypes[] = {DType::F32, DType::F64};

double eps_of(DType t) {
  return complex_part_dtype(t) == DType::F64 ? std::numeric_limits<double>::epsilon()
                                             : double(std::numeric_limits<float>::epsilon());
}

// The values of a real or complex tensor as complex doubles, row-major.
std::vector<cd> cvals(const Tensor& t) {
  std::vector<cd> out;
  if (!is_complex(t.dtype())) {
    for (double x : t.cast(DType::F64).contiguous().to_vector<double>()) out.emplace_back(x, 0);
    return out;
  }
  const std::vector<double> p =
      view_as_real(t.contiguous()).cast(DType::F64).contiguous().to_vector<double>();
  for (size_t i = 0; i + 1 < p.size(); i += 2) out.emplace_back(p[i], p[i + 1]);
  return out;
}

// ||x||_F of each matrix of [.., m, n] (or of the whole of a vector).
std::vector<double> fro(const Tensor& x) {
  const std::vector<cd> v = cvals(x);
  const size_t per = x.dim() >= 2 ? size_t(x.size(-1) * x.size(-2)) : v.size();
  std::vector<double> out;
  for (size_t b = 0; per > 0 && b < v.size() / per; ++b) {
    double s = 0;
    for (size_t i = 0; i < per; ++i) s += std::norm(v[b * per + i]);
    out.push_back(std::sqrt(s));
  }
  return out;
}

// max over the batch of ||got_i - want_i||_F / ||want_i||_F (absolute where want_i is 0).
double rel_err(const Tensor& got, const Tensor& want) {
  EXPECT_EQ(got.shape(), want.shape());
  const std::vector<cd> g = cvals(got), w = cvals(want);
  const size_t per = want.dim() >= 2 ? size_t(want.size(-1) * want.size(-2)) : w.size();
  double worst = 0;
  for (size_t b = 0; per > 0 && b < g.size() / per; ++b) {
    double d = 0, n = 0;
    for (size_t i = 0; i < per; ++i) {
      d += std::norm(g[b * per + i] - w[b * per + i]);
      n += std::norm(w[b * per + i]);
    }
    worst = std::max(worst, std::sqrt(d) / (n > 0 ? std::sqrt(n) : 1.0));
  }
  return worst;
}

Tensor mT(const Tensor& x) { return x.transpose(-2, -1); }
// The conjugate transpose.
Tensor mH(const Tensor& x) { return conj(mT(x).contiguous()); }

Shape mat(Shape lead, int64_t m, int64_t n) {
  lead.push_back(m);
  lead.push_back(n);
  return lead;
}

Shape lead_with(Shape lead, int64_t n) {
  lead.push_back(n);
  return lead;
}

Tensor identity(int64_t n, DType t) { return eye(n, n, complex_part_dtype(t)).cast(t); }

// A random complex [.., m, n] in dtype t: real and imaginary parts drawn in F64, rounded once.
Tensor random_complex(const Shape& shape, DType t, uint64_t seed) {
  Generator g(seed);
  const Tensor re = randn(shape, DType::F64, Device::cpu(), g);
  const Tensor im = randn(shape, DType::F64, Device::cpu(), g);
  return complex(re, im).cast(t);
}

Tensor random_real(const Shape& shape, DType t, uint64_t seed) {
  Generator g(seed);
  return randn(shape, DType::F64, Device::cpu(), g).cast(t);
}

// z * s for complex z [.., m, k] and real s [.., k] scaling its columns.
Tensor scale_columns(const Tensor& z, const Tensor& s) {
  return z * complex(s, zeros(s.shape(), s.dtype())).unsqueeze(-2);
}

// The largest cond_2 over the batch, from singular values in double precision.
double cond_of(const Tensor& a) {
  const Tensor s =
      linalg::svdvals(is_complex(a.dtype()) ? a.cast(DType::Complex128) : a.cast(DType::F64));
  const std::vector<cd> v = cvals(s);
  const size_t k = size_t(s.size(-1));
  double worst = 1;
  for (size_t b = 0; b < v.size() / k; ++b)
    worst = std::max(worst, v[b * k].real() / v[b * k + k - 1].real());
  return worst;
}

// The largest distance from each wanted eigenvalue to the nearest unmatched one of got.
double match_err(std::vector<cd> got, const std::vector<cd>& want) {
  EXPECT_EQ(got.size(), want.size());
  double worst = 0;
  for (const cd& w : want) {
    size_t best = 0;
    for (size_t i = 1; i < got.size(); ++i)
      if (std::abs(got[i] - w) < std::abs(got[best] - w)) best = i;
    if (got.empty()) break;
    worst = std::max(worst, std::abs(got[best] - w));
    got.erase(got.begin() + int64_t(best));
  }
  return worst;
}

// The 2-norm's upper bound ||a||_F of the largest matrix of the batch.
double max_fro(const Tensor& a) {
  const std::vector<double> f = fro(a);
  return f.empty() ? 0.0 : *std::max_element(f.begin(), f.end());
}

// Checks A V = V diag(w) with unit columns of V: the residual is a backward error, at most
// c n eps ||A|| ||V|| (||V||_F = sqrt(n) for unit columns).
void expect_eig_reconstructs(const Tensor& a, const linalg::Eig& r, const std::string& what) {
  const int64_t n = a.size(-1);
  const DType ct = r.eigenvalues.dtype();
  const Tensor ac = is_complex(a.dtype()) ? a : a.cast(ct);
  const Tensor av = matmul(ac, r.eigenvectors);
  const Tensor vw = r.eigenvectors * r.eigenvalues.unsqueeze(-2);
  const std::vector<double> res = fro(av - vw), an = fro(a);
  const double tol = kC * double(n) * eps_of(ct) * std::sqrt(double(n));
  for (size_t b = 0; b < res.size(); ++b) EXPECT_LE(res[b], tol * an[b]) << what;
  // Every column of unit 2-norm.
  const std::vector<cd> v = cvals(r.eigenvectors);
  for (size_t b = 0; b < v.size() / size_t(n * n); ++b)
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t i = 0; i < n; ++i) s += std::norm(v[b * size_t(n * n) + size_t(i * n + j)]);
      EXPECT_NEAR(std::sqrt(s), 1.0, kC * double(n) * eps_of(ct)) << what << " column " << j;
    }
}

struct Case {
  Shape lead;
  int64_t n;
};
const std::vector<Case> kCases = {{{}, 1},  {{}, 2},  {{}, 7},    {{}, 31},
                                  {{}, 64}, {{}, 97}, {{3, 2}, 5}};

std::string what(const Shape& s, DType t) {
  return shape_str(s) + " " + std::string(dtype_name(t));
}

TEST(LinalgComplex, CholeskyLuAndSolvesReconstruct) {
  uint64_t seed = 100;
  for (DType t : kComplexTypes)
    for (const Case& c : kCases) {
      const Shape s = mat(c.lead, c.n, c.n);
      const double tol = kC * double(c.n) * eps_of(t);
      const Tensor x = random_complex(s, t, ++seed);
      const Tensor hpd = matmul(x, mH(x)) / double(c.n) + identity(c.n, t);
      const Tensor l = linalg::cholesky(hpd);
      EXPECT_EQ(l.dtype(), t);
      EXPECT_LE(rel_err(matmul(l, mH(l)), hpd), tol) << what(s, t);
      const Tensor u = linalg::cholesky(hpd, /*upper=*/true);
      EXPECT_LE(rel_err(matmul(mH(u), u), hpd), tol) << what(s, t);
      EXPECT_LE(rel_err(u, mH(l)), tol * cond_of(hpd)) << what(s, t);

      const Tensor a = random_complex(s, t, ++seed);
      const linalg::Lu f = linalg::lu(a);
      EXPECT_LE(rel_err(matmul(f.P, matmul(f.L, f.U)), a), tol) << what(s, t);
      // L below the diagonal with ones on it, U on and above: a strict triangle is zero.
      const Tensor strict_l = f.L - identity(c.n, t);
      for (int64_t i = 0; i < c.n; ++i) {
        const std::vector<cd> row_l = cvals(strict_l.narrow(-2, i, 1).narrow(-1, i, c.n - i));
        for (const cd& z : row_l) EXPECT_EQ(z, cd(0, 0));
        const std::vector<cd> row_u = cvals(f.U.narrow(-2, i, 1).narrow(-1, 0, i));
        for (const cd& z : row_u) EXPECT_EQ(z, cd(0, 0));
      }

      const double ctol = tol * cond_of(a);
      const Tensor id = identity(c.n, t).broadcast_to(s);
      EXPECT_LE(rel_err(matmul(a, linalg::inv(a)), id), ctol) << what(s, t);
      const Tensor b = random_complex(mat(c.lead, c.n, 3), t, ++seed);
      const Tensor xs = linalg::solve(a, b);
      EXPECT_LE(rel_err(matmul(a, xs), b), ctol) << what(s, t);
      // The triangular solves: against the triangle of l as a full matrix.
      const Tensor lx = linalg::solve_triangular(l, b, /*upper=*/false);
      EXPECT_LE(rel_err(matmul(l, lx), b), tol * cond_of(l)) << what(s, t);
      const Tensor bt = random_complex(mat(c.lead, 3, c.n), t, ++seed);
      const Tensor rx = linalg::solve_triangular(u, bt, /*upper=*/true, /*left=*/false);
      EXPECT_LE(rel_err(matmul(rx, u), bt), tol * cond_of(u)) << what(s, t);
    }
}

TEST(LinalgComplex, QrSvdEighReconstruct) {
  uint64_t seed = 200;
  for (DType t : kComplexTypes) {
    std::vector<std::pair<Shape, std::pair<int64_t, int64_t>>> shapes;
    for (const Case& c : kCases) shapes.push_back({c.lead, {c.n, c.n}});
    shapes.push_back({{2}, {13, 4}});
    shapes.push_back({{2}, {4, 13}});
    for (const auto& [lead, mn] : shapes) {
      const auto [m, n] = mn;
      const int64_t k = std::min(m, n);
      const Shape s = mat(lead, m, n);
      const Tensor a = random_complex(s, t, ++seed);
      const double tol = kC * double(std::max(m, n)) * eps_of(t);
      for (const char* mode : {"reduced", "complete"}) {
        const linalg::Qr f = linalg::qr(a, mode);
        const int64_t qc = std::string(mode) == "complete" ? m : k;
        EXPECT_EQ(f.Q.shape(), mat(lead, m, qc));
        EXPECT_LE(rel_err(matmul(f.Q, f.R), a), tol) << mode << " " << what(s, t);
        EXPECT_LE(rel_err(matmul(mH(f.Q), f.Q), identity(qc, t).broadcast_to(mat(lead, qc, qc))),
                  tol)
            << mode << " " << what(s, t);
        for (int64_t i = 1; i < qc; ++i)
          for (const cd& z : cvals(f.R.narrow(-2, i, 1).narrow(-1, 0, std::min(i, n))))
            EXPECT_EQ(z, cd(0, 0));
      }
      const linalg::Svd r = linalg::svd(a, /*full_matrices=*/false);
      EXPECT_EQ(r.S.dtype(), complex_part_dtype(t));
      EXPECT_LE(rel_err(matmul(scale_columns(r.U, r.S), r.Vh), a), tol) << what(s, t);
      EXPECT_LE(rel_err(matmul(mH(r.U), r.U), identity(k, t).broadcast_to(mat(lead, k, k))), tol);
      EXPECT_LE(rel_err(matmul(r.Vh, mH(r.Vh)), identity(k, t).broadcast_to(mat(lead, k, k))), tol);
      const linalg::Svd full = linalg::svd(a, /*full_matrices=*/true);
      EXPECT_LE(rel_err(matmul(mH(full.U), full.U), identity(m, t).broadcast_to(mat(lead, m, m))),
                tol);
      EXPECT_LE(rel_err(matmul(full.Vh, mH(full.Vh)), identity(n, t).broadcast_to(mat(lead, n, n))),
                tol);
      EXPECT_LE(rel_err(linalg::svdvals(a), r.S), tol);
      if (m != n) continue;
      // The Hermitian part: real ascending eigenvalues, unitary vectors.
      const Tensor herm = (a + mH(a)) / 2.0;
      const linalg::Eigh e = linalg::eigh(herm);
      EXPECT_EQ(e.eigenvalues.dtype(), complex_part_dtype(t));
      EXPECT_LE(
          rel_err(matmul(scale_columns(e.eigenvectors, e.eigenvalues), mH(e.eigenvectors)), herm),
          tol)
          << what(s, t);
      EXPECT_LE(rel_err(matmul(mH(e.eigenvectors), e.eigenvectors),
                        identity(n, t).broadcast_to(mat(lead, n, n))),
                tol);
      EXPECT_LE(rel_err(linalg::eigvalsh(herm), e.eigenvalues), tol);
      const std::vector<cd> w = cvals(e.eigenvalues);
      for (size_t i = 1; i < w.size(); ++i)
        if (i % size_t(n) != 0) {
          EXPECT_LE(w[i - 1].real(), w[i].real());
        }
    }
  }
}

TEST(LinalgComplex, DetAndSlogdetAgreeWithTheLu) {
  uint64_t seed = 300;
  for (DType t : kComplexTypes)
    for (const Case& c : kCases) {
      if (c.n > 31) continue;  // |det| of a larger random matrix leaves F32's range
      const Shape s = mat(c.lead, c.n, c.n);
      const Tensor a = random_complex(s, t, ++seed);
      // det(a) = Π eigenvalues: an independent route through geev.
      const std::vector<cd> w = cvals(linalg::eigvals(a.cast(DType::Complex128)));
      const std::vector<cd> d = cvals(linalg::det(a));
      const linalg::Slogdet sl = linalg::slogdet(a);
      const std::vector<cd> sign = cvals(sl.sign);
      const std::vector<cd> logabs = cvals(sl.logabsdet);
      EXPECT_EQ(sl.logabsdet.dtype(), complex_part_dtype(t));
      const double tol = kC * double(c.n) * eps_of(t) * cond_of(a);
      for (size_t b = 0; b < d.size(); ++b) {
        cd want = 1;
        for (int64_t i = 0; i < c.n; ++i) want *= w[b * size_t(c.n) + size_t(i)];
        EXPECT_LE(std::abs(d[b] - want), tol * std::abs(want)) << what(s, t);
        EXPECT_NEAR(std::abs(sign[b]), 1.0, tol);
        EXPECT_LE(std::abs(sign[b] - want / std::abs(want)), tol) << what(s, t);
        EXPECT_NEAR(logabs[b].real(), std::log(std::abs(want)), tol) << what(s, t);
      }
    }
  // A singular matrix (a zero row gives an exactly zero pivot): det 0, sign 0, log|det| -inf
  // (PyTorch's contract).
  for (DType t : kComplexTypes) {
    const Tensor a = cat({random_complex(Shape{1, 3}, t, 7), zeros(Shape{1, 3}, t),
                          random_complex(Shape{1, 3}, t, 8)},
                         0);
    EXPECT_EQ(cvals(linalg::slogdet(a).sign)[0], cd(0, 0));
    EXPECT_EQ(cvals(linalg::slogdet(a).logabsdet)[0].real(),
              -std::numeric_limits<double>::infinity());
    EXPECT_EQ(cvals(linalg::det(a))[0], cd(0, 0));
  }
}

TEST(LinalgEig, ReconstructsRealAndComplex) {
  uint64_t seed = 400;
  for (const Case& c : kCases) {
    const Shape s = mat(c.lead, c.n, c.n);
    for (DType t : kRealTypes) {
      const Tensor a = random_real(s, t, ++seed);
      const linalg::Eig r = linalg::eig(a);
      EXPECT_EQ(r.eigenvalues.dtype(), complex_dtype_for(t));
      EXPECT_EQ(r.eigenvalues.shape(), lead_with(c.lead, c.n));
      EXPECT_EQ(r.eigenvectors.shape(), s);
      expect_eig_reconstructs(a, r, what(s, t));
      // A real matrix's eigenvalues come in conjugate pairs: the multiset equals its conjugate.
      const std::vector<cd> w = cvals(r.eigenvalues);
      for (size_t b = 0; b < w.size() / size_t(c.n); ++b) {
        std::vector<cd> one(w.begin() + int64_t(b * size_t(c.n)),
                            w.begin() + int64_t((b + 1) * size_t(c.n)));
        std::vector<cd> conjugates;
        for (const cd& z : one) conjugates.push_back(std::conj(z));
        EXPECT_EQ(match_err(one, conjugates), 0.0) << what(s, t);
      }
      EXPECT_EQ(rel_err(linalg::eigvals(a), r.eigenvalues), 0.0);
    }
    for (DType t : kComplexTypes) {
      const Tensor a = random_complex(s, t, ++seed);
      const linalg::Eig r = linalg::eig(a);
      EXPECT_EQ(r.eigenvalues.dtype(), t);
      expect_eig_reconstructs(a, r, what(s, t));
      EXPECT_EQ(rel_err(linalg::eigvals(a), r.eigenvalues), 0.0);
    }
  }
}

TEST(LinalgEig, EmptyAndErrors) {
  const linalg::Eig e = linalg::eig(zeros(Shape{2, 0, 0}, DType::F64));
  EXPECT_EQ(e.eigenvalues.shape(), (Shape{2, 0}));
  EXPECT_EQ(e.eigenvalues.dtype(), DType::Complex128);
  EXPECT_EQ(e.eigenvectors.shape(), (Shape{2, 0, 0}));
  const auto expect_error = [](const std::function<void()>& f, const std::string& prefix) {
    try {
      f();
      ADD_FAILURE() << "no exception; expected " << prefix;
    } catch (const Error& err) {
      EXPECT_EQ(std::string(err.what()).rfind(prefix, 0), 0u) << err.what();
    }
  };
  Tensor bad = random_real(Shape{3, 3}, DType::F64, 1).contiguous();
  bad = where_cond(eye(3, 3, DType::Bool), std::numeric_limits<double>::quiet_NaN(), bad);
  expect_error([&] { linalg::eig(bad); }, "[linalg.eig]");
  expect_error([&] { linalg::eigvals(bad / 0.0); }, "[linalg.eigvals]");
  expect_error([&] { linalg::eig(zeros(Shape{2, 3}, DType::F64)); }, "[linalg.eig]");
  expect_error([&] { linalg::eig(zeros(Shape{2, 2}, DType::I32)); }, "[linalg.eig]");
  Var v(random_real(Shape{3, 3}, DType::F64, 2), /*requires_grad=*/true);
  expect_error([&] { (void)linalg::eig(v); }, "[linalg.eig]");
  expect_error([&] { (void)linalg::eigvals(v); }, "[linalg.eigvals]");
  // Without a gradient to take, the Var forms are the Tensor ones.
  const Var c(random_real(Shape{3, 3}, DType::F64, 2));
  EXPECT_EQ(rel_err(linalg::eigvals(c).tensor(), linalg::eigvals(c.tensor())), 0.0);
  // The Var forms take complex input too (gradients in tests/test_grad_linalg_complex.cpp);
  // without a gradient to take, their values are the Tensor forms'.
  const Var z(random_complex(Shape{3, 3}, DType::Complex128, 3));
  EXPECT_EQ(rel_err(linalg::inv(z).tensor(), linalg::inv(z.tensor())), 0.0);
  EXPECT_EQ(rel_err(linalg::det(z).tensor(), linalg::det(z.tensor())), 0.0);
}

TEST(LinalgComplexErrors, SingularAndNotPositiveDefinite) {
  const auto expect_error = [](const std::function<void()>& f, const std::string& prefix) {
    try {
      f();
      ADD_FAILURE() << "no exception; expected " << prefix;
    } catch (const InvalidArgument& err) {
      EXPECT_EQ(std::string(err.what()).rfind(prefix, 0), 0u) << err.what();
    }
  };
  for (DType t : kComplexTypes) {
    const Tensor z = zeros(Shape{3, 3}, t);
    expect_error([&] { linalg::inv(z); }, "[linalg.inv]");
    expect_error([&] { linalg::solve(z, random_complex(Shape{3, 1}, t, 1)); }, "[linalg.solve]");
    // -I is Hermitian and not positive-definite.
    expect_error(
        [&] {
          linalg::cholesky(identity(3, t) * complex(full({}, -1.0, complex_part_dtype(t)),
                                                    zeros({}, complex_part_dtype(t))));
        },
        "[linalg.cholesky]");
  }
}

// ---- NumPy's results ----

struct EigCase {
  const char* name;
  int64_t n;
  std::vector<double> a, eigvals;
};
const EigCase kEig[] = {
#define NUMR_LINALG_EIG
#include "data/linalg_oracle.inc"
#undef NUMR_LINALG_EIG
};
struct ComplexSquare {
  const char* name;
  int64_t n;
  std::vector<double> a, b, det, sign;
  double logabsdet;
  std::vector<double> inv, solve, hpd, chol, herm, eigvalsh, svdvals, eigvals;
};
const ComplexSquare kComplexSquare[] = {
#define NUMR_LINALG_COMPLEX
#include "data/linalg_oracle.inc"
#undef NUMR_LINALG_COMPLEX
};
struct ComplexRect {
  const char* name;
  int64_t m, n;
  std::vector<double> a, b, svdvals;
  int64_t rank;
  std::vector<double> pinv, lstsq, residuals, norms;
  double cond, vector_norm;
};
const ComplexRect kComplexRect[] = {
#define NUMR_LINALG_COMPLEX_RECT
#include "data/linalg_oracle.inc"
#undef NUMR_LINALG_COMPLEX_RECT
};

// Interleaved (re, im) doubles as a complex tensor of dtype t.
Tensor from_parts(const std::vector<double>& v, Shape s, DType t) {
  s.push_back(2);
  return view_as_complex(Tensor::from_vector<double>(v, s).cast(complex_part_dtype(t)));
}
std::vector<cd> pairs(const std::vector<double>& v) {
  std::vector<cd> out;
  for (size_t i = 0; i + 1 < v.size(); i += 2) out.emplace_back(v[i], v[i + 1]);
  return out;
}

// Bauer-Fike: an eigenvalue moves by at most cond(V) times the perturbation's 2-norm.
double eig_tol(const Tensor& a, DType t) {
  const linalg::Eig r = linalg::eig(a);
  return kC * double(a.size(-1)) * eps_of(t) * max_fro(a) * cond_of(r.eigenvectors);
}

TEST(LinalgOracle, EigOfRealMatrices) {
  for (DType t : kRealTypes)
    for (const EigCase& c : kEig) {
      SCOPED_TRACE(std::string(c.name) + " " + std::string(dtype_name(t)));
      const Tensor a = Tensor::from_vector<double>(c.a, {c.n, c.n}).cast(t);
      EXPECT_LE(match_err(cvals(linalg::eigvals(a)), pairs(c.eigvals)), eig_tol(a, t));
    }
}

TEST(LinalgOracle, ComplexSquareMatrices) {
  for (DType t : kComplexTypes)
    for (const ComplexSquare& c : kComplexSquare) {
      SCOPED_TRACE(std::string(c.name) + " " + std::string(dtype_name(t)));
      const int64_t n = c.n;
      const double eps = eps_of(t), cn = kC * double(n);
      const Tensor a = from_parts(c.a, {n, n}, t), b = from_parts(c.b, {n, 2}, t);
      const double cond = cond_of(a);
      const cd det = pairs(c.det)[0], sign = pairs(c.sign)[0];
      EXPECT_LE(std::abs(cvals(linalg::det(a))[0] - det), cn * eps * cond * std::abs(det));
      const linalg::Slogdet s = linalg::slogdet(a);
      EXPECT_LE(std::abs(cvals(s.sign)[0] - sign), cn * eps * cond);
      EXPECT_NEAR(s.logabsdet.item_double(), c.logabsdet, cn * eps * cond);
      const Tensor want_dtype = from_parts(c.inv, {n, n}, DType::Complex128);
      EXPECT_LE(rel_err(linalg::inv(a), want_dtype), cn * eps * cond);
      EXPECT_LE(rel_err(linalg::solve(a, b), from_parts(c.solve, {n, 2}, DType::Complex128)),
                cn * eps * cond);
      const Tensor hpd = from_parts(c.hpd, {n, n}, t);
      EXPECT_LE(rel_err(linalg::cholesky(hpd), from_parts(c.chol, {n, n}, DType::Complex128)),
                cn * eps * cond_of(hpd));
      // Weyl: Hermitian eigenvalues and singular values move by at most ||E||_2.
      const Tensor herm = from_parts(c.herm, {n, n}, t);
      const double herm_norm = cvals(linalg::svdvals(herm.cast(DType::Complex128)))[0].real();
      const std::vector<cd> w = cvals(linalg::eigvalsh(herm));
      for (int64_t i = 0; i < n; ++i)
        EXPECT_NEAR(w[size_t(i)].real(), c.eigvalsh[size_t(i)], cn * eps * herm_norm);
      const std::vector<cd> sv = cvals(linalg::svdvals(a));
      for (int64_t i = 0; i < n; ++i)
        EXPECT_NEAR(sv[size_t(i)].real(), c.svdvals[size_t(i)], cn * eps * c.svdvals[0]);
      EXPECT_LE(match_err(cvals(linalg::eigvals(a)), pairs(c.eigvals)), eig_tol(a, t));
    }
}

TEST(LinalgOracle, ComplexRectangular) {
  for (DType t : kComplexTypes)
    for (const ComplexRect& c : kComplexRect) {
      SCOPED_TRACE(std::string(c.name) + " " + std::string(dtype_name(t)));
      const Tensor a = from_parts(c.a, {c.m, c.n}, t);
      const std::vector<cd> sv = cvals(linalg::svdvals(a));
      ASSERT_EQ(sv.size(), c.svdvals.size());
      for (size_t i = 0; i < sv.size(); ++i)
        EXPECT_NEAR(sv[i].real(), c.svdvals[i],
                    kC * double(std::max(c.m, c.n)) * eps_of(t) * c.svdvals[0]);
      EXPECT_EQ(linalg::matrix_rank(a).item<int64_t>(), c.rank);

      const int64_t m = c.m, n = c.n, k = std::min(m, n);
      const double eps = eps_of(t), cn = kC * double(std::max(m, n));
      const double s_max = c.svdvals[0];
      // Every norm moves by about its own size times n eps (as for real a).
      const std::vector<double> got = {
          linalg::matrix_norm(a, "fro").item_double(), linalg::matrix_norm(a, "nuc").item_double(),
          linalg::matrix_norm(a, 1).item_double(),     linalg::matrix_norm(a, -1).item_double(),
          linalg::matrix_norm(a, 2).item_double(),     linalg::matrix_norm(a, -2).item_double(),
          linalg::matrix_norm(a, kInf).item_double(),  linalg::matrix_norm(a, -kInf).item_double()};
      for (size_t i = 0; i < got.size(); ++i)
        EXPECT_NEAR(got[i], c.norms[i], cn * eps * std::max(c.norms[i], s_max)) << "norm " << i;
      EXPECT_NEAR(linalg::vector_norm(a).item_double(), c.vector_norm, cn * eps * c.vector_norm);
      // The kept singular values' condition, squared for the least-squares solution when the
      // residual is not small (m > n).
      const double kappa = s_max / c.svdvals[size_t(c.rank - 1)];
      const double lsq = m > n ? kappa * kappa : kappa;
      EXPECT_LE(rel_err(linalg::pinv(a), from_parts(c.pinv, {n, m}, DType::Complex128)),
                cn * eps * kappa);
      const Tensor b = from_parts(c.b, {m, 2}, t);
      const linalg::Lstsq r = linalg::lstsq(a, b, "gelsd");
      EXPECT_EQ(r.rank.item<int64_t>(), c.rank);
      EXPECT_EQ(r.singular_values.dtype(), complex_part_dtype(t));
      EXPECT_LE(rel_err(r.solution, from_parts(c.lstsq, {n, 2}, DType::Complex128)),
                cn * eps * lsq);
      if (c.residuals.empty()) {
        EXPECT_EQ(r.residuals.shape(), (Shape{0}));
      } else {
        // As for real a: the residual's condition is kappa.
        double b_norm = 0;
        for (double v : c.b) b_norm += v * v;
        const double dr = cn * eps * kappa * std::sqrt(b_norm);
        const std::vector<cd> res = cvals(r.residuals);
        ASSERT_EQ(res.size(), 2u);
        for (size_t i = 0; i < 2; ++i)
          EXPECT_NEAR(res[i].real(), c.residuals[i], 2 * std::sqrt(c.residuals[i]) * dr + dr * dr);
      }
      if (c.rank < k) continue;
      EXPECT_NEAR(linalg::cond(a).item_double(), c.cond, cn * eps * kappa * c.cond);
      // gels (QR) on the full-rank ones: the same solution.
      EXPECT_LE(rel_err(linalg::lstsq(a, b), from_parts(c.lstsq, {n, 2}, DType::Complex128)),
                cn * eps * lsq);
    }
}

}  // namespace
}  // namespace numr
