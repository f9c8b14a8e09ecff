// Softmax and log_softmax along rows (inner == 1): the two-pass online kernel for any row,
// and the register kernel for aligned rows that fit in the group's registers.
#include <limits>
#include <vector>

#include "backends/cuda/axis_codegen.h"
#include "backends/cuda/reduce_codegen.h"
#include "backends/cuda/reduce_state.h"
#include "codegen/ptx/element_io.h"
#include "codegen/ptx/value_math.h"
#include "math/reduce_rules.h"

namespace numr::cuda {

using ptx::Cmp;
using ptx::KernelBuilder;
using ptx::Mask;
using ptx::PtxType;
using ptx::Reg;
using ptx::ShflMode;
using ptx::Space;
using ptx::Value;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// y for one element of a softmax row with the row's shift and Σexp terms.
Value softmax_value(const AxisKernelConfig& cfg, const Value& x, const Value& shift,
                    const Value& factor) {
  const Value d = x - shift;
  return cfg.op == OpId::softmax ? exp(d) * factor : d - factor;
}

// softmax: factor = 1 / Σ; log_softmax: factor = log Σ.
Value softmax_factor(const AxisKernelConfig& cfg, const Value& sum) {
  return cfg.op == OpId::softmax ? Value::constant(sum.type(), 1.0) / sum : log(sum);
}

// NaN-sticky max: NaN when either operand is NaN, else the larger (the max of
// logsumexp's state, which also turns +inf into the shift). math::extreme_merge, or the
// one instruction that computes it where the target has one.
Value nan_max(KernelBuilder& b, const Value& a, const Value& x) {
  const ptx::Target& t = b.target();
  if (a.type() == PtxType::f32 && t.sm >= 80 && t.ptx_major >= 7) {
    const Reg r = b.reg(PtxType::f32);
    b.raw("max.NaN.f32 " + ptx::reg_name(r) + ", " + ptx::reg_name(a.reg()) + ", " +
              ptx::reg_name(x.reg()),
          {r}, {a.reg(), x.reg()}, false);
    return Value(r);
  }
  return math::extreme_merge<true>(a, x);
}

// v combined over the group (max or sum), the same in every thread. Warp: a butterfly.
// Block: then through buf (kAxisWarps values) behind one barrier; buf may be written again
// only after a later barrier every thread passes once it has read.
Value group_allreduce(KernelBuilder& b, const Group& g, Value v, bool is_max, Reg buf) {
  const auto combine = [&](const Value& a, const Value& o) {
    return is_max ? nan_max(b, a, o) : a + o;
  };
  for (int m = 16; m >= 1; m /= 2) v = combine(v, Value(b.shfl(ShflMode::bfly, v.reg(), m)));
  if (!g.block) return v;
  const int size = ptx::type_size(v.type());
  b.if_then(b.setp(Cmp::eq, g.lane, 0), [&] { b.st_shared(b.mad(g.warp, size, buf), v.reg()); });
  b.bar_sync();
  Value r(b.ld_shared(v.type(), buf));
  for (int w = 1; w < kAxisWarps; ++w)
    r = combine(r, Value(b.ld_shared(v.type(), buf, int64_t(w) * size)));
  return r;
}

}  // namespace

void gen_softmax_rows(KernelBuilder& b, const AxisKernelConfig& cfg, PtxType acc) {
  const AxisParams p = axis_params(b);
  const DType d = cfg.dtype;
  const int size = int(dtype_size(d));
  const bool block = block_variant(cfg);
  const int bytes = ReduceState::bytes(OpId::logsumexp, acc);
  Reg smem{}, bcast{};
  if (block) {
    smem = b.address_of(b.shared_array(PtxType::b64, kAxisWarps * bytes / 8, "states", 16));
    bcast = b.address_of(b.shared_array(PtxType::b64, 2, "terms", 16));
  }
  for_each_row(b, cfg, p, [&](const Group& g, Reg k) {
    const Reg row = b.mul(b.mul(k, p.n), size);
    const Reg in_row = b.add(p.in, row), out_row = b.add(p.out, row);
    ReduceState st = ReduceState::identity(b, OpId::logsumexp, acc);
    for_each_in_run(b, d, in_row, p.n, g.g_tid, g.g_size, [&](const std::vector<Reg>& raw, Reg) {
      for (Reg r : raw) st.feed(ptx::from_storage(b, r, d, acc), Reg{});
    });
    Value shift = Value::constant(acc, 0.0), factor = shift;
    if (block) {
      block_reduce(b, st, smem, g.warp, g.lane, kAxisWarps);
      b.if_then(b.setp(Cmp::eq, g.g_tid, 0), [&] {
        const auto [s, sum] = st.softmax_terms();
        b.st_shared(bcast, s.reg());
        b.st_shared(bcast, softmax_factor(cfg, sum).reg(), 8);
      });
      b.bar_sync();
      shift = Value(b.ld_shared(acc, bcast));
      factor = Value(b.ld_shared(acc, bcast, 8));
    } else {
      st.warp_reduce();
      const auto [s, sum] = st.softmax_terms();
      shift = s;
      factor = softmax_factor(cfg, sum);
    }
    for_each_in_run(
        b, d, in_row, p.n, g.g_tid, g.g_size, [&](const std::vector<Reg>& raw, Reg first) {
          std::vector<Reg> ys;
          for (Reg r : raw) {
            const Value y = softmax_value(cfg, ptx::from_storage(b, r, d, acc), shift, factor);
            ys.push_back(ptx::to_storage(b, y, d));
          }
          const Reg at = b.mad(first, size, out_row);
          if (ys.size() > 1 && cfg.vector_store) {
            store_raw_vector(b, d, at, ys);
            return;
          }
          for (size_t e = 0; e < ys.size(); ++e)
            b.st(Space::global, ptx::storage_mem_type(d), at, ys[e], int64_t(e) * size);
        });
    // The block's shared terms are read by every thread before the next row writes them.
    if (block) b.bar_sync();
  });
}

