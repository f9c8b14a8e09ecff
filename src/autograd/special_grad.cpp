// Var ops and gradient rules of the special functions (src/math/special.h). Each rule is
// written with Var ops, most of them these functions again (lgamma' = digamma, digamma' =
// polygamma(1, .), ...), so the rules differentiate again.
#include <numbers>
#include <string_view>

#include "autograd/grad_util.h"
#include "core/op_scope.h"

namespace numr {

using autograd::constant;
using autograd::mask_like;
using autograd::binary;
using autograd::record;
using autograd::unary;
using autograd::sum_to;

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

}  // namespace numr
