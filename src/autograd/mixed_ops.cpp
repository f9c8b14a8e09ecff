// Var conveniences: Var with Tensor operands (the Tensor as a constant), s / x, stddev,
// where_cond with a scalar branch or a Tensor condition, tril and triu.
#include "autograd/grad_util.h"
#include "ops/common.h"
#include "ops/triangle.h"

namespace numr {
namespace {

using autograd::constant;

// A 0-d constant holding s in x's dtype and device.
Var scalar_for(std::string_view op, double s, const Var& x) {
  ops::check_scalar_fits(op, s, x.dtype());
  return constant(full(Shape{}, s, x.dtype(), x.device()));
}

// A plain tensor as an operand of a Var op; rejects an undefined one with the op's name.
Var operand(std::string_view op, const Tensor& t) {
  ops::check_defined(op, t);
  return constant(t);
}

}  // namespace

Var stddev(const Var& x, const std::vector<int64_t>& dims, int64_t correction, bool keepdim) {
  return numr::std(x, dims, correction, keepdim);
}

Var operator+(const Var& a, const Tensor& b) { return add(a, operand("add", b)); }
Var operator-(const Var& a, const Tensor& b) { return sub(a, operand("sub", b)); }
Var operator*(const Var& a, const Tensor& b) { return mul(a, operand("mul", b)); }
Var operator/(const Var& a, const Tensor& b) { return div(a, operand("div", b)); }
Var operator+(const Tensor& a, const Var& b) { return add(operand("add", a), b); }
Var operator-(const Tensor& a, const Var& b) { return sub(operand("sub", a), b); }
Var operator*(const Tensor& a, const Var& b) { return mul(operand("mul", a), b); }
Var operator/(const Tensor& a, const Var& b) { return div(operand("div", a), b); }
Var operator/(double s, const Var& x) { return div(scalar_for("div", s, x), x); }

Var where_cond(const Var& cond, const Var& x, double y) {
  return where_cond(cond, x, scalar_for("where_cond", y, x));
}
Var where_cond(const Var& cond, double x, const Var& y) {
  return where_cond(cond, scalar_for("where_cond", x, y), y);
}
Var where_cond(const Tensor& cond, const Var& x, const Var& y) {
  return where_cond(operand("where_cond", cond), x, y);
}
Var where_cond(const Tensor& cond, const Var& x, double y) {
  return where_cond(operand("where_cond", cond), x, y);
}
Var where_cond(const Tensor& cond, double x, const Var& y) {
  return where_cond(operand("where_cond", cond), x, y);
}

Var tril(const Var& x, int64_t diagonal) {
  return where_cond(ops::triangle_mask("tril", x.tensor(), diagonal, true), x, 0.0);
}
Var triu(const Var& x, int64_t diagonal) {
  return where_cond(ops::triangle_mask("triu", x.tensor(), diagonal, false), x, 0.0);
}

}  // namespace numr
