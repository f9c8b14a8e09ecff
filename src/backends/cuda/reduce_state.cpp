#include "backends/cuda/reduce_state.h"

#include <limits>

#include "backends/cuda/fast_math.h"
#include "codegen/ptx/value_math.h"
#include "math/reduce_rules.h"
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

// logsumexp's flag bits: a NaN was seen; a +inf was seen.
constexpr int kLseNaN = 1, kLsePosInf = 2;

bool wants_max(OpId op) { return op == OpId::max || op == OpId::argmax; }

Value cst(PtxType t, double v) { return Value::constant(t, v); }

// The rules of math/reduce_rules.h for a max (want_max) or min chosen at run time.
Value extreme_merge(const Value& best, const Value& x, bool want_max) {
  return want_max ? math::extreme_merge<true>(best, x) : math::extreme_merge<false>(best, x);
}

Mask arg_merge_takes(const Mask& other_has, const Mask& empty, const Mask& other_earlier,
                     const Value& x, const Value& best, bool want_max) {
  return want_max ? math::arg_merge_takes<true>(other_has, empty, other_earlier, x, best)
                  : math::arg_merge_takes<false>(other_has, empty, other_earlier, x, best);
}

math::Moments<Value> moments(const std::vector<Reg>& r) {
  return {Value(r[0]), Value(r[1]), Value(r[2])};
}

math::LogSumExp<Value> lse(const std::vector<Reg>& r) { return {Value(r[0]), Value(r[1])}; }

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

PtxType reduce_state_type(OpId op, DType in) {
  const bool moments = op == OpId::var || op == OpId::std;
  return moments && is_floating(in) ? PtxType::f64 : reduce_acc_type(in);
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
      set({extreme_merge(best, x, op_ == OpId::max).reg()});
      return;
    }
    case OpId::argmax:
    case OpId::argmin: {
      // Strictly better only: among equal values the earlier index stays.
      const Value best(r_[0]);
      const auto empty = [&] { return Mask(b.setp(Cmp::lt, r_[1], 0)); };
      const Mask take = wants_max(op_) ? math::arg_feed_takes<true>(empty, x, best)
                                       : math::arg_feed_takes<false>(empty, x, best);
      set({select(take, x, best).reg(), b.selp(take.reg(), index, r_[1])});
      return;
    }
    case OpId::any:
    case OpId::all: {
      const Mask nz = math::reduce_truth(x);
      set({op_ == OpId::any ? b.selp(nz.reg(), 1, r_[0]) : b.selp(nz.reg(), r_[0], 0)});
      return;
    }
    case OpId::var:
    case OpId::std: {
      // f32: the 2-ulp division; an error in the mean's update does not accumulate into
      // M2, which uses the mean it produced.
      const auto div = [&](const Value& d, const Value& n) {
        return acc_ == PtxType::f32 ? Value(b.div_full(d.reg(), n.reg())) : d / n;
      };
      const math::Moments<Value> m = math::moments_add(moments(r_), x, div);
      set({m.n.reg(), m.mean.reg(), m.m2.reg()});
      return;
    }
    case OpId::logsumexp: {
      // Only finite x enter (max, sum); NaN and +inf set flags.
      const math::LogSumExp<Value> next = math::lse_add(lse(r_), x);
      Reg flags = b.or_(r_[2], b.selp((x != x).reg(), kLseNaN, 0, PtxType::s32));
      flags = b.or_(flags, b.selp((x == cst(acc_, kInf)).reg(), kLsePosInf, 0, PtxType::s32));
      set({next.max.reg(), next.sum.reg(), flags});
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
      const Mask take = arg_merge_takes(o_has, none, earlier, x, best, wants_max(op_));
      set({select(take, x, best).reg(), b.selp(take.reg(), o.r_[1], r_[1])});
      return;
    }
    case OpId::any: set({b.or_(r_[0], o.r_[0])}); return;
    case OpId::all: set({b.and_(r_[0], o.r_[0])}); return;
    case OpId::var:
    case OpId::std: {
      const math::Moments<Value> m = math::moments_merge(moments(r_), moments(o.r_));
      set({m.n.reg(), m.mean.reg(), m.m2.reg()});
      return;
    }
    case OpId::logsumexp: {
      const math::LogSumExp<Value> m = math::lse_merge(lse(r_), lse(o.r_));
      set({m.max.reg(), m.sum.reg(), b.or_(r_[2], o.r_[2])});
      return;
    }
    default: fields(op_, acc_);
  }
}

std::pair<Value, Value> ReduceState::softmax_terms() const {
  KernelBuilder& b = *b_;
  const Reg nan_bit = b.and_(r_[2], kLseNaN), inf_bit = b.and_(r_[2], kLsePosInf);
  const Value shift = math::lse_flagged(
      Value(r_[0]), [&] { return Mask(b.setp(Cmp::ne, inf_bit, 0)); },
      [&] { return Mask(b.setp(Cmp::ne, nan_bit, 0)); });
  return {shift, math::lse_shifted_sum(shift, Value(r_[1]))};
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
    case OpId::mean: return math::mean_of(Value(r_[0]), Value(b.cvt(count, acc_)));
    case OpId::argmax:
    case OpId::argmin: return Value(b.max(r_[1], 0));
    case OpId::any:
    case OpId::all: return Value(r_[0]);
    case OpId::var:
    case OpId::std: {
      const Reg denom_i = b.sub(b.bitcast(count, PtxType::s64), correction);
      const Value denom(b.cvt(denom_i, acc_));
      const Mask ok = Mask(b.setp(Cmp::gt, denom_i, 0));
      const Value v = math::variance_from_m2(Value(r_[2]), denom, ok);
      return op_ == OpId::std ? sqrt(v) : v;
    }
    case OpId::logsumexp: {
      const Value r = math::lse_finite_result(lse(r_));
      const Reg nan_bit = b.and_(r_[2], kLseNaN), inf_bit = b.and_(r_[2], kLsePosInf);
      return math::lse_flagged(
          r, [&] { return Mask(b.setp(Cmp::ne, inf_bit, 0)); },
          [&] { return Mask(b.setp(Cmp::ne, nan_bit, 0)); });
    }
    default: fields(op_, acc_);
  }
  return Value(r_[0]);
}

}  // namespace numr::cuda
