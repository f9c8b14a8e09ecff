#include "backends/cuda/reduce_state.h"

#include <limits>

#include "backends/cuda/fast_math.h"
#include "codegen/ptx/value_math.h"
#include "numr/error.h"

namespace numr::cuda {

using ptx::Cmp;
using ptx::KernelBuilder;
using ptx::Mask;
using ptx::PtxType;
using ptx::Reg;
using ptx::Value;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// logsumexp's flag bits: a NaN was seen; a +inf was seen.
constexpr int kLseNaN = 1, kLsePosInf = 2;

bool wants_max(OpId op) { return op == OpId::max || op == OpId::argmax; }

Value cst(PtxType t, double v) { return Value::constant(t, v); }

// NaN-sticky "x replaces best": x is NaN or beyond best, and best is not already NaN.
Mask beats(const Value& x, const Value& best, bool want_max) {
  if (!is_float(x.type())) return want_max ? x > best : x < best;
  const Mask beyond = want_max ? x > best : x < best;
  return (beyond | (x != x)) & (best == best);
}

// x and best are the same extreme (NaN matches NaN).
Mask same(const Value& x, const Value& best) {
  if (!is_float(x.type())) return x == best;
  return (x == best) | ((x != x) & (best != best));
}

}  // namespace

PtxType reduce_acc_type(DType in) {
  switch (in) {
    case DType::F64: return PtxType::f64;
    case DType::F32:
    case DType::F16:
    case DType::BF16: return PtxType::f32;
    default: return PtxType::s64;
  }
}

ptx::FastMath reduce_fast_math(DType in) { return formula_fast_math(in, false); }

std::vector<PtxType> ReduceState::fields(OpId op, PtxType acc) {
  switch (op) {
    case OpId::sum:
    case OpId::mean:
    case OpId::prod:
    case OpId::max:
    case OpId::min: return {acc};
    case OpId::argmax:
    case OpId::argmin: return {acc, PtxType::s64};
    case OpId::any:
    case OpId::all: return {PtxType::s32};
    case OpId::var:
    case OpId::std: return {acc, acc, acc};                 // count, mean, M2
    case OpId::logsumexp: return {acc, acc, PtxType::s32};  // max, Σexp(x - max), flags
    default: fail<BackendError>("cuda", "reduce: ", op_name(op), " is not a Reduce-family op");
  }
}

std::vector<int> ReduceState::offsets(OpId op, PtxType acc) {
  std::vector<int> out;
  int at = 0;
  for (PtxType t : fields(op, acc)) {
    const int size = ptx::type_size(t);
    at = (at + size - 1) / size * size;
    out.push_back(at);
    at += size;
  }
  return out;
}

int ReduceState::bytes(OpId op, PtxType acc) {
  const std::vector<PtxType> f = fields(op, acc);
  const std::vector<int> off = offsets(op, acc);
  const int end = off.back() + ptx::type_size(f.back());
  return (end + 7) / 8 * 8;
}

ReduceState ReduceState::identity(KernelBuilder& b, OpId op, PtxType acc) {
  ReduceState s(b, op, acc);
  const bool fl = is_float(acc);
  const double lowest = fl ? -kInf : double(std::numeric_limits<int64_t>::min());
  const double highest = fl ? kInf : double(std::numeric_limits<int64_t>::max());
  switch (op) {
    case OpId::sum:
    case OpId::mean: s.r_ = {b.mov(acc, fl ? ptx::Operand(0.0) : ptx::Operand(0))}; break;
    case OpId::prod: s.r_ = {b.mov(acc, fl ? ptx::Operand(1.0) : ptx::Operand(1))}; break;
    case OpId::max: s.r_ = {cst(acc, lowest).reg()}; break;
    case OpId::min: s.r_ = {cst(acc, highest).reg()}; break;
    case OpId::argmax:
    case OpId::argmin:
      s.r_ = {cst(acc, wants_max(op) ? lowest : highest).reg(), b.mov(PtxType::s64, -1)};
      break;
    case OpId::any: s.r_ = {b.mov(PtxType::s32, 0)}; break;
    case OpId::all: s.r_ = {b.mov(PtxType::s32, 1)}; break;
    case OpId::var:
    case OpId::std: s.r_ = {b.mov(acc, 0.0), b.mov(acc, 0.0), b.mov(acc, 0.0)}; break;
    case OpId::logsumexp:
      s.r_ = {cst(acc, -kInf).reg(), b.mov(acc, 0.0), b.mov(PtxType::s32, 0)};
      break;
    default: fields(op, acc);  // throws
  }
  // cst() may hand back a register shared with nothing else, but make every field its own
  // register so that in-place updates never touch a constant used elsewhere.
  for (Reg& r : s.r_) r = b.mov(r.type, r);
  return s;
}

ReduceState ReduceState::load(KernelBuilder& b, OpId op, PtxType acc, ptx::Space space, Reg addr) {
  ReduceState s(b, op, acc);
  const std::vector<PtxType> f = fields(op, acc);
  const std::vector<int> off = offsets(op, acc);
  for (size_t i = 0; i < f.size(); ++i) s.r_.push_back(b.ld(space, f[i], addr, off[i]));
  return s;
}

