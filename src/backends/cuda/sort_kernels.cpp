#include "backends/cuda/sort_kernels.h"

#include <cstdint>
#include <vector>

#include "backends/cuda/reduce_codegen.h"
#include "codegen/ptx/builder.h"
#include "numr/error.h"

namespace numr::cuda {

using ptx::Cmp;
using ptx::KernelBuilder;
using ptx::PtxType;
using ptx::Reg;
using ptx::Space;

namespace {

bool wide_key(DType d) { return d == DType::F64 || d == DType::I64; }

// The memory type moving an element's bits unchanged (U8 lands in a u32 register).
PtxType bits_type(DType d) {
  switch (dtype_size(d)) {
    case 1: return PtxType::u8;
    case 2: return PtxType::u16;
    case 4: return PtxType::u32;
    default: return PtxType::u64;
  }
}

// A constant of type t (u32 or u64). The builder writes immediates in decimal, so u64
// values above INT64_MAX are made as the complement of one below it.
Reg constant(KernelBuilder& b, PtxType t, uint64_t v) {
  if (t == PtxType::u64 && v > uint64_t(INT64_MAX)) return b.not_(b.mov(PtxType::u64, int64_t(~v)));
  return b.mov(t, int64_t(v));
}

// The bit patterns of a float format, in a key of `all`'s width.
struct FloatBits {
  uint64_t magnitude, inf, sign, all;
};

// The order key of a float's bits u: NaN -> all ones, -0 -> +0, then negatives complemented
// and the sign bit set on the others, so unsigned order is the float order.
Reg float_key(KernelBuilder& b, Reg u, const FloatBits& f) {
  const PtxType t = u.type;
  const Reg mag = b.and_(u, constant(b, t, f.magnitude));
  const Reg nan = b.setp(Cmp::gt, mag, constant(b, t, f.inf));
  const Reg v = b.selp(b.setp(Cmp::eq, mag, 0), constant(b, t, 0), u);
  const Reg negative = b.setp(Cmp::ne, b.and_(v, constant(b, t, f.sign)), 0);
  const Reg all = constant(b, t, f.all);
  const Reg key = b.selp(negative, b.and_(b.not_(v), all), b.or_(v, constant(b, t, f.sign)));
  return b.selp(nan, all, key);
}

// The key (u32, or u64 for F64 and I64) of an element's bits as loaded with bits_type(d).
Reg order_key(KernelBuilder& b, DType d, Reg bits) {
  switch (d) {
    case DType::F64:
      return float_key(b, bits, {0x7FFFFFFFFFFFFFFFull, 0x7FF0000000000000ull, 1ull << 63, ~0ull});
    case DType::F32: return float_key(b, bits, {0x7FFFFFFFu, 0x7F800000u, 1u << 31, 0xFFFFFFFFu});
    case DType::F16:
      return float_key(b, b.cvt(bits, PtxType::u32), {0x7FFFu, 0x7C00u, 1u << 15, 0xFFFFu});
    case DType::BF16:
      return float_key(b, b.cvt(bits, PtxType::u32), {0x7FFFu, 0x7F80u, 1u << 15, 0xFFFFu});
    case DType::I64: return b.xor_(bits, constant(b, PtxType::u64, 1ull << 63));
    case DType::I32: return b.xor_(bits, constant(b, PtxType::u32, 1ull << 31));
    case DType::U8: return bits;
    default: fail<BackendError>("cuda", "sort: no key for dtype ", dtype_name(d));
  }
}

Reg load_key(KernelBuilder& b, DType d, Reg addr) {
  return order_key(b, d, b.ld_global_nc(bits_type(d), addr));
}

// An item in registers: one u64 (key << 32 | position) or two (key, position).
using Item = std::vector<Reg>;

struct Items {
  KernelBuilder& b;
  bool wide;

  int bytes() const { return wide ? 16 : 8; }

