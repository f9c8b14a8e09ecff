#include "codegen/ptx/value.h"

#include <cmath>
#include <limits>
#include <string>

#include "numr/error.h"

namespace numr::ptx {

namespace {

thread_local const FormulaScope* current_scope = nullptr;

bool is_compute_type(PtxType t) {
  return t == PtxType::f32 || t == PtxType::f64 || t == PtxType::s32 || t == PtxType::s64;
}

KernelBuilder& bld() { return FormulaScope::builder(); }

void need_same(const char* op, const Value& a, const Value& b) {
  if (a.type() != b.type())
    fail<BackendError>("ptx", "Value ", op, ": operand types ", type_name(a.type()), " and ",
                       type_name(b.type()), " differ");
}

void need_float(const char* op, const Value& x) {
  if (!is_float(x.type()))
    fail<BackendError>("ptx", "Value ", op, " needs a float type, not ", type_name(x.type()));
}

Mask compare(const char* op, Cmp c, const Value& a, const Value& b) {
  need_same(op, a, b);
  return Mask(bld().setp(c, a.reg(), b.reg()));
}

}  // namespace

FormulaScope::FormulaScope(KernelBuilder& b, PtxType compute, FastMath fast)
    : builder_(&b), type_(compute), fast_(fast), outer_(current_scope) {
  if (!is_compute_type(compute))
    fail<BackendError>("ptx", "FormulaScope: ", type_name(compute),
                       " is not a compute type (f32, f64, s32, s64)");
  current_scope = this;
}

FormulaScope::~FormulaScope() { current_scope = outer_; }

KernelBuilder& FormulaScope::builder() {
  if (!current_scope) fail<BackendError>("ptx", "a Value used outside any FormulaScope");
  return *current_scope->builder_;
}

PtxType FormulaScope::compute_type() {
  if (!current_scope) fail<BackendError>("ptx", "a Value made outside any FormulaScope");
  return current_scope->type_;
}

FastMath FormulaScope::fast_math() {
  if (!current_scope) fail<BackendError>("ptx", "a Value used outside any FormulaScope");
  return current_scope->fast_;
}

Mask::Mask(Reg p) : p_(p) {
  if (p.type != PtxType::pred) fail<BackendError>("ptx", "Mask of a non-predicate register");
}

Value::Value(Reg r) : r_(r) {
  if (!is_compute_type(r.type))
    fail<BackendError>("ptx", "Value of type ", type_name(r.type),
                       ": compute types are f32, f64, s32, s64");
}

Value Value::constant(PtxType t, double c) {
  if (is_float(t)) return Value(bld().mov(t, c));
  // C++'s double -> integer conversion, kept defined: saturate, NaN -> 0.
  const double lo = t == PtxType::s32 ? -2147483648.0 : -9223372036854775808.0;
  const double hi = -lo;
  int64_t v = 0;
  if (c != c)
    v = 0;
  else if (c <= lo)
    v = t == PtxType::s32 ? std::numeric_limits<int32_t>::min()
                          : std::numeric_limits<int64_t>::min();
  else if (c >= hi)
    v = t == PtxType::s32 ? std::numeric_limits<int32_t>::max()
                          : std::numeric_limits<int64_t>::max();
  else
    v = int64_t(c);
  return Value(bld().mov(t, v));
}

Value operator+(const Value& a, const Value& b) {
  need_same("+", a, b);
  return Value(bld().add(a.reg(), b.reg()));
}
Value operator-(const Value& a, const Value& b) {
  need_same("-", a, b);
  return Value(bld().sub(a.reg(), b.reg()));
}
Value operator*(const Value& a, const Value& b) {
  need_same("*", a, b);
  return Value(bld().mul(a.reg(), b.reg()));
}
Value operator/(const Value& a, const Value& b) {
  need_same("/", a, b);
  if (a.type() == PtxType::f32 && FormulaScope::fast_math().div)
    return Value(bld().div_full(a.reg(), b.reg()));
  return Value(bld().div(a.reg(), b.reg()));
}
Value operator-(const Value& a) { return Value(bld().neg(a.reg())); }

Mask operator==(const Value& a, const Value& b) { return compare("==", Cmp::eq, a, b); }
Mask operator!=(const Value& a, const Value& b) {
  return compare("!=", is_float(a.type()) ? Cmp::neu : Cmp::ne, a, b);
}
Mask operator<(const Value& a, const Value& b) { return compare("<", Cmp::lt, a, b); }
Mask operator<=(const Value& a, const Value& b) { return compare("<=", Cmp::le, a, b); }
Mask operator>(const Value& a, const Value& b) { return compare(">", Cmp::gt, a, b); }
Mask operator>=(const Value& a, const Value& b) { return compare(">=", Cmp::ge, a, b); }
Mask operator&(const Mask& a, const Mask& b) { return Mask(bld().and_(a.reg(), b.reg())); }
Mask operator|(const Mask& a, const Mask& b) { return Mask(bld().or_(a.reg(), b.reg())); }
Mask operator^(const Mask& a, const Mask& b) { return Mask(bld().xor_(a.reg(), b.reg())); }
Mask operator!(const Mask& a) { return Mask(bld().not_(a.reg())); }

Value select(const Mask& m, const Value& a, const Value& b) {
  need_same("select", a, b);
  return Value(bld().selp(m.reg(), a.reg(), b.reg()));
}

Value fabs(const Value& x) { return Value(bld().abs(x.reg())); }
Value abs(const Value& x) { return Value(bld().abs(x.reg())); }
Value sqrt(const Value& x) {
  need_float("sqrt", x);
  return Value(bld().sqrt_rn(x.reg()));
}
Value floor(const Value& x) { return is_float(x.type()) ? Value(bld().floor(x.reg())) : x; }
Value ceil(const Value& x) { return is_float(x.type()) ? Value(bld().ceil(x.reg())) : x; }
Value trunc(const Value& x) { return is_float(x.type()) ? Value(bld().trunc(x.reg())) : x; }
Value rint(const Value& x) { return is_float(x.type()) ? Value(bld().rint(x.reg())) : x; }

Value fma(const Value& a, const Value& b, const Value& c) {
  need_same("fma", a, b);
  need_same("fma", a, c);
  return Value(bld().fma(a.reg(), b.reg(), c.reg()));
}

Value fmin(const Value& a, const Value& b) {
  need_same("fmin", a, b);
  return Value(bld().min(a.reg(), b.reg()));
}
Value fmax(const Value& a, const Value& b) {
  need_same("fmax", a, b);
  return Value(bld().max(a.reg(), b.reg()));
}

Value pow2i(const Value& n) {
  need_float("pow2i", n);
  KernelBuilder& b = bld();
  const bool d = n.type() == PtxType::f64;
  const PtxType it = d ? PtxType::s64 : PtxType::s32;
  const Reg e = b.add(b.cvt(n.reg(), it, Round::zero), d ? 1023 : 127);
  return Value(b.bitcast(b.shl(e, d ? 52 : 23), n.type()));
}

Value ilogb_normal(const Value& x) {
  need_float("ilogb_normal", x);
  KernelBuilder& b = bld();
  const bool d = x.type() == PtxType::f64;
  const Reg bits = b.bitcast(x.reg(), d ? PtxType::s64 : PtxType::s32);
  const Reg field = b.and_(b.shr(bits, d ? 52 : 23), d ? 0x7ff : 0xff);
  return Value(b.cvt(b.sub(field, d ? 1023 : 127), x.type()));
}

Value convert(const Value& x, PtxType to) { return Value(bld().cvt(x.reg(), to)); }

}  // namespace numr::ptx
