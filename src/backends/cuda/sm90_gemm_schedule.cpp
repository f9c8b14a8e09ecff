// The kernel's stage ring and order of work (sm90_gemm_parts.h): the mbarrier waits, the
// tile order, and the items each CTA runs, with split tail's table of parts.
//
// Pipeline and phases: stage s and its parity advance together in both roles, over every
// (unit, k block) the CTA handles in order, so they stay in step across tiles:
// stage = (stage + 1) % S, and the parity flips when stage wraps to 0. The consumers wait
// on full[s] for parity `phase`; the producer waits on empty[s] for parity `phase ^ 1`,
// which a freshly initialised barrier reports complete, so the first round of the ring
// does not wait.
//
// Work: the grid is persistent, one CTA per SM. A work unit is `cluster` tiles stacked
// along M; the CTA of rank r in its cluster takes tile r of each unit its cluster takes
// (units c, c + clusters, ...). Units are numbered in groups of kGroupRows unit rows (all
// columns of the group, M fastest inside it), so that the tiles in flight cover a few
// column blocks of B rather than all of them.
#include "backends/cuda/sm90_gemm_parts.h"

namespace numr::cuda::sm90 {
namespace {

// The work units of this CTA: unit = cluster id, then += clusters (CTA id and CTA count
// without clusters).
void first_unit(Ptx& p, const Common& c, const std::string& unit, const std::string& step) {
  p.op("mov.u32 ", unit, c.cluster > 1 ? ", %clusterid.x" : ", %ctaid.x");
  p.op("mov.u32 ", step, c.cluster > 1 ? ", %nclusterid.x" : ", %nctaid.x");
}

}  // namespace

// The default semantics (acquire, CTA scope) also serve the empty barriers that the peer
// CTA arrives on: what they order are the tensor cores' reads of a stage (finished, by
// wgmma.wait_group, before the arrival) against the copy engine's next writes into it, and
// no ordinary memory accesses; `.acquire.cluster` here and `.release.cluster` on the remote
// arrival would cost an L1 invalidation and a GPU-wide memory barrier each. A parity names
// a phase only among the two nearest ones: the waiter must never be more than one phase
// ahead of the barrier.
void wait_parity(Ptx& p, const std::string& bar, const std::string& parity,
                 const std::string& hint) {
  const std::string again = p.label(hint), done = p.reg('p');
  p.place(again);
  p.op("mbarrier.try_wait.parity.shared::cta.b64 ", done, ", [", bar, "], ", parity);
  p.op("@!", done, " bra ", again);
}

void advance(Ptx& p, int stages, const std::string& stage, const std::string& phase) {
  const std::string wrap = p.reg('p');
  p.op("add.u32 ", stage, ", ", stage, ", 1");
  p.op("setp.eq.u32 ", wrap, ", ", stage, ", ", stages);
  p.op("@", wrap, " mov.u32 ", stage, ", 0");
  p.op("@", wrap, " xor.b32 ", phase, ", ", phase, ", 1");
}

// Units in groups of kGroupRows unit rows (fewer in the last group), M fastest inside a
// group.
void tile_coords(Ptx& p, const Common& c, const std::string& unit, const std::string& m_blk,
                 const std::string& n_blk) {
  const std::string mu = p.reg('r');
  const int g = kGroupRows;
  const std::string rows_m = p.reg('r'), per_group = p.reg('r'), grp = p.reg('r'), t = p.reg('r'),
                    within = p.reg('r'), row0 = p.reg('r'), left = p.reg('r'), rows = p.reg('r'),
                    r = p.reg('r');
  p.op("div.u32 ", rows_m, ", ", c.num_units, ", ", c.tiles_n);
  p.op("mul.lo.u32 ", per_group, ", ", c.tiles_n, ", ", g);
  p.op("div.u32 ", grp, ", ", unit, ", ", per_group);
  p.op("mul.lo.u32 ", t, ", ", grp, ", ", per_group);
  p.op("sub.u32 ", within, ", ", unit, ", ", t);
  p.op("mul.lo.u32 ", row0, ", ", grp, ", ", g);
  p.op("sub.u32 ", left, ", ", rows_m, ", ", row0);
  p.op("min.u32 ", rows, ", ", left, ", ", g);
  p.op("rem.u32 ", r, ", ", within, ", ", rows);
  p.op("div.u32 ", n_blk, ", ", within, ", ", rows);
  p.op("add.u32 ", mu, ", ", row0, ", ", r);
  if (c.cluster > 1) {
    const std::string base = p.reg('r');
    p.op("mul.lo.u32 ", base, ", ", mu, ", ", c.cluster);
    p.op("add.u32 ", m_blk, ", ", base, ", ", c.rank);
  } else {
    p.op("mov.u32 ", m_blk, ", ", mu);
  }
}

// Split tail. The grid of G CTAs takes the first dp_units tiles whole, tile c + j G for CTA
// c, and splits the S = num_units - dp_units others (sm90_gemm_split_tiles: fewer than G)
// along K: their S k_blocks k blocks, in tile order, are cut into G runs, CTA c taking
// [c W / G, (c + 1) W / G), W = S k_blocks. A run is shorter than a tile, so it holds at
// most two parts of tiles: the end of one tile (k blocks s .. k_blocks - 1, s > 0), which
// makes the CTA that tile's owner, and the start of the next (0 .. e - 1, e < k_blocks);
// or one part: an owner's end, a start, an inside part (s .. e - 1), or a whole tile. A
// CTA runs its whole tiles, then the part it does not own (P): it stores the part's
// accumulators to its workspace slot and sets its flag to (sequence << 32) | 1. Then the
// part it owns (O): after the part's products it waits for the flags of the CTAs before it
// that hold the tile's other parts (c - 1, then c - 2 if there is one), adds their
// accumulators to its own in that order, and runs the epilogue. The parts run at once on
// their CTAs, so a split tile costs its owner about its share of the k blocks; the sum is
// in f32, in a fixed order: the result is deterministic, but a split tile's sums are
// grouped differently from the unsplit kernel's (the rounding of f32 additions). A CTA
// only waits for CTAs of lower index, which never wait, and which the GPU starts no later:
// every wait ends. The table in shared memory holds P and O as (unit, first k block, end
// k block, O: the count of parts before it); an absent part has first == end. Thread 0
// writes it before the barrier that follows initialisation.
void write_item_table(Ptx& p, const Common& c) {
  p.comment("split tail: this CTA's parts P and O");
  const std::string dp = p.reg('r'), split = p.reg('r'), cta = p.reg('r'), g = p.reg('r');
  const std::string w = p.reg('d'), c64 = p.reg('d'), g64 = p.reg('d'), kb64 = p.reg('d'),
                    t = p.reg('d'), t1 = p.reg('d'), lo = p.reg('d'), hi = p.reg('d');
  p.op("ld.param.u32 ", dp, ", [", c.p_dp_units, "]");
  p.op("sub.u32 ", split, ", ", c.num_units, ", ", dp);
  p.op("mul.wide.u32 ", w, ", ", split, ", ", c.k_blocks);
  p.op("mov.u32 ", cta, ", %ctaid.x");
  p.op("mov.u32 ", g, ", %nctaid.x");
  p.op("cvt.u64.u32 ", c64, ", ", cta);
  p.op("cvt.u64.u32 ", g64, ", ", g);
  p.op("cvt.u64.u32 ", kb64, ", ", c.k_blocks);
  p.op("mul.lo.u64 ", t, ", ", c64, ", ", w);
  p.op("div.u64 ", lo, ", ", t, ", ", g64);
  p.op("add.u64 ", t1, ", ", t, ", ", w);
  p.op("div.u64 ", hi, ", ", t1, ", ", g64);
  const std::string has = p.reg('p');
  p.op("setp.lt.u64 ", has, ", ", lo, ", ", hi);
  // The run's first k block: tile t_lo, k block r_lo; its last: tile t_hi, k block r_hi - 1.
  auto split_at = [&](const std::string& at, std::string& tile, std::string& kb) {
    const std::string q = p.reg('d'), qk = p.reg('d'), r = p.reg('d');
    tile = p.reg('r');
    kb = p.reg('r');
    p.op("div.u64 ", q, ", ", at, ", ", kb64);
    p.op("mul.lo.u64 ", qk, ", ", q, ", ", kb64);
    p.op("sub.u64 ", r, ", ", at, ", ", qk);
    p.op("cvt.u32.u64 ", tile, ", ", q);
    p.op("cvt.u32.u64 ", kb, ", ", r);
  };
  std::string t_lo, r_lo, t_hi, r_hi;
  split_at(lo, t_lo, r_lo);
  const std::string last = p.reg('d');
  p.op("sub.u64 ", last, ", ", hi, ", 1");
  split_at(last, t_hi, r_hi);
  p.op("add.u32 ", r_hi, ", ", r_hi, ", 1");
  const std::string two = p.reg('p'), at_end = p.reg('p');
  p.op("setp.ne.u32 ", two, ", ", t_lo, ", ", t_hi);
  p.op("setp.eq.u32 ", at_end, ", ", r_hi, ", ", c.k_blocks);
  const std::string u_lo = p.reg('r'), u_hi = p.reg('r');
  p.op("add.u32 ", u_lo, ", ", t_lo, ", ", dp);
  p.op("add.u32 ", u_hi, ", ", t_hi, ", ", dp);
  auto store = [&](int slot, const std::string& unit, const std::string& kb0,
                   const std::string& kb1) {
    const int at = c.l.table_offset + 16 * slot;
    p.op("st.shared.u32 [", c.smem, "+", at, "], ", unit);
    p.op("st.shared.u32 [", c.smem, "+", at + 4, "], ", kb0);
    p.op("st.shared.u32 [", c.smem, "+", at + 8, "], ", kb1);
  };
  // O: the run's first part when the run ends a tile there (t_lo, r_lo, k_blocks): a run
  // across a boundary, or one reaching its tile's end.
  const std::string owns = p.reg('p');
  {
    const std::string end = p.reg('r');
    p.op("or.pred ", owns, ", ", two, ", ", at_end);
    p.op("and.pred ", owns, ", ", owns, ", ", has);
    p.op("selp.b32 ", end, ", ", c.k_blocks, ", ", r_lo, ", ", owns);
    store(1, u_lo, r_lo, end);
  }
  // P: after a boundary the next tile's start (t_hi, 0, r_hi); else a run that stops
  // inside its tile (t_lo, r_lo, r_hi).
  {
    const std::string inside = p.reg('p'), unit = p.reg('r'), first = p.reg('r'), end = p.reg('r');
    p.op("not.pred ", inside, ", ", owns);
    p.op("and.pred ", inside, ", ", inside, ", ", has);
    p.op("selp.b32 ", unit, ", ", u_hi, ", ", u_lo, ", ", two);
    p.op("selp.b32 ", first, ", 0, ", r_lo, ", ", two);
    p.op("selp.b32 ", end, ", ", r_hi, ", ", first, ", ", inside);
    p.op("@", two, " mov.u32 ", end, ", ", r_hi);
    p.op("@!", has, " mov.u32 ", end, ", ", first);
    store(0, unit, first, end);
  }
  // The parts before O: CTAs c - 1, c - 2, ... whose runs end after the tile's start
  // (t_lo k_blocks), counted down while there are any (none when O starts at 0).
  {
    const std::string count = p.reg('r'), prev = p.reg('r'), start = p.reg('d'), ts = p.reg('d'),
                      loop = p.label("sk_count"), done = p.label("sk_counted");
    p.op("mov.u32 ", count, ", 0");
    p.op("cvt.u64.u32 ", ts, ", ", t_lo);
    p.op("mul.lo.u64 ", start, ", ", ts, ", ", kb64);
    p.op("mov.u32 ", prev, ", ", cta);
    p.op("@!", owns, " bra ", done);
    p.place(loop);
    {
      const std::string none = p.reg('p'), after = p.reg('p'), p64 = p.reg('d'), m = p.reg('d'),
                        end = p.reg('d');
      p.op("setp.eq.u32 ", none, ", ", prev, ", 0");
      p.op("@", none, " bra ", done);
      // run prev - 1 ends at prev W / G
      p.op("cvt.u64.u32 ", p64, ", ", prev);
      p.op("mul.lo.u64 ", m, ", ", p64, ", ", w);
      p.op("div.u64 ", end, ", ", m, ", ", g64);
      p.op("setp.le.u64 ", after, ", ", end, ", ", start);
      p.op("@", after, " bra ", done);
      p.op("add.u32 ", count, ", ", count, ", 1");
      p.op("sub.u32 ", prev, ", ", prev, ", 1");
      p.op("bra ", loop);
    }
    p.place(done);
    p.op("st.shared.u32 [", c.smem, "+", c.l.table_offset + 16 + 12, "], ", count);
  }
}

Work work_start(Ptx& p, const Common& c) {
  Work w;
  w.unit = p.reg('r');
  if (!c.split_tail) {
    w.step = p.reg('r');
    first_unit(p, c, w.unit, w.step);
    w.kb0 = std::string("0");  // not = "0": GCC 12 warns (-Wrestrict) inside that assign
    w.kb1 = c.k_blocks;
    return w;
  }
  w.kb0 = p.reg('r');
  w.kb1 = p.reg('r');
  w.it = p.reg('r');
  w.last = p.reg('p');
  p.op("mov.u32 ", w.it, ", 0");
  p.op("setp.ne.u32 ", w.last, ", ", w.it, ", ", w.it);
  return w;
}

void work_item(Ptx& p, const Common& c, const Work& w, const std::string& done) {
  if (!c.split_tail) {
    const std::string none = p.reg('p');
    p.op("setp.ge.u32 ", none, ", ", w.unit, ", ", c.num_units);
    p.op("@", none, " bra ", done);
    return;
  }
  const std::string again = p.label("w_item"), part_o = p.label("w_o"), check = p.label("w_check"),
                    have = p.label("w_have");
  auto load_slot = [&](int slot) {
    const int at = c.l.table_offset + 16 * slot;
    p.op("ld.shared.u32 ", w.unit, ", [", c.smem, "+", at, "]");
    p.op("ld.shared.u32 ", w.kb0, ", [", c.smem, "+", at + 4, "]");
    p.op("ld.shared.u32 ", w.kb1, ", [", c.smem, "+", at + 8, "]");
  };
  p.place(again);
  {
    // Whole tile `it` while there is one: unit ctaid + it nctaid; then P (item j0, the
    // first past them) and O (j0 + 1, the last).
    const std::string g = p.reg('r'), cta = p.reg('r'), dp = p.reg('r'), in = p.reg('p'),
                      left = p.reg('r'), t = p.reg('r'), j0 = p.reg('r'), is_p = p.reg('p');
    p.op("mov.u32 ", g, ", %nctaid.x");
    p.op("mov.u32 ", cta, ", %ctaid.x");
    p.op("mad.lo.u32 ", w.unit, ", ", w.it, ", ", g, ", ", cta);
    p.op("mov.u32 ", w.kb0, ", 0");
    p.op("mov.u32 ", w.kb1, ", ", c.k_blocks);
    p.op("ld.param.u32 ", dp, ", [", c.p_dp_units, "]");
    p.op("setp.lt.u32 ", in, ", ", w.unit, ", ", dp);
    p.op("@", in, " bra ", have);
    // j0 = ceil((dp - cta) / g): this CTA's count of whole tiles (cta < g <= dp)
    p.op("sub.u32 ", left, ", ", dp, ", ", cta);
    p.op("add.u32 ", t, ", ", left, ", ", g);
    p.op("sub.u32 ", t, ", ", t, ", 1");
    p.op("div.u32 ", j0, ", ", t, ", ", g);
    p.op("setp.ne.u32 ", is_p, ", ", w.it, ", ", j0);
    p.op("@", is_p, " bra ", part_o);
    load_slot(0);
    p.op("bra ", check);
  }
  p.place(part_o);
  p.op("setp.eq.u32 ", w.last, ", ", w.it, ", ", w.it);
  load_slot(1);
  p.place(check);
  {
    const std::string empty = p.reg('p');
    p.op("setp.eq.u32 ", empty, ", ", w.kb0, ", ", w.kb1);
    p.op("@!", empty, " bra ", have);
    p.op("@", w.last, " bra ", done);
    p.op("add.u32 ", w.it, ", ", w.it, ", 1");
    p.op("bra ", again);
  }
  p.place(have);
}

void work_next(Ptx& p, const Common& c, const Work& w, const std::string& head,
               const std::string& done) {
  if (!c.split_tail) {
    p.op("add.u32 ", w.unit, ", ", w.unit, ", ", w.step);
    p.op("bra ", head);
    return;
  }
  p.op("@", w.last, " bra ", done);
  p.op("add.u32 ", w.it, ", ", w.it, ", 1");
  p.op("bra ", head);
}

}  // namespace numr::cuda::sm90
