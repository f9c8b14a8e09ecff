// The consumers (sm90_gemm_parts.h): warpgroups 1 and 2 both work on one 128 x 256 tile,
// warpgroup w on rows 64w .. 64w + 63, with wgmma.mma_async from the shared-memory stages,
// then run the epilogue.
//
// Descriptors (64 bits): bits 0-13 start address >> 4, 16-29 leading byte offset >> 4,
// 32-45 stride byte offset >> 4, 49-51 base offset (0: every tile is 1024-byte aligned),
// 62-63 swizzle mode (1 = 128-byte). A stage (sm90_gemm_producer.cpp) is wgmma's K-major
// layout with 128-byte swizzle: the stride byte offset (between 8-row groups) is 1024, the
// leading byte offset is unused (set to 1, i.e. 16 bytes), and the k-th group of 16 K values
// (32 bytes) starts 32 * k bytes into the rows: the start address advances by 32 bytes per
// k16 step, and the hardware applies the swizzle to the address it forms (which is why the
// tile must sit on a 1024-byte boundary). B is K x N with N contiguous ("MN-major", the
// transpose bit set): an atom is 64 n x 8 k (1024 bytes), the leading byte offset the
// distance between atoms along N (the next 64 columns: 8 KiB) and the stride byte offset
// between atoms along K (the next 8 rows: 1024 bytes); the k-th k16 step starts 16 rows
// (2048 bytes) further.
//
// Accumulators of m64nNk16 (f32): thread t of the warpgroup, warp w = t / 32, lane l,
// holds d[4i + j], i = 0..N/8-1: row 16w + l/4 (+8 for j = 2, 3), column 8i + 2(l%4) (+1
// for j = 1, 3).
//
// Stage release: a consumer warp arrives on empty[s] (count 4 per warpgroup, 8 per CTA of
// the cluster) once wgmma.wait_group has reported the group reading stage s complete: the
// groups of k block kb-1 after the commit of k block kb (wait_group 1), the last one after
// the K loop (wait_group 0), before the epilogue. With clusters of 2 each consumer warp
// arrives on both CTAs' empty[s] (the peer's through mapa), since either CTA's next copies
// write into both.
//
// TF32. wgmma reads 32-bit operands from shared memory only K-major, and B [K, N] is
// N-major. So the TF32 form computes D^T = B^T A^T: A's tile, K-major as loaded, is wgmma's
// B operand (through the descriptor above, 32 bytes further per k8 step), and B^T is
// wgmma's A operand, from registers. B stage: 8 boxes of 32 columns (n), box j at j * 4 KiB,
// each 32 rows (k) of 128 bytes, 128-byte swizzled; warpgroup cw takes boxes 4 cw .. 4 cw +
// 3. Thread (warp w, lane 4g + t) takes the columns 32w + 4 chunk(g) .. + 3 of its box,
// chunk(g) = (g >> 1) | (g & 1) << 2, as its rows g and g + 8 of the two m64 blocks of D^T
// (words 0, 1: first block; 2, 3: second); per k8 step s it loads k rows 8s + t and 8s + t +
// 4 (a0/a1 and a2/a3 of m64nNk8's fragment) with 16-byte ld.shared. A quarter warp (g = 2p,
// 2p + 1, t = 0..3) then reads chunks chunk(g) ^ (row % 8): 8 different ones (no bank
// conflicts), since chunk(2p) and chunk(2p + 1) differ in bit 2 and t spans the low two
// bits. The accumulators hold, for each m of the tile, this thread's 4 consecutive n, so
// that epilogue_f32 stores 16 bytes per row with no exchange between lanes. Two fragment
// sets are used in turn, so that one k block's fragments load while the previous block's
// products run.
#include "backends/cuda/sm90_gemm_parts.h"