  // key: u32, or u64 when wide; pos: u64 (below 2^32 when not wide).
  Item make(Reg key, Reg pos) const {
    if (wide) return {key, pos};
    return {b.or_(b.shl(b.cvt(key, PtxType::u64), 32), pos)};
  }
  Item pad() const {
    Item it;
    for (int i = 0; i < (wide ? 2 : 1); ++i) it.push_back(constant(b, PtxType::u64, ~0ull));
    return it;
  }
  Reg pos(const Item& it) const {
    return wide ? it[1] : b.and_(it[0], constant(b, PtxType::u64, 0xFFFFFFFFull));
  }
  // a before b.
  Reg less(const Item& x, const Item& y) const {
    const Reg lt = b.setp(Cmp::lt, x[0], y[0]);
    if (!wide) return lt;
    return b.or_(lt, b.and_(b.setp(Cmp::eq, x[0], y[0]), b.setp(Cmp::lt, x[1], y[1])));
  }
  Item select(Reg p, const Item& x, const Item& y) const {
    Item r;
    for (size_t i = 0; i < x.size(); ++i) r.push_back(b.selp(p, x[i], y[i]));
    return r;
  }
  void assign(const Item& dst, const Item& src) const {
    for (size_t i = 0; i < dst.size(); ++i) b.assign(dst[i], src[i]);
  }
  // A fresh register set holding it (to be updated with assign).
  Item copy(const Item& it) const {
    Item r;
    for (Reg x : it) r.push_back(b.mov(PtxType::u64, x));
    return r;
  }
  // Global loads read buffers the kernel never writes (non-coherent cache).
  Item load(Space s, Reg addr) const {
    if (wide) return b.ld_v(s, PtxType::u64, 2, addr, 0, s == Space::global);
    return {b.ld(s, PtxType::u64, addr, 0, s == Space::global)};
  }
  void store(Space s, Reg addr, const Item& it) const {
    if (wide)
      b.st_v(s, addr, it);
    else
      b.st(s, PtxType::u64, addr, it[0]);
  }
};

// The address of element `index` (u64) of `base`, elements of `bytes`.
Reg at(KernelBuilder& b, Reg base, Reg index, int64_t bytes) { return b.mad(index, bytes, base); }

// values[out_index] = in[row_start + pos] (bits unchanged), indices[out_index] = pos.
void write_result(KernelBuilder& b, DType d, Reg in, Reg values, Reg indices, Reg row_start,
                  Reg pos, Reg out_index) {
  const int64_t size = int64_t(dtype_size(d));
  const Reg v = b.ld_global_nc(bits_type(d), at(b, in, b.add(row_start, pos), size));
  b.st(Space::global, bits_type(d), at(b, values, out_index, size), v);
  b.st(Space::global, PtxType::u64, at(b, indices, out_index, 8), pos);
}

void gen_tile(KernelBuilder& b, DType d) {
  const Items items{b, wide_key(d)};
  const Reg in = b.param_ptr("in"), values = b.param_ptr("values");
  const Reg indices = b.param_ptr("indices"), buf = b.param_ptr("items");
  const Reg rows = b.param(PtxType::u64, "rows"), n = b.param(PtxType::u64, "n");
  const Reg k = b.param(PtxType::u64, "k"), seg = b.param(PtxType::u64, "seg");
  const Reg log_seg = b.param(PtxType::u32, "log_seg");
  const Reg pieces = b.param(PtxType::u64, "pieces"), tiles = b.param(PtxType::u64, "tiles");
  const Reg desc = b.setp(Cmp::ne, b.param(PtxType::u32, "descending"), 0);
  const int ib = items.bytes();
  const ptx::SharedArray sh = b.shared_array(PtxType::u64, int64_t(kSortTile) * ib / 8, "tile", 16);
  const Reg base = b.address_of(sh);
  const Reg tid = b.tid_x();
  const Reg segs = b.mul(rows, pieces);
  const Reg per_tile = b.shr(b.mov(PtxType::u64, kSortTile), log_seg);
  const Reg seg_mask = b.sub(b.cvt(seg, PtxType::u32), 1);
  const Reg whole_rows = b.setp(Cmp::eq, pieces, 1);
  const auto shared_at = [&](Reg slot) { return b.mad(slot, ib, base); };  // slot: u32
  // Segment and offset of a slot (u32) of the tile whose first segment is seg0.
  struct Place {
    Reg g, off, row, piece;
  };
  const auto place_of = [&](Reg seg0, Reg slot) {
    Place p;
    p.g = b.add(seg0, wide(b, b.shr(slot, log_seg)));
    p.off = wide(b, b.and_(slot, seg_mask));
    p.row = b.div(p.g, pieces);
    p.piece = b.sub(p.g, b.mul(p.row, pieces));
    return p;
  };
  const int reps = kSortTile / kSortThreads;

  b.for_range(wide(b, b.ctaid_x()), tiles, wide(b, b.nctaid_x()), PtxType::u64, [&](Reg tile) {
    const Reg seg0 = b.mul(tile, per_tile);
    // Load: each slot's element, or a pad past its row or the last segment.
    for (int r = 0; r < reps; ++r) {
      const Reg slot = b.add(tid, r * kSortThreads);
      const Item it = items.copy(items.pad());
      const Place p = place_of(seg0, slot);
      const Reg j = b.mad(p.piece, seg, p.off);
      const Reg real = b.and_(b.setp(Cmp::lt, p.g, segs), b.setp(Cmp::lt, j, n));
      b.if_then(real, [&] {
        const int64_t size = int64_t(dtype_size(d));
        const Reg key = load_key(b, d, at(b, in, b.mad(p.row, n, j), size));
        items.assign(it, items.make(b.selp(desc, b.not_(key), key), j));
      });
      items.store(Space::shared, shared_at(slot), it);
    }
    b.bar_sync();
    // Bitonic network over every segment: stage s sorts runs of s items ascending (its
    // first step compares mirrored positions, so no run needs the other direction).
    const Reg s = b.mov(PtxType::u32, 2);
    const Reg seg32 = b.cvt(seg, PtxType::u32);
    const auto exchange = [&](bool mirror, Reg span) {
      for (int r = 0; r < kSortTile / 2 / kSortThreads; ++r) {
        const Reg p = b.add(tid, r * kSortThreads);
        const Reg half = mirror ? b.shr(span, 1) : span;
        const Reg i = b.sub(b.shl(p, 1), b.and_(p, b.sub(half, 1)));
        const Reg j = mirror ? b.xor_(i, b.sub(span, 1)) : b.add(i, span);
        const Reg ai = shared_at(i), aj = shared_at(j);
        const Item x = items.load(Space::shared, ai), y = items.load(Space::shared, aj);
        const Reg swap = items.less(y, x);
        items.store(Space::shared, ai, items.select(swap, y, x));
        items.store(Space::shared, aj, items.select(swap, x, y));
      }
      b.bar_sync();
    };
    b.while_loop([&] { return b.setp(Cmp::le, s, seg32); },
                 [&] {
                   exchange(true, s);
                   const Reg dist = b.shr(s, 2);
                   b.while_loop([&] { return b.setp(Cmp::gt, dist, 0); },
                                [&] {
                                  exchange(false, dist);
                                  b.assign(dist, b.shr(dist, 1));
                                });
                   b.assign(s, b.shl(s, 1));
                 });
    // Store: whole rows give their first k results; pieces their first k items (pads last).
    for (int r = 0; r < reps; ++r) {
      const Reg slot = b.add(tid, r * kSortThreads);
      const Place p = place_of(seg0, slot);
      const Reg keep = b.and_(b.setp(Cmp::lt, p.g, segs), b.setp(Cmp::lt, p.off, k));
      b.if_then(keep, [&] {
        const Item it = items.load(Space::shared, shared_at(slot));
        b.if_then_else(
            whole_rows,
            [&] {
              write_result(b, d, in, values, indices, b.mul(p.row, n), items.pos(it),
                           b.mad(p.row, k, p.off));
            },
            [&] {
              const Reg j = b.mad(p.piece, seg, p.off);
              b.if_then(b.setp(Cmp::lt, j, n), [&] {
                items.store(Space::global, at(b, buf, b.mad(p.row, n, j), ib), it);
              });
            });
      });
    }
    b.bar_sync();  // the next tile reuses the shared items
  });
}

// Where merge block q (u64) works: its row, its pair of runs (a at s, b at mid, their
// lengths la and lb, each run keeping its first k items) and its outputs [diag0, diag1)
// of the pair's out_len; `busy` when it has any.
struct MergeBlock {
  Reg row, row_start, s, mid, la, lb, out_len, diag0, diag1, busy;
};

MergeBlock merge_block(KernelBuilder& b, Reg q, Reg n, Reg k, Reg width, Reg blocks) {
  MergeBlock m;
  m.row = b.div(q, blocks);
  m.row_start = b.mul(m.row, n);
  const Reg j0 = b.mul(b.sub(q, b.mul(m.row, blocks)), kMergeTile);
  m.s = b.sub(j0, b.and_(j0, b.sub(b.shl(width, 1), 1)));
  m.diag0 = b.sub(j0, m.s);
  m.mid = b.add(m.s, width);
  m.la = b.min(b.min(width, b.sub(n, m.s)), k);
  m.lb = b.min(b.min(width, b.selp(b.setp(Cmp::lt, m.mid, n), b.sub(n, m.mid), 0)), k);
  m.out_len = b.min(b.add(m.la, m.lb), k);
  m.diag1 = b.min(b.add(m.diag0, kMergeTile), m.out_len);
  m.busy = b.setp(Cmp::lt, m.diag0, m.out_len);
  return m;
}

// split: a thread per merge block, writing where its outputs start and end in run a
// (splits[2q], splits[2q + 1]): for each end `diag`, the first i with a[i] after
// b[diag - 1 - i], by a binary search along the merge path.
void gen_split(KernelBuilder& b, DType d) {
  const Items items{b, wide_key(d)};
  const int ib = items.bytes();
  const Reg src = b.param_ptr("src"), splits = b.param_ptr("splits");
  const Reg rows = b.param(PtxType::u64, "rows"), n = b.param(PtxType::u64, "n");
  const Reg k = b.param(PtxType::u64, "k"), width = b.param(PtxType::u64, "width");
  const Reg blocks = b.param(PtxType::u64, "blocks");
  const Reg total = b.mul(rows, blocks);
  const Reg first = wide(b, b.global_index_x());
  const Reg step = b.mul(wide(b, b.nctaid_x()), kSplitThreads);
  b.for_range(first, total, step, PtxType::u64, [&](Reg q) {
    const MergeBlock m = merge_block(b, q, n, k, width, blocks);
    b.if_then(m.busy, [&] {
      const Reg a_base = at(b, src, b.add(m.row_start, m.s), ib);
      const Reg b_base = at(b, src, b.add(m.row_start, m.mid), ib);
      const auto split = [&](Reg diag) {
        const Reg lo = b.mov(PtxType::u64, b.sub(b.max(diag, m.lb), m.lb));
        const Reg hi = b.mov(PtxType::u64, b.min(diag, m.la));
        b.while_loop([&] { return b.setp(Cmp::lt, lo, hi); },
                     [&] {
                       const Reg mid = b.shr(b.add(lo, hi), 1);
                       const Item x = items.load(Space::global, at(b, a_base, mid, ib));
                       const Item y =
                           items.load(Space::global, at(b, b_base, b.sub(b.sub(diag, 1), mid), ib));
                       const Reg before = items.less(x, y);
                       b.assign(lo, b.selp(before, b.add(mid, 1), lo));
                       b.assign(hi, b.selp(before, hi, mid));
                     });
        return lo;
      };
      const Reg out = at(b, splits, b.shl(q, 1), 8);
      b.st(Space::global, PtxType::u64, out, split(m.diag0));
      b.st(Space::global, PtxType::u64, out, split(m.diag1), 8);
    });
  });
}

void gen_merge(KernelBuilder& b, DType d) {
  const Items items{b, wide_key(d)};
  const int ib = items.bytes();
  const Reg src = b.param_ptr("src"), dst = b.param_ptr("dst"), in = b.param_ptr("in");
  const Reg splits = b.param_ptr("splits");
  const Reg values = b.param_ptr("values"), indices = b.param_ptr("indices");
  const Reg rows = b.param(PtxType::u64, "rows"), n = b.param(PtxType::u64, "n");
  const Reg k = b.param(PtxType::u64, "k"), width = b.param(PtxType::u64, "width");
  const Reg blocks = b.param(PtxType::u64, "blocks");
  const Reg last = b.setp(Cmp::ne, b.param(PtxType::u32, "last"), 0);
  const ptx::SharedArray sh =
      b.shared_array(PtxType::u64, int64_t(kMergeTile) * ib / 8, "merged", 16);
  const Reg base = b.address_of(sh);
  const auto shared_at = [&](Reg slot) { return b.mad(slot, ib, base); };  // slot: u32
  const Reg tid = b.tid_x();
  const Reg total = b.mul(rows, blocks);
  const int reps = kMergeTile / kMergeThreads;
  b.for_range(wide(b, b.ctaid_x()), total, wide(b, b.nctaid_x()), PtxType::u64, [&](Reg q) {
    const MergeBlock mb = merge_block(b, q, n, k, width, blocks);
    const Reg row = mb.row, row_start = mb.row_start, s = mb.s, diag0 = mb.diag0, diag1 = mb.diag1;
    b.if_then(mb.busy, [&] {
      const Reg a_base = at(b, src, b.add(row_start, s), ib);
      const Reg b_base = at(b, src, b.add(row_start, mb.mid), ib);
      const Reg split_at = at(b, splits, b.shl(q, 1), 8);
      const Reg a0 = b.ld_global_nc(PtxType::u64, split_at);
      const Reg a1 = b.ld_global_nc(PtxType::u64, split_at, 8);
      const Reg b0 = b.sub(diag0, a0);
      const Reg a_count = b.cvt(b.sub(a1, a0), PtxType::u32);
      const Reg count = b.cvt(b.sub(diag1, diag0), PtxType::u32);
      const Reg b_count = b.sub(count, a_count);
      // This block's inputs, a's then b's, into shared memory.
      for (int r = 0; r < reps; ++r) {
        const Reg slot = b.add(tid, r * kMergeThreads);
        b.if_then(b.setp(Cmp::lt, slot, count), [&] {
          const Reg from_a = b.setp(Cmp::lt, slot, a_count);
          const Reg wslot = wide(b, slot);
          const Reg addr = b.selp(from_a, at(b, a_base, b.add(a0, wslot), ib),
                                  at(b, b_base, b.sub(b.add(b0, wslot), wide(b, a_count)), ib));
          items.store(Space::shared, shared_at(slot), items.load(Space::global, addr));
        });
      }
      b.bar_sync();
      // Each thread merges kMergeChunk outputs from where its diagonal crosses the runs.
      const Reg diag = b.mul(tid, kMergeChunk);
      std::vector<Item> out;
      for (int u = 0; u < kMergeChunk; ++u) out.push_back(items.copy(items.pad()));
      b.if_then(b.setp(Cmp::lt, diag, count), [&] {
        const Reg lo = b.mov(PtxType::u32, b.sub(b.max(diag, b_count), b_count));
        const Reg hi = b.mov(PtxType::u32, b.min(diag, a_count));
        b.while_loop([&] { return b.setp(Cmp::lt, lo, hi); },
                     [&] {
                       const Reg m = b.shr(b.add(lo, hi), 1);
                       const Item x = items.load(Space::shared, shared_at(m));
                       const Item y = items.load(
                           Space::shared, shared_at(b.sub(b.add(a_count, b.sub(diag, 1)), m)));
                       const Reg before = items.less(x, y);
                       b.assign(lo, b.selp(before, b.add(m, 1), lo));
                       b.assign(hi, b.selp(before, hi, m));
                     });
        Reg i = lo, j = b.sub(diag, lo);
        const Item pad = items.pad();
        // Heads past their run read a clamped slot and are replaced by pads.
        const auto head = [&](Reg slot, Reg valid) {
          return items.select(
              valid, items.load(Space::shared, shared_at(b.min(slot, kMergeTile - 1))), pad);
        };
        for (int u = 0; u < kMergeChunk; ++u) {
          const Item x = head(i, b.setp(Cmp::lt, i, a_count));
          const Item y = head(b.add(a_count, j), b.setp(Cmp::lt, j, b_count));
          const Reg take_a = items.less(x, y);
          items.assign(out[size_t(u)], items.select(take_a, x, y));
          i = b.add(i, b.selp(take_a, 1, 0, PtxType::u32));
          j = b.add(j, b.selp(take_a, 0, 1, PtxType::u32));
        }
      });
      b.bar_sync();  // every input read before the outputs replace them
      b.if_then(b.setp(Cmp::lt, diag, count), [&] {
        for (int u = 0; u < kMergeChunk; ++u) {
          const Reg o = b.add(diag, u);
          b.if_then(b.setp(Cmp::lt, o, count),
                    [&] { items.store(Space::shared, shared_at(o), out[size_t(u)]); });
        }
      });
      b.bar_sync();
      // Coalesced writes of the merged block: items, or values and positions on the last pass.
      for (int r = 0; r < reps; ++r) {
        const Reg slot = b.add(tid, r * kMergeThreads);
        b.if_then(b.setp(Cmp::lt, slot, count), [&] {
          const Item it = items.load(Space::shared, shared_at(slot));
          const Reg o = b.add(diag0, wide(b, slot));
          b.if_then_else(
              last,
              [&] {
                write_result(b, d, in, values, indices, row_start, items.pos(it), b.mad(row, k, o));
              },
              [&] {
                items.store(Space::global, at(b, dst, b.add(row_start, b.add(s, o)), ib), it);
              });
        });
      }
      b.bar_sync();  // the next block reuses the shared items
    });
  });
}

void gen_search(KernelBuilder& b, DType d) {
  const Reg seq = b.param_ptr("seq"), values = b.param_ptr("values"), out = b.param_ptr("out");
  const Reg n = b.param(PtxType::u64, "n"), m = b.param(PtxType::u64, "m");
  const Reg total = b.param(PtxType::u64, "total");
  const Reg right = b.setp(Cmp::ne, b.param(PtxType::u32, "right"), 0);
  const int64_t size = int64_t(dtype_size(d));
  const Reg first = wide(b, b.global_index_x());
  const Reg step = b.mul(wide(b, b.nctaid_x()), kSearchBlock);
  b.for_range(first, total, step, PtxType::u64, [&](Reg e) {
    const Reg row = b.div(e, m);
    const Reg v = load_key(b, d, at(b, values, e, size));
    const Reg base = at(b, seq, b.mul(row, n), size);
    // The first position whose key is >= v (right: > v).
    const Reg lo = b.mov(PtxType::u64, 0), hi = b.mov(PtxType::u64, n);
    b.while_loop([&] { return b.setp(Cmp::lt, lo, hi); },
                 [&] {
                   const Reg mid = b.shr(b.add(lo, hi), 1);
                   const Reg key = load_key(b, d, at(b, base, mid, size));
                   const Reg go =
                       b.or_(b.setp(Cmp::lt, key, v), b.and_(right, b.setp(Cmp::eq, key, v)));
                   b.assign(lo, b.selp(go, b.add(mid, 1), lo));
                   b.assign(hi, b.selp(go, hi, mid));
                 });
    b.st(Space::global, PtxType::u64, at(b, out, e, 8), lo);
  });
}

const char* kind_label(SortKernelKind k) {
  switch (k) {
    case SortKernelKind::tile: return "sort_tile_";
    case SortKernelKind::split: return "sort_split_";
    case SortKernelKind::merge: return "sort_merge_";
    case SortKernelKind::search: return "searchsorted_";
  }
  return "?";
}

}  // namespace

int sort_item_bytes(DType d) { return wide_key(d) ? 16 : 8; }

std::string SortKernelConfig::name() const {
  return kind_label(kind) + std::string(dtype_name(dtype));
}

GeneratedKernel generate_sort_kernel(const SortKernelConfig& cfg, const ptx::Target& target) {
  switch (cfg.dtype) {
    case DType::F64:
    case DType::F32:
    case DType::F16:
    case DType::BF16:
    case DType::I64:
    case DType::I32:
    case DType::U8: break;
    default: fail<BackendError>("cuda", "sort: invalid kernel configuration ", cfg.name());
  }
  KernelBuilder b(cfg.name(), target);
  switch (cfg.kind) {
    case SortKernelKind::tile: gen_tile(b, cfg.dtype); break;
    case SortKernelKind::split: gen_split(b, cfg.dtype); break;
    case SortKernelKind::merge: gen_merge(b, cfg.dtype); break;
    case SortKernelKind::search: gen_search(b, cfg.dtype); break;
  }
  return {cfg.name(), b.finish()};
}

}  // namespace numr::cuda
