// Var ops and gradient rules of the special functions (src/math/special.h). Each rule is
// written with Var ops, most of them these functions again (lgamma' = digamma, digamma' =
// polygamma(1, .), ...), so the rules differentiate again.
#include <numbers>
#include <string_view>

#include "autograd/grad_util.h"
#include "core/op_scope.h"

namespace numr {

using autograd::binary;
using autograd::constant;
using autograd::mask_like;
using autograd::record;
using autograd::sum_to;
using autograd::unary;

namespace {

using Grads = std::vector<Var>;

// Where t equals 0, as a Bool tensor.
Tensor is_zero(const Tensor& t) { return eq(t, zeros({}, t.dtype(), t.device())); }

}  // namespace

// expit' = y (1 - y), logit' = 1 / (x (1 - x)).
Var expit(const Var& x) {
  const OpScope scope("expit");
  return unary("expit", x, expit(x.tensor()), [](const Var& g, const Var&, const Node& n) {
    return g * n.output() * (1.0 - n.output());
  });
}
Var logit(const Var& x) {
  const OpScope scope("logit");
  return unary("logit", x, logit(x.tensor()),
               [](const Var& g, const Var& in, const Node&) { return g / (in * (1.0 - in)); });
}
// sinc'(x) = (cos(pi x) - sinc(x)) / x, 0 at 0 (formed at x = 1 there, so the unused
// branch holds no NaN for the second order).
Var sinc(const Var& x) {
  const OpScope scope("sinc");
  return unary("sinc", x, sinc(x.tensor()), [](const Var& g, const Var& in, const Node&) {
    const Tensor nonzero = logical_not(is_zero(in.tensor()));
    const Var xs = where_cond(nonzero, in, 1.0);
    return g * where_cond(nonzero, (cos(in * std::numbers::pi) - sinc(xs)) / xs, 0.0);
  });
}
Var lgamma(const Var& x) {
  const OpScope scope("lgamma");
  return unary("lgamma", x, lgamma(x.tensor()),
               [](const Var& g, const Var& in, const Node&) { return g * digamma(in); });
}
Var digamma(const Var& x) {
  const OpScope scope("digamma");
  return unary("digamma", x, digamma(x.tensor()),
               [](const Var& g, const Var& in, const Node&) { return g * polygamma(in, 1.0); });
}
// gamma' = gamma digamma.
Var gamma(const Var& x) {
  const OpScope scope("gamma");
  return unary("gamma", x, gamma(x.tensor()), [](const Var& g, const Var& in, const Node& n) {
    return g * n.output() * digamma(in);
  });
}
Var polygamma(const Var& x, double n) {
  const OpScope scope("polygamma");
  return unary("polygamma", x, polygamma(x.tensor(), n),
               [n](const Var& g, const Var& in, const Node&) { return g * polygamma(in, n + 1); });
}
Var polygamma(int64_t n, const Var& x) { return polygamma(x, double(n)); }

// d/dx x log y = log y (0 where x = 0, as PyTorch), d/dy = x / y.
Var xlogy(const Var& a, const Var& b) {
  const OpScope scope("xlogy");
  return binary("xlogy", a, b, xlogy(a.tensor(), b.tensor()),
                [](const Var& g, const Var& x, const Var& y, const Node&) {
                  const Var nonzero = mask_like(logical_not(is_zero(x.tensor())), x);
                  return std::pair{g * xlogy(nonzero, y), g * x / y};
                });
}
// d/da beta = beta (digamma(a) - digamma(a + b)), and likewise for b.
Var beta(const Var& a, const Var& b) {
  const OpScope scope("beta");
  return binary("beta", a, b, beta(a.tensor(), b.tensor()),
                [](const Var& g, const Var& x, const Var& y, const Node& n) {
                  const Var both = digamma(x + y);
                  const Var gb = g * n.output();
                  return std::pair{gb * (digamma(x) - both), gb * (digamma(y) - both)};
                });
}
// d/dq zeta(x, q) = -x zeta(x + 1, q); d/dx has no closed form and raises, as in PyTorch.
Var zeta(const Var& a, const Var& b) {
  const OpScope scope("zeta");
  return binary("zeta", a, b, zeta(a.tensor(), b.tensor()),
                [](const Var& g, const Var& x, const Var& q, const Node&) {
                  if (x.requires_grad())
                    fail<InvalidArgument>("zeta",
                                          "the derivative with respect to x is not "
                                          "implemented (only with respect to q)");
                  return std::pair{Var(), -g * x * zeta(x + 1.0, q)};
                });
}

// ---- Bessel functions ----
namespace {

// f(x) - h(x) / x with its limit `at0` at x = 0 (formed at x = 1 there, so the unused
// branch holds no NaN for the second order).
template <class F, class H>
Var minus_over_x(const Var& x, F f, H h, double at0) {
  const Tensor nonzero = logical_not(is_zero(x.tensor()));
  const Var xs = where_cond(nonzero, x, 1.0);
  return where_cond(nonzero, f(xs) - h(xs) / xs, at0);
}

}  // namespace

// j0' = -j1, j1' = j0 - j1 / x (1/2 at 0), and y0, y1 alike (x > 0).
Var bessel_j0(const Var& x) {
  const OpScope scope("bessel_j0");
  return unary("bessel_j0", x, bessel_j0(x.tensor()),
               [](const Var& g, const Var& in, const Node&) { return -g * bessel_j1(in); });
}
Var bessel_j1(const Var& x) {
  const OpScope scope("bessel_j1");
  return unary("bessel_j1", x, bessel_j1(x.tensor()), [](const Var& g, const Var& in, const Node&) {
    return g * minus_over_x(
                   in, [](const Var& v) { return bessel_j0(v); },
                   [](const Var& v) { return bessel_j1(v); }, 0.5);
  });
}
Var bessel_y0(const Var& x) {
  const OpScope scope("bessel_y0");
  return unary("bessel_y0", x, bessel_y0(x.tensor()),
               [](const Var& g, const Var& in, const Node&) { return -g * bessel_y1(in); });
}
Var bessel_y1(const Var& x) {
  const OpScope scope("bessel_y1");
  return unary("bessel_y1", x, bessel_y1(x.tensor()), [](const Var& g, const Var& in, const Node&) {
    return g * (bessel_y0(in) - bessel_y1(in) / in);
  });
}
// i0' = i1, i1' = i0 - i1 / x (1/2 at 0); the scaled forms add -sign(x) times themselves.
Var bessel_i0(const Var& x) {
  const OpScope scope("bessel_i0");
  return unary("bessel_i0", x, bessel_i0(x.tensor()),
               [](const Var& g, const Var& in, const Node&) { return g * bessel_i1(in); });
}
Var bessel_i0e(const Var& x) {
  const OpScope scope("bessel_i0e");
  return unary("bessel_i0e", x, bessel_i0e(x.tensor()),
               [](const Var& g, const Var& in, const Node&) {
                 return g * (bessel_i1e(in) - sign(in) * bessel_i0e(in));
               });
}
Var bessel_i1(const Var& x) {
  const OpScope scope("bessel_i1");
  return unary("bessel_i1", x, bessel_i1(x.tensor()), [](const Var& g, const Var& in, const Node&) {
    return g * minus_over_x(
                   in, [](const Var& v) { return bessel_i0(v); },
                   [](const Var& v) { return bessel_i1(v); }, 0.5);
  });
}
Var bessel_i1e(const Var& x) {
  const OpScope scope("bessel_i1e");
  return unary("bessel_i1e", x, bessel_i1e(x.tensor()),
               [](const Var& g, const Var& in, const Node&) {
                 const Var s = sign(in);
                 return g * minus_over_x(
                                in, [s](const Var& v) { return bessel_i0e(v) - s * bessel_i1e(v); },
                                [](const Var& v) { return bessel_i1e(v); }, 0.5);
               });
}
// k0' = -k1, k1' = -k0 - k1 / x (x > 0).
Var bessel_k0(const Var& x) {
  const OpScope scope("bessel_k0");
  return unary("bessel_k0", x, bessel_k0(x.tensor()),
               [](const Var& g, const Var& in, const Node&) { return -g * bessel_k1(in); });
}
Var bessel_k1(const Var& x) {
  const OpScope scope("bessel_k1");
  return unary("bessel_k1", x, bessel_k1(x.tensor()), [](const Var& g, const Var& in, const Node&) {
    return -g * (bessel_k0(in) + bessel_k1(in) / in);
  });
}

// ---- complete elliptic integrals ----
// K'(m) = (E - (1 - m) K) / (2 m (1 - m)), pi/8 at 0; E'(m) = (E - K) / (2m), -pi/8 at 0.
Var ellipk(const Var& x) {
  const OpScope scope("ellipk");
  return unary("ellipk", x, ellipk(x.tensor()), [](const Var& g, const Var& in, const Node&) {
    const Tensor nonzero = logical_not(is_zero(in.tensor()));
    const Var m = where_cond(nonzero, in, 0.5);
    const Var d = (ellipe(m) - (1.0 - m) * ellipk(m)) / (2.0 * m * (1.0 - m));
    return g * where_cond(nonzero, d, std::numbers::pi / 8);
  });
}
Var ellipe(const Var& x) {
  const OpScope scope("ellipe");
  return unary("ellipe", x, ellipe(x.tensor()), [](const Var& g, const Var& in, const Node&) {
    const Tensor nonzero = logical_not(is_zero(in.tensor()));
    const Var m = where_cond(nonzero, in, 0.5);
    return g * where_cond(nonzero, (ellipe(m) - ellipk(m)) / (2.0 * m), -std::numbers::pi / 8);
  });
}

// ---- incomplete gamma and beta ----
// d/dx P(a, x) = x^(a-1) e^-x / gamma(a) (Q the negative). The derivative in a has no
// closed form and raises, as in PyTorch.
namespace {

Var gammainc_density(const Var& a, const Var& x) { return exp(xlogy(a - 1.0, x) - x - lgamma(a)); }
template <bool Upper>
Var gammainc_var(std::string_view name, const Var& a, const Var& x, Tensor value) {
  return binary(name, a, x, std::move(value),
                [name](const Var& g, const Var& av, const Var& xv, const Node&) {
                  if (av.requires_grad())
                    fail<InvalidArgument>(name,
                                          "the derivative with respect to a is not "
                                          "implemented (only with respect to x)");
                  const Var d = g * gammainc_density(av, xv);
                  return std::pair{Var(), Upper ? -d : d};
                });
}

}  // namespace

Var gammainc(const Var& a, const Var& x) {
  const OpScope scope("gammainc");
  return gammainc_var<false>("gammainc", a, x, gammainc(a.tensor(), x.tensor()));
}
Var gammaincc(const Var& a, const Var& x) {
  const OpScope scope("gammaincc");
  return gammainc_var<true>("gammaincc", a, x, gammaincc(a.tensor(), x.tensor()));
}
// d/dx I_x(a, b) = x^(a-1) (1 - x)^(b-1) / B(a, b); d/da and d/db raise, as in PyTorch.
Var betainc(const Var& a, const Var& b, const Var& x) {
  const OpScope scope("betainc");
  return record("betainc", betainc(a.tensor(), b.tensor(), x.tensor()), {a, b, x},
                [](const Var& g, const Node& n) -> Grads {
                  const Var &av = n.input(0), &bv = n.input(1), &xv = n.input(2);
                  if (av.requires_grad() || bv.requires_grad())
                    fail<InvalidArgument>("betainc",
                                          "the derivatives with respect to a and b are not "
                                          "implemented (only with respect to x)");
                  if (!xv.requires_grad()) return {Var(), Var(), Var()};
                  const Var lbeta = lgamma(av) + lgamma(bv) - lgamma(av + bv);
                  const Var d = exp(xlogy(av - 1.0, xv) + xlogy(bv - 1.0, 1.0 - xv) - lbeta);
                  return {Var(), Var(), sum_to(g * d, xv.shape())};
                });
}

}  // namespace numr
