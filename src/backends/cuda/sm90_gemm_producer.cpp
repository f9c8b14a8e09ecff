// The producer (sm90_gemm_parts.h): one thread of warpgroup 0 issues the bulk tensor copies
// (TMA) of A and B for every (tile, k block) of its CTA into the ring of stages.
//
// Shared memory (dynamic, base rounded up to 1024 bytes; offsets from there), S stages:
//   [0, S * 16 Ki)      A stages: stage s at s * 16 Ki
//   [S * 16 Ki, ...)    B stages: stage s at S * 16 Ki + s * (B stage bytes)
//   then full[0..S-1] and empty[0..S-1] mbarriers (8 bytes each)
//
// Layouts (both written by the bulk tensor copies with CU_TENSOR_MAP_SWIZZLE_128B):
//  - A stage: 128 rows (m) of 64 BF16 (k) = 128 bytes per row, row r at r * 128; within
//    each group of 8 rows (1024 bytes) the 16-byte chunk c of row r is stored at chunk
//    c ^ (r % 8): wgmma's K-major layout with 128-byte swizzle (sm90_gemm_consumer.cpp).
//  - B stage: tile_n / 64 column blocks of 64 n (128 bytes, the most one 128-byte-swizzled
//    box holds), block j at j * 8 KiB; each block is 64 rows (k) of 128 bytes, swizzled as
//    above. TF32: 32 F32 per 128-byte row, so 32 k rows, boxes of 32 columns at 4 KiB.
//
// full[s] completes when the producer's expect_tx has been matched by the copies' bytes.
// With clusters of 2 both CTAs need the same B tile: each loads half of its boxes with a
// multicast copy that writes them into both CTAs' stage and completes their bytes on both
// CTAs' full[s]; a peer's bytes can so land before this CTA's expect_tx (the transaction
// count goes negative meanwhile, which the mbarrier allows).
#include "backends/cuda/sm90_gemm_parts.h"

