#include "codegen/ptx/builder.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <unordered_set>

#include "codegen/ptx/barrier_check.h"
#include "numr/error.h"

namespace numr::ptx {

namespace {

bool is_identifier(std::string_view s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

// The type an integer instruction is written with: bit types count as unsigned.
PtxType int_view(PtxType t) { return is_bits(t) ? unsigned_type(t) : t; }

// The type suffix for moving t through memory or mov: halves travel as b16.
PtxType move_type(PtxType t) { return is_half(t) ? PtxType::b16 : t; }

std::string join(std::string_view a, std::string_view b) {
  std::string s(a);
  s += '.';
  s += b;
  return s;
}

std::string_view round_suffix(Round r, bool to_integer) {
  switch (r) {
    case Round::automatic:
    case Round::nearest: return to_integer ? "rni" : "rn";
    case Round::zero: return to_integer ? "rzi" : "rz";
    case Round::down: return to_integer ? "rmi" : "rm";
    case Round::up: return to_integer ? "rpi" : "rp";
  }
  return "rn";
}

std::string_view space_name(Space s) {
  switch (s) {
    case Space::global: return "global";
    case Space::shared: return "shared";
    case Space::local: return "local";
  }
  return "global";
}

std::string_view atom_name(AtomOp op) {
  switch (op) {
    case AtomOp::add: return "add";
    case AtomOp::min: return "min";
    case AtomOp::max: return "max";
    case AtomOp::and_: return "and";
    case AtomOp::or_: return "or";
    case AtomOp::xor_: return "xor";
    case AtomOp::exch: return "exch";
    case AtomOp::inc: return "inc";
    case AtomOp::dec: return "dec";
  }
  return "add";
}

std::string_view shfl_name(ShflMode m) {
  switch (m) {
    case ShflMode::bfly: return "bfly";
    case ShflMode::down: return "down";
    case ShflMode::up: return "up";
    case ShflMode::idx: return "idx";
  }
  return "bfly";
}

}  // namespace

KernelBuilder::KernelBuilder(std::string name, Target target)
    : name_(std::move(name)), target_(target) {
  if (!is_identifier(name_)) fail<BackendError>("ptx", "invalid kernel name '", name_, "'");
  if (target_.sm < 50) error("target sm_" + std::to_string(target_.sm) + " is not supported");
}

void KernelBuilder::error(const std::string& what) const {
  fail<BackendError>("ptx", "kernel '", name_, "': ", what);
}

// ---- emission helpers ----

std::string KernelBuilder::fmt(const Operand& o, PtxType as) const {
  if (o.is_reg()) return reg_name(o.reg());
  const Imm& im = o.imm();
  if (is_float(as)) return float_literal(im.is_float ? im.f : double(im.i), as);
  if (as == PtxType::pred) error("an immediate where a predicate is expected");
  if (!im.is_float) return std::to_string(im.i);
  if (std::trunc(im.f) != im.f || !std::isfinite(im.f))
    error("the float immediate " + std::to_string(im.f) + " for an integer operand");
  return std::to_string(int64_t(im.f));
}

void KernelBuilder::collect(const Operand& o, std::vector<Reg>& uses) const {
  if (o.is_reg()) uses.push_back(o.reg());
}

void KernelBuilder::emit(Instr in) {
  for (Reg r : in.uses)
    if (!r.valid()) error("an operand register was never created (in '" + in.text + "')");
  body_.push_back(std::move(in));
}

Reg KernelBuilder::emit_def(PtxType result, std::string text, std::vector<Reg> uses, bool varying) {
  // text holds the mnemonic and the operands after the destination, separated by '|'.
  const Reg d = reg(result);
  const size_t bar = text.find('|');
  std::string line = text.substr(0, bar) + " " + reg_name(d);
  if (bar != std::string::npos) line += ", " + text.substr(bar + 1);
  Instr in;
  in.text = std::move(line);
  in.defs = {d};
  in.uses = std::move(uses);
  in.varying = varying;
  emit(std::move(in));
  return d;
}

void KernelBuilder::need_type(std::string_view op, PtxType t, const Operand& b) const {
  if (b.is_reg() && b.reg().type != t)
    error(std::string(op) + ": operand types " + std::string(type_name(t)) + " and " +
          std::string(type_name(b.reg().type)) + " differ");
}

Reg KernelBuilder::binary(std::string_view op, std::string_view mnemonic, Reg a, Operand b) {
  need_same(op, a, b);
  std::vector<Reg> uses{a};
  collect(b, uses);
  return emit_def(a.type, std::string(mnemonic) + "|" + reg_name(a) + ", " + fmt(b, a.type),
                  std::move(uses));
}

// ---- registers ----

Reg KernelBuilder::reg(PtxType t) {
  if (!is_register_type(t)) error(std::string(type_name(t)) + " is not a register type");
  return Reg{t, reg_count_[size_t(t)]++};
}

Reg KernelBuilder::mov(PtxType t, Operand v) {
  const Reg d = reg(t);
  assign(d, v);
  return d;
}

void KernelBuilder::assign(Reg dst, Operand src) {
  if (!dst.valid()) error("assign to a register that was never created");
  PtxType t = move_type(dst.type);
  if (src.is_reg()) {
    const Reg s = src.reg();
    if (type_size(s.type) != type_size(dst.type) ||
        (s.type == PtxType::pred) != (t == PtxType::pred))
      error("assign: " + std::string(type_name(s.type)) + " into " +
            std::string(type_name(dst.type)));
    if (s.type != dst.type && t != PtxType::pred) t = bits_type(t);
  }
  Instr in;
  in.text = "mov." + std::string(type_name(t)) + " " + reg_name(dst) + ", " +
            fmt(src, is_half(dst.type) ? dst.type : t);
  in.defs = {dst};
  collect(src, in.uses);
  emit(std::move(in));
}

Reg KernelBuilder::bitcast(Reg src, PtxType to) {
  if (type_size(src.type) != type_size(to) || src.type == PtxType::pred || to == PtxType::pred)
    error("bitcast from " + std::string(type_name(src.type)) + " to " + std::string(type_name(to)));
  return emit_def(to, "mov." + std::string(type_name(bits_type(to))) + "|" + reg_name(src), {src});
}

// ---- parameters ----

std::string KernelBuilder::new_param_name(std::string_view name) {
  if (!is_identifier(name)) error("invalid symbol name '" + std::string(name) + "'");
  if (std::find(symbols_.begin(), symbols_.end(), name) != symbols_.end())
    error("the name '" + std::string(name) + "' is declared twice");
  symbols_.emplace_back(name);
  return std::string(name);
}

Reg KernelBuilder::param(PtxType t, std::string_view name) {
  if (!is_register_type(t) || t == PtxType::pred || is_half(t))
    error("a parameter of type " + std::string(type_name(t)));
  params_.push_back(ParamInfo{new_param_name(name), t, 1, false});
  return emit_def(t, "ld.param." + std::string(type_name(t)) + "|[" + std::string(name) + "]", {});
}

Reg KernelBuilder::param_ptr(std::string_view name) {
  const Reg p = param(PtxType::u64, name);
  return emit_def(PtxType::u64, "cvta.to.global.u64|" + reg_name(p), {p});
}

ParamArray KernelBuilder::param_array(PtxType t, int count, std::string_view name) {
  if (!is_register_type(t) || t == PtxType::pred || is_half(t) || count < 1)
    error("a parameter array of " + std::to_string(count) + " " + std::string(type_name(t)));
  params_.push_back(ParamInfo{new_param_name(name), t, count, true});
  return ParamArray{std::string(name), t, count};
}

Reg KernelBuilder::load_param(const ParamArray& a, int index) {
  if (index < 0 || index >= a.count)
    error("index " + std::to_string(index) + " outside the parameter array '" + a.name + "'");
  return emit_def(a.type,
                  "ld.param." + std::string(type_name(a.type)) + "|[" + a.name + "+" +
                      std::to_string(index * type_size(a.type)) + "]",
                  {});
}

// ---- special registers ----

Reg KernelBuilder::special(SpecialReg r) {
  return emit_def(PtxType::u32, "mov.u32|" + std::string(special_name(r)), {},
                  special_is_varying(r));
}

Reg KernelBuilder::global_index_x() { return mad(ctaid_x(), ntid_x(), tid_x()); }

// ---- arithmetic ----

Reg KernelBuilder::add(Reg a, Operand b) {
  if (a.type == PtxType::pred) error("add on predicates");
  return binary("add",
                is_float(a.type) ? join("add.rn", type_name(a.type))
                                 : join("add", type_name(int_view(a.type))),
                a, b);
}

Reg KernelBuilder::sub(Reg a, Operand b) {
  if (a.type == PtxType::pred) error("sub on predicates");
  return binary("sub",
                is_float(a.type) ? join("sub.rn", type_name(a.type))
                                 : join("sub", type_name(int_view(a.type))),
                a, b);
}

Reg KernelBuilder::mul(Reg a, Operand b) {
  if (a.type == PtxType::pred) error("mul on predicates");
  return binary("mul",
                is_float(a.type) ? join("mul.rn", type_name(a.type))
                                 : join("mul.lo", type_name(int_view(a.type))),
                a, b);
}

Reg KernelBuilder::mul_hi(Reg a, Operand b) {
  if (!is_int(int_view(a.type))) error("mul_hi on " + std::string(type_name(a.type)));
  return binary("mul_hi", join("mul.hi", type_name(int_view(a.type))), a, b);
}

namespace {
PtxType wide_type(PtxType t) {
  switch (t) {
    case PtxType::u16: return PtxType::u32;
    case PtxType::s16: return PtxType::s32;
    case PtxType::u32: return PtxType::u64;
    case PtxType::s32: return PtxType::s64;
    default: return PtxType::pred;
  }
}
}  // namespace

Reg KernelBuilder::mul_wide(Reg a, Operand b) {
  const PtxType w = wide_type(a.type);
  if (w == PtxType::pred) error("mul_wide on " + std::string(type_name(a.type)));
  need_same("mul_wide", a, b);
  std::vector<Reg> uses{a};
  collect(b, uses);
  return emit_def(w,
                  join("mul.wide", type_name(a.type)) + "|" + reg_name(a) + ", " + fmt(b, a.type),
                  std::move(uses));
}

Reg KernelBuilder::mad(Reg a, Operand b, Operand c) {
  if (is_float(a.type)) return fma(a, b, c);
  if (!is_int(int_view(a.type))) error("mad on " + std::string(type_name(a.type)));
  need_same("mad", a, b);
  need_same("mad", a, c);
  std::vector<Reg> uses{a};
  collect(b, uses);
  collect(c, uses);
  return emit_def(a.type,
                  join("mad.lo", type_name(int_view(a.type))) + "|" + reg_name(a) + ", " +
                      fmt(b, a.type) + ", " + fmt(c, a.type),
                  std::move(uses));
}

Reg KernelBuilder::mad_wide(Reg a, Operand b, Operand c) {
  const PtxType w = wide_type(a.type);
  if (w == PtxType::pred) error("mad_wide on " + std::string(type_name(a.type)));
  need_same("mad_wide", a, b);
  if (c.is_reg() && c.reg().type != w)
    error("mad_wide: the addend must be " + std::string(type_name(w)));
  std::vector<Reg> uses{a};
  collect(b, uses);
  collect(c, uses);
  return emit_def(w,
                  join("mad.wide", type_name(a.type)) + "|" + reg_name(a) + ", " + fmt(b, a.type) +
                      ", " + fmt(c, w),
                  std::move(uses));
}

Reg KernelBuilder::fma(Reg a, Operand b, Operand c) {
  if (!is_float(a.type)) return mad(a, b, c);
  need_same("fma", a, b);
  need_same("fma", a, c);
  std::vector<Reg> uses{a};
  collect(b, uses);
  collect(c, uses);
  return emit_def(a.type,
                  join("fma.rn", type_name(a.type)) + "|" + reg_name(a) + ", " + fmt(b, a.type) +
                      ", " + fmt(c, a.type),
                  std::move(uses));
}

Reg KernelBuilder::div(Reg a, Operand b) {
  if (a.type == PtxType::f32 || a.type == PtxType::f64)
    return binary("div", join("div.rn", type_name(a.type)), a, b);
  if (!is_int(int_view(a.type))) error("div on " + std::string(type_name(a.type)));
  return binary("div", join("div", type_name(int_view(a.type))), a, b);
}

Reg KernelBuilder::div_full(Reg a, Operand b) {
  if (a.type != PtxType::f32) error("div_full on " + std::string(type_name(a.type)));
  return binary("div_full", "div.full.f32", a, b);
}

Reg KernelBuilder::rem(Reg a, Operand b) {
  if (!is_int(int_view(a.type))) error("rem on " + std::string(type_name(a.type)));
  return binary("rem", join("rem", type_name(int_view(a.type))), a, b);
}

Reg KernelBuilder::min(Reg a, Operand b) {
  if (a.type == PtxType::pred) error("min on predicates");
  return binary("min", join("min", type_name(int_view(a.type))), a, b);
}

Reg KernelBuilder::max(Reg a, Operand b) {
  if (a.type == PtxType::pred) error("max on predicates");
  return binary("max", join("max", type_name(int_view(a.type))), a, b);
}

Reg KernelBuilder::min_nan(Reg a, Operand b) {
  if (a.type != PtxType::f32 || target_.sm < 80) error("min_nan needs f32 and sm_80");
  return binary("min_nan", "min.NaN.f32", a, b);
}

Reg KernelBuilder::max_nan(Reg a, Operand b) {
  if (a.type != PtxType::f32 || target_.sm < 80) error("max_nan needs f32 and sm_80");
  return binary("max_nan", "max.NaN.f32", a, b);
}

Reg KernelBuilder::abs(Reg a) {
  if (!is_float(a.type) && !is_signed_int(a.type))
    error("abs on " + std::string(type_name(a.type)));
  return emit_def(a.type, join("abs", type_name(a.type)) + "|" + reg_name(a), {a});
}

Reg KernelBuilder::neg(Reg a) {
  if (!is_float(a.type) && !is_signed_int(a.type))
    error("neg on " + std::string(type_name(a.type)));
  return emit_def(a.type, join("neg", type_name(a.type)) + "|" + reg_name(a), {a});
}

// ---- bits ----

Reg KernelBuilder::and_(Reg a, Operand b) {
  return binary("and", join("and", type_name(bits_type(a.type))), a, b);
}
Reg KernelBuilder::or_(Reg a, Operand b) {
  return binary("or", join("or", type_name(bits_type(a.type))), a, b);
}
Reg KernelBuilder::xor_(Reg a, Operand b) {
  return binary("xor", join("xor", type_name(bits_type(a.type))), a, b);
}
Reg KernelBuilder::not_(Reg a) {
  return emit_def(a.type, join("not", type_name(bits_type(a.type))) + "|" + reg_name(a), {a});
}

Reg KernelBuilder::shl(Reg a, Operand amount) {
  if (is_float(a.type) || a.type == PtxType::pred)
    error("shl on " + std::string(type_name(a.type)));
  if (amount.is_reg() && type_size(amount.reg().type) != 4)
    error("shift amount of type " + std::string(type_name(amount.reg().type)));
  std::vector<Reg> uses{a};
  collect(amount, uses);
  return emit_def(a.type,
                  join("shl", type_name(bits_type(a.type))) + "|" + reg_name(a) + ", " +
                      fmt(amount, PtxType::u32),
                  std::move(uses));
}

Reg KernelBuilder::shr(Reg a, Operand amount) {
  if (is_float(a.type) || a.type == PtxType::pred)
    error("shr on " + std::string(type_name(a.type)));
  if (amount.is_reg() && type_size(amount.reg().type) != 4)
    error("shift amount of type " + std::string(type_name(amount.reg().type)));
  std::vector<Reg> uses{a};
  collect(amount, uses);
  return emit_def(a.type,
                  join("shr", type_name(int_view(a.type))) + "|" + reg_name(a) + ", " +
                      fmt(amount, PtxType::u32),
                  std::move(uses));
}

// ---- special functions ----

Reg KernelBuilder::unary_float(std::string_view mnemonic, Reg a, bool f64_ok) {
  if (a.type != PtxType::f32 && !(f64_ok && a.type == PtxType::f64))
    error(std::string(mnemonic) + " on " + std::string(type_name(a.type)));
  return emit_def(a.type, join(mnemonic, type_name(a.type)) + "|" + reg_name(a), {a});
}

Reg KernelBuilder::ex2_approx(Reg a) { return unary_float("ex2.approx", a, false); }
Reg KernelBuilder::ex2_approx_ftz(Reg a) { return unary_float("ex2.approx.ftz", a, false); }
Reg KernelBuilder::lg2_approx(Reg a) { return unary_float("lg2.approx", a, false); }
Reg KernelBuilder::sin_approx(Reg a) { return unary_float("sin.approx", a, false); }
Reg KernelBuilder::cos_approx(Reg a) { return unary_float("cos.approx", a, false); }
Reg KernelBuilder::tanh_approx(Reg a) { return unary_float("tanh.approx", a, false); }
Reg KernelBuilder::rcp_rn(Reg a) { return unary_float("rcp.rn", a); }
Reg KernelBuilder::rcp_approx(Reg a) {
  return unary_float(a.type == PtxType::f64 ? "rcp.approx.ftz" : "rcp.approx", a);
}
Reg KernelBuilder::sqrt_rn(Reg a) { return unary_float("sqrt.rn", a); }
Reg KernelBuilder::sqrt_approx(Reg a) { return unary_float("sqrt.approx", a, false); }
Reg KernelBuilder::rsqrt_approx(Reg a) { return unary_float("rsqrt.approx", a); }

// ---- rounding to integral values ----

namespace {
std::string round_integral(std::string_view mode, PtxType t) {
  return "cvt." + std::string(mode) + "." + std::string(type_name(t)) + "." +
         std::string(type_name(t));
}
}  // namespace

Reg KernelBuilder::rint(Reg a) {
  if (!is_float(a.type)) error("rint on " + std::string(type_name(a.type)));
  return emit_def(a.type, round_integral("rni", a.type) + "|" + reg_name(a), {a});
}
Reg KernelBuilder::floor(Reg a) {
  if (!is_float(a.type)) error("floor on " + std::string(type_name(a.type)));
  return emit_def(a.type, round_integral("rmi", a.type) + "|" + reg_name(a), {a});
}
Reg KernelBuilder::ceil(Reg a) {
  if (!is_float(a.type)) error("ceil on " + std::string(type_name(a.type)));
  return emit_def(a.type, round_integral("rpi", a.type) + "|" + reg_name(a), {a});
}
Reg KernelBuilder::trunc(Reg a) {
  if (!is_float(a.type)) error("trunc on " + std::string(type_name(a.type)));
  return emit_def(a.type, round_integral("rzi", a.type) + "|" + reg_name(a), {a});
}

// ---- conversions ----

// Sets the lowest bit of x (an f32 rounded toward zero from a wider value) when the
// rounding was inexact: round to odd, which a later round-to-nearest to a format at least
// two bits narrower turns into one correct rounding.
Reg KernelBuilder::f64_to_f32_odd(Reg a) {
  const Reg z = cvt(a, PtxType::f32, Round::zero);
  const Reg back = cvt(z, PtxType::f64);
  const Reg inexact = setp(Cmp::neu, back, a);
  const Reg bits = bitcast(z, PtxType::b32);
  return bitcast(or_(bits, selp(inexact, 1, 0, PtxType::b32)), PtxType::f32);
}

Reg KernelBuilder::int_to_f32_odd(Reg a) {
  const Reg z = cvt(a, PtxType::f32, Round::zero);
  const Reg back = cvt(z, a.type, Round::zero);
  const Reg inexact = setp(Cmp::ne, back, a);
  const Reg bits = bitcast(z, PtxType::b32);
  return bitcast(or_(bits, selp(inexact, 1, 0, PtxType::b32)), PtxType::f32);
}

Reg KernelBuilder::cvt(Reg a, PtxType to, Round r) {
  const PtxType from = a.type;
  if (from == PtxType::pred || to == PtxType::pred) error("cvt with predicates: use setp or selp");
  if (!is_register_type(to)) error("cvt to " + std::string(type_name(to)));
  if (from == to) return mov(to, a);
  const std::string fn(type_name(from));
  const std::string tn(type_name(to));
  std::string rs(round_suffix(r, false));

  if (is_float(from) && is_float(to)) {
    if (from == PtxType::bf16) {  // exact: the bf16 bits are the top half of an f32
      const Reg w = cvt(bitcast(a, PtxType::u16), PtxType::u32);
      const Reg f = bitcast(shl(w, 16), PtxType::f32);
      return to == PtxType::f32 ? f : cvt(f, to, r);
    }
    if (to == PtxType::bf16) {
      if (from == PtxType::f16) return cvt(cvt(a, PtxType::f32), to, r);
      if (from == PtxType::f64 && target_.sm < 90) {
        // No direct f64 -> bf16 before sm_90. Directed roundings compose through f32;
        // nearest needs f32 rounded to odd first.
        const bool nearest = r == Round::automatic || r == Round::nearest;
        const Reg f = nearest ? f64_to_f32_odd(a) : cvt(a, PtxType::f32, r);
        return cvt(f, to, r);
      }
    }
    if (type_size(to) > type_size(from))
      return emit_def(to, "cvt." + tn + "." + fn + "|" + reg_name(a), {a});
    return emit_def(to, "cvt." + rs + "." + tn + "." + fn + "|" + reg_name(a), {a});
  }
  if (is_float(from)) {  // -> integer
    if (is_half(from)) return cvt(cvt(a, PtxType::f32), to, r);
    const Round ri = r == Round::automatic ? Round::zero : r;
    const Reg c = emit_def(to,
                           "cvt." + std::string(round_suffix(ri, true)) + "." +
                               std::string(type_name(int_view(to))) + "." + fn + "|" + reg_name(a),
                           {a});
    // The hardware saturates but turns NaN into the minimum for 64-bit results and from
    // f64 (measured on sm_90), so NaN -> 0 is made explicit.
    return selp(setp(Cmp::nan, a, a), 0, c, to);
  }
  const PtxType fi = int_view(from);
  if (is_float(to)) {  // integer ->
    if (to == PtxType::bf16) {
      const bool nearest = r == Round::automatic || r == Round::nearest;
      if (nearest && type_size(fi) >= 4) return cvt(int_to_f32_odd(a), to, r);
      return cvt(cvt(a, PtxType::f32, r), to, r);
    }
    return emit_def(
        to, "cvt." + rs + "." + tn + "." + std::string(type_name(fi)) + "|" + reg_name(a), {a});
  }
  // integer -> integer: same width reinterprets; otherwise extend by the source's
  // signedness or truncate.
  if (type_size(from) == type_size(to)) return bitcast(a, to);
  return emit_def(to,
                  "cvt." + std::string(type_name(int_view(to))) + "." + std::string(type_name(fi)) +
                      "|" + reg_name(a),
                  {a});
}

Reg KernelBuilder::pack(Reg lo, Reg hi) {
  const int size = type_size(lo.type);
  if (size != type_size(hi.type) || (size != 4 && size != 2))
    error("pack of " + std::string(type_name(lo.type)) + " and " + std::string(type_name(hi.type)));
  const PtxType t = size == 4 ? PtxType::b64 : PtxType::b32;
  return emit_def(t, join("mov", type_name(t)) + "|{" + reg_name(lo) + ", " + reg_name(hi) + "}",
                  {lo, hi});
}

std::pair<Reg, Reg> KernelBuilder::unpack(Reg a) {
  const int size = type_size(a.type);
  if (size != 8 && size != 4) error("unpack of " + std::string(type_name(a.type)));
  const PtxType half = size == 8 ? PtxType::b32 : PtxType::b16;
  const Reg lo = reg(half), hi = reg(half);
  Instr in;
  in.text = join("mov", type_name(bits_type(a.type))) + " {" + reg_name(lo) + ", " + reg_name(hi) +
            "}, " + reg_name(a);
  in.defs = {lo, hi};
  in.uses = {a};
  emit(std::move(in));
  return {lo, hi};
}

// ---- compare and select ----

Reg KernelBuilder::setp(Cmp c, Reg a, Operand b) {
  need_same("setp", a, b);
  if (a.type == PtxType::pred) error("setp on predicates: use and_/or_/xor_/not_");
  PtxType t = a.type;
  const bool unordered = c == Cmp::equ || c == Cmp::neu || c == Cmp::ltu || c == Cmp::leu ||
                         c == Cmp::gtu || c == Cmp::geu || c == Cmp::num || c == Cmp::nan;
  if (unordered && !is_float(t)) error(std::string(cmp_name(c)) + " on integers");
  std::string_view name = cmp_name(c);
  if (is_bits(t) && c != Cmp::eq && c != Cmp::ne) t = unsigned_type(t);
  if (is_unsigned_int(t)) {
    if (c == Cmp::lt) name = "lo";
    if (c == Cmp::le) name = "ls";
    if (c == Cmp::gt) name = "hi";
    if (c == Cmp::ge) name = "hs";
  }
  std::vector<Reg> uses{a};
  collect(b, uses);
  return emit_def(PtxType::pred,
                  "setp." + std::string(name) + "." + std::string(type_name(t)) + "|" +
                      reg_name(a) + ", " + fmt(b, a.type),
                  std::move(uses));
}

Reg KernelBuilder::selp(Reg p, Operand a, Operand b) {
  if (a.is_reg()) return selp(p, a, b, a.reg().type);
  if (b.is_reg()) return selp(p, a, b, b.reg().type);
  error("selp with two immediates needs a type");
}

Reg KernelBuilder::selp(Reg p, Operand a, Operand b, PtxType t) {
  if (p.type != PtxType::pred) error("selp: the condition is not a predicate");
  if (t == PtxType::pred) error("selp of predicates: use and_/or_");
  need_type("selp", t, a);
  need_type("selp", t, b);
  std::vector<Reg> uses;
  collect(a, uses);
  collect(b, uses);
  uses.push_back(p);
  return emit_def(t,
                  join("selp", type_name(move_type(t))) + "|" + fmt(a, t) + ", " + fmt(b, t) +
                      ", " + reg_name(p),
                  std::move(uses));
}

// ---- control flow ----

Label KernelBuilder::label(std::string_view hint) {
  std::string name = "$L" + std::to_string(label_names_.size());
  if (!hint.empty()) {
    name += '_';
    for (char c : hint) name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  }
  label_names_.push_back(std::move(name));
  label_placed_.push_back(0);
  return Label{int(label_names_.size()) - 1};
}

void KernelBuilder::place(Label l) {
  if (l.id < 0 || l.id >= int(label_names_.size())) error("place: an unknown label");
  if (label_placed_[l.id]++) error("label " + label_names_[l.id] + " placed twice");
  Instr in;
  in.kind = InstrKind::label;
  in.text = label_names_[l.id];
  in.label = l.id;
  emit(std::move(in));
}

void KernelBuilder::bra(Label l) {
  if (l.id < 0 || l.id >= int(label_names_.size())) error("bra: an unknown label");
  Instr in;
  in.kind = InstrKind::branch;
  in.text = "bra " + label_names_[l.id];
  in.label = l.id;
  emit(std::move(in));
}

void KernelBuilder::bra_if(Reg p, Label l, bool negate) {
  if (p.type != PtxType::pred) error("bra_if: the condition is not a predicate");
  if (l.id < 0 || l.id >= int(label_names_.size())) error("bra_if: an unknown label");
  Instr in;
  in.kind = InstrKind::branch;
  in.text = "bra " + label_names_[l.id];
  in.label = l.id;
  in.guard = p;
  in.guard_negated = negate;
  in.uses = {p};
  emit(std::move(in));
}

void KernelBuilder::ret() {
  Instr in;
  in.kind = InstrKind::ret;
  in.text = "ret";
  emit(std::move(in));
}

void KernelBuilder::ret_if(Reg p, bool negate) {
  if (p.type != PtxType::pred) error("ret_if: the condition is not a predicate");
  Instr in;
  in.kind = InstrKind::ret;
  in.text = "ret";
  in.guard = p;
  in.guard_negated = negate;
  in.uses = {p};
  emit(std::move(in));
}

void KernelBuilder::if_then(Reg p, const std::function<void()>& then) {
  const Label skip = label("endif");
  bra_if(p, skip, /*negate=*/true);
  then();
  place(skip);
}

void KernelBuilder::if_then_else(Reg p, const std::function<void()>& then,
                                 const std::function<void()>& otherwise) {
  const Label other = label("else"), done = label("endif");
  bra_if(p, other, /*negate=*/true);
  then();
  bra(done);
  place(other);
  otherwise();
  place(done);
}

void KernelBuilder::for_range(Operand start, Operand end, Operand step, PtxType t,
                              const std::function<void(Reg)>& body) {
  if (!is_int(int_view(t))) error("for_range over " + std::string(type_name(t)));
  const Reg i = mov(t, start);
  const Label head = label("loop"), done = label("loop_end");
  place(head);
  bra_if(setp(Cmp::ge, i, end), done);
  body(i);
  assign(i, add(i, step));
  bra(head);
  place(done);
}

void KernelBuilder::while_loop(const std::function<Reg()>& cond,
                               const std::function<void()>& body) {
  const Label head = label("while"), done = label("while_end");
  place(head);
  bra_if(cond(), done, /*negate=*/true);
  body();
  bra(head);
  place(done);
}

// ---- memory ----

std::string KernelBuilder::mem_address(Space s, Reg addr, int64_t offset) const {
  const int size = type_size(addr.type);
  if (!is_int(int_view(addr.type)) || (size != 8 && !(size == 4 && s != Space::global)))
    error("an address in a " + std::string(type_name(addr.type)) + " register");
  std::string a = "[" + reg_name(addr);
  if (offset != 0) a += "+" + std::to_string(offset);
  return a + "]";
}

Reg KernelBuilder::ld(Space s, PtxType t, Reg addr, int64_t offset, bool nc) {
  if (t == PtxType::pred) error("a load of predicates");
  if (nc && s != Space::global) error("ld.nc outside global memory");
  const PtxType rt = t == PtxType::u8 ? PtxType::u32 : t == PtxType::s8 ? PtxType::s32 : t;
  std::string m = "ld." + std::string(space_name(s));
  if (nc) m += ".nc";
  m += "." + std::string(type_name(move_type(t)));
  return emit_def(rt, m + "|" + mem_address(s, addr, offset), {addr}, /*varying=*/true);
}

Reg KernelBuilder::ld_global(PtxType t, Reg addr, int64_t offset) {
  return ld(Space::global, t, addr, offset);
}
Reg KernelBuilder::ld_global_nc(PtxType t, Reg addr, int64_t offset) {
  return ld(Space::global, t, addr, offset, true);
}
Reg KernelBuilder::ld_shared(PtxType t, Reg addr, int64_t offset) {
  return ld(Space::shared, t, addr, offset);
}

std::vector<Reg> KernelBuilder::ld_v(Space s, PtxType t, int n, Reg addr, int64_t offset, bool nc) {
  if ((n != 2 && n != 4) || type_size(t) < 2 || n * type_size(t) > 16)
    error("a vector load of " + std::to_string(n) + " " + std::string(type_name(t)));
  if (nc && s != Space::global) error("ld.nc outside global memory");
  std::vector<Reg> out;
  std::string list;
  for (int k = 0; k < n; ++k) {
    out.push_back(reg(t));
    list += (k ? ", " : "") + reg_name(out.back());
  }
  Instr in;
  in.text = "ld." + std::string(space_name(s)) + (nc ? ".nc" : "") + ".v" + std::to_string(n) +
            "." + std::string(type_name(move_type(t))) + " {" + list + "}, " +
            mem_address(s, addr, offset);
  in.defs = out;
  in.uses = {addr};
  in.varying = true;
  emit(std::move(in));
  return out;
}

std::vector<Reg> KernelBuilder::ld_global_v(PtxType t, int n, Reg addr, int64_t offset) {
  return ld_v(Space::global, t, n, addr, offset);
}
std::vector<Reg> KernelBuilder::ld_global_nc_v(PtxType t, int n, Reg addr, int64_t offset) {
  return ld_v(Space::global, t, n, addr, offset, true);
}
std::vector<Reg> KernelBuilder::ld_shared_v(PtxType t, int n, Reg addr, int64_t offset) {
  return ld_v(Space::shared, t, n, addr, offset);
}

void KernelBuilder::st(Space s, PtxType t, Reg addr, Operand v, int64_t offset) {
  if (t == PtxType::pred) error("a store of predicates");
  PtxType mt = move_type(t);
  Reg src;
  if (v.is_reg()) {
    src = v.reg();
    if (src.type == PtxType::pred || type_size(src.type) < type_size(t) ||
        (type_size(src.type) > type_size(t) && type_size(t) != 1))
      error("a store of a " + std::string(type_name(src.type)) + " register as " +
            std::string(type_name(t)));
    if (type_size(t) > 1 && src.type != t) mt = bits_type(t);  // same width, other type
  } else {
    src = mov(t == PtxType::u8 ? PtxType::u32 : t == PtxType::s8 ? PtxType::s32 : t, v);
  }
  Instr in;
  in.text = "st." + std::string(space_name(s)) + "." + std::string(type_name(mt)) + " " +
            mem_address(s, addr, offset) + ", " + reg_name(src);
  in.uses = {addr, src};
  emit(std::move(in));
}

void KernelBuilder::st_global(Reg addr, Reg v, int64_t offset) {
  st(Space::global, v.type, addr, v, offset);
}
void KernelBuilder::st_shared(Reg addr, Reg v, int64_t offset) {
  st(Space::shared, v.type, addr, v, offset);
}

void KernelBuilder::st_v(Space s, Reg addr, std::span<const Reg> v, int64_t offset) {
  const int n = int(v.size());
  const PtxType t = n > 0 ? v[0].type : PtxType::pred;
  if ((n != 2 && n != 4) || type_size(t) < 2 || n * type_size(t) > 16)
    error("a vector store of " + std::to_string(n) + " " + std::string(type_name(t)));
  std::string list;
  Instr in;
  in.uses = {addr};
  for (int k = 0; k < n; ++k) {
    if (v[k].type != t) error("a vector store of mixed types");
    list += (k ? ", " : "") + reg_name(v[k]);
    in.uses.push_back(v[k]);
  }
  in.text = "st." + std::string(space_name(s)) + ".v" + std::to_string(n) + "." +
            std::string(type_name(move_type(t))) + " " + mem_address(s, addr, offset) + ", {" +
            list + "}";
  emit(std::move(in));
}

void KernelBuilder::st_global_v(Reg addr, std::span<const Reg> v, int64_t offset) {
  st_v(Space::global, addr, v, offset);
}
void KernelBuilder::st_shared_v(Reg addr, std::span<const Reg> v, int64_t offset) {
  st_v(Space::shared, addr, v, offset);
}

// ---- shared memory ----

SharedArray KernelBuilder::shared_array(PtxType t, int64_t count, std::string_view name,
                                        int align) {
  if (count < 1 || type_size(t) == 0)
    error("a shared array of " + std::to_string(count) + " " + std::string(type_name(t)));
  const int a = std::max({align, type_size(t), 4});
  const std::string n = new_param_name(name);
  shared_decls_.push_back(".shared .align " + std::to_string(a) + " .b8 " + n + "[" +
                          std::to_string(count * type_size(t)) + "];");
  return SharedArray{n, t, count};
}

SharedArray KernelBuilder::dynamic_shared(std::string_view name, PtxType t, int align) {
  if (has_dynamic_shared_) error("a second dynamic shared array");
  has_dynamic_shared_ = true;
  const std::string n = new_param_name(name);
  shared_decls_.push_back(".extern .shared .align " + std::to_string(std::max(align, 4)) + " .b8 " +
                          n + "[];");
  return SharedArray{n, t, 0};
}

Reg KernelBuilder::address_of(const SharedArray& a) {
  return emit_def(PtxType::u32, "mov.u32|" + a.name, {});
}

// ---- synchronization, warps, atomics ----

void KernelBuilder::bar_sync() {
  Instr in;
  in.kind = InstrKind::barrier;
  in.text = "bar.sync 0";
  emit(std::move(in));
}

Reg KernelBuilder::shfl(ShflMode mode, Reg v, Operand b, uint32_t member_mask) {
  if (type_size(v.type) == 8) {
    const auto [lo, hi] = unpack(v);
    return bitcast(pack(shfl(mode, lo, b, member_mask), shfl(mode, hi, b, member_mask)), v.type);
  }
  if (type_size(v.type) != 4) error("shfl of " + std::string(type_name(v.type)));
  if (b.is_reg() && type_size(b.reg().type) != 4) error("shfl: the lane operand is not 32-bit");
  std::vector<Reg> uses{v};
  collect(b, uses);
  char mask[16];
  std::snprintf(mask, sizeof mask, "0x%08x", member_mask);
  const int clamp = mode == ShflMode::up ? 0 : 31;
  return emit_def(v.type,
                  "shfl.sync." + std::string(shfl_name(mode)) + ".b32|" + reg_name(v) + ", " +
                      fmt(b, PtxType::u32) + ", " + std::to_string(clamp) + ", " + mask,
                  std::move(uses), /*varying=*/true);
}

namespace {
// The type suffix atom/red want for op on memory type t, or pred if unsupported.
PtxType atom_type(AtomOp op, PtxType t) {
  const int size = type_size(t);
  if (size != 4 && size != 8) return PtxType::pred;
  switch (op) {
    case AtomOp::add:
      if (is_float(t)) return t;
      return t == PtxType::s32 ? t : unsigned_type(t);
    case AtomOp::min:
    case AtomOp::max:
      if (is_float(t)) return PtxType::pred;
      return is_signed_int(t) ? t : unsigned_type(t);
    case AtomOp::inc:
    case AtomOp::dec: return t == PtxType::u32 || t == PtxType::b32 ? PtxType::u32 : PtxType::pred;
    case AtomOp::and_:
    case AtomOp::or_:
    case AtomOp::xor_:
    case AtomOp::exch: return bits_type(t);
  }
  return PtxType::pred;
}
}  // namespace

Reg KernelBuilder::atom(Space s, AtomOp op, PtxType t, Reg addr, Operand v, int64_t offset) {
  const PtxType at = atom_type(op, t);
  if (at == PtxType::pred)
    error("atom." + std::string(atom_name(op)) + " on " + std::string(type_name(t)));
  if (v.is_reg() && type_size(v.reg().type) != type_size(t)) error("atom: operand width");
  std::vector<Reg> uses{addr};
  collect(v, uses);
  return emit_def(t,
                  "atom." + std::string(space_name(s)) + "." + std::string(atom_name(op)) + "." +
                      std::string(type_name(at)) + "|" + mem_address(s, addr, offset) + ", " +
                      fmt(v, at),
                  std::move(uses), /*varying=*/true);
}

Reg KernelBuilder::atom_cas(Space s, PtxType t, Reg addr, Operand cmp, Operand v, int64_t offset) {
  if (type_size(t) != 4 && type_size(t) != 8) error("atom.cas on " + std::string(type_name(t)));
  const PtxType bt = bits_type(t);
  std::vector<Reg> uses{addr};
  collect(cmp, uses);
  collect(v, uses);
  return emit_def(t,
                  "atom." + std::string(space_name(s)) + ".cas." + std::string(type_name(bt)) +
                      "|" + mem_address(s, addr, offset) + ", " + fmt(cmp, t) + ", " + fmt(v, t),
                  std::move(uses), /*varying=*/true);
}

void KernelBuilder::red(Space s, AtomOp op, PtxType t, Reg addr, Operand v, int64_t offset) {
  const PtxType at = atom_type(op, t);
  if (at == PtxType::pred || op == AtomOp::exch)
    error("red." + std::string(atom_name(op)) + " on " + std::string(type_name(t)));
  Instr in;
  in.text = "red." + std::string(space_name(s)) + "." + std::string(atom_name(op)) + "." +
            std::string(type_name(at)) + " " + mem_address(s, addr, offset) + ", " + fmt(v, at);
  in.uses = {addr};
  collect(v, in.uses);
  emit(std::move(in));
}

void KernelBuilder::raw(std::string text, std::vector<Reg> defs, std::vector<Reg> uses,
                        bool varying) {
  Instr in;
  in.text = std::move(text);
  in.defs = std::move(defs);
  in.uses = std::move(uses);
  in.varying = varying;
  emit(std::move(in));
}

// ---- output ----

std::string KernelBuilder::finish() {
  const bool falls_off =
      body_.empty() || body_.back().guard.valid() ||
      (body_.back().kind != InstrKind::ret && body_.back().kind != InstrKind::branch);
  if (falls_off) ret();

  for (size_t l = 0; l < label_names_.size(); ++l)
    if (!label_placed_[l])
      for (const Instr& in : body_)
        if (in.kind == InstrKind::branch && in.label == int(l))
          error("branch to label " + label_names_[l] + ", which is never placed");

  std::unordered_set<uint64_t> written;
  auto key = [](Reg r) { return (uint64_t(r.type) << 32) | r.n; };
  for (const Instr& in : body_)
    for (Reg d : in.defs) written.insert(key(d));
  for (const Instr& in : body_)
    for (Reg u : in.uses)
      if (!written.count(key(u)))
        error("register " + reg_name(u) + " is read (in '" + in.text + "') but never written");

  std::ostringstream os;
  int line = 1;
  auto put = [&](const std::string& s) {
    os << s << '\n';
    ++line;
  };
  put(".version " + std::to_string(target_.ptx_major) + "." + std::to_string(target_.ptx_minor));
  put(".target sm_" + std::to_string(target_.sm));
  put(".address_size 64");
  put("");
  for (const std::string& d : shared_decls_) put(d);
  if (!shared_decls_.empty()) put("");
  put(".visible .entry " + name_ + "(");
  for (size_t i = 0; i < params_.size(); ++i) {
    const ParamInfo& p = params_[i];
    std::string d = p.array ? "\t.param .align " + std::to_string(p.align()) + " .b8 " + p.name +
                                  "[" + std::to_string(p.size()) + "]"
                            : "\t.param ." + std::string(type_name(p.type)) + " " + p.name;
    if (i + 1 < params_.size()) d += ",";
    put(d);
  }
  put(")");
  put("{");
  for (size_t t = 0; t < reg_count_.size(); ++t) {
    if (reg_count_[t] == 0) continue;
    const PtxType type = PtxType(t);
    put("\t.reg ." + std::string(type_name(move_type(type))) + " " + std::string(reg_prefix(type)) +
        "<" + std::to_string(reg_count_[t]) + ">;");
  }
  std::vector<int> lines;
  lines.reserve(body_.size());
  for (const Instr& in : body_) {
    lines.push_back(line);
    if (in.kind == InstrKind::label) {
      put(in.text + ":");
      continue;
    }
    std::string s = "\t";
    if (in.guard.valid())
      s += std::string("@") + (in.guard_negated ? "!" : "") + reg_name(in.guard) + " ";
    put(s + in.text + ";");
  }
  put("}");
  check_barriers(name_, body_, lines);
  return os.str();
}

}  // namespace numr::ptx
