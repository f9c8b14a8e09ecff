// cumsum and cumprod along rows (inner == 1): tiles of kScanItems consecutive elements
// per thread, scanned within the thread, across the warp by shuffles and, for block rows,
// across the warps through shared memory, with a running carry from tile to tile.
#include <vector>

#include "backends/cuda/axis_codegen.h"
#include "backends/cuda/reduce_codegen.h"
#include "codegen/ptx/element_io.h"

namespace numr::cuda {

using ptx::Cmp;
using ptx::KernelBuilder;
using ptx::Mask;
using ptx::PtxType;
using ptx::Reg;
using ptx::ShflMode;
using ptx::Value;

namespace {

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

// The kScanItems elements from index `first` (u64) of the row at in_row, the identity past
// n. Every load is issued (indexes clamped into the row) before any value is used, so they
// are all in flight together. Aligned rows: 16-byte vectors, each wholly inside or outside
// the row since n is a multiple of the vector width.
std::vector<Value> load_items(KernelBuilder& b, const AxisKernelConfig& cfg, const AxisParams& p,
                              Reg in_row, Reg first, PtxType acc, const Value& ident) {
  const DType d = cfg.dtype;
  const int size = int(dtype_size(d));
  const int step = cfg.aligned ? vector_width(d) : 1;
  const Reg last = b.sub(p.n, step);
  std::vector<std::vector<Reg>> raw;
  std::vector<Reg> ok;
  for (int i = 0; i < kScanItems; i += step) {
    const Reg idx = b.add(first, i);
    ok.push_back(b.setp(Cmp::lt, idx, p.n));
    const Reg at = b.mad(b.min(idx, last), size, in_row);
    raw.push_back(cfg.aligned ? load_raw_vector(b, d, at) : std::vector<Reg>{load_raw(b, d, at)});
  }
  std::vector<Value> xs;
  for (size_t q = 0; q < raw.size(); ++q)
    for (Reg r : raw[q]) xs.push_back(select(Mask(ok[q]), ptx::from_storage(b, r, d, acc), ident));
  return xs;
}

void store_items(KernelBuilder& b, const AxisKernelConfig& cfg, const AxisParams& p, Reg out_row,
                 Reg first, const std::vector<Value>& ys) {
  const DType d = cfg.dtype;
  const int size = int(dtype_size(d));
  const int step = cfg.aligned ? vector_width(d) : 1;
  for (int i = 0; i < kScanItems; i += step) {
    const Reg idx = b.add(first, i);
    b.if_then(b.setp(Cmp::lt, idx, p.n), [&] {
      const Reg at = b.mad(idx, size, out_row);
      if (!cfg.aligned) {
        ptx::store_element(b, d, at, ys[size_t(i)]);
        return;
      }
      std::vector<Reg> raw;
      for (int e = 0; e < step; ++e) raw.push_back(ptx::to_storage(b, ys[size_t(i + e)], d));
      store_raw_vector(b, d, at, raw);
    });
  }
}

}  // namespace

void gen_scan_rows(KernelBuilder& b, const AxisKernelConfig& cfg, PtxType acc) {
  const AxisParams p = axis_params(b);
  const DType d = cfg.dtype;
  const int size = int(dtype_size(d));
  const bool block = block_variant(cfg);
  const int group = block ? kAxisBlock : 32;
  const double ident = cfg.op == OpId::cumprod ? 1.0 : 0.0;
  const Value ident_v = Value::constant(acc, ident);
  const int acc_size = ptx::type_size(acc);
  // Block rows: two sets of warp totals, alternating from tile to tile. Set s of tile t is
  // read by every thread before the barrier of tile t + 1 and written again only by tile
  // t + 2, after that barrier, so one barrier per tile suffices.
  Reg smem{}, flip{};
  if (block) {
    smem = b.address_of(b.shared_array(acc, 2 * kAxisWarps, "totals", 16));
    flip = b.mov(PtxType::u32, 0);
  }
  for_each_row(b, cfg, p, [&](const Group& g, Reg k) {
    const Reg row = b.mul(b.mul(k, p.n), size);
    const Reg in_row = b.add(p.in, row), out_row = b.add(p.out, row);
    const Reg carry = b.mov(acc, ident_v.reg());
    b.for_range(b.mov(PtxType::u64, 0), p.n, group * kScanItems, PtxType::u64, [&](Reg base) {
      const Reg first = b.mad(g.g_tid, kScanItems, base);
      const std::vector<Value> xs = load_items(b, cfg, p, in_row, first, acc, ident_v);
      std::vector<Value> run;
      for (const Value& x : xs) run.push_back(run.empty() ? x : combine(cfg.op, run.back(), x));
      const Value incl = warp_scan(b, cfg.op, run.back(), g.lane);
      const Value up(b.shfl(ShflMode::up, incl.reg(), 1));
      const Value excl = select(Mask(b.setp(Cmp::eq, g.lane, 0)), ident_v, up);
      Value prefix = Value(carry), next = Value(carry);
      if (block) {
        const Reg totals = b.add(smem, flip);
        b.if_then(b.setp(Cmp::eq, g.lane, 31),
                  [&] { b.st_shared(b.mad(g.warp, acc_size, totals), incl.reg()); });
        b.bar_sync();
        Value before = ident_v, total = ident_v;
        for (int w = 0; w < kAxisWarps; ++w) {
          const Value t(b.ld_shared(acc, totals, int64_t(w) * acc_size));
          before = select(Mask(b.setp(Cmp::gt, g.warp, w)), combine(cfg.op, before, t), before);
          total = combine(cfg.op, total, t);
        }
        prefix = combine(cfg.op, combine(cfg.op, prefix, before), excl);
        next = combine(cfg.op, next, total);
        b.assign(flip, b.xor_(flip, kAxisWarps * acc_size));
      } else {
        prefix = combine(cfg.op, prefix, excl);
        next = combine(cfg.op, next, Value(b.shfl(ShflMode::idx, incl.reg(), 31)));
      }
      std::vector<Value> ys;
      for (const Value& r : run) ys.push_back(combine(cfg.op, prefix, r));
      store_items(b, cfg, p, out_row, first, ys);
      b.assign(carry, next.reg());
    });
  });
}

}  // namespace numr::cuda
