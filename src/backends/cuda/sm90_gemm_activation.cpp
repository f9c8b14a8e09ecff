// The epilogue's activations in f32 (sm90_gemm_parts.h). activate() instantiates numr's
// formulas (math/elementwise.h) over F32 below, an expression type of this generator's PTX
// text, with the approximations numr's BF16 kernels take (fast_math.h: exp as
// ex2.approx.ftz of x log2(e), exp2 as ex2.approx.ftz), so that for equal pre-activations
// the results match matmul_bias_activation's.
//
// The division differs. x / den (den = 1 + exp(-z) >= 1) is x * rcp.approx.ftz(den): for
// every den in [1, 2^126] div.full.f32 takes that very reciprocal and product (it scales
// both operands only above 2^126 and below 2^-126), so the quotient has its bits; one setp
// per quotient checks the range, and a batch with any den above it (or NaN) is redone with
// div.full.f32 (split_division_check). The BF16 kernel goes further and takes one
// reciprocal per pair of values (activate_pairs), since its epilogue is bound by the MUFU
// unit (ex2 and rcp per value): those quotients are within a few f32 ulp of div.full.f32's.
// activate_pairs interleaves the two values' operations and divisions, which a formula
// over one value cannot express; it writes math::silu's and math::gelu's operations out.
#include "backends/cuda/sm90_gemm_parts.h"
#include "math/elementwise.h"
#include "numr/error.h"

namespace numr::cuda::sm90 {
namespace {

// Where F32 operations write, while an EmitScope lives on this thread: its Ptx; and the
// operands of its last quotient (for split_division_check).
struct Emit {
  Ptx* p = nullptr;
  Activated quotient;
};
thread_local Emit* g_emit = nullptr;

class EmitScope {
 public:
  explicit EmitScope(Ptx& p) : outer_(g_emit) {
    emit_.p = &p;
    g_emit = &emit_;
  }
  ~EmitScope() { g_emit = outer_; }
  EmitScope(const EmitScope&) = delete;
  EmitScope& operator=(const EmitScope&) = delete;
  const Activated& quotient() const { return emit_.quotient; }

 private:
  Emit emit_;
  Emit* outer_;
};

// An f32 value of the epilogue: a register, or a constant written as an immediate.
class F32 {
 public:
  explicit F32(double c) : s_(f32_hex(float(c))), imm_(true) {}
  explicit F32(std::string reg) : s_(std::move(reg)) {}
  const std::string& str() const { return s_; }
  bool imm() const { return imm_; }