namespace numr::cuda::sm90 {
namespace {

// The accumulator operand list "{%acc<first>, ..., %acc<first + count - 1>}".
std::string accumulator_list(int first, int count) {
  std::string s = "{";
  for (int i = first; i < first + count; ++i)
    s += (i > first ? ", %acc" : "%acc") + std::to_string(i);
  return s + "}";
}

// One BF16 k block's products: A and B from the stage through descriptors (da: A's, at
// this stage; desc_b0: B's at stage 0), 64 / 16 k16 steps.
void bf16_products(Ptx& p, const Common& c, const std::string& stage, const std::string& da,
                   const std::string& desc_b0, const std::string& accumulate,
                   const std::string& always) {
  const Layout& l = c.l;
  const std::string s64 = p.reg('d'), ob = p.reg('d'), db = p.reg('d');
  p.op("cvt.u64.u32 ", s64, ", ", stage);
  p.op("mul.lo.u64 ", ob, ", ", s64, ", ", l.b_bytes / 16);
  p.op("add.s64 ", db, ", ", desc_b0, ", ", ob);
  p.op("wgmma.fence.sync.aligned");
  for (int k = 0; k < l.k_step / 16; ++k) {
    std::string dak = da, dbk = db;
    if (k > 0) {
      dak = p.reg('d');
      dbk = p.reg('d');
      p.op("add.s64 ", dak, ", ", da, ", ", 2 * k);    // 32 bytes per k16 along the row
      p.op("add.s64 ", dbk, ", ", db, ", ", 128 * k);  // 16 rows of 128 bytes per k16
    }
    // imm-scale-a 1, imm-scale-b 1, imm-trans-a 0 (K-major), imm-trans-b 1 (N-major).
    const std::string& scale_d = k == 0 ? accumulate : always;
    p.op("wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 ", accumulator_list(0, 128), ", ",
         dak, ", ", dbk, ", ", scale_d, ", 1, 1, 0, 1");
  }
}

// TF32 fragment registers: set `set` (0, 1), k8 step s (0..3), word i (0..7).
std::string frag(int set, int s, int i) { return "%fa" + std::to_string(32 * set + 8 * s + i); }

// The byte offsets, from a B stage, of the two 16-byte words this thread loads per k8 step
// (k rows t and t + 4 of the step; TF32 above): warp w's box, row t (+ 4), and the chunk
// chunk(g) = (g >> 1) | (g & 1) << 2 of it, swizzled.
// `chunk` gets chunk(g): this thread's 4 columns of each 32 are 4 chunk(g) .. + 3.
void tf32_fragment_offsets(Ptx& p, const std::string& box_index, const std::string& lane,
                           const std::string& quad, std::string (&off)[2], std::string& chunk) {
  const std::string g = p.reg('r'), g1 = p.reg('r'), g0 = p.reg('r'), g0s = p.reg('r'),
                    box = p.reg('r');
  chunk = p.reg('r');
  p.op("shr.u32 ", g, ", ", lane, ", 2");
  p.op("shr.u32 ", g1, ", ", g, ", 1");
  p.op("and.b32 ", g0, ", ", g, ", 1");
  p.op("shl.b32 ", g0s, ", ", g0, ", 2");
  p.op("or.b32 ", chunk, ", ", g1, ", ", g0s);
  p.op("shl.b32 ", box, ", ", box_index, ", 12");  // 4 KiB per box of 32 columns
  for (int h = 0; h < 2; ++h) {
    const std::string row = p.reg('r'), sw = p.reg('r'), a = p.reg('r'), b = p.reg('r'),
                      t = p.reg('r');
    p.op("add.u32 ", row, ", ", quad, ", ", 4 * h);
    p.op("xor.b32 ", sw, ", ", chunk, ", ", row);
    p.op("shl.b32 ", a, ", ", row, ", 7");
    p.op("shl.b32 ", b, ", ", sw, ", 4");
    p.op("add.u32 ", t, ", ", box, ", ", a);
    off[h] = p.reg('r');
    p.op("add.u32 ", off[h], ", ", t, ", ", b);
  }
}

// One TF32 k block's products: this thread's B fragments (B^T's rows, as wgmma's A) from the
// stage into set `set`, then per k8 step two m64n128k8 with A's tile (as wgmma's B, K-major)
// through the descriptor da.
void tf32_products(Ptx& p, const Common& c, int set, const std::string& stage,
                   const std::string& da, const std::string (&frag_off)[2],
                   const std::string& accumulate, const std::string& always) {
  const Layout& l = c.l;
  const std::string t = p.reg('r'), base = p.reg('r');
  p.op("mul.lo.u32 ", t, ", ", stage, ", ", l.b_bytes);
  p.op("add.u32 ", base, ", ", c.smem, ", ", t);
  std::string addr[2];
  for (int h = 0; h < 2; ++h) {
    const std::string u = p.reg('r');
    p.op("add.u32 ", u, ", ", base, ", ", frag_off[h]);
    addr[h] = p.reg('r');
    p.op("add.u32 ", addr[h], ", ", u, ", ", l.stages * kABytes);
  }
  for (int s = 0; s < l.k_step / 8; ++s)
    for (int h = 0; h < 2; ++h)
      p.op("ld.shared.v4.b32 {", frag(set, s, 4 * h), ", ", frag(set, s, 4 * h + 1), ", ",
           frag(set, s, 4 * h + 2), ", ", frag(set, s, 4 * h + 3), "}, [", addr[h], "+", 1024 * s,
           "]");
  p.op("wgmma.fence.sync.aligned");
  for (int s = 0; s < l.k_step / 8; ++s) {
    std::string das = da;
    if (s > 0) {
      das = p.reg('d');
      p.op("add.s64 ", das, ", ", da, ", ", 2 * s);  // 32 bytes per k8 along A's rows
    }
    const std::string& scale_d = s == 0 ? accumulate : always;
    // Words 0, 1 (rows t) and 4, 5 (rows t + 4) are this thread's fragment of the first
    // m64 block (columns 0, 1 of its four), words 2, 3 and 6, 7 of the second.
    for (int half = 0; half < 2; ++half)
      p.op("wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32 ", accumulator_list(64 * half, 64),
           ", {", frag(set, s, 2 * half), ", ", frag(set, s, 2 * half + 1), ", ",
           frag(set, s, 2 * half + 4), ", ", frag(set, s, 2 * half + 5), "}, ", das, ", ", scale_d,
           ", 1, 1");
  }
}

}  // namespace

void consumer(Ptx& p, const Common& c, Activation act, const std::string& tid, const std::string& d,
              const std::string& bias, const std::string& n) {
  const Layout& l = c.l;
  p.comment("consumers: warpgroup cw = 0, 1 computes rows 64 cw .. 64 cw + 63 of each tile");
  const std::string cw = p.reg('r'), warp = p.reg('r'), lane = p.reg('r'), lane0 = p.reg('p');
  const std::string quad = p.reg('r');
  {
    const std::string t = p.reg('r'), t2 = p.reg('r');
    p.op("shr.u32 ", t, ", ", tid, ", 7");
    p.op("sub.u32 ", cw, ", ", t, ", 1");
    p.op("shr.u32 ", t2, ", ", tid, ", 5");
    p.op("and.b32 ", warp, ", ", t2, ", 3");
    p.op("and.b32 ", lane, ", ", tid, ", 31");
    p.op("setp.eq.u32 ", lane0, ", ", lane, ", 0");
    p.op("and.b32 ", quad, ", ", lane, ", 3");
  }
  // With multicast, each release also goes to the peer's empty barrier of the same stage.
  std::string peer_empty;
  if (c.cluster > 1) {
    const std::string peer = p.reg('r');
    peer_empty = p.reg('r');
    p.op("xor.b32 ", peer, ", ", c.rank, ", 1");
    p.op("mapa.shared::cluster.u32 ", peer_empty, ", ", c.bar_empty, ", ", peer);
  }
  auto release = [&](const std::string& pred, const std::string& stage_reg) {
    const std::string po = p.reg('r'), pe = p.reg('r');
    p.op("shl.b32 ", po, ", ", stage_reg, ", 3");
    p.op("add.u32 ", pe, ", ", c.bar_empty, ", ", po);
    p.op("@", pred, " mbarrier.arrive.shared::cta.b64 _, [", pe, "]");
    if (c.cluster > 1) {
      const std::string re = p.reg('r');
      p.op("add.u32 ", re, ", ", peer_empty, ", ", po);
      p.op("@", pred, " mbarrier.arrive.shared::cluster.b64 _, [", re, "]");
    }
  };
  // Descriptors of stage 0: warpgroup cw reads A rows 64 cw .. 64 cw + 63. TF32 uses A's
  // only (as wgmma's B), all 128 rows.
  const std::string desc_a0 = p.reg('d'), desc_b0 = p.reg('d');
  {
    const std::string addr = p.reg('r'), s = p.reg('r'), m = p.reg('r');
    const std::string w = p.reg('d');
    if (l.tf32) {
      p.op("mov.u32 ", addr, ", ", c.smem);
    } else {
      const std::string t = p.reg('r');
      p.op("mul.lo.u32 ", t, ", ", cw, ", ", 64 * 128);
      p.op("add.u32 ", addr, ", ", c.smem, ", ", t);
    }
    p.op("shr.u32 ", s, ", ", addr, ", 4");
    p.op("and.b32 ", m, ", ", s, ", 16383");
    p.op("cvt.u64.u32 ", w, ", ", m);
    p.op("or.b64 ", desc_a0, ", ", w, ", ", kDescA);
    const std::string addr_b = p.reg('r'), sb = p.reg('r'), mb = p.reg('r');
    const std::string wb = p.reg('d');
    p.op("add.u32 ", addr_b, ", ", c.smem, ", ", l.stages * kABytes);
    p.op("shr.u32 ", sb, ", ", addr_b, ", 4");
    p.op("and.b32 ", mb, ", ", sb, ", 16383");
    p.op("cvt.u64.u32 ", wb, ", ", mb);
    p.op("or.b64 ", desc_b0, ", ", wb, ", ", kDescB);
  }
  // This thread's first row in a tile: row_t (then row_t + 8).
  const std::string row_t = p.reg('r');
  {
    const std::string b = p.reg('r'), cc = p.reg('r'), e = p.reg('r');
    p.op("shl.b32 ", b, ", ", warp, ", 4");
    p.op("shr.u32 ", cc, ", ", lane, ", 2");
    p.op("add.u32 ", e, ", ", b, ", ", cc);
    const std::string a = p.reg('r');
    p.op("shl.b32 ", a, ", ", cw, ", 6");
    p.op("add.u32 ", row_t, ", ", a, ", ", e);
  }
  // TF32: the box of 32 columns of B whose fragments this warp loads (warpgroup cw takes the
  // tile's columns 128 cw .. 128 cw + 127, boxes 4 cw .. 4 cw + 3).
  std::string frag_off[2], chunk, box_index;
  if (l.tf32) {
    const std::string t = p.reg('r');
    box_index = p.reg('r');
    p.op("shl.b32 ", t, ", ", cw, ", 2");
    p.op("add.u32 ", box_index, ", ", t, ", ", warp);
  }
  if (l.tf32) tf32_fragment_offsets(p, box_index, lane, quad, frag_off, chunk);
  std::string b1, b0;
  if (!l.tf32) quad_bits(p, quad, b1, b0);
  Deferred df;
  if (l.deferred_groups > 0) {
    df.groups = l.deferred_groups;
    df.pending = p.reg('r');
    df.rows[0] = p.reg('d');
    df.rows[1] = p.reg('d');
    p.op("mov.u32 ", df.pending, ", ", df.units());
  }
  const std::string always = p.reg('p');
  p.op("setp.eq.u32 ", always, ", ", tid, ", ", tid);

  const std::string stage = p.reg('r'), phase = p.reg('r');
  const std::string kb = p.reg('r'), prev = p.reg('r'), m_blk = p.reg('r'), n_blk = p.reg('r');
  const std::string unit_loop = p.label("c_unit"), k_loop = p.label("c_k");
  const Work w = work_start(p, c);
  const std::string& unit = w.unit;
  p.op("mov.u32 ", stage, ", 0");
  p.op("mov.u32 ", phase, ", 0");
  p.op("mov.u32 ", prev, ", 0");

  p.place(unit_loop);
  const std::string flush = df.groups > 0 ? p.label("c_flush") : c.exit;
  work_item(p, c, w, flush);
  tile_coords(p, c, unit, m_blk, n_blk);
  p.op("mov.u32 ", kb, ", ", w.kb0);
  // One k block: wait for its stage, queue its products (TF32: into fragment set `set`),
  // release the previous k block's stage once its products are done, move on.
  auto k_block = [&](int set) {
    const std::string off = p.reg('r'), full = p.reg('r');
    p.op("shl.b32 ", off, ", ", stage, ", 3");
    p.op("add.u32 ", full, ", ", c.bar_full, ", ", off);
    wait_parity(p, full, phase, "c_wait_full");
    const std::string s64 = p.reg('d'), oa = p.reg('d'), da = p.reg('d'), accumulate = p.reg('p');
    p.op("cvt.u64.u32 ", s64, ", ", stage);
    p.op("mul.lo.u64 ", oa, ", ", s64, ", ", kABytes / 16);  // descriptor units of 16 bytes
    p.op("add.s64 ", da, ", ", desc_a0, ", ", oa);
    // The first k block of an item overwrites the accumulators (scale-d false).
    p.op("setp.ne.u32 ", accumulate, ", ", kb, ", ", w.kb0);
    if (l.tf32)
      tf32_products(p, c, set, stage, da, frag_off, accumulate, always);
    else
      bf16_products(p, c, stage, da, desc_b0, accumulate, always);
    p.op("wgmma.commit_group.sync.aligned");
    // While the products run: one unit of the previous tile's deferred epilogue, or at the
    // tile's last k block every unit left.
    if (df.groups > 0) {
      const std::string again = p.label("c_dfr"), dfr_end = p.label("c_dfr_end");
      const std::string none = p.reg('p'), next = p.reg('r'), last = p.reg('p');
      p.place(again);
      p.op("setp.ge.u32 ", none, ", ", df.pending, ", ", df.units());
      p.op("@", none, " bra ", dfr_end);
      deferred_unit(p, act, df, b1, b0);
      p.op("add.u32 ", next, ", ", kb, ", 1");
      p.op("setp.eq.u32 ", last, ", ", next, ", ", w.kb1);
      p.op("@", last, " bra ", again);
      p.place(dfr_end);
    }
    // The group of the previous k block has finished reading its stage (and, TF32, its
    // fragment set, which the next k block refills): release it.
    p.op("wgmma.wait_group.sync.aligned 1");
    const std::string rel = p.reg('p'), not_first = p.reg('p');
    p.op("setp.ne.u32 ", not_first, ", ", kb, ", ", w.kb0);
    p.op("and.pred ", rel, ", ", not_first, ", ", lane0);
    release(rel, prev);
    p.op("mov.u32 ", prev, ", ", stage);
    advance(p, l.stages, stage, phase);
    p.op("add.u32 ", kb, ", ", kb, ", 1");
  };
  p.place(k_loop);
  if (!l.tf32) {
    k_block(0);
    const std::string more = p.reg('p');
    p.op("setp.lt.u32 ", more, ", ", kb, ", ", w.kb1);
    p.op("@", more, " bra ", k_loop);
  } else {
    // Two fragment sets in turn: the loop body is two k blocks. An odd count leaves after
    // the first straight to the loop's end: a path from there back to the loop's start
    // (which cannot run, but ptxas does not know) would refill set 0 while its products
    // run, and ptxas would then serialise every wgmma (C7513).
    const std::string done = p.reg('p'), more = p.reg('p'), k_end = p.label("c_k_end");
    k_block(0);
    p.op("setp.ge.u32 ", done, ", ", kb, ", ", w.kb1);
    p.op("@", done, " bra ", k_end);
    k_block(1);
    p.op("setp.lt.u32 ", more, ", ", kb, ", ", w.kb1);
    p.op("@", more, " bra ", k_loop);
    p.place(k_end);
  }
  p.op("wgmma.wait_group.sync.aligned 0");
  release(lane0, prev);
  const std::string item_end = p.label("c_item_end");
  if (c.split_tail) {
    store_part(p, c, w, tid, item_end);
    add_parts(p, c, w, tid);
  }

  if (l.tf32) {
    epilogue_f32(p, c, act, d, bias, n, m_blk, n_blk, box_index, quad, chunk);
  } else {
    const TileOut o = tile_out(p, c, d, bias, n, m_blk, n_blk, row_t, quad);
    epilogue(p, c, act, o, kGroups - df.groups, b1, b0);
    if (df.groups > 0) defer_groups(p, c, o, df);
  }
  p.place(item_end);
  work_next(p, c, w, unit_loop, flush);
  if (df.groups > 0) {
    // No unit left: the last tile's deferred units, then exit.
    const std::string none = p.reg('p');
    p.place(flush);
    p.op("setp.ge.u32 ", none, ", ", df.pending, ", ", df.units());
    p.op("@", none, " bra ", c.exit);
    deferred_unit(p, act, df, b1, b0);
    p.op("bra ", flush);
  }
}

}  // namespace numr::cuda::sm90
