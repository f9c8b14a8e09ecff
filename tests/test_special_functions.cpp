// The special functions (src/math/special.h) against mpmath and SciPy
// (tests/data/special_oracle.inc, from scripts/special_table.py): the ops on the CPU in F64
// and F32, and the float64 reference formula itself, each within a stated bound in units
// in the last place of the dtype; the values at poles and edges exactly. Then what the
// table-driven parity and gradient tests do not reach: polygamma(n, x), zeta's one-sided
// gradient, second derivatives made of these ops.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <numbers>
#include <string>
#include <vector>

#include "backends/cpu/kernels/kernels.h"
#include "math/elementwise.h"
#include "numr/numr.h"
#include "support/gradcheck.h"

namespace numr::test {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

struct OracleRow {
  const char* fn;
  double a, b, c;
  long double value;
};
const OracleRow kOracle[] = {
#include "data/special_oracle.inc"
};

Tensor apply(const std::string& fn, const Tensor& a, const Tensor& b, const Tensor& c) {
  if (fn == "bessel_j0") return bessel_j0(a);
  if (fn == "bessel_j1") return bessel_j1(a);
  if (fn == "bessel_y0") return bessel_y0(a);
  if (fn == "bessel_y1") return bessel_y1(a);
  if (fn == "bessel_i0") return bessel_i0(a);
  if (fn == "bessel_i0e") return bessel_i0e(a);
  if (fn == "bessel_i1") return bessel_i1(a);
  if (fn == "bessel_i1e") return bessel_i1e(a);
  if (fn == "bessel_k0") return bessel_k0(a);
  if (fn == "bessel_k1") return bessel_k1(a);
  if (fn == "ellipk") return ellipk(a);
  if (fn == "ellipe") return ellipe(a);
  if (fn == "gammainc") return gammainc(a, b);
  if (fn == "gammaincc") return gammaincc(a, b);
  if (fn == "betainc") return betainc(a, b, c);
  if (fn == "expit") return expit(a);
  if (fn == "logit") return logit(a);
  if (fn == "sinc") return sinc(a);
  if (fn == "lgamma") return lgamma(a);
  if (fn == "digamma") return digamma(a);
  if (fn == "gamma") return gamma(a);
  if (fn == "xlogy") return xlogy(a, b);
  if (fn == "beta") return beta(a, b);
  if (fn == "zeta") return zeta(a, b);
  throw std::logic_error("no op " + fn);
}

double reference(const std::string& fn, double a, double b, double c) {
  if (fn == "bessel_j0") return math::bessel_j0(a);
  if (fn == "bessel_j1") return math::bessel_j1(a);
  if (fn == "bessel_y0") return math::bessel_y0(a);
  if (fn == "bessel_y1") return math::bessel_y1(a);
  if (fn == "bessel_i0") return math::bessel_i0(a);
  if (fn == "bessel_i0e") return math::bessel_i0e(a);
  if (fn == "bessel_i1") return math::bessel_i1(a);
  if (fn == "bessel_i1e") return math::bessel_i1e(a);
  if (fn == "bessel_k0") return math::bessel_k0(a);
  if (fn == "bessel_k1") return math::bessel_k1(a);
  if (fn == "ellipk") return math::ellipk(a);
  if (fn == "ellipe") return math::ellipe(a);
  if (fn == "gammainc") return math::gammainc(a, b);
  if (fn == "gammaincc") return math::gammaincc(a, b);
  if (fn == "betainc") return math::betainc(a, b, c);
  if (fn == "expit") return math::expit(a);
  if (fn == "logit") return math::logit(a);
  if (fn == "sinc") return math::sinc(a);
  if (fn == "lgamma") return math::lgamma(a);
  if (fn == "digamma") return math::digamma(a);
  if (fn == "gamma") return math::gamma(a);
  if (fn == "polygamma") return math::polygamma(b, a);
  if (fn == "xlogy") return math::xlogy(a, b);
  if (fn == "beta") return math::beta(a, b);
  return math::zeta(a, b);
}

// |got - want| in units in the last place of want in a format with `digits` significand
// bits and smallest normal exponent min_exp (below it, the subnormal spacing). NaN and inf
// must match exactly (1e9 otherwise); want is rounded to the format first, so a value past
// its largest finite number is expected as inf.
// floor (when given) is a magnitude below which the error counts in units of floor's last
// place instead: an absolute error where the function oscillates through its zeros.
double ulp_error(double got, long double want, int digits, int min_exp, bool as_float,
                 double floor = 0) {
  const long double w = as_float ? static_cast<long double>(static_cast<float>(want)) : want;
  if (std::isnan(w) || std::isnan(got)) return std::isnan(w) && std::isnan(got) ? 0.0 : 1e9;
  if (std::isinf(w) || std::isinf(got)) return got == w ? 0.0 : 1e9;
  const long double a = std::max(std::fabs(want), static_cast<long double>(floor));
  const int e = a == 0 ? min_exp : std::max(std::ilogb(a), min_exp);
  return static_cast<double>(std::fabs(got - want) / std::ldexp(1.0L, e - (digits - 1)));
}

// J and Y oscillate with the amplitude sqrt(2 / (pi x)) (at most 1): their errors count
// against it, so near a zero the bound is absolute, as for sin.
double error_floor(const std::string& fn, double a) {
  if (fn != "bessel_j0" && fn != "bessel_j1" && fn != "bessel_y0" && fn != "bessel_y1") return 0;
  return std::min(1.0, std::sqrt(2 / (std::numbers::pi * std::fabs(a))));
}

struct Bound {
  double f64, f32;  // ulp
};
// The SSE4 kernels have no fused multiply-add: libm's error-free steps round twice there,
// and these functions measure larger maxima than with FMA (the bounds above). The
// sanitized build measures the same.
const std::map<std::string, Bound> kBoundsWithoutFma = {
    {"bessel_k0", {3.5, 3.0}},
    {"bessel_y1", {6.5, 4.0}},
    {"betainc", {9.0, 17.5}},
    {"gammainc", {3.0, 3.5}},
};
// The sanitized build's kernels round as the SSE4 ones do (their values agree bit for bit).
bool kernels_have_fma() {
#if defined(__SANITIZE_ADDRESS__)
  return false;
#else
  return std::string(cpu::kernels().isa) != "sse4";
#endif
}
// The measured maxima over the table, rounded up (the F32 op runs the formula in float).
// J and Y count against their amplitude (error_floor); gammaincc's worst is Q(150, 300), a
// tail value of e^(a log x - x)-like size whose exponent's rounding the result inherits.
const std::map<std::string, Bound> kBounds = {
    {"expit", {1.5, 0.5}},      {"logit", {1.0, 1.0}},     {"sinc", {1.0, 1.0}},
    {"lgamma", {2.0, 3.0}},     {"digamma", {7.5, 8.5}},   {"gamma", {3.0, 1.5}},
    {"polygamma", {3.5, 4.5}},  {"xlogy", {0.5, 0.5}},     {"beta", {2.5, 325}},
    {"zeta", {31, 26}},         {"bessel_j0", {7.0, 1.5}}, {"bessel_j1", {2.5, 1.0}},
    {"bessel_y0", {5.5, 4.0}},  {"bessel_y1", {6.5, 3.5}}, {"bessel_i0", {4.0, 3.5}},
    {"bessel_i0e", {4.5, 2.5}}, {"bessel_i1", {3.0, 3.0}}, {"bessel_i1e", {3.5, 2.5}},
    {"bessel_k0", {3.5, 2.0}},  {"bessel_k1", {2.0, 2.0}}, {"ellipk", {2.0, 1.5}},
    {"ellipe", {1.0, 1.5}},     {"gammainc", {2.5, 3.5}},  {"gammaincc", {36, 27}},
    {"betainc", {9.0, 15}},
};

TEST(SpecialFunctions, MatchesMpmathTable) {
  std::map<std::string, std::vector<const OracleRow*>> by_fn;
  for (const OracleRow& r : kOracle) by_fn[r.fn].push_back(&r);
  ASSERT_EQ(by_fn.size(), kBounds.size());
  for (const auto& [fn, rows] : by_fn) {
    std::vector<double> a, b, c;
    for (const OracleRow* r : rows) a.push_back(r->a), b.push_back(r->b), c.push_back(r->c);
    const Shape shape{int64_t(rows.size())};
    const Bound bound = !kernels_have_fma() && kBoundsWithoutFma.count(fn)
                            ? kBoundsWithoutFma.at(fn)
                            : kBounds.at(fn);
    double worst_ref = 0;
    for (const OracleRow* r : rows)
      worst_ref = std::max(worst_ref, ulp_error(reference(fn, r->a, r->b, r->c), r->value, 53,
                                                -1022, false, error_floor(fn, r->a)));
    EXPECT_LE(worst_ref, bound.f64) << fn << " (float64 reference)";
    std::printf("%-10s reference max %.2f ulp\n", fn.c_str(), worst_ref);
    for (const DType t : {DType::F64, DType::F32}) {
      const bool f32 = t == DType::F32;
      const Tensor ta = Tensor::from_vector(a, shape).cast(t);
      const Tensor tb = Tensor::from_vector(b, shape).cast(t);
      const Tensor tc = Tensor::from_vector(c, shape).cast(t);
      Tensor got;
      if (fn == "polygamma") {
        // One call per n: n is a scalar argument.
        std::vector<double> out;
        for (size_t i = 0; i < rows.size(); ++i)
          out.push_back(polygamma(int64_t(a[i]), tb.narrow(0, int64_t(i), 1))
                            .cast(DType::F64)
                            .to_vector<double>()[0]);
        got = Tensor::from_vector(out, shape);
      } else {
        got = apply(fn, ta, tb, tc).cast(DType::F64);
      }
      const std::vector<double> g = got.to_vector<double>();
      double worst = 0, at_a = 0, at_b = 0;
      for (size_t i = 0; i < rows.size(); ++i) {
        const double e = ulp_error(g[i], rows[i]->value, f32 ? 24 : 53, f32 ? -126 : -1022, f32,
                                   error_floor(fn, a[i]));
        EXPECT_LE(e, f32 ? bound.f32 : bound.f64)
            << fn << "(" << a[i] << ", " << b[i] << ") in " << dtype_name(t) << " = " << g[i]
            << ", want " << static_cast<double>(rows[i]->value);
        if (e > worst) worst = e, at_a = a[i], at_b = b[i];
      }
      std::printf("%-10s %s max %.2f ulp at (%g, %g)\n", fn.c_str(), f32 ? "F32" : "F64", worst,
                  at_a, at_b);
    }
  }
}

// gammainc and gammaincc for large a (tests/data/gammainc_large_a_oracle.inc, from
// scripts/special_table.py): x = a + k sqrt(a) and the tails, near x = a by Temme's
// expansion, farther by the series and continued fraction. A tail value about e^-w, w = a
// (x/a - 1 - log(x/a)), inherits the rounding of its exponent w, about |log| of the result:
// the bounds are in ulp per unit of |log result|, and a fixed number of ulp where that is
// below 1. Beyond |x/a - 1| = 1/4 the exponent itself is formed with cancellation.
const OracleRow kGammaincLargeA[] = {
#include "data/gammainc_large_a_oracle.inc"
};
struct LogBound {
  double ulp, ulp_per_log;  // |error| <= max(ulp, ulp_per_log * |log result|) ulp
};
// The measured maxima over the table, rounded up: {near, far} for F64, then F32.
const LogBound kGammaincLargeABounds[2][2] = {{{1.5, 2.5}, {0.5, 7.0}}, {{1.5, 2.5}, {0.5, 2.5}}};

TEST(SpecialFunctions, IncompleteGammaLargeA) {
  for (const std::string fn : {"gammainc", "gammaincc"}) {
    std::vector<const OracleRow*> rows;
    for (const OracleRow& r : kGammaincLargeA)
      if (r.fn == fn) rows.push_back(&r);
    ASSERT_GT(rows.size(), 100u);
    std::vector<double> a, x;
    for (const OracleRow* r : rows) a.push_back(r->a), x.push_back(r->b);
    const Shape shape{int64_t(rows.size())};
    // -1: the float64 reference formula (math::gammainc) itself; 0: F64; 1: F32.
    for (const int which : {-1, 0, 1}) {
      const bool f32 = which == 1;
      const char* name = which < 0 ? "reference" : f32 ? "F32" : "F64";
      std::vector<double> got(rows.size());
      if (which < 0) {
        for (size_t i = 0; i < rows.size(); ++i) got[i] = reference(fn, a[i], x[i], 0);
      } else {
        const DType t = f32 ? DType::F32 : DType::F64;
        const Tensor ta = Tensor::from_vector(a, shape).cast(t);
        const Tensor tx = Tensor::from_vector(x, shape).cast(t);
        got = apply(fn, ta, tx, ta).cast(DType::F64).to_vector<double>();
      }
      double worst[2] = {0, 0}, worst_per_log[2] = {0, 0};  // near, far
      for (size_t i = 0; i < rows.size(); ++i) {
        const long double want = rows[i]->value;
        const int far = std::fabs(x[i] - a[i]) > a[i] / 4;
        const LogBound bound = kGammaincLargeABounds[f32][far];
        const double e = ulp_error(got[i], want, f32 ? 24 : 53, f32 ? -126 : -1022, f32);
        const double log_want = want > 0 ? std::fabs(static_cast<double>(std::log(want))) : 0;
        EXPECT_LE(e, std::max(bound.ulp, bound.ulp_per_log * log_want))
            << fn << "(" << a[i] << ", " << x[i] << ") in " << name << " = " << got[i] << ", want "
            << static_cast<double>(want);
        if (log_want <= 1)
          worst[far] = std::max(worst[far], e);
        else
          worst_per_log[far] = std::max(worst_per_log[far], e / log_want);
      }
      std::printf(
          "%-10s large a, %-9s: max %.2f ulp where |log| <= 1, else %.2f ulp per |log| "
          "(|x/a - 1| <= 1/4); beyond, %.2f and %.2f\n",
          fn.c_str(), name, worst[0], worst_per_log[0], worst[1], worst_per_log[1]);
    }
  }
}

TEST(SpecialFunctions, PolygammaForms) {
  const Tensor x = Tensor::from_vector<double>({0.3, 1.7, 4.0, -0.5}, {4});
  EXPECT_EQ(polygamma(1, x).to_vector<double>(), polygamma(x, 1.0).to_vector<double>());
  EXPECT_EQ(polygamma(0, x).to_vector<double>(), digamma(x).to_vector<double>());
}

// Second derivatives made of the same ops: lgamma'' = polygamma(1, .), digamma'' =
// polygamma(2, .), and zeta's derivative in q, where d/dx raises.
TEST(SpecialFunctions, HigherDerivatives) {
  const Tensor x0 = Tensor::from_vector<double>({0.4, 1.3, 2.9, 7.5}, {4});
  Var x(x0, true);
  const VarGradients g1 = backward(sum(lgamma(x)), {.create_graph = true});
  const Gradients g2 = backward(sum(g1[x]));
  const std::vector<double> want = polygamma(1, x0).to_vector<double>();
  const std::vector<double> got = g2[x].to_vector<double>();
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-12 * std::fabs(want[i]));