void ReduceState::store(ptx::Space space, Reg addr) const {
  const std::vector<PtxType> f = fields(op_, acc_);
  const std::vector<int> off = offsets(op_, acc_);
  for (size_t i = 0; i < f.size(); ++i) b_->st(space, f[i], addr, r_[i], off[i]);
}

void ReduceState::set(const std::vector<Reg>& next) {
  for (size_t i = 0; i < r_.size(); ++i) b_->assign(r_[i], next[i]);
}

void ReduceState::assign(const ReduceState& other) { set(other.r_); }

ReduceState ReduceState::shfl_bfly(int lane_mask) const {
  ReduceState s(*b_, op_, acc_);
  for (Reg r : r_) s.r_.push_back(b_->shfl(ptx::ShflMode::bfly, r, lane_mask));
  return s;
}

void ReduceState::warp_reduce() {
  for (int m = 16; m >= 1; m /= 2) merge(shfl_bfly(m));
}

void ReduceState::feed(const Value& x, Reg index) {
  KernelBuilder& b = *b_;
  switch (op_) {
    case OpId::sum:
    case OpId::mean: set({(Value(r_[0]) + x).reg()}); return;
    case OpId::prod: set({(Value(r_[0]) * x).reg()}); return;
    case OpId::max:
    case OpId::min: {
      const Value best(r_[0]);
      if (!is_float(acc_)) {
        set({op_ == OpId::max ? b.max(r_[0], x.reg()) : b.min(r_[0], x.reg())});
        return;
      }
      set({select(beats(x, best, op_ == OpId::max), x, best).reg()});
      return;
    }
    case OpId::argmax:
    case OpId::argmin: {
      // Strictly better only: among equal values the earlier index stays.
      const Value best(r_[0]), idx(r_[1]);
      const Mask take = Mask(b.setp(Cmp::lt, r_[1], 0)) | beats(x, best, wants_max(op_));
      set({select(take, x, best).reg(), b.selp(take.reg(), index, r_[1])});
      return;
    }
    case OpId::any:
    case OpId::all: {
      const Mask nz = x != cst(acc_, 0.0);  // NaN counts as nonzero
      set({op_ == OpId::any ? b.selp(nz.reg(), 1, r_[0]) : b.selp(nz.reg(), r_[0], 0)});
      return;
    }
    case OpId::var:
    case OpId::std: {
      // Welford: n += 1; mean += (x - mean) / n; M2 += (x - mean_old) (x - mean_new).
      const Value n = Value(r_[0]) + cst(acc_, 1.0);
      const Value d = x - Value(r_[1]);
      // f32: the 2-ulp division; an error in the mean's update does not accumulate into
      // M2, which uses the mean it produced.
      const Value step = acc_ == PtxType::f32 ? Value(b.div_full(d.reg(), n.reg())) : d / n;
      const Value mean = Value(r_[1]) + step;
      const Value m2 = Value(r_[2]) + d * (x - mean);
      set({n.reg(), mean.reg(), m2.reg()});
      return;
    }
    case OpId::logsumexp: {
      // Online: one exp per element. Only finite x enter (m, s); NaN and +inf set flags
      // and -inf adds nothing.
      const Value m(r_[0]), s(r_[1]);
      const Mask finite = (x > cst(acc_, -kInf)) & (x < cst(acc_, kInf));
      const Value d = x - m;  // +inf while m is still -inf
      const Value t = exp(-fabs(d));
      const Mask up = d > cst(acc_, 0.0);
      const Value s_up = s * t + cst(acc_, 1.0), s_keep = s + t;
      const Value s_new = select(finite, select(up, s_up, s_keep), s);
      const Value m_new = select(finite & up, x, m);
      Reg flags = b.or_(r_[2], b.selp((x != x).reg(), kLseNaN, 0, PtxType::s32));
      flags = b.or_(flags, b.selp((x == cst(acc_, kInf)).reg(), kLsePosInf, 0, PtxType::s32));
      set({m_new.reg(), s_new.reg(), flags});
      return;
    }
    default: fields(op_, acc_);
  }
}

