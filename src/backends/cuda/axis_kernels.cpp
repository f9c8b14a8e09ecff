#include "backends/cuda/axis_kernels.h"

#include <vector>

#include "backends/cuda/reduce_codegen.h"
#include "backends/cuda/reduce_state.h"
#include "codegen/ptx/element_io.h"
#include "codegen/ptx/value_math.h"
#include "numr/error.h"

namespace numr::cuda {

using ptx::Cmp;
using ptx::KernelBuilder;
using ptx::PtxType;
using ptx::Reg;
using ptx::ShflMode;
using ptx::Space;
using ptx::Value;

namespace {

constexpr int kWarps = kAxisBlock / 32;

const char* variant_name(AxisVariant v) {
  switch (v) {
    case AxisVariant::warp_rows: return "warp";
    case AxisVariant::block_rows: return "block";
    case AxisVariant::columns: return "cols";
  }
  return "?";
}

bool is_softmax(OpId op) { return op == OpId::softmax || op == OpId::log_softmax; }

struct AxisParams {
  Reg in, out, outer, n, inner;
};

AxisParams axis_params(KernelBuilder& b) {
  AxisParams p;
  p.in = b.param_ptr("in");
  p.out = b.param_ptr("out");
  p.outer = b.param(PtxType::u64, "outer");
  p.n = b.param(PtxType::u64, "n");
  p.inner = b.param(PtxType::u64, "inner");
  return p;
}

// The threads of one row: a warp (lanes) or the whole block.
struct Group {
  Reg g_tid, g_size;  // u64
  Reg lane, warp;     // u32
};

// Calls body(k) for each row k this group handles (grid-stride). For blocks the loop is
// uniform, so body may hold barriers.
void for_each_row(KernelBuilder& b, const AxisKernelConfig& cfg, const AxisParams& p,
                  const std::function<void(const Group&, Reg)>& body) {
  const Reg tid = b.tid_x();
  Group g;
  g.lane = b.and_(tid, 31);
  g.warp = b.shr(tid, 5);
  if (cfg.variant == AxisVariant::warp_rows) {
    g.g_tid = wide(b, g.lane);
    g.g_size = b.mov(PtxType::u64, 32);
    const Reg first = b.mad(wide(b, b.ctaid_x()), kWarps, wide(b, g.warp));
    const Reg step = b.mul(wide(b, b.nctaid_x()), kWarps);
    b.for_range(first, p.outer, step, PtxType::u64, [&](Reg k) { body(g, k); });
  } else {
    g.g_tid = wide(b, tid);
    g.g_size = b.mov(PtxType::u64, kAxisBlock);
    b.for_range(wide(b, b.ctaid_x()), p.outer, wide(b, b.nctaid_x()), PtxType::u64,
                [&](Reg k) { body(g, k); });
  }
}

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

void gen_softmax_rows(KernelBuilder& b, const AxisKernelConfig& cfg, PtxType acc) {
  const AxisParams p = axis_params(b);
  const DType d = cfg.dtype;
  const int size = int(dtype_size(d));
  const bool block = cfg.variant == AxisVariant::block_rows;
  const int bytes = ReduceState::bytes(OpId::logsumexp, acc);
  Reg smem{}, bcast{};
  if (block) {
    smem = b.address_of(b.shared_array(PtxType::b64, kWarps * bytes / 8, "states", 16));
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
      block_reduce(b, st, smem, g.warp, g.lane, kWarps);
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
  });
}

Value combine(OpId op, const Value& a, const Value& x) {
  return op == OpId::cumprod ? a * x : a + x;
}

// Inclusive scan of v across the warp's lanes.
Value warp_scan(KernelBuilder& b, OpId op, Value v, Reg lane) {
  for (int off = 1; off < 32; off *= 2) {
    const Value y(b.shfl(ShflMode::up, v.reg(), off));
    v = Value(b.selp(b.setp(Cmp::ge, lane, off), combine(op, v, y).reg(), v.reg()));
  }
  return v;
}

void gen_scan_rows(KernelBuilder& b, const AxisKernelConfig& cfg, PtxType acc) {
  const AxisParams p = axis_params(b);
  const DType d = cfg.dtype;
  const int size = int(dtype_size(d));
  const bool block = cfg.variant == AxisVariant::block_rows;
  const int group = block ? kAxisBlock : 32;
  const double ident = cfg.op == OpId::cumprod ? 1.0 : 0.0;
  const int acc_size = ptx::type_size(acc);
  Reg smem{};
  if (block) smem = b.address_of(b.shared_array(acc, kWarps, "totals", 16));
  for_each_row(b, cfg, p, [&](const Group& g, Reg k) {
    const Reg row = b.mul(b.mul(k, p.n), size);
    const Reg in_row = b.add(p.in, row), out_row = b.add(p.out, row);
    const Reg carry = b.mov(acc, Value::constant(acc, ident).reg());
    b.for_range(b.mov(PtxType::u64, 0), p.n, group * kScanItems, PtxType::u64, [&](Reg base) {
      const Reg first = b.mad(g.g_tid, kScanItems, base);
      std::vector<Value> run;
      for (int i = 0; i < kScanItems; ++i) {
        const Reg x = b.mov(acc, Value::constant(acc, ident).reg());
        const Reg idx = b.add(first, i);
        b.if_then(b.setp(Cmp::lt, idx, p.n), [&] {
          const Reg raw = load_raw(b, d, b.mad(idx, size, in_row));
          b.assign(x, ptx::from_storage(b, raw, d, acc).reg());
        });
        run.push_back(i == 0 ? Value(x) : combine(cfg.op, run.back(), Value(x)));
      }
      const Value incl = warp_scan(b, cfg.op, run.back(), g.lane);
      const Value up(b.shfl(ShflMode::up, incl.reg(), 1));
      const Value ident_v = Value::constant(acc, ident);
      const Value excl = select(ptx::Mask(b.setp(Cmp::eq, g.lane, 0)), ident_v, up);
      Value prefix = Value(carry), next = Value(carry);
      if (block) {
        b.if_then(b.setp(Cmp::eq, g.lane, 31),
                  [&] { b.st_shared(b.mad(g.warp, acc_size, smem), incl.reg()); });
        b.bar_sync();
        Value before = ident_v, total = ident_v;
        for (int w = 0; w < kWarps; ++w) {
          const Value t(b.ld_shared(acc, smem, int64_t(w) * acc_size));
          before =
              select(ptx::Mask(b.setp(Cmp::gt, g.warp, w)), combine(cfg.op, before, t), before);
          total = combine(cfg.op, total, t);
        }
        prefix = combine(cfg.op, combine(cfg.op, prefix, before), excl);
        next = combine(cfg.op, next, total);
      } else {
        prefix = combine(cfg.op, prefix, excl);
        next = combine(cfg.op, next, Value(b.shfl(ShflMode::idx, incl.reg(), 31)));
      }
      for (int i = 0; i < kScanItems; ++i) {
        const Reg idx = b.add(first, i);
        const Value y = combine(cfg.op, prefix, run[size_t(i)]);
        b.if_then(b.setp(Cmp::lt, idx, p.n),
                  [&] { ptx::store_element(b, d, b.mad(idx, size, out_row), y); });
      }
      b.assign(carry, next.reg());
      // The totals are read by every thread before the next tile writes them.
      if (block) b.bar_sync();
    });
  });
}

// Columns: one thread per (outer, inner) line, grid-stride over lines.
void gen_columns(KernelBuilder& b, const AxisKernelConfig& cfg, PtxType acc) {
  const AxisParams p = axis_params(b);
  const DType d = cfg.dtype;
  const int size = int(dtype_size(d));
  const Reg lines = b.mul(p.outer, p.inner);
  const Reg stride = b.mul(p.inner, size);  // bytes between consecutive elements of a line
  const Reg first = wide(b, b.global_index_x());
  const Reg step = b.mul(wide(b, b.nctaid_x()), kAxisBlock);
  b.for_range(first, lines, step, PtxType::u64, [&](Reg line) {
    const Reg o = b.div(line, p.inner);
    const Reg j = b.sub(line, b.mul(o, p.inner));
    const Reg start = b.mul(b.mad(b.mul(o, p.n), p.inner, j), size);
    const Reg in0 = b.add(p.in, start), out0 = b.add(p.out, start);
    const auto walk = [&](const std::function<void(Reg in_at, Reg out_at)>& f) {
      b.for_range(b.mov(PtxType::u64, 0), p.n, 1, PtxType::u64, [&](Reg i) {
        const Reg off = b.mul(i, stride);
        f(b.add(in0, off), b.add(out0, off));
      });
    };
    if (is_softmax(cfg.op)) {
      ReduceState st = ReduceState::identity(b, OpId::logsumexp, acc);
      walk([&](Reg at, Reg) { st.feed(ptx::from_storage(b, load_raw(b, d, at), d, acc), Reg{}); });
      const auto [shift, sum] = st.softmax_terms();
      const Value factor = softmax_factor(cfg, sum);
      walk([&](Reg at, Reg out_at) {
        const Value x = ptx::from_storage(b, load_raw(b, d, at), d, acc);
        ptx::store_element(b, d, out_at, softmax_value(cfg, x, shift, factor));
      });
      return;
    }
    const Reg run = b.mov(acc, Value::constant(acc, cfg.op == OpId::cumprod ? 1.0 : 0.0).reg());
    walk([&](Reg at, Reg out_at) {
      const Value y = combine(cfg.op, Value(run), ptx::from_storage(b, load_raw(b, d, at), d, acc));
      b.assign(run, y.reg());
      ptx::store_element(b, d, out_at, y);
    });
  });
}

}  // namespace

std::string AxisKernelConfig::name() const {
  return "axis_" + std::string(op_name(op)) + "_" + std::string(dtype_name(dtype)) + "_" +
         variant_name(variant) + (vector_store ? "_v" : "");
}

GeneratedKernel generate_axis_kernel(const AxisKernelConfig& cfg, const ptx::Target& target) {
  const bool scan = cfg.op == OpId::cumsum || cfg.op == OpId::cumprod;
  if ((!scan && !is_softmax(cfg.op)) || (is_softmax(cfg.op) && !is_floating(cfg.dtype)) ||
      (cfg.vector_store && !cfg.uses_vector_store()))
    fail<BackendError>("cuda", "along_axis: invalid kernel configuration ", cfg.name());
  const PtxType acc = reduce_acc_type(cfg.dtype);
  KernelBuilder b(cfg.name(), target);
  ptx::FormulaScope scope(b, acc);
  if (cfg.variant == AxisVariant::columns)
    gen_columns(b, cfg, acc);
  else if (scan)
    gen_scan_rows(b, cfg, acc);
  else
    gen_softmax_rows(b, cfg, acc);
  return {cfg.name(), b.finish()};
}

}  // namespace numr::cuda
