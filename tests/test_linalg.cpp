// numr::linalg: reconstructions (a = L Lᵀ, P L U, Q R, U diag(S) Vh, V diag(w) Vᵀ,
// a inv(a) = I) at several sizes and a batch, in F32 and F64, with bounds of the form
// c n eps (times cond(a) where the quantity is a forward error); NumPy's and SciPy's results
// for fixed matrices (tests/data/linalg_oracle.inc, scripts/linalg_oracle.py); errors; and
// gradient checks of first and second order in F64.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "core/linalg_backend.h"
#include "numr/numr.h"
#include "support/gradcheck.h"
#include "support/harness.h"

namespace numr {
namespace {

// A constant of the bounds below: the error analyses give c n eps with a modest c.
constexpr double kC = 8.0;
constexpr double kInf = std::numeric_limits<double>::infinity();

double eps_of(DType t) {
  return t == DType::F64 ? std::numeric_limits<double>::epsilon()
                         : double(std::numeric_limits<float>::epsilon());
}

std::vector<double> vals(const Tensor& t) {
  return t.cast(DType::F64).contiguous().to_vector<double>();
}

// max over the batch of ||got_i - want_i||_F / ||want_i||_F (or the absolute error where
// want_i is zero); both [.., m, n] of one shape.
double rel_err(const Tensor& got, const Tensor& want) {
  EXPECT_EQ(got.shape(), want.shape());
  const std::vector<double> g = vals(got), w = vals(want);
  const int64_t per = want.dim() >= 2 ? want.size(-1) * want.size(-2) : want.numel();
  double worst = 0;
  for (size_t b = 0; per > 0 && b < g.size() / size_t(per); ++b) {
    double d = 0, n = 0;
    for (int64_t i = 0; i < per; ++i) {
      const double x = g[b * size_t(per) + size_t(i)], y = w[b * size_t(per) + size_t(i)];
      d += (x - y) * (x - y);
      n += y * y;
    }
    worst = std::max(worst, std::sqrt(d) / (n > 0 ? std::sqrt(n) : 1.0));
  }
  return worst;
}

Tensor mT(const Tensor& x) { return x.transpose(-2, -1); }

Shape mat(Shape lead, int64_t m, int64_t n) {
  lead.push_back(m);
  lead.push_back(n);
  return lead;
}

Tensor identity(int64_t n, DType t) { return eye(n, n, t); }

// A random [.., m, n] in dtype t (drawn in F64 and rounded once).
Tensor random_matrix(const Shape& shape, DType t, uint64_t seed) {
  Generator g(seed);
  return randn(shape, DType::F64, Device::cpu(), g).cast(t);
}

// The largest cond_2 over the batch, from singular values in F64.
double cond_of(const Tensor& a) {
  const Tensor s = linalg::svdvals(a.cast(DType::F64));
  const std::vector<double> v = vals(s);
  const int64_t k = s.size(-1);
  double worst = 1;
  for (size_t b = 0; b < v.size() / size_t(k); ++b)
    worst = std::max(worst, v[b * size_t(k)] / v[b * size_t(k) + size_t(k) - 1]);
  return worst;
}

struct Case {
  Shape lead;
  int64_t n;
};
const std::vector<Case> kCases = {{{}, 1}, {{}, 2}, {{}, 7}, {{}, 64}, {{}, 200}, {{3, 4}, 5}};
const DType kTypes[] = {DType::F32, DType::F64};

std::string what(const Case& c, DType t) {
  return shape_str(mat(c.lead, c.n, c.n)) + " " + std::string(dtype_name(t));
}

TEST(Linalg, CholeskyReconstructs) {
  uint64_t seed = 10;
  for (DType t : kTypes)
    for (const Case& c : kCases) {
      const Tensor x = random_matrix(mat(c.lead, c.n, c.n), t, ++seed);
      const Tensor a = matmul(x, mT(x)) / double(c.n) + identity(c.n, t);
      const Tensor l = linalg::cholesky(a);
      const double tol = kC * double(c.n) * eps_of(t);
      EXPECT_LE(rel_err(matmul(l, mT(l)), a), tol) << what(c, t);
      EXPECT_EQ(rel_err(l, tril(l)), 0.0) << what(c, t);
      const Tensor u = linalg::cholesky(a, /*upper=*/true);
      EXPECT_LE(rel_err(matmul(mT(u), u), a), tol) << what(c, t);
      EXPECT_EQ(rel_err(u, triu(u)), 0.0) << what(c, t);
    }
}

TEST(Linalg, LuReconstructs) {
  uint64_t seed = 20;
  for (DType t : kTypes) {
    for (const Case& c : kCases) {
      const Tensor a = random_matrix(mat(c.lead, c.n, c.n), t, ++seed);
      const linalg::Lu f = linalg::lu(a);
      EXPECT_LE(rel_err(matmul(f.P, matmul(f.L, f.U)), a), kC * double(c.n) * eps_of(t))
          << what(c, t);
      EXPECT_EQ(rel_err(f.U, triu(f.U)), 0.0);
      EXPECT_EQ(rel_err(f.L, tril(f.L)), 0.0);
    }
    for (const auto& [m, n] : std::vector<std::pair<int64_t, int64_t>>{{5, 3}, {3, 6}}) {
      const Tensor a = random_matrix(Shape{2, m, n}, t, ++seed);
      const linalg::Lu f = linalg::lu(a);
      EXPECT_EQ(f.L.shape(), (Shape{2, m, std::min(m, n)}));
      EXPECT_EQ(f.U.shape(), (Shape{2, std::min(m, n), n}));
      EXPECT_LE(rel_err(matmul(f.P, matmul(f.L, f.U)), a), kC * double(std::max(m, n)) * eps_of(t));
      const linalg::LuFactor lf = linalg::lu_factor(a);
      EXPECT_EQ(lf.pivots.dtype(), DType::I32);
      for (int32_t p : lf.pivots.to_vector<int32_t>()) {  // 1-based rows
        EXPECT_GE(p, 1);
        EXPECT_LE(p, m);
      }
    }
  }
}

TEST(Linalg, QrReconstructs) {
  uint64_t seed = 30;
  for (DType t : kTypes) {
    std::vector<std::pair<Shape, std::pair<int64_t, int64_t>>> shapes;
    for (const Case& c : kCases) shapes.push_back({c.lead, {c.n, c.n}});
    shapes.push_back({{2}, {9, 4}});
    shapes.push_back({{2}, {4, 9}});
    for (const auto& [lead, mn] : shapes) {
      const auto [m, n] = mn;
      const Tensor a = random_matrix(mat(lead, m, n), t, ++seed);
      const double tol = kC * double(std::max(m, n)) * eps_of(t);
      for (const char* mode : {"reduced", "complete"}) {
        const linalg::Qr f = linalg::qr(a, mode);
        const int64_t qc = std::string(mode) == "complete" ? m : std::min(m, n);
        EXPECT_EQ(f.Q.shape(), mat(lead, m, qc)) << mode;
        EXPECT_EQ(f.R.shape(), mat(lead, qc, n)) << mode;
        EXPECT_LE(rel_err(matmul(f.Q, f.R), a), tol) << mode << " " << shape_str(a.shape());
        EXPECT_LE(rel_err(matmul(mT(f.Q), f.Q), identity(qc, t).broadcast_to(mat(lead, qc, qc))),
                  tol);
        EXPECT_EQ(rel_err(f.R, triu(f.R)), 0.0);
      }
      const linalg::Qr r_only = linalg::qr(a, "r");
      EXPECT_FALSE(r_only.Q.defined());
      // R is unique up to the signs of its rows: compare |R|.
      EXPECT_LE(rel_err(abs(r_only.R), abs(linalg::qr(a).R)), tol);
    }
  }
}

TEST(Linalg, SvdReconstructs) {
  uint64_t seed = 40;
  for (DType t : kTypes) {
    std::vector<std::pair<Shape, std::pair<int64_t, int64_t>>> shapes;
    for (const Case& c : kCases) shapes.push_back({c.lead, {c.n, c.n}});
    shapes.push_back({{2}, {9, 4}});
    shapes.push_back({{2}, {4, 9}});
    for (const auto& [lead, mn] : shapes) {
      const auto [m, n] = mn;
      const int64_t k = std::min(m, n);
      const Tensor a = random_matrix(mat(lead, m, n), t, ++seed);
      const double tol = kC * double(std::max(m, n)) * eps_of(t);
      const linalg::Svd r = linalg::svd(a, /*full_matrices=*/false);
      EXPECT_EQ(r.U.shape(), mat(lead, m, k));
      EXPECT_EQ(r.Vh.shape(), mat(lead, k, n));
      EXPECT_LE(rel_err(matmul(r.U * r.S.unsqueeze(-2), r.Vh), a), tol) << shape_str(a.shape());
      EXPECT_LE(rel_err(matmul(mT(r.U), r.U), identity(k, t).broadcast_to(mat(lead, k, k))), tol);
      EXPECT_LE(rel_err(matmul(r.Vh, mT(r.Vh)), identity(k, t).broadcast_to(mat(lead, k, k))), tol);
      const std::vector<double> s = vals(r.S);
      for (size_t i = 0; i < s.size(); ++i) {
        EXPECT_GE(s[i], 0.0);
        if (i % size_t(k) != 0) {
          EXPECT_LE(s[i], s[i - 1]);
        }
      }
      const linalg::Svd full = linalg::svd(a, /*full_matrices=*/true);
      EXPECT_EQ(full.U.shape(), mat(lead, m, m));
      EXPECT_EQ(full.Vh.shape(), mat(lead, n, n));
      EXPECT_LE(rel_err(matmul(mT(full.U), full.U), identity(m, t).broadcast_to(mat(lead, m, m))),
                tol);
      EXPECT_LE(rel_err(matmul(full.Vh, mT(full.Vh)), identity(n, t).broadcast_to(mat(lead, n, n))),
                tol);
      EXPECT_LE(rel_err(linalg::svdvals(a), r.S), tol);
    }
  }
}

TEST(Linalg, EighReconstructs) {
  uint64_t seed = 50;
  for (DType t : kTypes)
    for (const Case& c : kCases) {
      const Tensor x = random_matrix(mat(c.lead, c.n, c.n), t, ++seed);
      const Tensor a = (x + mT(x)) * 0.5;
      const linalg::Eigh r = linalg::eigh(a);
      const double tol = kC * double(c.n) * eps_of(t);
      const Tensor v = r.eigenvectors;
      EXPECT_LE(rel_err(matmul(v * r.eigenvalues.unsqueeze(-2), mT(v)), a), tol) << what(c, t);
      EXPECT_LE(rel_err(matmul(mT(v), v), identity(c.n, t).broadcast_to(a.shape())), tol);
      const std::vector<double> w = vals(r.eigenvalues);
      for (size_t i = 1; i < w.size(); ++i)
        if (i % size_t(c.n) != 0) {
          EXPECT_LE(w[i - 1], w[i]);
        }
      EXPECT_LE(rel_err(linalg::eigvalsh(a), r.eigenvalues), tol);
      // Only the lower triangle is read.
      const Tensor junk = tril(a) + triu(random_matrix(a.shape(), t, ++seed), 1);
      EXPECT_LE(rel_err(linalg::eigvalsh(junk), r.eigenvalues), tol);
    }
}

TEST(Linalg, InvSolveAndTriangular) {
  uint64_t seed = 60;
  for (DType t : kTypes)
    for (const Case& c : kCases) {
      const Tensor a = random_matrix(mat(c.lead, c.n, c.n), t, ++seed);
      const double cond = cond_of(a);
      const double n = double(c.n), eps = eps_of(t);
      const Tensor id = identity(c.n, t).broadcast_to(a.shape());
      // ||a inv(a) - I|| / ||I|| <= c n eps cond(a).
      EXPECT_LE(rel_err(matmul(a, linalg::inv(a)), id), kC * n * eps * cond) << what(c, t);
      // solve: the residual is backward-stable, ||a x - b|| <= c n eps ||a|| ||x||; compared
      // here with the forward bound against inv's.
      const Tensor b = random_matrix(mat(c.lead, c.n, 3), t, ++seed);
      const Tensor x = linalg::solve(a, b);
      EXPECT_LE(rel_err(matmul(a, x), b), kC * n * eps * cond) << what(c, t);
      const Tensor xv = linalg::solve(a, b.narrow(-1, 0, 1).squeeze(-1));
      EXPECT_EQ(xv.shape(), Shape(a.shape().begin(), a.shape().end() - 1));
      EXPECT_LE(rel_err(xv, x.narrow(-1, 0, 1).squeeze(-1)), kC * n * eps * cond);
      // Triangular solves with a well-conditioned factor (unit-diagonal L of the LU).
      const linalg::Lu f = linalg::lu(a);
      const double cl = cond_of(f.L);
      const Tensor y = linalg::solve_triangular(f.L, b, /*upper=*/false);
      EXPECT_LE(rel_err(matmul(f.L, y), b), kC * n * eps * cl) << what(c, t);
      const Tensor yu = linalg::solve_triangular(f.L + triu(a, 0) * 10.0, b, false, true, true);
      EXPECT_LE(rel_err(yu, y), kC * n * eps * cl) << "unitriangular ignores the diagonal";
      const Tensor bt = mT(b);  // [.., 3, n]: x Lᵀ = bᵀ
      const Tensor z = linalg::solve_triangular(mT(f.L), bt, /*upper=*/true, /*left=*/false);
      EXPECT_LE(rel_err(z, mT(y)), kC * n * eps * cl) << what(c, t);
    }
}

TEST(Linalg, ViewsInAndInputsUntouched) {
  // Transposed views, whose transpose is already contiguous (the layout the kernels take):
  // the kernels must work on a copy, leaving the caller's storage as it was.
  const Tensor x = random_matrix(Shape{2, 6, 6}, DType::F64, 90);
  const Tensor spd = (matmul(x, mT(x)) + identity(6, DType::F64) * 6.0).contiguous();
  const Tensor view = mT(spd), before = spd.clone();
  const double tol = kC * 6 * eps_of(DType::F64);
  const Tensor l = linalg::cholesky(view);
  EXPECT_LE(rel_err(matmul(l, mT(l)), spd), tol);
  EXPECT_EQ(rel_err(spd, before), 0.0);
  const Tensor gv = mT(x), g_before = x.clone();
  (void)linalg::lu(gv);
  (void)linalg::qr(gv);
  (void)linalg::svd(gv);
  (void)linalg::eigh(view);
  (void)linalg::inv(gv);
  (void)linalg::solve(gv, gv);
  (void)linalg::solve_triangular(gv, gv, /*upper=*/true);
  EXPECT_EQ(rel_err(x, g_before), 0.0);
  EXPECT_EQ(rel_err(spd, before), 0.0);
  const linalg::Qr f = linalg::qr(gv);
  EXPECT_LE(rel_err(matmul(f.Q, f.R), gv), tol);
}

TEST(Linalg, SolveBroadcastsBatchDims) {
  const Tensor a = random_matrix(Shape{2, 1, 4, 4}, DType::F64, 70);
  const Tensor b = random_matrix(Shape{3, 4, 2}, DType::F64, 71);
  const Tensor x = linalg::solve(a, b);
  ASSERT_EQ(x.shape(), (Shape{2, 3, 4, 2}));
  EXPECT_LE(rel_err(matmul(a, x), b.broadcast_to(Shape{2, 3, 4, 2})),
            kC * 4 * eps_of(DType::F64) * cond_of(a));
}

TEST(Linalg, DetAndSlogdetOfSpecialMatrices) {
  for (DType t : kTypes) {
    const Tensor singular =
        Tensor::from_vector<double>({1, 2, 3, 2, 4, 6, 1, 0, 1}, {3, 3}).cast(t);
    EXPECT_EQ(linalg::det(singular).item_double(), 0.0);
    const linalg::Slogdet s = linalg::slogdet(singular);
    EXPECT_EQ(s.sign.item_double(), 0.0);
    EXPECT_EQ(s.logabsdet.item_double(), -std::numeric_limits<double>::infinity());
    // A permutation with an odd number of swaps, in a batch with the identity.
    const Tensor p = Tensor::from_vector<double>(
                         {0, 1, 0, 1, 0, 0, 0, 0, 1, 1, 0, 0, 0, 1, 0, 0, 0, 1}, {2, 3, 3})
                         .cast(t);
    EXPECT_EQ(vals(linalg::det(p)), (std::vector<double>{-1.0, 1.0}));
    EXPECT_EQ(vals(linalg::slogdet(p).sign), (std::vector<double>{-1.0, 1.0}));
    EXPECT_EQ(vals(linalg::slogdet(p).logabsdet), (std::vector<double>{0.0, 0.0}));
    EXPECT_EQ(linalg::det(Tensor::empty(Shape{0, 0}, t)).item_double(), 1.0);
  }
}

TEST(Linalg, KronAndMatrixExpCompositions) {
  const Tensor a = Tensor::from_vector<double>({1, 2, 3, 4, 5, 6}, {2, 3});
  const Tensor b = Tensor::from_vector<double>({0, 1, -1, 2}, {2, 2});
  const Tensor k = linalg::kron(a, b);
  ASSERT_EQ(k.shape(), (Shape{4, 6}));
  const std::vector<double> kv = vals(k), av = vals(a), bv = vals(b);
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 3; ++j)
      for (int64_t r = 0; r < 2; ++r)
        for (int64_t s = 0; s < 2; ++s)
          EXPECT_EQ(kv[size_t((i * 2 + r) * 6 + j * 2 + s)],
                    av[size_t(i * 3 + j)] * bv[size_t(r * 2 + s)]);
  // exp of a nilpotent matrix is a finite sum; exp(0) = I; exp(a) exp(-a) = I.
  const Tensor nil = Tensor::from_vector<double>({0, 3, 5, 0, 0, 7, 0, 0, 0}, {3, 3});
  const Tensor want = Tensor::from_vector<double>({1, 3, 5 + 10.5, 0, 1, 7, 0, 0, 1}, {3, 3});
  // ||nil||_1 = 12: four squarings, each doubling the relative error.
  EXPECT_LE(rel_err(linalg::matrix_exp(nil), want), kC * 3 * eps_of(DType::F64) * 16);
  for (DType t : kTypes) {
    const Tensor x = random_matrix(Shape{3, 4, 6, 6}, t, 80);
    const Tensor id = identity(6, t).broadcast_to(x.shape());
    EXPECT_EQ(rel_err(linalg::matrix_exp(x * 0.0), id), 0.0);
    const Tensor prod_exp = matmul(linalg::matrix_exp(x), linalg::matrix_exp(-x));
    const double norm = vals(abs(x).sum({-2}).max())[0];
    // Squaring amplifies the rounding of the Taylor step by about e^(2 ||x||).
    EXPECT_LE(rel_err(prod_exp, id), kC * 6 * eps_of(t) * std::exp(2 * norm)) << dtype_name(t);
  }
}

// ---- the NumPy/SciPy oracle ----

struct Square {
  const char* name;
  int64_t n;
  std::vector<double> a, b;
  double det, sign, logabsdet;
  std::vector<double> inv, solve, spd, chol, sym, eigvalsh, svdvals, e_in, expm;
};
const Square kSquare[] = {
#define NUMR_LINALG_SQUARE
#include "data/linalg_oracle.inc"
#undef NUMR_LINALG_SQUARE
};
struct Rect {
  const char* name;
  int64_t m, n;
  std::vector<double> a, b, svdvals, pinv, lstsq, norms;
  double cond;
  int64_t rank;
  std::vector<double> residuals;
};
const Rect kRect[] = {
#define NUMR_LINALG_RECT
#include "data/linalg_oracle.inc"
#undef NUMR_LINALG_RECT
};

Tensor from(const std::vector<double>& v, const Shape& s, DType t) {
  return Tensor::from_vector<double>(v, s).cast(t);
}

TEST(LinalgOracle, SquareMatrices) {
  for (DType t : kTypes)
    for (const Square& c : kSquare) {
      SCOPED_TRACE(std::string(c.name) + " " + std::string(dtype_name(t)));
      const int64_t n = c.n;
      const double eps = eps_of(t), cn = kC * double(n);
      const Tensor a = from(c.a, {n, n}, t), b = from(c.b, {n, 2}, t);
      const double cond = cond_of(a);
      // det and log|det| move by about n eps cond(a) relative to themselves.
      EXPECT_NEAR(linalg::det(a).item_double(), c.det, cn * eps * cond * std::abs(c.det));
      const linalg::Slogdet s = linalg::slogdet(a);
      EXPECT_EQ(s.sign.item_double(), c.sign);
      EXPECT_NEAR(s.logabsdet.item_double(), c.logabsdet, cn * eps * cond);
      EXPECT_LE(rel_err(linalg::inv(a), from(c.inv, {n, n}, DType::F64)), cn * eps * cond);
      EXPECT_LE(rel_err(linalg::solve(a, b), from(c.solve, {n, 2}, DType::F64)), cn * eps * cond);
      const Tensor spd = from(c.spd, {n, n}, t);
      EXPECT_LE(rel_err(linalg::cholesky(spd), from(c.chol, {n, n}, DType::F64)),
                cn * eps * cond_of(spd));
      // Eigenvalues and singular values move by at most the perturbation's 2-norm (Weyl).
      const Tensor sym = from(c.sym, {n, n}, t);
      const double sym_norm = vals(linalg::svdvals(sym.cast(DType::F64)))[0];
      const std::vector<double> w = vals(linalg::eigvalsh(sym));
      for (int64_t i = 0; i < n; ++i)
        EXPECT_NEAR(w[size_t(i)], c.eigvalsh[size_t(i)], cn * eps * sym_norm);
      const std::vector<double> sv = vals(linalg::svdvals(a));
      for (int64_t i = 0; i < n; ++i)
        EXPECT_NEAR(sv[size_t(i)], c.svdvals[size_t(i)], cn * eps * c.svdvals[0]);
      // ||e_in||_1 = 5: three squarings, each doubling the relative error, and the
      // exponential's own condition of about e^(2 ||x||) bounds the rest.
      const Tensor e = linalg::matrix_exp(from(c.e_in, {n, n}, t));
      EXPECT_LE(rel_err(e, from(c.expm, {n, n}, DType::F64)), cn * eps * std::exp(10.0));
    }
}

TEST(LinalgOracle, RectangularSingularValues) {
  for (DType t : kTypes)
    for (const Rect& c : kRect) {
      const Tensor a = from(c.a, {c.m, c.n}, t);
      const std::vector<double> sv = vals(linalg::svdvals(a));
      ASSERT_EQ(sv.size(), c.svdvals.size()) << c.name;
      for (size_t i = 0; i < sv.size(); ++i)
        EXPECT_NEAR(sv[i], c.svdvals[i], kC * double(std::max(c.m, c.n)) * eps_of(t) * c.svdvals[0])
            << c.name;
    }
}

// NumPy's lstsq is LAPACK's gelsd: the minimum-norm solution at any rank, with the rank,
// the singular values and (full rank, m > n) the residuals.
TEST(LinalgOracle, LstsqGelsd) {
  for (DType t : kTypes)
    for (const Rect& c : kRect) {
      SCOPED_TRACE(std::string(c.name) + " " + std::string(dtype_name(t)));
      const int64_t m = c.m, n = c.n, k = std::min(m, n);
      const double eps = eps_of(t), cn = kC * double(std::max(m, n));
      const Tensor a = from(c.a, {m, n}, t), b = from(c.b, {m, 2}, t);
      const linalg::Lstsq r = linalg::lstsq(a, b, "gelsd");
      EXPECT_EQ(r.rank.dtype(), DType::I64);
      EXPECT_EQ(r.rank.item<int64_t>(), c.rank);
      ASSERT_EQ(r.singular_values.shape(), (Shape{k}));
      const std::vector<double> sv = vals(r.singular_values);
      for (int64_t i = 0; i < k; ++i)
        EXPECT_NEAR(sv[size_t(i)], c.svdvals[size_t(i)], cn * eps * c.svdvals[0]);
      // The solution's condition: that of the problem restricted to the kept singular values,
      // squared when the residual is not small (m > n).
      const double kappa = c.svdvals[0] / c.svdvals[size_t(c.rank - 1)];
      const double lsq = m > n ? kappa * kappa : kappa;
      EXPECT_LE(rel_err(r.solution, from(c.lstsq, {n, 2}, DType::F64)), cn * eps * lsq);
      if (c.residuals.empty()) {
        EXPECT_EQ(r.residuals.shape(), (Shape{0}));
        continue;
      }
      ASSERT_EQ(r.residuals.shape(), (Shape{2}));
      const std::vector<double> res = vals(r.residuals);
      // The residual r = b - a x moves by at most about c n eps kappa ||b|| (its condition is
      // kappa, not kappa²), so ||r||² by about 2 ||r|| times that.
      double b_norm = 0;
      for (double v : c.b) b_norm += v * v;
      const double dr = cn * eps * kappa * std::sqrt(b_norm);
      for (size_t i = 0; i < 2; ++i)
        EXPECT_NEAR(res[i], c.residuals[i], 2 * std::sqrt(c.residuals[i]) * dr + dr * dr);
    }
}

TEST(Linalg, LstsqDrivers) {
  for (DType t : kTypes) {
    // A rank-deficient tall batch: two equal columns. gelsd gives the minimum-norm solution,
    // which splits the weight evenly between them, and rank 2 of 3.
    const Tensor base = random_matrix(Shape{2, 6, 2}, t, 71);
    const Tensor a = cat({base, base.narrow(-1, 1, 1)}, -1);
    const Tensor b = random_matrix(Shape{2, 6, 2}, t, 72);
    const linalg::Lstsq r = linalg::lstsq(a, b, "gelsd");
    EXPECT_EQ(vals(r.rank), (std::vector<double>{2, 2}));
    EXPECT_EQ(r.residuals.shape(), (Shape{0}));  // not of full rank
    EXPECT_EQ(r.singular_values.shape(), (Shape{2, 3}));
    const double tol = kC * 6 * eps_of(t) * cond_of(base) * cond_of(base);
    EXPECT_LE(rel_err(r.solution.narrow(-2, 1, 1), r.solution.narrow(-2, 2, 1)), tol);
    // The solution of the full-rank problem on base, its second row split in two.
    const Tensor x2 = linalg::lstsq(base, b);
    EXPECT_LE(rel_err(r.solution.narrow(-2, 0, 1), x2.narrow(-2, 0, 1)), tol);
    EXPECT_LE(rel_err(r.solution.narrow(-2, 1, 1) * 2.0, x2.narrow(-2, 1, 1)), tol);
    // rcond above every ratio s_i / s_max but the first keeps one singular value.
    const std::vector<double> s = vals(r.singular_values);
    const double rc = std::max(s[1] / s[0], s[4] / s[3]) * 1.01;
    EXPECT_EQ(vals(linalg::lstsq(a, b, "gelsd", rc).rank), (std::vector<double>{1, 1}));

    // gels: the QR solution; residuals for m > n, no rank or singular values.
    const linalg::Lstsq q = linalg::lstsq(base, b, "gels");
    EXPECT_LE(rel_err(q.solution, x2), 0.0);
    EXPECT_EQ(q.rank.shape(), (Shape{0}));
    EXPECT_EQ(q.singular_values.shape(), (Shape{0}));
    const Tensor res = matmul(base, x2) - b;
    EXPECT_LE(rel_err(q.residuals.unsqueeze(-1), sum(res * res, {-2}).unsqueeze(-1)), 0.0);
    // A full-rank tall problem: gelsd's residuals are gels's.
    const linalg::Lstsq d = linalg::lstsq(base, b, "gelsd");
    EXPECT_LE(rel_err(d.residuals.unsqueeze(-1), q.residuals.unsqueeze(-1)),
              kC * 6 * eps_of(t) * cond_of(base) * cond_of(base));
    // A vector b: solution [n], residuals [].
    const linalg::Lstsq v = linalg::lstsq(base, b.narrow(-1, 0, 1).squeeze(-1), "gelsd");
    EXPECT_EQ(v.solution.shape(), (Shape{2, 2}));
    EXPECT_EQ(v.residuals.shape(), (Shape{2}));
    // No columns: x = 0, rank 0.
    const linalg::Lstsq e =
        linalg::lstsq(zeros(Shape{4, 0}, t), random_matrix(Shape{4, 2}, t, 73), "gelsd");
    EXPECT_EQ(e.solution.shape(), (Shape{0, 2}));
    EXPECT_EQ(e.rank.item<int64_t>(), 0);
  }
}

TEST(LinalgOracle, NormsPinvLstsqRank) {
  for (DType t : kTypes)
    for (const Rect& c : kRect) {
      SCOPED_TRACE(std::string(c.name) + " " + std::string(dtype_name(t)));
      const int64_t m = c.m, n = c.n, k = std::min(m, n);
      const double eps = eps_of(t), cn = kC * double(std::max(m, n));
      const Tensor a = from(c.a, {m, n}, t);
      const double s_max = c.svdvals[0], s_min = c.svdvals[size_t(k - 1)];
      const bool full_rank = c.rank == k;
      EXPECT_EQ(linalg::matrix_rank(a).item<int64_t>(), c.rank);
      // Every norm moves by at most about its own size times n eps (the 2-norm of the
      // rounding of a is at most that of s_max).
      const std::vector<double> got = {
          linalg::matrix_norm(a, "fro").item_double(), linalg::matrix_norm(a, "nuc").item_double(),
          linalg::matrix_norm(a, 1).item_double(),     linalg::matrix_norm(a, -1).item_double(),
          linalg::matrix_norm(a, 2).item_double(),     linalg::matrix_norm(a, -2).item_double(),
          linalg::matrix_norm(a, kInf).item_double(),  linalg::matrix_norm(a, -kInf).item_double()};
      for (size_t i = 0; i < got.size(); ++i)
        EXPECT_NEAR(got[i], c.norms[i], cn * eps * std::max(c.norms[i], s_max)) << "norm " << i;
      if (!full_rank) continue;
      const double kappa = s_max / s_min;
      EXPECT_NEAR(linalg::cond(a).item_double(), c.cond, cn * eps * kappa * c.cond);
      EXPECT_LE(rel_err(linalg::pinv(a), from(c.pinv, {n, m}, DType::F64)), cn * eps * kappa);
      // The least-squares solution's condition is about kappa^2 when the residual is not
      // small (m > n); kappa otherwise.
      const double lsq = m > n ? kappa * kappa : kappa;
      EXPECT_LE(rel_err(linalg::lstsq(a, from(c.b, {m, 2}, t)), from(c.lstsq, {n, 2}, DType::F64)),
                cn * eps * lsq);
    }
  const Tensor x = Tensor::from_vector<double>({3, -4, 0, 12}, {2, 2});
  EXPECT_EQ(linalg::vector_norm(x).item_double(), 13.0);
  EXPECT_EQ(vals(linalg::vector_norm(x, 1, {-1})), (std::vector<double>{7, 12}));
  EXPECT_EQ(linalg::vector_norm(x, kInf).item_double(), 12.0);
  EXPECT_EQ(linalg::vector_norm(x, -kInf).item_double(), 0.0);
  EXPECT_EQ(linalg::vector_norm(x, 0).item_double(), 3.0);
  EXPECT_NEAR(linalg::vector_norm(x, 3).item_double(), std::cbrt(27.0 + 64 + 1728), 1e-12);
  EXPECT_EQ(linalg::vector_norm(x, 2, {0}, true).shape(), (Shape{1, 2}));
}

// ---- errors ----

template <class E>
void expect_error(const std::function<void()>& f, const std::string& prefix,
                  const std::string& part = "") {
  try {
    f();
    ADD_FAILURE() << "no exception; expected " << prefix;
  } catch (const E& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.rfind(prefix, 0), 0u) << msg;
    EXPECT_NE(msg.find(part), std::string::npos) << msg;
  }
}