 private:
  std::string s_;
  bool imm_ = false;
};

struct Pred {
  std::string s;
};

Ptx& out() { return *g_emit->p; }
F32 fresh() { return F32(out().reg('f')); }

// Sums with the constant second, as PTX writes them.
F32 operator+(const F32& a, const F32& b) {
  if (a.imm() && !b.imm()) return b + a;
  const F32 r = fresh();
  out().op("add.rn.f32 ", r.str(), ", ", a.str(), ", ", b.str());
  return r;
}
F32 operator*(const F32& a, const F32& b) {
  const F32 r = fresh();
  out().op("mul.rn.f32 ", r.str(), ", ", a.str(), ", ", b.str());
  return r;
}
F32 operator-(const F32& a) {
  const F32 r = fresh();
  out().op("neg.f32 ", r.str(), ", ", a.str());
  return r;
}
// x * rcp.approx.ftz(den), the operands kept for split_division_check (above).
F32 operator/(const F32& x, const F32& den) {
  const F32 y = fresh(), r = fresh();
  out().op("rcp.approx.ftz.f32 ", r.str(), ", ", den.str());
  out().op("mul.rn.f32 ", y.str(), ", ", x.str(), ", ", r.str());
  g_emit->quotient = Activated{y.str(), x.str(), den.str()};
  return y;
}
Pred operator<(const F32& a, const F32& b) {
  const Pred r{out().reg('p')};
  out().op("setp.lt.f32 ", r.s, ", ", a.str(), ", ", b.str());
  return r;
}
F32 select(const Pred& m, const F32& a, const F32& b) {
  const F32 r = fresh();
  out().op("selp.f32 ", r.str(), ", ", a.str(), ", ", b.str(), ", ", m.s);
  return r;
}
F32 fma(const F32& a, const F32& b, const F32& c) {
  const F32 r = fresh();
  out().op("fma.rn.f32 ", r.str(), ", ", a.str(), ", ", b.str(), ", ", c.str());
  return r;
}
F32 exp2(const F32& a) {
  const F32 r = fresh();
  out().op("ex2.approx.ftz.f32 ", r.str(), ", ", a.str());
  return r;
}
F32 exp(const F32& a) { return exp2(a * F32(1.4426950408889634)); }

}  // namespace

bool supported_activation(Activation act) {
  return act == Activation::None || act == Activation::Relu || act == Activation::Gelu ||
         act == Activation::Silu;
}

Activated activate(Ptx& p, Activation act, const std::string& x) {
  const EmitScope scope(p);
  const F32 v(x);
  // Silu and Gelu end in their quotient.
  const auto quotient = [&](const F32& y) {
    return Activated{y.str(), scope.quotient().x, scope.quotient().den};
  };
  switch (act) {
    case Activation::None: return Activated{x, "", ""};
    case Activation::Relu: return Activated{math::relu(v).str(), "", ""};
    case Activation::Silu: return quotient(math::silu(v));
    case Activation::Gelu: return quotient(math::gelu(v));
    default: break;
  }
  fail<BackendError>(kOp, "activation ", activation_name(act), " is not implemented");
}

// Where any den is above 2^126 or NaN (gtu: unordered too), the whole batch is recomputed
// with div.full.f32. One setp per quotient (ptxas chains them into one predicate) and one
// branch per batch.
void split_division_check(Ptx& p, const std::vector<Activated>& batch) {
  std::string any;
  for (const Activated& v : batch) {
    if (v.den.empty()) continue;
    if (any.empty()) {
      any = p.reg('p');
      p.op("setp.gtu.f32 ", any, ", ", v.den, ", 0f7E800000");
    } else {
      p.op("setp.gtu.or.f32 ", any, ", ", v.den, ", 0f7E800000, ", any);
    }
  }
  if (any.empty()) return;
  const std::string in_range = p.label("div_in_range");
  p.op("@!", any, " bra ", in_range);
  for (const Activated& v : batch)
    if (!v.den.empty()) p.op("div.full.f32 ", v.y, ", ", v.x, ", ", v.den);
  p.place(in_range);
}

// y0 = x0 * (d1 * r), y1 = x1 * (d0 * r), r = rcp.approx.ftz(d0 d1). Where any pair's
// product is above 2^126 (r would flush to zero) or NaN, the batch is redone with
// div.full.f32.
std::vector<Activated> activate_pairs(Ptx& p, Activation act, const std::string (&v)[8]) {
  std::vector<Activated> y(8);
  for (int k = 0; k < 8; ++k) {
    // The activation's own code up to its quotient: den = 1 + 2^a.
    const std::string a = p.reg('f');
    if (act == Activation::Silu) {
      p.op("mul.rn.f32 ", a, ", ", v[k], ", ", f32_hex(float(-1.4426950408889634)));
    } else {
      const std::string x2 = p.reg('f'), t = p.reg('f');
      p.op("mul.rn.f32 ", x2, ", ", v[k], ", ", v[k]);
      p.op("fma.rn.f32 ", t, ", ", f32_hex(float(math::kGeluG1)), ", ", x2, ", ",
           f32_hex(float(math::kGeluG0)));
      p.op("mul.rn.f32 ", a, ", ", v[k], ", ", t);
    }
    const std::string e = p.reg('f');
    y[k] = Activated{p.reg('f'), v[k], p.reg('f')};
    p.op("ex2.approx.ftz.f32 ", e, ", ", a);
    p.op("add.rn.f32 ", y[k].den, ", ", e, ", 0f3F800000");
  }
  const auto mul = [&](const std::string& x, const std::string& z) {
    const std::string r = p.reg('f');
    p.op("mul.rn.f32 ", r, ", ", x, ", ", z);
    return r;
  };
  std::string any;
  for (int k = 0; k < 8; k += 2) {
    const std::string prod = mul(y[k].den, y[k + 1].den);
    if (any.empty()) {
      any = p.reg('p');
      p.op("setp.gtu.f32 ", any, ", ", prod, ", 0f7E800000");
    } else {
      p.op("setp.gtu.or.f32 ", any, ", ", prod, ", 0f7E800000, ", any);
    }
    const std::string r = p.reg('f');
    p.op("rcp.approx.ftz.f32 ", r, ", ", prod);
    p.op("mul.rn.f32 ", y[k].y, ", ", y[k].x, ", ", mul(y[k + 1].den, r));
    p.op("mul.rn.f32 ", y[k + 1].y, ", ", y[k + 1].x, ", ", mul(y[k].den, r));
  }
  const std::string in_range = p.label("group_in_range");
  p.op("@!", any, " bra ", in_range);
  for (const Activated& a : y) p.op("div.full.f32 ", a.y, ", ", a.x, ", ", a.den);
  p.place(in_range);
  return y;
}

}  // namespace numr::cuda::sm90