// The row in registers: thread t holds vectors t, t + G, ... (G threads in the group) of
// its row, slot by slot. Slots past the row's end for the whole group are skipped (the
// test is uniform: it depends on n only); within a slot, threads past the end load the
// row's last vector (so no load is conditional) and use -inf, which adds nothing to
// either reduction. Needs n a multiple of the vector width and aligned rows (the host
// checks), and n <= softmax_regs_capacity.
//
// The result follows logsumexp's rules: the shift is the NaN-sticky max (NaN if a NaN is
// in the row, else +inf if a +inf is, else the largest value); Σexp(x - shift) is NaN
// unless the shift is finite, so such rows come out NaN, and -inf elements give 0 (-inf
// for log_softmax). One exp per element, the scope's: accurate for F32 and F64, a single
// ex2.approx for F16 and BF16 (reduce_fast_math); one division (or log) per row.
void gen_softmax_regs(KernelBuilder& b, const AxisKernelConfig& cfg, PtxType acc) {
  const AxisParams p = axis_params(b);
  const DType d = cfg.dtype;
  const int size = int(dtype_size(d));
  const int vec = vector_width(d);
  const int slots = softmax_reg_slots(d);
  const bool block = block_variant(cfg);
  Reg max_buf{}, sum_buf{};
  if (block) {
    // Separate buffers: the max buffer is written again only after the sum's barrier, and
    // the sum buffer only after the next row's max barrier, so two barriers per row.
    max_buf = b.address_of(b.shared_array(acc, kAxisWarps, "maxes", 16));
    sum_buf = b.address_of(b.shared_array(acc, kAxisWarps, "sums", 16));
  }
  const Reg n_vec = b.div(p.n, vec);
  const Reg last = b.sub(n_vec, 1);
  const Value ninf = Value::constant(acc, -kInf);
  for_each_row(b, cfg, p, [&](const Group& g, Reg k) {
    const Reg row = b.mul(b.mul(k, p.n), size);
    const Reg in_row = b.add(p.in, row), out_row = b.add(p.out, row);
    std::vector<Reg> j, valid, active;
    const size_t ns = size_t(slots);
    std::vector<std::vector<Reg>> raw(ns), x(ns);
    for (int i = 0; i < slots; ++i) {
      j.push_back(b.add(g.g_tid, int64_t(i) * g.size));
      valid.push_back(b.setp(Cmp::lt, j.back(), n_vec));
      active.push_back(b.setp(Cmp::gt, n_vec, int64_t(i) * g.size));
    }
    // Every load of the thread first, so they are all in flight together.
    for (int i = 0; i < slots; ++i)
      b.if_then(active[size_t(i)], [&] {
        raw[size_t(i)] = load_raw_vector(b, d, b.mad(b.min(j[size_t(i)], last), 16, in_row));
      });
    const Reg m = b.mov(acc, ninf.reg());
    for (int i = 0; i < slots; ++i) {
      for (int e = 0; e < vec; ++e) x[size_t(i)].push_back(b.mov(acc, ninf.reg()));
      b.if_then(active[size_t(i)], [&] {
        const Mask ok(valid[size_t(i)]);
        Value mi = ninf;
        for (int e = 0; e < vec; ++e) {
          const Value xe =
              select(ok, ptx::from_storage(b, raw[size_t(i)][size_t(e)], d, acc), ninf);
          b.assign(x[size_t(i)][size_t(e)], xe.reg());
          mi = e ? nan_max(b, mi, xe) : xe;
        }
        b.assign(m, nan_max(b, Value(m), mi).reg());
      });
    }
    const Value shift = group_allreduce(b, g, Value(m), true, max_buf);
    const Reg s = b.mov(acc, 0.0);
    for (int i = 0; i < slots; ++i)
      b.if_then(active[size_t(i)], [&] {
        std::vector<Value> es;
        for (int e = 0; e < vec; ++e) {
          es.push_back(exp(Value(x[size_t(i)][size_t(e)]) - shift));
          // softmax needs only e^(x - shift) from here on: keep it in x's registers.
          if (cfg.op == OpId::softmax) b.assign(x[size_t(i)][size_t(e)], es.back().reg());
        }
        // Pairwise within the vector, then into the running sum.
        while (es.size() > 1) {
          std::vector<Value> next;
          for (size_t e = 0; e + 1 < es.size(); e += 2) next.push_back(es[e] + es[e + 1]);
          es = next;
        }
        b.assign(s, (Value(s) + es[0]).reg());
      });
    Value sum = group_allreduce(b, g, Value(s), false, sum_buf);
    // math::lse_shifted_sum, written out to compare with the row's -inf register.
    const Mask finite = (shift > ninf) & (shift < Value::constant(acc, kInf));
    sum = select(finite, sum, Value::constant(acc, kNaN));
    const Value factor = softmax_factor(cfg, sum);
    for (int i = 0; i < slots; ++i)
      b.if_then(b.and_(active[size_t(i)], valid[size_t(i)]), [&] {
        std::vector<Reg> ys;
        for (int e = 0; e < vec; ++e) {
          const Value xe(x[size_t(i)][size_t(e)]);
          const Value y = cfg.op == OpId::softmax ? xe * factor : (xe - shift) - factor;
          ys.push_back(ptx::to_storage(b, y, d));
        }
        store_raw_vector(b, d, b.mad(j[size_t(i)], 16, out_row), ys);
      });
  });
}

}  // namespace numr::cuda