TEST(LinalgErrors, DtypesAndShapes) {
  const Tensor i64 = zeros(Shape{3, 3}, DType::I64);
  expect_error<UnsupportedDType>([&] { linalg::cholesky(i64); }, "[linalg.cholesky]", "I64");
  expect_error<UnsupportedDType>([&] { linalg::inv(i64); }, "[linalg.inv]");
  expect_error<UnsupportedDType>([&] { linalg::det(i64); }, "[linalg.det]");
  expect_error<UnsupportedDType>([&] { linalg::svd(i64); }, "[linalg.svd]");
  expect_error<UnsupportedDType>([&] { linalg::eigh(i64); }, "[linalg.eigh]");
  expect_error<UnsupportedDType>([&] { linalg::qr(i64); }, "[linalg.qr]");
  expect_error<UnsupportedDType>([&] { linalg::matrix_exp(i64); }, "[linalg.matrix_exp]");
  const Tensor rect = zeros(Shape{2, 3}, DType::F64);
  expect_error<ShapeMismatch>([&] { linalg::cholesky(rect); }, "[linalg.cholesky]", "square");
  expect_error<ShapeMismatch>([&] { linalg::inv(rect); }, "[linalg.inv]", "square");
  expect_error<ShapeMismatch>([&] { linalg::det(rect); }, "[linalg.det]", "square");
  expect_error<ShapeMismatch>([&] { linalg::slogdet(rect); }, "[linalg.slogdet]", "square");
  expect_error<ShapeMismatch>([&] { linalg::eigh(rect); }, "[linalg.eigh]", "square");
  expect_error<ShapeMismatch>([&] { linalg::matrix_exp(rect); }, "[linalg.matrix_exp]");
  expect_error<InvalidDimension>([&] { linalg::svd(zeros(Shape{4}, DType::F64)); }, "[linalg.svd]");
  expect_error<InvalidArgument>([&] { linalg::qr(rect, "full"); }, "[linalg.qr]", "mode");
  expect_error<InvalidArgument>([&] { linalg::matrix_norm(rect, 3); }, "[linalg.matrix_norm]");
  expect_error<InvalidArgument>([&] { linalg::matrix_norm(rect, "max"); }, "[linalg.matrix_norm]");
  expect_error<UnsupportedDType>([&] { linalg::vector_norm(i64); }, "[linalg.vector_norm]");
  expect_error<ShapeMismatch>(
      [&] {
        linalg::lstsq(rect, zeros(Shape{3, 1}, DType::F64));
      },
      "[linalg.lstsq]");
  expect_error<ShapeMismatch>([&] { linalg::cond(rect, 1); }, "[linalg.cond]", "square");
  const Tensor a = identity(3, DType::F64);
  expect_error<ShapeMismatch>(
      [&] {
        linalg::solve(a, zeros(Shape{4, 2}, DType::F64));
      },
      "[linalg.solve]");
  expect_error<DTypeMismatch>(
      [&] {
        linalg::solve(a, zeros(Shape{3, 2}, DType::F32));
      },
      "[linalg.solve]");
  expect_error<ShapeMismatch>(
      [&] {
        linalg::solve_triangular(a, zeros(Shape{2, 3}, DType::F64), true);
      },
      "[linalg.solve_triangular]");
  expect_error<BroadcastError>(
      [&] {
        linalg::solve(zeros(Shape{2, 3, 3}, DType::F64), zeros(Shape{4, 3, 1}, DType::F64));
      },
      "[linalg.solve]");
}

