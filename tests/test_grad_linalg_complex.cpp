// Gradients of numr::linalg's Var forms on complex input, against central differences in
// Complex128 (first order; second order where cheap). Each input is the F64 pair view
// [.., 2] of a complex tensor (view_as_complex inside the function), so the gradient checked
// is PyTorch's dL/dx + i dL/dy; complex results are returned as their (re, im) pairs. Losses
// through singular and eigen vectors do not depend on each vector's phase; losses that do
// are refused. Closed-form gradients from NumPy at fixed matrices (tests/data/
// linalg_grad_oracle.inc, scripts/linalg_grad_oracle.py). Also the complex Tensor forms of
// kron and matrix_exp.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "numr/numr.h"
#include "support/gradcheck.h"
#include "support/harness.h"

namespace numr {
namespace {

constexpr double kEps = std::numeric_limits<double>::epsilon();

// A complex input of `shape` as its F64 pairs [shape.., 2], parts uniform in [-2, 2].
Tensor pairs(Shape shape, uint64_t seed) {
  shape.push_back(2);
  return test::grad_input(shape, seed);
}

Var cx(const Var& x) { return view_as_complex(x); }
Var parts(const Var& z) { return view_as_real(z); }
Var mh(const Var& z) { return conj(transpose(z, -2, -1)); }
// |z|² as a real Var.
Var abs2(const Var& z) { return real(z * conj(z)); }
// The real r as a complex Var (r + 0i).
Var as_complex(const Var& r) { return complex(r, r * 0.0); }

Tensor complex_eye(int64_t n) { return eye(n, n, DType::F64).cast(DType::Complex128); }

// z + 4 I: far from singular for parts in [-2, 2] at n = 3.
Var shifted(const Var& z) { return z + complex_eye(z.shape().back()) * 4.0; }

void check(const std::string& what, const test::VarFn& f, const std::vector<Tensor>& in,
           bool second) {
  EXPECT_EQ(test::gradcheck(f, in), "") << what;
  if (second) {
    EXPECT_EQ(test::gradgradcheck(f, in), "") << what;
  }
}

// backward of f(x) on the complex input x must raise InvalidArgument naming op.
void expect_refused(const std::string& op, const std::function<Var(const Var&)>& f,
                    const Tensor& x) {
  const Var v(x, true);
  try {
    (void)backward(f(cx(v)));
    ADD_FAILURE() << "no exception; expected [" << op << "]";
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(std::string(e.what()).rfind("[" + op + "]", 0), 0u) << e.what();
  }
}

TEST(GradLinalgComplex, InvDetSlogdet) {
  const Tensor x = pairs({2, 3, 3}, 1);
  check(
      "inv", [](const std::vector<Var>& v) { return parts(linalg::inv(shifted(cx(v[0])))); }, {x},
      true);
  check(
      "det", [](const std::vector<Var>& v) { return parts(linalg::det(shifted(cx(v[0])))); }, {x},
      true);
  check(
      "|det|", [](const std::vector<Var>& v) { return abs(linalg::det(cx(v[0]))); }, {x}, true);
  // Both results: logabsdet and the phase that the complex sign carries.
  check(
      "slogdet",
      [](const std::vector<Var>& v) {
        const linalg::SlogdetVar r = linalg::slogdet(cx(v[0]));
        return cat({flatten(r.logabsdet), flatten(parts(r.sign))}, 0);
      },
      {x}, true);
  check(
      "slogdet sign",
      [](const std::vector<Var>& v) { return parts(linalg::slogdet(shifted(cx(v[0]))).sign); },
      {pairs({3, 3}, 2)}, false);
  // The sign of a real matrix (±1) is piecewise constant: no gradient, as in PyTorch.
  EXPECT_FALSE(linalg::slogdet(Var(test::grad_input({3, 3}, 2), true)).sign.requires_grad());
  EXPECT_TRUE(linalg::slogdet(cx(Var(pairs({3, 3}, 2), true))).sign.requires_grad());
}

TEST(GradLinalgComplex, Solve) {
  const Tensor x = pairs({2, 3, 3}, 3);
  check(
      "solve",
      [](const std::vector<Var>& v) { return parts(linalg::solve(shifted(cx(v[0])), cx(v[1]))); },
      {x, pairs({2, 3, 2}, 4)}, true);
  check(
      "solve, vector b broadcast",
      [](const std::vector<Var>& v) { return parts(linalg::solve(shifted(cx(v[0])), cx(v[1]))); },
      {x, pairs({3}, 5)}, true);
}

TEST(GradLinalgComplex, SolveTriangular) {
  const Tensor x = pairs({2, 3, 3}, 6);
  for (bool upper : {false, true})
    for (bool left : {true, false})
      for (bool unit : {false, true}) {
        const Tensor b = pairs(left ? Shape{2, 3, 2} : Shape{2, 2, 3}, 7);
        check(
            std::string("upper ") + (upper ? "1" : "0") + " left " + (left ? "1" : "0") + " unit " +
                (unit ? "1" : "0"),
            [=](const std::vector<Var>& v) {
              return parts(
                  linalg::solve_triangular(shifted(cx(v[0])), cx(v[1]), upper, left, unit));
            },
            {x, b}, upper && left);
      }
}

TEST(GradLinalgComplex, Cholesky) {
  // A Hermitian positive-definite a = z zᴴ + 4 I.
  const Tensor x = pairs({2, 3, 3}, 8);
  for (bool upper : {false, true})
    check(
        upper ? "upper" : "lower",
        [upper](const std::vector<Var>& v) {
          const Var z = cx(v[0]);
          return parts(linalg::cholesky(shifted(matmul(z, mh(z))), upper));
        },
        {x}, !upper);
}

TEST(GradLinalgComplex, Eigh) {
  // A Hermitian a from z; the loss reads the eigenvalues, |V|² and V diag(exp(w / 2)) Vᴴ,
  // none of which depends on the phases LAPACK picks for the eigenvectors.
  const auto hermitian = [](const Var& z) { return (z + mh(z)) * 0.5; };
  check(
      "eigh",
      [&](const std::vector<Var>& v) {
        const linalg::EighVar r = linalg::eigh(hermitian(cx(v[0])));
        const Var f = unsqueeze(as_complex(exp(r.eigenvalues * 0.5)), -2);
        const Var g = matmul(r.eigenvectors * f, mh(r.eigenvectors));
        return cat({flatten(r.eigenvalues), flatten(abs2(r.eigenvectors)), flatten(parts(g))}, 0);
      },
      {pairs({2, 4, 4}, 9)}, false);
  check(
      "eigh 2x2, second order",
      [&](const std::vector<Var>& v) {
        const linalg::EighVar r = linalg::eigh(hermitian(cx(v[0])));
        return cat({flatten(r.eigenvalues), flatten(abs2(r.eigenvectors))}, 0);
      },
      {pairs({2, 2}, 10)}, true);
  check(
      "eigvalsh", [&](const std::vector<Var>& v) { return linalg::eigvalsh(hermitian(cx(v[0]))); },
      {pairs({2, 3, 3}, 11)}, false);
  // The real part of V depends on each eigenvector's phase: no gradient.
  expect_refused(
      "linalg.eigh",
      [&](const Var& z) { return sum(real(linalg::eigh(hermitian(z)).eigenvectors)); },
      pairs({3, 3}, 12));
}

TEST(GradLinalgComplex, Qr) {
  // R's diagonal is real (LAPACK's Householder), which makes Q and R unique: the loss reads
  // them directly.
  for (const Shape& shape : {Shape{2, 5, 3}, Shape{3, 3}}) {
    check(
        "qr " + shape_str(shape),
        [](const std::vector<Var>& v) {
          const linalg::QrVar r = linalg::qr(cx(v[0]));
          return cat({flatten(parts(r.Q)), flatten(parts(r.R))}, 0);
        },
        {pairs(shape, 13)}, false);
  }
}

TEST(GradLinalgComplex, Svd) {
  // The loss reads S, |U|², |Vh|² and U diag(S²) Vh: none depends on the phase each pair of
  // singular vectors shares.
  for (const Shape& shape : {Shape{2, 4, 3}, Shape{2, 3, 4}, Shape{3, 3}}) {
    check(
        "svd " + shape_str(shape),
        [](const std::vector<Var>& v) {
          const linalg::SvdVar r = linalg::svd(cx(v[0]), /*full_matrices=*/false);
          const Var g = matmul(r.U * unsqueeze(as_complex(r.S * r.S), -2), r.Vh);
          return cat({flatten(r.S), flatten(abs2(r.U)), flatten(abs2(r.Vh)), flatten(parts(g))}, 0);
        },
        {pairs(shape, 14)}, false);
    check(
        "svdvals " + shape_str(shape),
        [](const std::vector<Var>& v) { return linalg::svdvals(cx(v[0])); }, {pairs(shape, 15)},
        false);
  }
  check(
      "svd square, full_matrices",
      [](const std::vector<Var>& v) {
        const linalg::SvdVar r = linalg::svd(cx(v[0]));
        return cat({flatten(r.S), flatten(abs2(r.U)), flatten(abs2(r.Vh))}, 0);
      },
      {pairs({3, 3}, 16)}, false);
  expect_refused(
      "linalg.svd",
      [](const Var& z) { return sum(real(linalg::svd(z, /*full_matrices=*/false).U)); },
      pairs({4, 3}, 17));
}

TEST(GradLinalgComplex, NormsPinvLstsqCond) {
  const Tensor x = pairs({2, 4, 3}, 18);
  for (double ord : {2.0, 1.0, 3.0})
    check(
        "vector_norm " + std::to_string(ord),
        [ord](const std::vector<Var>& v) { return linalg::vector_norm(cx(v[0]), ord, {-1}); }, {x},
        ord == 2.0);
  check(
      "matrix_norm fro", [](const std::vector<Var>& v) { return linalg::matrix_norm(cx(v[0])); },
      {x}, true);
  for (double ord : {2.0, -2.0, 1.0})
    check(
        "matrix_norm " + std::to_string(ord),
        [ord](const std::vector<Var>& v) { return linalg::matrix_norm(cx(v[0]), ord); }, {x},
        false);
  check(
      "nuc", [](const std::vector<Var>& v) { return linalg::matrix_norm(cx(v[0]), "nuc"); }, {x},
      false);
  check(
      "cond", [](const std::vector<Var>& v) { return linalg::cond(cx(v[0])); }, {x}, false);
  check(
      "pinv", [](const std::vector<Var>& v) { return parts(linalg::pinv(cx(v[0]))); }, {x}, false);
  const auto lstsq = [](const std::vector<Var>& v) {
    return parts(linalg::lstsq(cx(v[0]), cx(v[1])));
  };
  check("lstsq, tall", lstsq, {x, pairs({2, 4, 2}, 19)}, false);
  check("lstsq, wide, vector b", lstsq, {pairs({3, 5}, 20), pairs({3}, 21)}, false);
  check(
      "lstsq gelsd, tall",
      [](const std::vector<Var>& v) {
        return parts(linalg::lstsq(cx(v[0]), cx(v[1]), "gelsd").solution);
      },
      {x, pairs({2, 4, 2}, 19)}, false);
  check(
      "lstsq gels, residuals",
      [](const std::vector<Var>& v) { return linalg::lstsq(cx(v[0]), cx(v[1]), "gels").residuals; },
      {x, pairs({2, 4, 2}, 19)}, false);
}

TEST(GradLinalgComplex, KronAndMatrixExp) {
  check(
      "kron", [](const std::vector<Var>& v) { return parts(linalg::kron(cx(v[0]), cx(v[1]))); },
      {pairs({2, 2, 3}, 22), pairs({3, 2}, 23)}, true);
  check(
      "matrix_exp, small",
      [](const std::vector<Var>& v) { return parts(linalg::matrix_exp(cx(v[0]) * 0.2)); },
      {pairs({2, 3, 3}, 24)}, true);
  check(
      "matrix_exp, squared",
      [](const std::vector<Var>& v) { return parts(linalg::matrix_exp(cx(v[0]))); },
      {pairs({3, 3}, 25)}, false);
}

// max |got - want| / max |want| over all entries of complex tensors.
double rel_err(const Tensor& got, const Tensor& want) {
  const double num = abs(got - want).max().item_double();
  return num / abs(want).max().item_double();
}

TEST(LinalgComplexCompose, KronIsTheProductOfParts) {
  const Tensor a = view_as_complex(pairs({2, 2, 3}, 26)), b = view_as_complex(pairs({3, 2}, 27));
  const Tensor ar = real(a).contiguous(), ai = imag(a).contiguous();
  const Tensor br = real(b).contiguous(), bi = imag(b).contiguous();
  const Tensor want = complex(linalg::kron(ar, br) - linalg::kron(ai, bi),
                              linalg::kron(ar, bi) + linalg::kron(ai, br));
  // Each entry is one complex product of two F64 numbers: a few roundings of its size.
  EXPECT_LE(rel_err(linalg::kron(a, b), want), 4 * kEps);
}

TEST(LinalgComplexCompose, MatrixExpOfHermitianMatchesTheEigendecomposition) {
  // exp(a) = V diag(exp(w)) Vᴴ for Hermitian a; both sides are backward stable, each within
  // a small multiple of n eps ||a|| relative to ||exp(a)||, ||a|| about 3 here.
  for (const Shape& s : {Shape{1, 1}, Shape{4, 4}, Shape{2, 5, 5}}) {
    const Tensor z = view_as_complex(pairs(s, 28)) * 0.5;
    const Tensor a = (z + conj(z.transpose(-2, -1))) * 0.5;
    const linalg::Eigh e = linalg::eigh(a);
    const Tensor f = complex(exp(e.eigenvalues), zeros(e.eigenvalues.shape(), DType::F64));
    const Tensor want =
        matmul(e.eigenvectors * f.unsqueeze(-2), conj(e.eigenvectors.transpose(-2, -1)));
    const double n = double(s.back());
    EXPECT_LE(rel_err(linalg::matrix_exp(a), want), 64 * n * kEps) << shape_str(s);
    const Tensor a64 = a.cast(DType::Complex64);
    EXPECT_LE(rel_err(linalg::matrix_exp(a64).cast(DType::Complex128), want),
              64 * n * double(std::numeric_limits<float>::epsilon()))
        << shape_str(s);
  }
}

// ---- the NumPy oracle: closed-form gradients at fixed matrices ----

struct GradOracle {
  const char* name;
  int64_t n;
  std::vector<double> a, b, absdet_a, trace_a, trace_b;
};
const GradOracle kGradOracle[] = {
#include "data/linalg_grad_oracle.inc"
};

Tensor complex_from(const std::vector<double>& v, int64_t n) {
  return view_as_complex(Tensor::from_vector<double>(v, {n, n, 2}));
}

TEST(GradLinalgComplex, AgreesWithNumPyClosedForms) {
  // d|det a|/da = |det a| a⁻ᴴ; for Re tr(a⁻¹ b): -(a⁻¹ b a⁻¹)ᴴ and a⁻ᴴ. Each side is a few
  // solves with a, so each is within c n eps cond(a) of the exact gradient.
  for (const GradOracle& c : kGradOracle) {
    SCOPED_TRACE(c.name);
    const int64_t n = c.n;
    const Tensor a = complex_from(c.a, n), b = complex_from(c.b, n);
    const double bound = 16 * double(n) * kEps * linalg::cond(a).item_double();
    const Var av(a, true), bv(b, true);
    const Gradients g1 = backward(abs(linalg::det(av)));
    EXPECT_LE(rel_err(g1[av], complex_from(c.absdet_a, n)), bound);
    const Var tr = real(sum(matmul(linalg::inv(av), bv) * complex_eye(n)));
    const Gradients g2 = backward(tr);
    EXPECT_LE(rel_err(g2[av], complex_from(c.trace_a, n)), bound);
    EXPECT_LE(rel_err(g2[bv], complex_from(c.trace_b, n)), bound);
  }
}

}  // namespace
}  // namespace numr