namespace numr::cuda::sm90 {

void producer(Ptx& p, const Common& c, const std::string& tmap_a, const std::string& tmap_b) {
  const Layout& l = c.l;
  p.comment("producer: one thread issues the copies of every (tile, k block) of this CTA");
  const std::string stage = p.reg('r'), phase = p.reg('r');
  const std::string kb = p.reg('r'), m_blk = p.reg('r'), n_blk = p.reg('r'), m0 = p.reg('r'),
                    n0 = p.reg('r');
  const std::string unit_loop = p.label("p_unit"), k_loop = p.label("p_k"),
                    done_label = p.label("p_done");
  const bool multicast = c.cluster > 1;
  std::string mask;
  if (multicast) {
    mask = p.reg('h');
    p.op("mov.b16 ", mask, ", ", (1 << c.cluster) - 1);
  }
  const Work w = work_start(p, c);
  p.op("mov.u32 ", stage, ", 0");
  p.op("mov.u32 ", phase, ", 0");
  p.place(unit_loop);
  work_item(p, c, w, done_label);
  tile_coords(p, c, w.unit, m_blk, n_blk);
  p.op("shl.b32 ", m0, ", ", m_blk, ", ", log2_of(T::kM));
  p.op("shl.b32 ", n0, ", ", n_blk, ", ", log2_of(l.tile_n));
  p.op("mov.u32 ", kb, ", ", w.kb0);
  p.place(k_loop);
  {
    const std::string off = p.reg('r'), full = p.reg('r'), empty = p.reg('r'), par = p.reg('r');
    p.op("shl.b32 ", off, ", ", stage, ", 3");
    p.op("add.u32 ", full, ", ", c.bar_full, ", ", off);
    p.op("add.u32 ", empty, ", ", c.bar_empty, ", ", off);
    p.op("xor.b32 ", par, ", ", phase, ", 1");
    // With multicast, the stage is free once the consumers of every CTA of the cluster
    // have released it: this CTA writes half of B into the peer's stage too.
    wait_parity(p, empty, par, "p_wait_empty");
    p.op("mbarrier.arrive.expect_tx.shared::cta.b64 _, [", full, "], ", l.stage_bytes);
    const std::string t = p.reg('r'), dst_a = p.reg('r'), dst_b = p.reg('r'), k0 = p.reg('r');
    p.op("mul.lo.u32 ", t, ", ", stage, ", ", kABytes);
    p.op("add.u32 ", dst_a, ", ", c.smem, ", ", t);
    const std::string t2 = p.reg('r'), t3 = p.reg('r');
    p.op("mul.lo.u32 ", t2, ", ", stage, ", ", l.b_bytes);
    p.op("add.u32 ", t3, ", ", c.smem, ", ", t2);
    p.op("add.u32 ", dst_b, ", ", t3, ", ", l.stages * kABytes);
    p.op("shl.b32 ", k0, ", ", kb, ", ", log2_of(l.k_step));
    // Coordinates innermost first: A is {k, m}, B is {n, k}.
    p.op("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [", dst_a,
         "], [", tmap_a, ", {", k0, ", ", m0, "}], [", full, "]");
    const int boxes = l.tile_n / l.box_n;
    if (!multicast) {
      for (int j = 0; j < boxes; ++j) {
        const std::string nj = p.reg('r'), dj = p.reg('r');
        p.op("add.u32 ", nj, ", ", n0, ", ", l.box_n * j);
        p.op("add.u32 ", dj, ", ", dst_b, ", ", j * l.box_bytes);
        p.op("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [", dj,
             "], [", tmap_b, ", {", nj, ", ", k0, "}], [", full, "]");
      }
    } else {
      // CTA `rank` loads boxes rank * per .. rank * per + per - 1 of B and writes each into
      // the same place of every CTA of the cluster, completing bytes on each CTA's full[s].
      const int per = boxes / c.cluster;
      const std::string first_box = p.reg('r'), n_first = p.reg('r'), d_first = p.reg('r');
      const std::string t4 = p.reg('r'), t5 = p.reg('r');
      p.op("mul.lo.u32 ", first_box, ", ", c.rank, ", ", per);
      p.op("shl.b32 ", t4, ", ", first_box, ", ", log2_of(l.box_n));
      p.op("add.u32 ", n_first, ", ", n0, ", ", t4);
      p.op("mul.lo.u32 ", t5, ", ", first_box, ", ", l.box_bytes);
      p.op("add.u32 ", d_first, ", ", dst_b, ", ", t5);
      for (int j = 0; j < per; ++j) {
        const std::string nj = p.reg('r'), dj = p.reg('r');
        p.op("add.u32 ", nj, ", ", n_first, ", ", l.box_n * j);
        p.op("add.u32 ", dj, ", ", d_first, ", ", j * l.box_bytes);
        p.op(
            "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
            ".multicast::cluster [",
            dj, "], [", tmap_b, ", {", nj, ", ", k0, "}], [", full, "], ", mask);
      }
    }
  }
  advance(p, l.stages, stage, phase);
  {
    const std::string more = p.reg('p');
    p.op("add.u32 ", kb, ", ", kb, ", 1");
    p.op("setp.lt.u32 ", more, ", ", kb, ", ", w.kb1);
    p.op("@", more, " bra ", k_loop);
  }
  work_next(p, c, w, unit_loop, done_label);
  p.place(done_label);
  if (multicast) {
    // The peer CTA's consumers arrive on this CTA's empty barriers until their last stage:
    // this CTA stays (through this thread) until every stage's last release has come.
    for (int s = 0; s < l.stages; ++s) {
      const std::string off = p.reg('r'), empty = p.reg('r'), par = p.reg('r');
      p.op("shl.b32 ", off, ", ", stage, ", 3");
      p.op("add.u32 ", empty, ", ", c.bar_empty, ", ", off);
      p.op("xor.b32 ", par, ", ", phase, ", 1");
      wait_parity(p, empty, par, "p_wait_tail");
      advance(p, l.stages, stage, phase);
    }
  }
  p.op("bra ", c.exit);
}

}  // namespace numr::cuda::sm90