TEST(LinalgErrors, LstsqDriver) {
  const Tensor a = zeros(Shape{4, 3}, DType::F64), b = zeros(Shape{4, 2}, DType::F64);
  expect_error<InvalidArgument>([&] { linalg::lstsq(a, b, "gelsy"); }, "[linalg.lstsq]", "driver");
  expect_error<InvalidArgument>(
      [&] { linalg::lstsq(a, b, "gelsd", std::numeric_limits<double>::quiet_NaN()); },
      "[linalg.lstsq]", "rcond");
  expect_error<ShapeMismatch>(
      [&] {
        linalg::lstsq(a, zeros(Shape{3, 2}, DType::F64), "gelsd");
      },
      "[linalg.lstsq]");
}

TEST(LinalgErrors, SingularAndNotPositiveDefinite) {
  for (DType t : kTypes) {
    const Tensor singular = Tensor::from_vector<double>({1, 2, 2, 4}, {2, 2}).cast(t);
    expect_error<InvalidArgument>([&] { linalg::inv(singular); }, "[linalg.inv]", "singular");
    expect_error<InvalidArgument>([&] { linalg::solve(singular, identity(2, t)); },
                                  "[linalg.solve]", "singular");
    // A composite names itself, not the op it is built from.
    expect_error<InvalidArgument>([&] { linalg::cond(singular, 1); }, "[linalg.cond]", "singular");
    // The 2-norm condition of a singular matrix: its smallest singular value is zero up to
    // the rounding of the SVD, about eps s_max.
    EXPECT_GE(linalg::cond(singular).item_double(), 1.0 / (kC * 2 * eps_of(t)));
    const Tensor batch = stack({identity(2, t), -identity(2, t)}, 0);
    expect_error<InvalidArgument>([&] { linalg::cholesky(batch); }, "[linalg.cholesky]",
                                  "batch element 1");
    const Tensor indefinite = Tensor::from_vector<double>({1, 2, 2, 1}, {2, 2}).cast(t);
    expect_error<InvalidArgument>([&] { linalg::cholesky(indefinite); }, "[linalg.cholesky]",
                                  "not positive-definite");
  }
}