  const Tensor s0 = Tensor::from_vector<double>({2.0, 3.5}, {2});
  const Tensor q0 = Tensor::from_vector<double>({0.7, 2.0}, {2});
  Var q(q0, true);
  const std::vector<double> dq = backward(sum(zeta(Var(s0, false), q)))[q].to_vector<double>();
  const std::vector<double> z1 = zeta(s0 + 1.0, q0).to_vector<double>();
  const std::vector<double> s = s0.to_vector<double>();
  for (size_t i = 0; i < dq.size(); ++i)
    EXPECT_NEAR(dq[i], -s[i] * z1[i], 1e-13 * std::fabs(dq[i]));
  Var s_var(s0, true);
  EXPECT_THROW((void)backward(sum(zeta(s_var, Var(q0, false)))), InvalidArgument);
}

// The incomplete gamma and beta functions in x (their a and b are held as constants), to
// the second order, and the error for a derivative in a or b.
TEST(GradSpecialFunctions, IncompleteGammaAndBetaInX) {
  const Tensor a = Tensor::from_vector<double>({0.6, 1.5, 3.0, 7.25}, {4});
  const Tensor b = Tensor::from_vector<double>({2.5, 0.8, 4.0, 1.75}, {4});
  const Tensor x = Tensor::from_vector<double>({0.4, 1.7, 2.2, 9.0}, {4});
  const Tensor u = Tensor::from_vector<double>({0.15, 0.5, 0.35, 0.8}, {4});
  check_gradients(
      OpId::gammainc, "d/dx",
      [&](const std::vector<Var>& v) { return gammainc(Var(like(a, v[0]), false), v[0]); }, {x});
  check_gradients(
      OpId::gammaincc, "d/dx",
      [&](const std::vector<Var>& v) { return gammaincc(Var(like(a, v[0]), false), v[0]); }, {x});
  check_gradients(OpId::betainc, "d/dx",
                  [&](const std::vector<Var>& v) {
                    return betainc(Var(like(a, v[0]), false), Var(like(b, v[0]), false), v[0]);
                  },
                  {u});
  // Broadcast: a per row, x per column.
  const Tensor a2 = Tensor::from_vector<double>({0.7, 2.0, 5.5}, {3, 1});
  check_gradients(
      OpId::gammainc, "d/dx broadcast",
      [&](const std::vector<Var>& v) { return gammainc(Var(like(a2, v[0]), false), v[0]); }, {x});
}

