// Var ops and gradient rules of the elementwise families. Each rule is written with Var
// ops, so it is itself differentiable (second and higher order). The common activations
// take a shortcut in the plain backward pass (recording off): one fused kernel computing
// grad * act'(x), where a non-finite derivative counts as 0.
#include <cmath>
#include <numbers>
#include <optional>
#include <string>
#include <type_traits>

#include "autograd/grad_util.h"
#include "core/op_scope.h"
#include "ops/common.h"
#include "ops/complex_ops.h"

namespace numr {

using autograd::constant;
using autograd::mask_like;
using autograd::binary;
using autograd::record;
using autograd::unary;
using autograd::scalar_like;
using autograd::sum_to;
using autograd::zeros_like;

namespace {

using Grads = std::vector<Var>;

Var no_grad(Tensor value) { return constant(std::move(value)); }

}  // namespace

// ---- unary ----
Var neg(const Var& x) {
  const OpScope scope("neg");
  return unary("neg", x, neg(x.tensor()), [](const Var& g, const Var&, const Node&) { return -g; });
}
Var abs(const Var& x) {
  const OpScope scope("abs");
  if (is_complex(x.dtype())) return complex_ops::abs(x);
  return unary("abs", x, abs(x.tensor()),
               [](const Var& g, const Var& in, const Node&) { return g * sign(detach(in)); });
}
Var sign(const Var& x) {
  const OpScope scope("sign");
  return unary("sign", x, sign(x.tensor()),
               [](const Var& g, const Var&, const Node&) { return zeros_like(g); });
}
Var sqrt(const Var& x) {
  const OpScope scope("sqrt");
  return unary("sqrt", x, sqrt(x.tensor()),
               [](const Var& g, const Var&, const Node& n) { return g / (2.0 * n.output()); });
}
Var rsqrt(const Var& x) {
  const OpScope scope("rsqrt");
  return unary("rsqrt", x, rsqrt(x.tensor()), [](const Var& g, const Var& in, const Node& n) {
    return g * (-0.5) * n.output() / in;
  });
}
Var square(const Var& x) {
  const OpScope scope("square");
  return unary("square", x, square(x.tensor()),
               [](const Var& g, const Var& in, const Node&) { return g * 2.0 * in; });
}
Var cbrt(const Var& x) {
  const OpScope scope("cbrt");
  return unary("cbrt", x, cbrt(x.tensor()), [](const Var& g, const Var&, const Node& n) {
    return g / (3.0 * square(n.output()));
  });
}
Var recip(const Var& x) {
  const OpScope scope("recip");
  return unary("recip", x, recip(x.tensor()),
               [](const Var& g, const Var&, const Node& n) { return -g * square(n.output()); });
}
Var exp(const Var& x) {
  const OpScope scope("exp");
  if (is_complex(x.dtype())) return complex_ops::exp(x);
  return unary("exp", x, exp(x.tensor()),
               [](const Var& g, const Var&, const Node& n) { return g * n.output(); });
}
Var exp2(const Var& x) {
  const OpScope scope("exp2");
  return unary("exp2", x, exp2(x.tensor()), [](const Var& g, const Var&, const Node& n) {
    return g * n.output() * std::numbers::ln2;
  });
}
Var expm1(const Var& x) {
  const OpScope scope("expm1");
  return unary("expm1", x, expm1(x.tensor()),
               [](const Var& g, const Var&, const Node& n) { return g * (n.output() + 1.0); });
}
Var log(const Var& x) {
  const OpScope scope("log");
  if (is_complex(x.dtype())) return complex_ops::log(x);
  return unary("log", x, log(x.tensor()),
               [](const Var& g, const Var& in, const Node&) { return g / in; });
}
Var log2(const Var& x) {
  const OpScope scope("log2");
  return unary("log2", x, log2(x.tensor()), [](const Var& g, const Var& in, const Node&) {
    return g / (in * std::numbers::ln2);
  });
}
Var log10(const Var& x) {
  const OpScope scope("log10");
  return unary("log10", x, log10(x.tensor()), [](const Var& g, const Var& in, const Node&) {
    return g / (in * std::numbers::ln10);
  });
}
Var log1p(const Var& x) {
  const OpScope scope("log1p");
  return unary("log1p", x, log1p(x.tensor()),
               [](const Var& g, const Var& in, const Node&) { return g / (in + 1.0); });
}
Var sin(const Var& x) {
  const OpScope scope("sin");
  return unary("sin", x, sin(x.tensor()),
               [](const Var& g, const Var& in, const Node&) { return g * cos(in); });
}
Var cos(const Var& x) {
  const OpScope scope("cos");
  return unary("cos", x, cos(x.tensor()),
               [](const Var& g, const Var& in, const Node&) { return -g * sin(in); });
}
Var tan(const Var& x) {
  const OpScope scope("tan");
  return unary("tan", x, tan(x.tensor()), [](const Var& g, const Var&, const Node& n) {
    return g * (square(n.output()) + 1.0);
  });
}
Var asin(const Var& x) {
  const OpScope scope("asin");
  return unary("asin", x, asin(x.tensor()), [](const Var& g, const Var& in, const Node&) {
    return g * rsqrt(1.0 - square(in));
  });
}
Var acos(const Var& x) {
  const OpScope scope("acos");
  return unary("acos", x, acos(x.tensor()), [](const Var& g, const Var& in, const Node&) {
    return -g * rsqrt(1.0 - square(in));
  });
}
Var atan(const Var& x) {
  const OpScope scope("atan");
  return unary("atan", x, atan(x.tensor()), [](const Var& g, const Var& in, const Node&) {
    return g / (square(in) + 1.0);
  });
}
Var sinh(const Var& x) {
  const OpScope scope("sinh");
  return unary("sinh", x, sinh(x.tensor()),
               [](const Var& g, const Var& in, const Node&) { return g * cosh(in); });
}
Var cosh(const Var& x) {
  const OpScope scope("cosh");
  return unary("cosh", x, cosh(x.tensor()),
               [](const Var& g, const Var& in, const Node&) { return g * sinh(in); });
}
Var tanh(const Var& x) {
  const OpScope scope("tanh");
  return unary("tanh", x, tanh(x.tensor()), [](const Var& g, const Var& in, const Node& n) {
    if (!grad_enabled()) return constant(tanh_bwd(g.tensor(), in.tensor()));
    return g * (1.0 - square(n.output()));
  });
}
Var asinh(const Var& x) {
  const OpScope scope("asinh");
  return unary("asinh", x, asinh(x.tensor()), [](const Var& g, const Var& in, const Node&) {
    return g * rsqrt(square(in) + 1.0);
  });
}
Var acosh(const Var& x) {
  const OpScope scope("acosh");
  return unary("acosh", x, acosh(x.tensor()), [](const Var& g, const Var& in, const Node&) {
    return g * rsqrt(square(in) - 1.0);
  });
}
Var atanh(const Var& x) {
  const OpScope scope("atanh");
  return unary("atanh", x, atanh(x.tensor()), [](const Var& g, const Var& in, const Node&) {
    return g / (1.0 - square(in));
  });
}
// d erf = 2/sqrt(pi) e^(-x^2), d erfc = -d erf, d erfinv = sqrt(pi)/2 e^(erfinv(x)^2).
Var erf(const Var& x) {
  const OpScope scope("erf");
  return unary("erf", x, erf(x.tensor()), [](const Var& g, const Var& in, const Node&) {
    return g * exp(-square(in)) * std::numbers::inv_sqrtpi * 2.0;
  });
}
Var erfc(const Var& x) {
  const OpScope scope("erfc");
  return unary("erfc", x, erfc(x.tensor()), [](const Var& g, const Var& in, const Node&) {
    return g * exp(-square(in)) * (std::numbers::inv_sqrtpi * -2.0);
  });
}
Var erfinv(const Var& x) {
  const OpScope scope("erfinv");
  return unary("erfinv", x, erfinv(x.tensor()), [](const Var& g, const Var&, const Node& n) {
    return g * exp(square(n.output())) * (0.5 / std::numbers::inv_sqrtpi);
  });
}
// Piecewise constant: zero gradient.
#define NUMR_STEP_OP(name)                                                             \
  Var name(const Var& x) {                                                             \
    const OpScope scope(#name);                                                        \
    return unary(#name, x, name(x.tensor()),                                           \
                 [](const Var& g, const Var&, const Node&) { return zeros_like(g); }); \
  }
NUMR_STEP_OP(floor)
NUMR_STEP_OP(ceil)
NUMR_STEP_OP(round)
NUMR_STEP_OP(trunc)
#undef NUMR_STEP_OP

// ---- activations: the rule is act'(x) from the formula's derivative in src/math ----
namespace {

Tensor act_bwd_kernel(OpId op, const Tensor& g, const Tensor& x) {
  switch (op) {
#define NUMR_ACT_BWD(name, d, gr) \
  case OpId::name: return name(g, x);
#include "numr/op_table.def"
    default: fail<InvalidArgument>(op_name(op), "not an activation backward op");
  }
}

// The table's fused grad * act'(x) kernel of an activation, where it has one (name_bwd).
std::optional<OpId> fused_backward_of(OpId act) {
  const std::string want = std::string(op_name(act)) + "_bwd";
  for (const OpInfo& info : all_ops())
    if (info.family == OpFamily::ActBwd && info.name == want) return info.id;
  return std::nullopt;
}

// In the plain backward pass (recording off) the fused kernel, where there is one, takes
// the place of the derivative's composition.
template <class Derivative>
Var activation(OpId op, const Var& x, Tensor value, Derivative derivative) {
  static const std::optional<OpId> fused = fused_backward_of(op);
  return unary(op_name(op), x, std::move(value),
               [derivative](const Var& g, const Var& in, const Node&) {
                 if (!grad_enabled() && fused)
                   return constant(act_bwd_kernel(*fused, g.tensor(), in.tensor()));
                 return g * autograd::activation_derivative(in, derivative);
               });
}

}  // namespace

#define NUMR_ACTIVATION(name, d, gr)                                                   \
  Var name(const Var& x) {                                                             \
    const OpScope scope(#name);                                                        \
    return activation(OpId::name, x, name(x.tensor()),                                 \
                      [](const auto& v) { return math::name##_grad(v); });             \
  }
#define NUMR_ACTIVATION_P(name, param, default_value, d, gr)                          \
  Var name(const Var& x, double param) {                                               \
    const OpScope scope(#name);                                                        \
    return activation(OpId::name, x, name(x.tensor(), param), [param](const auto& v) { \
      return math::name##_grad(v, std::decay_t<decltype(v)>(param));                   \
    });                                                                                \
  }
#include "numr/op_table.def"

// ---- without gradients ----
#define NUMR_UNARY_PRED(name, d, grad) \
  Var name(const Var& x) {             \
    const OpScope scope(#name);        \
    return no_grad(name(x.tensor()));  \
  }
#define NUMR_COMPARE(name, d, grad)               \
  Var name(const Var& a, const Var& b) {          \
    const OpScope scope(#name);                   \
    return no_grad(name(a.tensor(), b.tensor())); \
  }
#define NUMR_LOGICAL(name, d, grad) NUMR_COMPARE(name, d, grad)
#include "numr/op_table.def"

// ---- binary, with gradients reduced over broadcast dims (autograd::binary) ----

Var add(const Var& a, const Var& b) {
  const OpScope scope("add");
  return binary("add", a, b, add(a.tensor(), b.tensor()),
                [](const Var& g, const Var&, const Var&, const Node&) { return std::pair{g, g}; });
}
Var sub(const Var& a, const Var& b) {
  const OpScope scope("sub");
  return binary("sub", a, b, sub(a.tensor(), b.tensor()),
                [](const Var& g, const Var&, const Var&, const Node&) { return std::pair{g, -g}; });
}
Var mul(const Var& a, const Var& b) {
  const OpScope scope("mul");
  if (is_complex(a.dtype())) {
    ops::check_same("mul", {&a.tensor(), &b.tensor()});
    return complex_ops::mul(a, b);
  }
  return binary("mul", a, b, mul(a.tensor(), b.tensor()),
                [](const Var& g, const Var& x, const Var& y, const Node&) {
                  return std::pair{g * y, g * x};
                });
}
Var div(const Var& a, const Var& b) {
  const OpScope scope("div");
  if (is_complex(a.dtype())) {
    ops::check_same("div", {&a.tensor(), &b.tensor()});
    return complex_ops::div(a, b);
  }
  return binary("div", a, b, div(a.tensor(), b.tensor()),
                [](const Var& g, const Var& x, const Var& y, const Node&) {
                  return std::pair{g / y, -g * x / square(y)};
                });
}
Var pow(const Var& a, const Var& b) {
  const OpScope scope("pow");
  return binary("pow", a, b, pow(a.tensor(), b.tensor()),
                [](const Var& g, const Var& x, const Var& y, const Node& n) {
                  // As PyTorch: d/dx is 0 where y = 0 (not 0 * x^-1, NaN at x = 0), d/dy
                  // 0 where x = 0 and y >= 0 (not 0 * log 0).
                  const Tensor zero = zeros({}, x.dtype(), x.device());
                  const Var dx = where_cond(constant(eq(y.tensor(), zero)), scalar_like(g, 0.0),
                                            g * y * pow(x, y - 1.0));
                  const Var dy =
                      where_cond(constant(logical_and(eq(x.tensor(), zero), ge(y.tensor(), zero))),
                                 scalar_like(g, 0.0), g * n.output() * log(x));
                  return std::pair{dx, dy};
                });
}
Var maximum(const Var& a, const Var& b) {
  const OpScope scope("maximum");
  // Ties split the gradient evenly, as the subgradient in the middle.
  return binary("maximum", a, b, maximum(a.tensor(), b.tensor()),
                [](const Var& g, const Var& x, const Var& y, const Node&) {
                  const Var wx = mask_like(gt(x.tensor(), y.tensor()), x) +
                                 0.5 * mask_like(eq(x.tensor(), y.tensor()), x);
                  return std::pair{g * wx, g * (1.0 - wx)};
                });
}
Var minimum(const Var& a, const Var& b) {
  const OpScope scope("minimum");
  return binary("minimum", a, b, minimum(a.tensor(), b.tensor()),
                [](const Var& g, const Var& x, const Var& y, const Node&) {
                  const Var wx = mask_like(lt(x.tensor(), y.tensor()), x) +
                                 0.5 * mask_like(eq(x.tensor(), y.tensor()), x);
                  return std::pair{g * wx, g * (1.0 - wx)};
                });
}
Var atan2(const Var& a, const Var& b) {
  const OpScope scope("atan2");
  // d/dy atan2(y, x) = x / (x^2 + y^2), d/dx = -y / (x^2 + y^2).
  return binary("atan2", a, b, atan2(a.tensor(), b.tensor()),
                [](const Var& g, const Var& y, const Var& x, const Node&) {
                  const Var r = square(x) + square(y);
                  return std::pair{g * x / r, -g * y / r};
                });
}

// ---- ternary ----
Var fused_mul_add(const Var& a, const Var& b, const Var& c) {
  const OpScope scope("fused_mul_add");
  return record("fused_mul_add", fused_mul_add(a.tensor(), b.tensor(), c.tensor()), {a, b, c},
                [](const Var& g, const Node& n) -> Grads {
                  const Var &x = n.input(0), &y = n.input(1), &z = n.input(2);
                  return {x.requires_grad() ? sum_to(g * y, x.shape()) : Var(),
                          y.requires_grad() ? sum_to(g * x, y.shape()) : Var(),
                          z.requires_grad() ? sum_to(g, z.shape()) : Var()};
                });
}
Var fused_add_mul(const Var& a, const Var& b, const Var& c) {
  const OpScope scope("fused_add_mul");
  return record("fused_add_mul", fused_add_mul(a.tensor(), b.tensor(), c.tensor()), {a, b, c},
                [](const Var& g, const Node& n) -> Grads {
                  const Var &x = n.input(0), &y = n.input(1), &z = n.input(2);
                  const Var gz = g * z;
                  return {x.requires_grad() ? sum_to(gz, x.shape()) : Var(),
                          y.requires_grad() ? sum_to(gz, y.shape()) : Var(),
                          z.requires_grad() ? sum_to(g * (x + y), z.shape()) : Var()};
                });
}

// ---- scalar ----
Var add_scalar(const Var& x, double s) {
  const OpScope scope("add_scalar");
  return unary("add_scalar", x, add_scalar(x.tensor(), s),
               [](const Var& g, const Var&, const Node&) { return g; });
}
Var sub_scalar(const Var& x, double s) {
  const OpScope scope("sub_scalar");
  return unary("sub_scalar", x, sub_scalar(x.tensor(), s),
               [](const Var& g, const Var&, const Node&) { return g; });
}
Var mul_scalar(const Var& x, double s) {
  const OpScope scope("mul_scalar");
  return unary("mul_scalar", x, mul_scalar(x.tensor(), s),
               [s](const Var& g, const Var&, const Node&) { return mul_scalar(g, s); });
}
Var div_scalar(const Var& x, double s) {
  const OpScope scope("div_scalar");
  return unary("div_scalar", x, div_scalar(x.tensor(), s),
               [s](const Var& g, const Var&, const Node&) { return div_scalar(g, s); });
}
Var pow_scalar(const Var& x, double s) {
  const OpScope scope("pow_scalar");
  return unary("pow_scalar", x, pow_scalar(x.tensor(), s),
               [s](const Var& g, const Var& in, const Node&) {
                 if (s == 0) return zeros_like(g);  // not 0 * x^-1, NaN at x = 0
                 return g * (s * pow_scalar(in, s - 1.0));
               });
}
Var rsub_scalar(const Var& x, double s) {
  const OpScope scope("rsub_scalar");
  return unary("rsub_scalar", x, rsub_scalar(x.tensor(), s),
               [](const Var& g, const Var&, const Node&) { return -g; });
}

// ---- where_cond and clamp ----
Var where_cond(const Var& cond, const Var& x, const Var& y) {
  const OpScope scope("where_cond");
  return record("where_cond", where_cond(cond.tensor(), x.tensor(), y.tensor()), {cond, x, y},
                [](const Var& g, const Node& n) -> Grads {
                  const Var &c = n.input(0), &a = n.input(1), &b = n.input(2);
                  const Var m = mask_like(c.tensor(), g);
                  return {Var(), a.requires_grad() ? sum_to(g * m, a.shape()) : Var(),
                          b.requires_grad() ? sum_to(g * (1.0 - m), b.shape()) : Var()};
                });
}
Var clamp(const Var& x, std::optional<double> lo, std::optional<double> hi) {
  const OpScope scope("clamp");
  return unary("clamp", x, clamp(x.tensor(), lo, hi),
               [lo, hi](const Var& g, const Var& in, const Node&) {
                 // Gradient flows where the input is inside [lo, hi].
                 Tensor inside = ones(in.shape(), DType::Bool, in.device());
                 if (lo) inside = logical_and(inside, ge(in.tensor(), full({}, *lo, in.dtype(), in.device())));
                 if (hi) inside = logical_and(inside, le(in.tensor(), full({}, *hi, in.dtype(), in.device())));
                 return g * mask_like(inside, in);
               });
}

// ---- operators ----
Var operator+(const Var& a, const Var& b) { return add(a, b); }
Var operator-(const Var& a, const Var& b) { return sub(a, b); }
Var operator*(const Var& a, const Var& b) { return mul(a, b); }
Var operator/(const Var& a, const Var& b) { return div(a, b); }
Var operator-(const Var& x) { return neg(x); }
Var operator+(const Var& a, double s) { return add_scalar(a, s); }
Var operator-(const Var& a, double s) { return sub_scalar(a, s); }
Var operator*(const Var& a, double s) { return mul_scalar(a, s); }
Var operator/(const Var& a, double s) { return div_scalar(a, s); }
Var operator+(double s, const Var& a) { return add_scalar(a, s); }
Var operator-(double s, const Var& a) { return rsub_scalar(a, s); }
Var operator*(double s, const Var& a) { return mul_scalar(a, s); }

}  // namespace numr