TEST(LinalgErrors, BackendsWithoutKernels) {
  EXPECT_NE(linalg_kernels_for(Device::cpu()), nullptr);
  EXPECT_NE(linalg_kernels_for(Device::cuda(0)), nullptr);
  EXPECT_EQ(linalg_kernels_for(Device::webgpu(0)), &composed_linalg_kernels());
}

// ---- gradients (F64, first and second order where asked) ----

void check(const std::string& what, const test::VarFn& f, const std::vector<Tensor>& in,
           bool second) {
  EXPECT_EQ(test::gradcheck(f, in), "") << what;
  if (second) {
    EXPECT_EQ(test::gradgradcheck(f, in), "") << what;
  }
}

// x + 4 I: diagonally dominant for entries in [-2, 2] at n = 3, so far from singular.
Var shifted(const Var& x) { return x + eye(x.shape().back(), x.shape().back(), DType::F64) * 4.0; }

TEST(LinalgGrad, InvDetSlogdetSolve) {
  const Tensor x = test::grad_input({2, 3, 3}, 1);
  check(
      "inv", [](const std::vector<Var>& v) { return linalg::inv(shifted(v[0])); }, {x}, true);
  check(
      "det", [](const std::vector<Var>& v) { return linalg::det(shifted(v[0])); }, {x}, true);
  check(
      "slogdet",
      [](const std::vector<Var>& v) { return linalg::slogdet(shifted(v[0]) * -1.0).logabsdet; },
      {x}, true);
  const Tensor b = test::grad_input({2, 3, 2}, 2);
  check(
      "solve", [](const std::vector<Var>& v) { return linalg::solve(shifted(v[0]), v[1]); }, {x, b},
      true);
  check(
      "solve, vector b broadcast",
      [](const std::vector<Var>& v) { return linalg::solve(shifted(v[0]), v[1]); },
      {x, test::grad_input({3}, 3)}, true);
}

