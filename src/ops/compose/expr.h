// A number type over whole tensors, so the formulas of src/math (written once over T) run
// as chains of numr ops: with X = Tensor an elementwise formula becomes its op's
// composition; with X = Var it is differentiable, so derivatives come from the same text.
// Constants stay doubles until they meet a tensor (x + 1 is add_scalar, not a full tensor).
#pragma once

#include <cmath>
#include <optional>
#include <utility>

#include "math/elementwise.h"
#include "numr/autograd.h"
#include "numr/ops.h"

namespace numr::compose {

// The tensor under an X, and an X made from a tensor (a Var without history).
inline const Tensor& tensor_of(const Tensor& t) { return t; }
inline const Tensor& tensor_of(const Var& v) { return v.tensor(); }
template <class X> X lift(Tensor t);
template <> inline Tensor lift<Tensor>(Tensor t) { return t; }
template <> inline Var lift<Var>(Tensor t) { return Var(std::move(t), false); }

// A Bool tensor, or a known truth value; `like` is a value of the compared operands (for
// the dtype and shape of constants that a select must turn into tensors).
struct Mask {
  std::optional<Tensor> bits;
  bool value = false;
  Tensor like;
};

template <class X>
class Expr {
 public:
  Expr(double c) : c_(c) {}  // NOLINT: formulas write T(1)
  Expr(X x) : x_(std::move(x)) {}  // NOLINT

  bool is_const() const { return !x_.has_value(); }
  double c() const { return c_; }
  const X& x() const { return *x_; }
  // The value as an X, shaped like `like` when it is a constant.
  X to_x(const Tensor& like) const {
    return x_ ? *x_ : lift<X>(full_like(like, c_));
  }

