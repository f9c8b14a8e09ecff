#include "backends/cuda/axis_kernels.h"

#include <vector>

#include "backends/cuda/axis_codegen.h"
#include "backends/cuda/reduce_codegen.h"
#include "backends/cuda/reduce_state.h"
#include "codegen/ptx/element_io.h"
#include "codegen/ptx/value_math.h"
#include "numr/error.h"

namespace numr::cuda {

using ptx::KernelBuilder;
using ptx::PtxType;
using ptx::Reg;
using ptx::Value;

namespace {

const char* variant_name(AxisVariant v) {
  switch (v) {
    case AxisVariant::warp_rows: return "warp";
    case AxisVariant::block_rows: return "block";
    case AxisVariant::columns: return "cols";
    case AxisVariant::warp_regs: return "warpregs";
    case AxisVariant::block_regs: return "blockregs";
  }
  return "?";
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
      const Value factor = cfg.op == OpId::softmax ? Value::constant(acc, 1.0) / sum : log(sum);
      walk([&](Reg at, Reg out_at) {
        const Value x = ptx::from_storage(b, load_raw(b, d, at), d, acc);
        const Value dx = x - shift;
        ptx::store_element(b, d, out_at, cfg.op == OpId::softmax ? exp(dx) * factor : dx - factor);
      });
      return;
    }
    const Reg run = b.mov(acc, Value::constant(acc, cfg.op == OpId::cumprod ? 1.0 : 0.0).reg());
    walk([&](Reg at, Reg out_at) {
      const Value x = ptx::from_storage(b, load_raw(b, d, at), d, acc);
      const Value y = cfg.op == OpId::cumprod ? Value(run) * x : Value(run) + x;
      b.assign(run, y.reg());
      ptx::store_element(b, d, out_at, y);
    });
  });
}

}  // namespace

AxisParams axis_params(KernelBuilder& b) {
  AxisParams p;
  p.in = b.param_ptr("in");
  p.out = b.param_ptr("out");
  p.outer = b.param(PtxType::u64, "outer");
  p.n = b.param(PtxType::u64, "n");
  p.inner = b.param(PtxType::u64, "inner");
  return p;
}

bool block_variant(const AxisKernelConfig& cfg) {
  return cfg.variant == AxisVariant::block_rows || cfg.variant == AxisVariant::block_regs;
}

void for_each_row(KernelBuilder& b, const AxisKernelConfig& cfg, const AxisParams& p,
                  const std::function<void(const Group&, Reg)>& body) {
  const Reg tid = b.tid_x();
  Group g;
  g.lane = b.and_(tid, 31);
  g.warp = b.shr(tid, 5);
  g.block = block_variant(cfg);
  if (!g.block) {
    g.size = 32;
    g.g_tid = wide(b, g.lane);
    g.g_size = b.mov(PtxType::u64, 32);
    const Reg first = b.mad(wide(b, b.ctaid_x()), kAxisWarps, wide(b, g.warp));
    const Reg step = b.mul(wide(b, b.nctaid_x()), kAxisWarps);
    b.for_range(first, p.outer, step, PtxType::u64, [&](Reg k) { body(g, k); });
  } else {
    g.size = kAxisBlock;
    g.g_tid = wide(b, tid);
    g.g_size = b.mov(PtxType::u64, kAxisBlock);
    b.for_range(wide(b, b.ctaid_x()), p.outer, wide(b, b.nctaid_x()), PtxType::u64,
                [&](Reg k) { body(g, k); });
  }
}

int softmax_reg_slots(DType d) { return (dtype_size(d) == 8 ? 16 : 32) / vector_width(d); }

int64_t softmax_regs_capacity(DType d, bool block) {
  return int64_t(block ? kAxisBlock : 32) * softmax_reg_slots(d) * vector_width(d);
}

std::string AxisKernelConfig::name() const {
  return "axis_" + std::string(op_name(op)) + "_" + std::string(dtype_name(dtype)) + "_" +
         variant_name(variant) + (vector_store ? "_v" : "") + (aligned ? "_a" : "");
}

GeneratedKernel generate_axis_kernel(const AxisKernelConfig& cfg, const ptx::Target& target) {
  const bool scan = cfg.op == OpId::cumsum || cfg.op == OpId::cumprod;
  const bool regs = cfg.variant == AxisVariant::warp_regs || cfg.variant == AxisVariant::block_regs;
  if ((!scan && !is_softmax(cfg.op)) || (is_softmax(cfg.op) && !is_floating(cfg.dtype)) ||
      (regs && !is_softmax(cfg.op)) || (cfg.vector_store && !cfg.uses_vector_store()) ||
      (cfg.aligned && !cfg.uses_aligned()))
    fail<BackendError>("cuda", "along_axis: invalid kernel configuration ", cfg.name());
  const PtxType acc = reduce_acc_type(cfg.dtype);
  KernelBuilder b(cfg.name(), target);
  ptx::FormulaScope scope(b, acc, reduce_fast_math(cfg.dtype));
  if (cfg.variant == AxisVariant::columns)
    gen_columns(b, cfg, acc);
  else if (scan)
    gen_scan_rows(b, cfg, acc);
  else if (regs)
    gen_softmax_regs(b, cfg, acc);
  else
    gen_softmax_rows(b, cfg, acc);
  return {cfg.name(), b.finish()};
}

}  // namespace numr::cuda