TEST(LinalgGrad, SolveTriangular) {
  const Tensor x = test::grad_input({2, 3, 3}, 4);
  for (bool upper : {false, true})
    for (bool left : {true, false})
      for (bool unit : {false, true}) {
        const Tensor b = test::grad_input(left ? Shape{2, 3, 2} : Shape{2, 2, 3}, 5);
        check(
            std::string("upper ") + (upper ? "1" : "0") + " left " + (left ? "1" : "0") + " unit " +
                (unit ? "1" : "0"),
            [=](const std::vector<Var>& v) {
              return linalg::solve_triangular(shifted(v[0]), v[1], upper, left, unit);
            },
            {x, b}, upper && left);
      }
}

TEST(LinalgGrad, Cholesky) {
  const Tensor x = test::grad_input({2, 3, 3}, 6);
  for (bool upper : {false, true})
    check(
        upper ? "upper" : "lower",
        [upper](const std::vector<Var>& v) {
          const Var a = shifted(matmul(v[0], transpose(v[0], -2, -1)));
          return linalg::cholesky(a, upper);
        },
        {x}, !upper);
}

TEST(LinalgGrad, Eigh) {
  // A symmetric input made from x; the loss reads the eigenvalues and V ∘ V, which does not
  // depend on the signs LAPACK picks for the eigenvectors.
  const Tensor x = test::grad_input({2, 4, 4}, 7);
  check(
      "eigh",
      [](const std::vector<Var>& v) {
        const Var a = (v[0] + transpose(v[0], -2, -1)) * 0.5;
        const linalg::EighVar r = linalg::eigh(a);
        return cat({flatten(r.eigenvalues), flatten(r.eigenvectors * r.eigenvectors)}, 0);
      },
      {x}, false);
  check(
      "eigvalsh",
      [](const std::vector<Var>& v) {
        return linalg::eigvalsh((v[0] + transpose(v[0], -2, -1)) * 0.5);
      },
      {x}, false);
}