TEST(GradSpecialFunctions, IncompleteRaiseForAB) {
  const Tensor a = Tensor::from_vector<double>({0.6, 3.0}, {2});
  const Tensor x = Tensor::from_vector<double>({0.4, 0.7}, {2});
  EXPECT_THROW((void)backward(sum(gammainc(Var(a, true), Var(x, true)))), InvalidArgument);
  EXPECT_THROW((void)backward(sum(gammaincc(Var(a, true), Var(x, false)))), InvalidArgument);
  EXPECT_THROW((void)backward(sum(betainc(Var(a, true), Var(a, false), Var(x, false)))),
               InvalidArgument);
  EXPECT_THROW((void)backward(sum(betainc(Var(a, false), Var(a, true), Var(x, false)))),
               InvalidArgument);
  try {
    (void)backward(sum(gammainc(Var(a, true), Var(x, false))));
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(std::string(e.what()).rfind("[gammainc]", 0), 0u) << e.what();
  }
}

// The derivatives at the points where they are limits: j1'(0) = i1'(0) = i1e'(0) = 1/2,
// ellipk'(0) = pi/8, ellipe'(0) = -pi/8.
TEST(GradSpecialFunctions, LimitsAtZero) {
  const auto d0 = [](Var (*f)(const Var&)) {
    Var x(Tensor::from_vector<double>({0.0}, {1}), true);
    return backward(sum(f(x)))[x].to_vector<double>()[0];
  };
  EXPECT_DOUBLE_EQ(d0(bessel_j1), 0.5);
  EXPECT_DOUBLE_EQ(d0(bessel_i1), 0.5);
  EXPECT_DOUBLE_EQ(d0(bessel_i1e), 0.5);
  EXPECT_DOUBLE_EQ(d0(ellipk), std::numbers::pi / 8);
  EXPECT_DOUBLE_EQ(d0(ellipe), -std::numbers::pi / 8);
}