void ReduceState::merge(const ReduceState& o) {
  KernelBuilder& b = *b_;
  switch (op_) {
    case OpId::sum:
    case OpId::mean: set({(Value(r_[0]) + Value(o.r_[0])).reg()}); return;
    case OpId::prod: set({(Value(r_[0]) * Value(o.r_[0])).reg()}); return;
    case OpId::max:
    case OpId::min: feed(Value(o.r_[0]), Reg{}); return;
    case OpId::argmax:
    case OpId::argmin: {
      const Value best(r_[0]), x(o.r_[0]);
      const Mask o_has = Mask(b.setp(Cmp::ge, o.r_[1], 0));
      const Mask none = Mask(b.setp(Cmp::lt, r_[1], 0));
      const Mask earlier = Mask(b.setp(Cmp::lt, o.r_[1], r_[1]));
      const Mask take = o_has & (none | beats(x, best, wants_max(op_)) | (same(x, best) & earlier));
      set({select(take, x, best).reg(), b.selp(take.reg(), o.r_[1], r_[1])});
      return;
    }
    case OpId::any: set({b.or_(r_[0], o.r_[0])}); return;
    case OpId::all: set({b.and_(r_[0], o.r_[0])}); return;
    case OpId::var:
    case OpId::std: {
      // Chan et al.: n = na + nb, mean += delta nb / n, M2 += M2b + delta^2 na nb / n.
      const Value na(r_[0]), nb(o.r_[0]), ma(r_[1]), mb(o.r_[1]);
      const Value n = na + nb;
      const Value zero = cst(acc_, 0.0);
      const Value frac = select(n > zero, nb / n, zero);
      const Value delta = mb - ma;
      const Value mean = ma + delta * frac;
      const Value m2 = Value(r_[2]) + Value(o.r_[2]) + delta * delta * na * frac;
      set({n.reg(), mean.reg(), m2.reg()});
      return;
    }
    case OpId::logsumexp: {
      const Value ma(r_[0]), sa(r_[1]), mb(o.r_[0]), sb(o.r_[1]);
      const Value ninf = cst(acc_, -kInf);
      const Mask a_big = ma >= mb;
      const Value t = exp(-fabs(ma - mb));  // NaN when both are -inf: replaced below
      Value s = select(a_big, sa + sb * t, sa * t + sb);
      s = select(mb == ninf, sa, s);
      s = select(ma == ninf, sb, s);
      const Value m = select(a_big, ma, mb);
      set({m.reg(), s.reg(), b.or_(r_[2], o.r_[2])});
      return;
    }
    default: fields(op_, acc_);
  }
}

std::pair<Value, Value> ReduceState::softmax_terms() const {
  KernelBuilder& b = *b_;
  Value m(r_[0]);
  const Reg nan_bit = b.and_(r_[2], kLseNaN), inf_bit = b.and_(r_[2], kLsePosInf);
  m = select(Mask(b.setp(Cmp::ne, inf_bit, 0)), cst(acc_, kInf), m);
  m = select(Mask(b.setp(Cmp::ne, nan_bit, 0)), cst(acc_, kNaN), m);
  const Mask finite = (m > cst(acc_, -kInf)) & (m < cst(acc_, kInf));
  return {m, select(finite, Value(r_[1]), cst(acc_, kNaN))};
}

void block_reduce(KernelBuilder& b, ReduceState& st, Reg smem, Reg warp, Reg lane, int warps) {
  const int bytes = ReduceState::bytes(st.op(), st.acc());
  st.warp_reduce();
  b.if_then(b.setp(Cmp::eq, lane, 0),
            [&] { st.store(ptx::Space::shared, b.mad(warp, bytes, smem)); });
  b.bar_sync();
  b.if_then(b.setp(Cmp::eq, warp, 0), [&] {
    ReduceState t = ReduceState::identity(b, st.op(), st.acc());
    b.if_then(b.setp(Cmp::lt, lane, warps), [&] {
      t.assign(
          ReduceState::load(b, st.op(), st.acc(), ptx::Space::shared, b.mad(lane, bytes, smem)));
    });
    t.warp_reduce();
    st.assign(t);
  });
}

Value ReduceState::result(Reg count, Reg correction) const {
  KernelBuilder& b = *b_;
  switch (op_) {
    case OpId::sum:
    case OpId::prod:
    case OpId::max:
    case OpId::min: return Value(r_[0]);
    case OpId::mean: return Value(r_[0]) / Value(b.cvt(count, acc_));
    case OpId::argmax:
    case OpId::argmin: return Value(b.max(r_[1], 0));
    case OpId::any:
    case OpId::all: return Value(r_[0]);
    case OpId::var:
    case OpId::std: {
      const Reg denom_i = b.sub(b.bitcast(count, PtxType::s64), correction);
      const Value denom(b.cvt(denom_i, acc_));
      const Mask ok = Mask(b.setp(Cmp::gt, denom_i, 0));
      Value v = select(ok, Value(r_[2]) / denom, cst(acc_, kNaN));
      v = select(v < cst(acc_, 0.0), cst(acc_, 0.0), v);  // M2 a hair below zero
      return op_ == OpId::std ? sqrt(v) : v;
    }
    case OpId::logsumexp: {
      const Value m(r_[0]);
      Value r = select(m == cst(acc_, -kInf), m, m + log(Value(r_[1])));
      const Reg nan_bit = b.and_(r_[2], kLseNaN), inf_bit = b.and_(r_[2], kLsePosInf);
      r = select(Mask(b.setp(Cmp::ne, inf_bit, 0)), cst(acc_, kInf), r);
      r = select(Mask(b.setp(Cmp::ne, nan_bit, 0)), cst(acc_, kNaN), r);
      return r;
    }
    default: fields(op_, acc_);
  }
  return Value(r_[0]);
}

}  // namespace numr::cuda