TEST(LinalgGrad, Qr) {
  for (const Shape& shape : {Shape{2, 5, 3}, Shape{3, 3}}) {
    check(
        "qr " + shape_str(shape),
        [](const std::vector<Var>& v) {
          const linalg::QrVar r = linalg::qr(v[0]);
          return cat({flatten(r.Q), flatten(r.R)}, 0);
        },
        {test::grad_input(shape, 12)}, false);
  }
  const Var wide(test::grad_input({3, 5}, 13), true);
  expect_error<InvalidArgument>([&] { linalg::qr(wide); }, "[linalg.qr]", "m >= n");
  expect_error<InvalidArgument>(
      [&] {
        linalg::qr(Var(test::grad_input({5, 3}, 13), true), "complete");
      },
      "[linalg.qr]", "reduced");
}

TEST(LinalgGrad, Svd) {
  // The loss reads S, U ∘ U and Vh ∘ Vh: it does not depend on the signs of the singular
  // vector pairs.
  for (const Shape& shape : {Shape{2, 4, 3}, Shape{2, 3, 4}, Shape{3, 3}}) {
    check(
        "svd " + shape_str(shape),
        [](const std::vector<Var>& v) {
          const linalg::SvdVar r = linalg::svd(v[0], /*full_matrices=*/false);
          return cat({flatten(r.S), flatten(r.U * r.U), flatten(r.Vh * r.Vh)}, 0);
        },
        {test::grad_input(shape, 14)}, false);
    check(
        "svdvals " + shape_str(shape),
        [](const std::vector<Var>& v) { return linalg::svdvals(v[0]); },
        {test::grad_input(shape, 15)}, false);
  }
  expect_error<InvalidArgument>(
      [&] {
        linalg::svd(Var(test::grad_input({4, 3}, 16), true));
      },
      "[linalg.svd]", "full_matrices");
}