 private:
  std::optional<X> x_;
  double c_ = 0.0;
};

// ---- arithmetic, constants folded ----
template <class X> Expr<X> operator+(const Expr<X>& a, const Expr<X>& b) {
  if (a.is_const() && b.is_const()) return a.c() + b.c();
  if (a.is_const()) return Expr<X>(a.c() + b.x());
  if (b.is_const()) return Expr<X>(a.x() + b.c());
  return Expr<X>(a.x() + b.x());
}
template <class X> Expr<X> operator-(const Expr<X>& a, const Expr<X>& b) {
  if (a.is_const() && b.is_const()) return a.c() - b.c();
  if (a.is_const()) return Expr<X>(a.c() - b.x());
  if (b.is_const()) return Expr<X>(a.x() - b.c());
  return Expr<X>(a.x() - b.x());
}
template <class X> Expr<X> operator*(const Expr<X>& a, const Expr<X>& b) {
  if (a.is_const() && b.is_const()) return a.c() * b.c();
  if (a.is_const()) return Expr<X>(a.c() * b.x());
  if (b.is_const()) return Expr<X>(a.x() * b.c());
  return Expr<X>(a.x() * b.x());
}
template <class X> Expr<X> operator/(const Expr<X>& a, const Expr<X>& b) {
  if (a.is_const() && b.is_const()) return a.c() / b.c();
  if (a.is_const()) return Expr<X>(a.c() / b.x());
  if (b.is_const()) return Expr<X>(a.x() / b.c());
  return Expr<X>(a.x() / b.x());
}
template <class X> Expr<X> operator-(const Expr<X>& a) {
  return a.is_const() ? Expr<X>(-a.c()) : Expr<X>(-a.x());
}

// ---- comparisons and masks ----
namespace detail {
template <class X, class TensorCmp, class DoubleCmp>
Mask compare(const Expr<X>& a, const Expr<X>& b, TensorCmp tc, DoubleCmp dc) {
  if (a.is_const() && b.is_const()) return Mask{std::nullopt, dc(a.c(), b.c()), Tensor()};
  const Tensor& like = tensor_of(a.is_const() ? b.x() : a.x());
  const Tensor ta = a.is_const() ? full_like(like, a.c()) : tensor_of(a.x());
  const Tensor tb = b.is_const() ? full_like(like, b.c()) : tensor_of(b.x());
  return Mask{tc(ta, tb), false, like};
}
template <class TensorOp, class BoolOp>
Mask combine(const Mask& a, const Mask& b, TensorOp to, BoolOp bo) {
  if (!a.bits && !b.bits) return Mask{std::nullopt, bo(a.value, b.value), Tensor()};
  const Tensor& like = a.bits ? a.like : b.like;
  const Tensor& shape_of = a.bits ? *a.bits : *b.bits;
  const Tensor ta = a.bits ? *a.bits : full_like(shape_of, a.value ? 1.0 : 0.0);
  const Tensor tb = b.bits ? *b.bits : full_like(shape_of, b.value ? 1.0 : 0.0);
  return Mask{to(ta, tb), false, like};
}
}  // namespace detail

#define NUMR_EXPR_COMPARE(op, fn)                                                        \
  template <class X> Mask operator op(const Expr<X>& a, const Expr<X>& b) {              \
    return detail::compare(a, b, [](const Tensor& x, const Tensor& y) { return fn(x, y); }, \
                           [](double x, double y) { return x op y; });                   \
  }
NUMR_EXPR_COMPARE(<, lt)
NUMR_EXPR_COMPARE(<=, le)
NUMR_EXPR_COMPARE(>, gt)
NUMR_EXPR_COMPARE(>=, ge)
NUMR_EXPR_COMPARE(==, eq)
NUMR_EXPR_COMPARE(!=, ne)
#undef NUMR_EXPR_COMPARE

inline Mask operator&(const Mask& a, const Mask& b) {
  return detail::combine(a, b, [](const Tensor& x, const Tensor& y) { return logical_and(x, y); },
                         [](bool x, bool y) { return x && y; });
}
inline Mask operator|(const Mask& a, const Mask& b) {
  return detail::combine(a, b, [](const Tensor& x, const Tensor& y) { return logical_or(x, y); },
                         [](bool x, bool y) { return x || y; });
}
inline Mask operator^(const Mask& a, const Mask& b) {
  return detail::combine(a, b, [](const Tensor& x, const Tensor& y) { return logical_xor(x, y); },
                         [](bool x, bool y) { return x != y; });
}
inline Mask operator!(const Mask& a) {
  return a.bits ? Mask{logical_not(*a.bits), false, a.like} : Mask{std::nullopt, !a.value, Tensor()};
}

template <class X> Expr<X> select(const Mask& m, const Expr<X>& a, const Expr<X>& b) {
  if (!m.bits) return m.value ? a : b;
  if (a.is_const() && b.is_const())
    return Expr<X>(lift<X>(where_cond(*m.bits, full_like(m.like, a.c()), b.c())));
  if (a.is_const()) return Expr<X>(where_cond(*m.bits, a.c(), b.x()));
  if (b.is_const()) return Expr<X>(where_cond(*m.bits, a.x(), b.c()));
  return Expr<X>(where_cond(*m.bits, a.x(), b.x()));
}

// ---- the primitive functions the formulas call ----
#define NUMR_EXPR_FN(name, op, scalar)                                               \
  template <class X> Expr<X> name(const Expr<X>& a) {                                \
    return a.is_const() ? Expr<X>(scalar(a.c())) : Expr<X>(::numr::op(a.x()));       \
  }
NUMR_EXPR_FN(sqrt, sqrt, std::sqrt)
NUMR_EXPR_FN(cbrt, cbrt, std::cbrt)
NUMR_EXPR_FN(exp, exp, std::exp)
NUMR_EXPR_FN(exp2, exp2, std::exp2)
NUMR_EXPR_FN(expm1, expm1, std::expm1)
NUMR_EXPR_FN(log, log, std::log)
NUMR_EXPR_FN(log2, log2, std::log2)
NUMR_EXPR_FN(log10, log10, std::log10)
NUMR_EXPR_FN(log1p, log1p, std::log1p)
NUMR_EXPR_FN(sin, sin, std::sin)
NUMR_EXPR_FN(cos, cos, std::cos)
NUMR_EXPR_FN(tan, tan, std::tan)
NUMR_EXPR_FN(asin, asin, std::asin)
NUMR_EXPR_FN(acos, acos, std::acos)
NUMR_EXPR_FN(atan, atan, std::atan)
NUMR_EXPR_FN(sinh, sinh, std::sinh)
NUMR_EXPR_FN(cosh, cosh, std::cosh)
NUMR_EXPR_FN(tanh, tanh, std::tanh)
NUMR_EXPR_FN(asinh, asinh, std::asinh)
NUMR_EXPR_FN(acosh, acosh, std::acosh)
NUMR_EXPR_FN(atanh, atanh, std::atanh)
NUMR_EXPR_FN(floor, floor, std::floor)
NUMR_EXPR_FN(ceil, ceil, std::ceil)
NUMR_EXPR_FN(trunc, trunc, std::trunc)
NUMR_EXPR_FN(erf, erf, std::erf)
NUMR_EXPR_FN(erfc, erfc, std::erfc)
NUMR_EXPR_FN(erfinv, erfinv, ::numr::math::erfinv)
NUMR_EXPR_FN(fabs, abs, std::fabs)
NUMR_EXPR_FN(rint, round, std::nearbyint)
#undef NUMR_EXPR_FN
template <class X> Expr<X> pow(const Expr<X>& a, const Expr<X>& b) {
  if (a.is_const() && b.is_const()) return std::pow(a.c(), b.c());
  if (b.is_const()) return Expr<X>(pow_scalar(a.x(), b.c()));
  return Expr<X>(::numr::pow(a.to_x(tensor_of(b.x())), b.x()));
}
template <class X> Expr<X> atan2(const Expr<X>& a, const Expr<X>& b) {
  if (a.is_const() && b.is_const()) return std::atan2(a.c(), b.c());
  const Tensor& like = tensor_of(a.is_const() ? b.x() : a.x());
  return Expr<X>(::numr::atan2(a.to_x(like), b.to_x(like)));
}
template <class X> Expr<X> fma(const Expr<X>& a, const Expr<X>& b, const Expr<X>& c) {
  return a * b + c;
}

}  // namespace numr::compose
