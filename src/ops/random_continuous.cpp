// Continuous samplers: exponential, laplace, gamma (Marsaglia-Tsang), and beta, chi_squared,
// student_t, fisher_f built from gamma and normal draws.
#include <cmath>

#include "core/op_scope.h"
#include "numr/distributions.h"
#include "numr/ops.h"
#include "ops/random_common.h"

namespace numr::random {
namespace {

using detail::Draws;

// The smallest positive normal value: gamma samples below it are raised to it, so that a
// ratio of gamma samples (beta) never divides 0 by 0.
double tiny(DType t) { return t == DType::F64 ? 2.2250738585072014e-308 : 1.17549435e-38; }

Tensor finish(const Tensor& x, DType t) { return x.dtype() == t ? x : cast(x, t); }

// Gamma(alpha, 1) for alpha > 0 in alpha's (work) dtype. Draws per round: z (normal), u, and
// the boost uniform, read in round 0 only.
Tensor standard_gamma(std::string_view op, const Tensor& alpha, Generator& gen) {
  const Draws draws(gen, alpha.shape(), 3, alpha.dtype(), alpha.device());
  const Tensor small = lt(alpha, detail::scalar_like(alpha, 1.0));
  const Tensor a1 = where_cond(small, alpha + 1.0, alpha);  // Gamma(a) = Gamma(a+1) u^(1/a)
  const Tensor d = a1 - 1.0 / 3.0;
  const Tensor c = rsqrt(d * 9.0);
  const Tensor zero = detail::scalar_like(alpha, 0.0);
  Tensor x =
      detail::rejection_loop(op, zeros_like(alpha), zeros_like(alpha, DType::Bool), [&](int r) {
        const Tensor z = draws.normal(r, 0);
        const Tensor u = draws.uniform_open(r, 1);
        const Tensor t = c * z + 1.0;
        const Tensor v = t * t * t;
        // log u < z^2/2 + d - d v + d log v, with v > 0
        const Tensor rhs = square(z) * 0.5 + d - d * v + d * log(v);
        const Tensor ok = logical_and(gt(t, zero), lt(log(u), rhs));
        return std::pair{d * v, ok};
      });
  const Tensor boost = pow(draws.uniform_open(0, 2), recip(alpha));
  x = where_cond(small, x * boost, x);
  return maximum(x, detail::scalar_like(x, tiny(x.dtype())));
}

Tensor positive_param(std::string_view op, const Tensor& p, const Shape& shape, DType wd,
                      std::string_view what) {
  const Tensor w = detail::prepare(p, shape, wd);
  detail::require_all(op, gt(w, detail::scalar_like(w, 0.0)), what);
  return w;
}

Tensor chi2_work(std::string_view op, const Tensor& df, Generator& gen) {
  return standard_gamma(op, df * 0.5, gen) * 2.0;
}

}  // namespace

Tensor exponential(const Tensor& rate, Generator& gen) {
  const OpScope scope("exponential");
  const Shape shape = detail::check_params("exponential", {&rate});
  const DType wd = detail::work_dtype(rate.dtype());
  const Tensor r = positive_param("exponential", rate, shape, wd, "rate must be > 0");
  const Draws draws(gen, shape, 1, wd, rate.device());
  return finish(-log1p(-draws.uniform(0, 0)) / r, rate.dtype());
}

Tensor laplace(const Tensor& loc, const Tensor& scale, Generator& gen) {
  const OpScope scope("laplace");
  const Shape shape = detail::check_params("laplace", {&loc, &scale});
  const DType wd = detail::work_dtype(loc.dtype());
  const Tensor s = positive_param("laplace", scale, shape, wd, "scale must be > 0");
  const Tensor m = detail::prepare(loc, shape, wd);
  const Draws draws(gen, shape, 1, wd, loc.device());
  const Tensor u = draws.uniform_open(0, 0) - 0.5;  // in (-1/2, 1/2)
  const Tensor x = m - s * sign(u) * log1p(abs(u) * -2.0);
  return finish(x, loc.dtype());
}

Tensor gamma(const Tensor& concentration, Generator& gen) {
  const OpScope scope("gamma");
  const Shape shape = detail::check_params("gamma", {&concentration});
  const DType wd = detail::work_dtype(concentration.dtype());
  const Tensor a = positive_param("gamma", concentration, shape, wd, "concentration must be > 0");
  return finish(standard_gamma("gamma", a, gen), concentration.dtype());
}

Tensor gamma(const Tensor& concentration, const Tensor& rate, Generator& gen) {
  const OpScope scope("gamma");
  const Shape shape = detail::check_params("gamma", {&concentration, &rate});
  const DType wd = detail::work_dtype(concentration.dtype());
  const Tensor a = positive_param("gamma", concentration, shape, wd, "concentration must be > 0");
  const Tensor r = positive_param("gamma", rate, shape, wd, "rate must be > 0");
  return finish(standard_gamma("gamma", a, gen) / r, concentration.dtype());
}

Tensor beta(const Tensor& a, const Tensor& b, Generator& gen) {
  const OpScope scope("beta");
  const Shape shape = detail::check_params("beta", {&a, &b});
  const DType wd = detail::work_dtype(a.dtype());
  const Tensor aw = positive_param("beta", a, shape, wd, "a must be > 0");
  const Tensor bw = positive_param("beta", b, shape, wd, "b must be > 0");
  const Tensor x = standard_gamma("beta", aw, gen);
  const Tensor y = standard_gamma("beta", bw, gen);
  return finish(x / (x + y), a.dtype());
}

Tensor chi_squared(const Tensor& df, Generator& gen) {
  const OpScope scope("chi_squared");
  const Shape shape = detail::check_params("chi_squared", {&df});
  const DType wd = detail::work_dtype(df.dtype());
  const Tensor k = positive_param("chi_squared", df, shape, wd, "df must be > 0");
  return finish(chi2_work("chi_squared", k, gen), df.dtype());
}

Tensor student_t(const Tensor& df, Generator& gen) {
  const OpScope scope("student_t");
  const Shape shape = detail::check_params("student_t", {&df});
  const DType wd = detail::work_dtype(df.dtype());
  const Tensor k = positive_param("student_t", df, shape, wd, "df must be > 0");
  const Draws draws(gen, shape, 1, wd, df.device());
  const Tensor z = draws.normal(0, 0);
  const Tensor v = chi2_work("student_t", k, gen);
  return finish(z * rsqrt(v / k), df.dtype());
}

Tensor fisher_f(const Tensor& d1, const Tensor& d2, Generator& gen) {
  const OpScope scope("fisher_f");
  const Shape shape = detail::check_params("fisher_f", {&d1, &d2});
  const DType wd = detail::work_dtype(d1.dtype());
  const Tensor k1 = positive_param("fisher_f", d1, shape, wd, "d1 must be > 0");
  const Tensor k2 = positive_param("fisher_f", d2, shape, wd, "d2 must be > 0");
  const Tensor x1 = chi2_work("fisher_f", k1, gen);
  const Tensor x2 = chi2_work("fisher_f", k2, gen);
  return finish((x1 / k1) / (x2 / k2), d1.dtype());
}

}  // namespace numr::random