TEST(LinalgGrad, NormsPinvLstsqCond) {
  const Tensor x = test::grad_input({2, 4, 3}, 17);
  for (double ord : {2.0, 1.0, 3.0, kInf})
    check(
        "vector_norm " + std::to_string(ord),
        [ord](const std::vector<Var>& v) { return linalg::vector_norm(v[0], ord, {-1}); }, {x},
        ord == 2.0);
  check(
      "matrix_norm fro", [](const std::vector<Var>& v) { return linalg::matrix_norm(v[0]); }, {x},
      true);
  for (double ord : {2.0, -2.0, 1.0, -kInf})
    check(
        "matrix_norm " + std::to_string(ord),
        [ord](const std::vector<Var>& v) { return linalg::matrix_norm(v[0], ord); }, {x}, false);
  check(
      "nuc", [](const std::vector<Var>& v) { return linalg::matrix_norm(v[0], "nuc"); }, {x},
      false);
  check(
      "cond", [](const std::vector<Var>& v) { return linalg::cond(v[0]); }, {x}, false);
  check(
      "pinv", [](const std::vector<Var>& v) { return linalg::pinv(v[0]); }, {x}, false);
  check(
      "lstsq, tall", [](const std::vector<Var>& v) { return linalg::lstsq(v[0], v[1]); },
      {x, test::grad_input({2, 4, 2}, 18)}, false);
  check(
      "lstsq, wide, vector b", [](const std::vector<Var>& v) { return linalg::lstsq(v[0], v[1]); },
      {test::grad_input({3, 5}, 19), test::grad_input({3}, 20)}, false);
  check(
      "lstsq gelsd, tall",
      [](const std::vector<Var>& v) { return linalg::lstsq(v[0], v[1], "gelsd").solution; },
      {x, test::grad_input({2, 4, 2}, 18)}, false);
  check(
      "lstsq gelsd, wide",
      [](const std::vector<Var>& v) { return linalg::lstsq(v[0], v[1], "gelsd").solution; },
      {test::grad_input({3, 5}, 19), test::grad_input({3, 2}, 21)}, false);
  check(
      "lstsq gels, residuals",
      [](const std::vector<Var>& v) { return linalg::lstsq(v[0], v[1], "gels").residuals; },
      {x, test::grad_input({2, 4, 2}, 18)}, false);
}

TEST(LinalgGrad, KronAndMatrixExp) {
  check(
      "kron", [](const std::vector<Var>& v) { return linalg::kron(v[0], v[1]); },
      {test::grad_input({2, 2, 3}, 8), test::grad_input({3, 2}, 9)}, true);
  check(
      "matrix_exp, small", [](const std::vector<Var>& v) { return linalg::matrix_exp(v[0] * 0.2); },
      {test::grad_input({2, 3, 3}, 10)}, true);
  check(
      "matrix_exp, squared", [](const std::vector<Var>& v) { return linalg::matrix_exp(v[0]); },
      {test::grad_input({3, 3}, 11)}, false);
}

}  // namespace
}  // namespace numr
