// cumsum and cumprod along rows (inner == 1), tile by tile with a running carry. A tile is
// the group's threads x R vectors of V elements (16-byte vectors when every row is aligned,
// single elements otherwise): thread t holds the vectors that start at tile elements
// (r * group + t) * V, r < R, so each load or store instruction of a warp covers one
// contiguous run. Every load of a tile is issued before any value is used. Each vector is
// scanned within its thread, the thread totals of each r across the warp by shuffles (R
// independent chains) and, for block rows, the warp totals across the block through shared
// memory with one barrier per tile. Warp rows that fit a quarter of the tile take a tile of
// R / 4 vectors per thread.
#include <algorithm>
#include <utility>
#include <vector>

#include "backends/cuda/axis_codegen.h"
#include "backends/cuda/reduce_codegen.h"
#include "codegen/ptx/element_io.h"
#include "numr/error.h"

namespace numr::cuda {

using ptx::Cmp;
using ptx::KernelBuilder;
using ptx::Mask;
using ptx::PtxType;
using ptx::Reg;
using ptx::ShflMode;
using ptx::Value;

namespace {

// A thread's part of a tile: reps vectors of vec elements, vectors[r][e].
using Vectors = std::vector<std::vector<Value>>;

struct TileShape {
  int vec = 1;   // elements per vector
  int reps = 1;  // vectors per thread
};

// About 32 registers of accumulators per thread (32 values of a 4-byte type, 16 of an
// 8-byte one): loads enough in flight to keep memory busy, with registers left for several
// blocks per SM. Single elements take half as many: each is a warp scan of its own, whose
// shuffled values double the registers, and the smaller tile keeps more blocks per SM.
TileShape tile_shape(const AxisKernelConfig& cfg, PtxType acc) {
  const int vec = cfg.aligned ? vector_width(cfg.dtype) : 1;
  const int values = (ptx::type_size(acc) == 8 ? 16 : 32) / (vec == 1 ? 2 : 1);
  return {vec, std::max(1, values / vec)};
}

Value combine(OpId op, const Value& a, const Value& x) {
  return op == OpId::cumprod ? a * x : a + x;
}

// Inclusive scans of vs across the warp's lanes, a step of every chain at a time so the
// independent chains interleave.
std::vector<Value> warp_scan(KernelBuilder& b, OpId op, std::vector<Value> vs, Reg lane) {
  for (int off = 1; off < 32; off *= 2) {
    const Reg has = b.setp(Cmp::ge, lane, off);
    for (Value& v : vs) {
      const Value y(b.shfl(ShflMode::up, v.reg(), off));
      v = Value(b.selp(has, combine(op, v, y).reg(), v.reg()));
    }
  }
  return vs;
}

// The lane before's value of an inclusive warp scan: the exclusive scan.
Value exclusive(KernelBuilder& b, const Value& incl, Reg lane, const Value& ident) {
  const Value up(b.shfl(ShflMode::up, incl.reg(), 1));
  return select(Mask(b.setp(Cmp::eq, lane, 0)), ident, up);
}

// The thread's vectors of the tile whose first element of this thread is at address `at`,
// as acc Values. Every load is issued before any value is used, so they are all in flight
// together. Addresses past the row are clamped to its last vector (`last`): those values
// reach only outputs past the row, which are never stored, as an output depends on no
// later element; so they need no masking.
Vectors load_tile(KernelBuilder& b, const AxisKernelConfig& cfg, TileShape s, int group, Reg at,
                  Reg last, PtxType acc) {
  const DType d = cfg.dtype;
  const int64_t stride = int64_t(group) * s.vec * int64_t(dtype_size(d));  // bytes per vector
  std::vector<std::vector<Reg>> raw;
  for (int r = 0; r < s.reps; ++r) {
    const Reg addr = b.min(r ? b.add(at, r * stride) : at, last);
    raw.push_back(cfg.aligned ? load_raw_vector(b, d, addr)
                              : std::vector<Reg>{load_raw(b, d, addr)});
  }
  Vectors xs;
  for (const std::vector<Reg>& v : raw) {
    xs.emplace_back();
    for (Reg e : v) xs.back().push_back(ptx::from_storage(b, e, d, acc));
  }
  return xs;
}

// Stores vector r of the thread (ys) if it starts inside the row: `left` (s64) counts the
// elements from the thread's first one in the tile to the end of the row. Aligned vectors
// lie wholly inside or outside the row, since n is a multiple of the vector width.
void store_vector(KernelBuilder& b, const AxisKernelConfig& cfg, TileShape s, int group, int r,
                  Reg at, Reg left, const std::vector<Value>& ys) {
  const DType d = cfg.dtype;
  const int64_t step = int64_t(r) * group * s.vec;  // elements from the thread's first vector
  b.if_then(b.setp(Cmp::gt, left, step), [&] {
    const Reg addr = r ? b.add(at, step * int64_t(dtype_size(d))) : at;
    if (!cfg.aligned) {
      ptx::store_element(b, d, addr, ys[0]);
      return;
    }
    std::vector<Reg> raw;
    for (const Value& e : ys) raw.push_back(ptx::to_storage(b, e, d));
    store_raw_vector(b, d, addr, raw);
  });
}

// Block rows: for each chain r of the thread, the combined totals of the warp chains
// before it in the tile (every warp's chains r' < r, then warps w' < warp of chain r); and
// the tile total. The warps' chain totals (incl of lane 31) go to shared memory at
// buf[r * kAxisWarps + warp]; after the barrier every warp scans all of them itself,
// `per` consecutive entries per lane, and each chain takes the exclusive prefix of its
// entry from the lane that holds it.
std::pair<std::vector<Value>, Value> block_prefixes(KernelBuilder& b, OpId op, const Group& g,
                                                    Reg buf, const std::vector<Value>& incl,
                                                    const Value& ident) {
  const int reps = int(incl.size());
  const PtxType acc = ident.type();
  const int acc_size = ptx::type_size(acc);
  const int count = reps * kAxisWarps;
  const int per = std::max(1, count / 32);
  // The entry of chain r is entry r * kAxisWarps + warp: held by lane
  // r * (kAxisWarps / per) + warp / per at position warp % per, the same for every r.
  if (count > 32 && (count % 32 || kAxisWarps % per))
    fail<BackendError>("cuda", "scan tile of ", reps, " vectors per thread");
  b.if_then(b.setp(Cmp::eq, g.lane, 31), [&] {
    const Reg at = b.mad(g.warp, acc_size, buf);
    for (int r = 0; r < reps; ++r)
      b.st_shared(at, incl[size_t(r)].reg(), int64_t(r) * kAxisWarps * acc_size);
  });
  b.bar_sync();
  std::vector<Value> t;
  if (count < 32) {
    // Fewer entries than lanes: the lanes past them hold the identity.
    const Reg at = b.mad(b.min(g.lane, count - 1), acc_size, buf);
    const Value x(b.ld_shared(acc, at));
    t.push_back(select(Mask(b.setp(Cmp::lt, g.lane, count)), x, ident));
  } else {
    const Reg at = b.mad(g.lane, per * acc_size, buf);
    const int chunk = std::min(per, 16 / acc_size);  // elements per vector load
    for (int k = 0; k < per; k += chunk) {
      if (chunk == 1) {
        t.emplace_back(b.ld_shared(acc, at, int64_t(k) * acc_size));
        continue;
      }
      for (Reg x : b.ld_shared_v(acc, chunk, at, int64_t(k) * acc_size)) t.emplace_back(x);
    }
  }
  Value lane_total = t[0];
  for (int k = 1; k < per; ++k) lane_total = combine(op, lane_total, t[size_t(k)]);
  const Value lane_incl = warp_scan(b, op, {lane_total}, g.lane)[0];
  Value run = exclusive(b, lane_incl, g.lane, ident), mine = run;
  for (int k = 1; k < per; ++k) {
    run = combine(op, run, t[size_t(k - 1)]);
    mine = select(Mask(b.setp(Cmp::eq, b.rem(g.warp, per), k)), run, mine);
  }
  const Reg src = b.div(g.warp, per);
  std::vector<Value> before;
  for (int r = 0; r < reps; ++r) {
    const Reg lane = r ? b.add(src, r * (kAxisWarps / per)) : src;
    before.emplace_back(b.shfl(ShflMode::idx, mine.reg(), lane));
  }
  return {before, Value(b.shfl(ShflMode::idx, lane_incl.reg(), 31))};
}

// Warp rows: the same from the chains' totals in lane 31 (chains r' < r come first).
std::pair<std::vector<Value>, Value> warp_prefixes(KernelBuilder& b, OpId op,
                                                   const std::vector<Value>& incl,
                                                   const Value& ident) {
  std::vector<Value> before;
  Value total = ident;
  for (const Value& v : incl) {
    before.push_back(total);
    total = combine(op, total, Value(b.shfl(ShflMode::idx, v.reg(), 31)));
  }
  return {before, total};
}

// What the rows of one kernel share.
struct ScanRows {
  const AxisKernelConfig& cfg;
  AxisParams p;
  PtxType acc;
  Value ident;
  // Block rows: two sets of warp totals, alternating from tile to tile (flip: the byte
  // offset of this tile's set). Set s of tile t is read by every thread before the barrier
  // of tile t + 1 and written again only by tile t + 2, after that barrier, so one barrier
  // per tile suffices.
  Reg smem{}, flip{};
};

// Scans the row at in_row into out_row in tiles of shape s, with a running carry.
void scan_row(KernelBuilder& b, const ScanRows& sr, TileShape s, const Group& g, Reg in_row,
              Reg out_row) {
  const AxisKernelConfig& cfg = sr.cfg;
  const OpId op = cfg.op;
  const Reg n = sr.p.n;
  const int size = int(dtype_size(cfg.dtype));
  const int64_t tile = int64_t(g.size) * s.vec * s.reps;  // elements
  const int totals_size = s.reps * kAxisWarps * ptx::type_size(sr.acc);
  const Reg last = b.mad(b.sub(n, s.vec), size, in_row);  // the row's last vector
  const Reg lead = b.mul(g.g_tid, s.vec);                 // the thread's first element in a tile
  const Reg carry = b.mov(sr.acc, sr.ident.reg());
  b.for_range(b.mov(PtxType::u64, 0), n, tile, PtxType::u64, [&](Reg base) {
    const Reg first = b.add(base, lead);
    Vectors xs = load_tile(b, cfg, s, g.size, b.mad(first, size, in_row), last, sr.acc);
    std::vector<Value> totals;
    for (std::vector<Value>& v : xs) {
      for (size_t e = 1; e < v.size(); ++e) v[e] = combine(op, v[e - 1], v[e]);
      totals.push_back(v.back());
    }
    const std::vector<Value> incl = warp_scan(b, op, totals, g.lane);
    auto [before, total] = g.block
                               ? block_prefixes(b, op, g, b.add(sr.smem, sr.flip), incl, sr.ident)
                               : warp_prefixes(b, op, incl, sr.ident);
    if (g.block) b.assign(sr.flip, b.xor_(sr.flip, totals_size));
    const Reg out_at = b.mad(first, size, out_row);
    const Reg left = b.bitcast(b.sub(n, first), PtxType::s64);
    // Vector by vector, so its outputs die at its store.
    for (size_t r = 0; r < xs.size(); ++r) {
      const Value head = combine(op, Value(carry), before[r]);
      std::vector<Value>& ys = xs[r];
      // The last element's output is head combined with the chain's inclusive value, so the
      // thread total need not live through the scans.
      if (ys.size() > 1) {
        const Value prefix = combine(op, head, exclusive(b, incl[r], g.lane, sr.ident));
        for (size_t e = 0; e + 1 < ys.size(); ++e) ys[e] = combine(op, prefix, ys[e]);
      }
      ys.back() = combine(op, head, incl[r]);
      store_vector(b, cfg, s, g.size, int(r), out_at, left, ys);
    }
    b.assign(carry, combine(op, Value(carry), total).reg());
  });
}

}  // namespace

void gen_scan_rows(KernelBuilder& b, const AxisKernelConfig& cfg, PtxType acc) {
  ScanRows sr{cfg, axis_params(b), acc, Value::constant(acc, cfg.op == OpId::cumprod ? 1.0 : 0.0)};
  const int size = int(dtype_size(cfg.dtype));
  const TileShape full = tile_shape(cfg, acc);
  if (block_variant(cfg)) {
    sr.smem = b.address_of(b.shared_array(acc, 2 * full.reps * kAxisWarps, "totals", 16));
    sr.flip = b.mov(PtxType::u32, 0);
  }
  // Warp rows that fit a quarter of the tile take a quarter tile: the loads, scans and
  // stores of the vectors past such a row would be most of the kernel's instructions.
  const TileShape quarter{full.vec, std::max(1, full.reps / 4)};
  const int64_t quarter_tile = int64_t(32) * quarter.vec * quarter.reps;
  for_each_row(b, cfg, sr.p, [&](const Group& g, Reg k) {
    const Reg row = b.mul(b.mul(k, sr.p.n), size);
    const Reg in_row = b.add(sr.p.in, row), out_row = b.add(sr.p.out, row);
    if (g.block || quarter.reps == full.reps) {
      scan_row(b, sr, full, g, in_row, out_row);
      return;
    }
    b.if_then_else(
        b.setp(Cmp::le, sr.p.n, quarter_tile),
        [&] { scan_row(b, sr, quarter, g, in_row, out_row); },
        [&] { scan_row(b, sr, full, g, in_row, out_row); });
  });
}

}  // namespace numr::cuda