// math/control.h on double: the loop stops at the first step after which done holds (and at
// max_n when it never does), and a path no lane needs is not run.
TEST(SpecialFunctions, ControlStopsWhenConverged) {
  int steps = 0;
  std::array<double, 2> v{1.0, 1.0};  // the terms and sum of 1 + 1/2 + 1/4 + ...
  math::iterate_until(
      100, v,
      [&](double n, std::array<double, 2>& s) {
        ++steps;
        EXPECT_EQ(n, double(steps));
        s[0] *= 0.5;
        s[1] += s[0];
      },
      [](const std::array<double, 2>& s) { return s[0] <= 0x1p-55 * s[1]; });
  EXPECT_EQ(steps, 54);  // the sum rounds to 2 at step 53, and 2^-54 <= 2^-55 * 2
  EXPECT_EQ(v[1], 2.0);
  steps = 0;
  math::iterate_until(
      7, v, [&](double, std::array<double, 2>&) { ++steps; },
      [](const std::array<double, 2>&) { return false; });
  EXPECT_EQ(steps, 7);
  bool ran = false;
  std::array<double, 1> r{3.0};
  math::compute_where(false, r, [&](std::array<double, 1>& w) {
    ran = true;
    w[0] = 4.0;
  });
  EXPECT_FALSE(ran);
  EXPECT_EQ(r[0], 3.0);
  math::compute_where(true, r, [&](std::array<double, 1>& w) { w[0] = 4.0; });
  EXPECT_EQ(r[0], 4.0);
}

}  // namespace
}  // namespace numr::test
