// The epilogue (sm90_gemm_parts.h): D = act(acc + bias) from the accumulators in registers.
//
// BF16: v = acc + bias (f32), act(v) in f32 (sm90_gemm_activation.cpp), cvt.rn.bf16x2.f32
// per column pair, 8 values (one row set, four blocks of 8 columns) at a time; then the
// four lanes of a quad, which hold one row's columns 2 apiece in each block of 8, exchange
// words (two butterfly shuffle rounds) so that each lane holds 8 consecutive columns and
// stores them with one 16-byte st.global (a quad's stores cover whole 32-byte sectors).
//
// Deferred epilogue (BF16): the epilogue above runs for the tile's column groups 0 .. 7 - D
// (32 columns each) only; groups 8 - D .. 7 are kept as acc + bias in %pv (16 registers per
// group), with the tile's two row addresses, and their 2 D units (one row set of one group:
// 8 values, one store) run in the next tile's main loop, one per k block between
// wgmma.commit_group and wgmma.wait_group, where the products of two k blocks are queued on
// the tensor cores; so most of the epilogue overlaps the products instead of leaving the
// tensor cores idle. A tile of fewer k blocks than units runs the rest in its last one, and
// the CTA's last tile runs them before it exits. A unit is picked by a compare-and-branch
// chain on the count of units done. The results are those of the plain epilogue: the same
// operations on the same values.
#include "backends/cuda/sm90_gemm_parts.h"

namespace numr::cuda::sm90 {
namespace {

// 4 x 4 transpose of 32-bit words across the 4 lanes of a quad (lane bits b1, b0 given as
// predicates): lane q's x[i] becomes lane i's x[q]. Two butterfly rounds, each swapping
// the two words whose index bit differs from the lane's bit with the partner lane.
void quad_transpose(Ptx& p, std::string (&x)[4], const std::string& b1, const std::string& b0) {
  auto sel = [&](const std::string& pred, const std::string& a, const std::string& b) {
    const std::string r = p.reg('r');
    p.op("selp.b32 ", r, ", ", a, ", ", b, ", ", pred);
    return r;
  };
  auto swap = [&](const std::string& v, int mask) {
    const std::string r = p.reg('r');
    p.op("shfl.sync.bfly.b32 ", r, ", ", v, ", ", mask, ", 0x1f, 0xffffffff");
    return r;
  };
  // Index bit 1 against lane bit 1 (partner lane q ^ 2): words {0, 1} <-> {2, 3}.
  {
    const std::string lo = swap(sel(b1, x[0], x[2]), 2), hi = swap(sel(b1, x[1], x[3]), 2);
    const std::string y0 = sel(b1, lo, x[0]), y1 = sel(b1, hi, x[1]);
    const std::string y2 = sel(b1, x[2], lo), y3 = sel(b1, x[3], hi);
    x[0] = y0, x[1] = y1, x[2] = y2, x[3] = y3;
  }
  // Index bit 0 against lane bit 0 (partner lane q ^ 1): words {0, 2} <-> {1, 3}.
  {
    const std::string a = swap(sel(b0, x[0], x[1]), 1), b = swap(sel(b0, x[2], x[3]), 1);
    const std::string y0 = sel(b0, a, x[0]), y1 = sel(b0, x[1], a);
    const std::string y2 = sel(b0, b, x[2]), y3 = sel(b0, x[3], b);
    x[0] = y0, x[1] = y1, x[2] = y2, x[3] = y3;
  }
}

// The bias of this thread's columns in column group g (blocks 4g .. 4g + 3 of 8 columns):
// bv[ii][j] for column 8 (4g + ii) + 2 (l%4) + j. A BF16 bias is widened exactly: its two
// values of one 32-bit load moved to the upper halves of two f32.
void load_bias(Ptx& p, const Common& c, const std::string& bp, int g, std::string (&bv)[4][2]) {
  for (int ii = 0; ii < 4; ++ii) {
    bv[ii][0] = p.reg('f');
    bv[ii][1] = p.reg('f');
    if (!c.bias_bf16) {
      p.op("ld.global.nc.v2.f32 {", bv[ii][0], ", ", bv[ii][1], "}, [", bp, "+", 32 * (4 * g + ii),
           "]");
      continue;
    }
    const std::string w = p.reg('r'), lo = p.reg('r'), hi = p.reg('r');
    p.op("ld.global.nc.b32 ", w, ", [", bp, "+", 16 * (4 * g + ii), "]");
    p.op("shl.b32 ", lo, ", ", w, ", 16");
    p.op("and.b32 ", hi, ", ", w, ", 0xFFFF0000");
    p.op("mov.b32 ", bv[ii][0], ", ", lo);
    p.op("mov.b32 ", bv[ii][1], ", ", hi);
  }
}

// The accumulator of row set rs (rows + 8 rs), column block i, word j.
int acc_index(int rs, int i, int j) { return 4 * i + 2 * rs + j; }

// act(v) as BF16 for 8 pre-activations (bias added) of one row of column group g, v[2 ii +
// j] at column 8 (4g + ii) + 2 (l%4) + j, stored at [row + 64 g].
void store_group(Ptx& p, Activation act, const std::string (&v)[8], const std::string& row, int g,
                 const std::string& b1, const std::string& b0) {
  std::vector<Activated> y;
  if (act == Activation::Gelu || act == Activation::Silu) {
    y = activate_pairs(p, act, v);
  } else {
    for (const std::string& x : v) y.push_back(activate(p, act, x));
    split_division_check(p, y);  // none: None and Relu do not divide
  }
  std::string words[4];
  for (int ii = 0; ii < 4; ++ii) {
    // cvt.rn.bf16x2.f32 d, a, b puts a in the upper half: the higher column goes first.
    words[ii] = p.reg('r');
    p.op("cvt.rn.bf16x2.f32 ", words[ii], ", ", y[2 * ii + 1].y, ", ", y[2 * ii].y);
  }
  // Lane q of a quad holds columns 8 (4g + i) + 2q, +1 for i = 0..3. After the exchange it
  // holds columns 8 (4g + q) .. 8 (4g + q) + 7: 16 bytes at 64 g + 16 q.
  quad_transpose(p, words, b1, b0);
  p.op("st.global.v4.b32 [", row, "+", 64 * g, "], {", words[0], ", ", words[1], ", ", words[2],
       ", ", words[3], "}");
}

// Deferred group gi (0 .. groups - 1) is column group kGroups - groups + gi, in %pv16gi ..
// %pv16gi+15; unit u = 2 gi + rs is in %pv16gi+8rs .. +7.
std::string pv(int gi, int rs, int k) { return "%pv" + std::to_string(16 * gi + 8 * rs + k); }

}  // namespace

TileOut tile_out(Ptx& p, const Common& c, const std::string& d, const std::string& bias,
                 const std::string& n, const std::string& m_blk, const std::string& n_blk,
                 const std::string& row_t, const std::string& quad) {
  const Layout& l = c.l;
  TileOut o;
  o.bp = p.reg('d');
  const std::string m0 = p.reg('r'), n0 = p.reg('r'), row = p.reg('r'), colq = p.reg('r');
  const std::string col = p.reg('r'), rn = p.reg('d'), c64 = p.reg('d'), e = p.reg('d'),
                    eb = p.reg('d'), bcol = p.reg('r'), bq = p.reg('r'), boff = p.reg('d');
  p.op("shl.b32 ", m0, ", ", m_blk, ", ", log2_of(T::kM));
  p.op("shl.b32 ", n0, ", ", n_blk, ", ", log2_of(l.tile_n));
  p.op("add.u32 ", row, ", ", m0, ", ", row_t);
  // After the exchange this thread's first column in each group of 32: 8 (l%4).
  p.op("shl.b32 ", colq, ", ", quad, ", 3");
  p.op("add.u32 ", col, ", ", n0, ", ", colq);
  p.op("mul.wide.u32 ", rn, ", ", row, ", ", n);
  p.op("cvt.u64.u32 ", c64, ", ", col);
  p.op("add.s64 ", e, ", ", rn, ", ", c64);
  p.op("shl.b64 ", eb, ", ", e, ", 1");
  o.dr[0] = p.reg('d');
  p.op("add.s64 ", o.dr[0], ", ", d, ", ", eb);
  {
    const std::string stride = p.reg('d');
    o.dr[1] = p.reg('d');
    p.op("mul.wide.u32 ", stride, ", ", n, ", ", 2 * 8);  // 8 rows further
    p.op("add.s64 ", o.dr[1], ", ", o.dr[0], ", ", stride);
  }
  p.op("shl.b32 ", bq, ", ", quad, ", 1");
  p.op("add.u32 ", bcol, ", ", n0, ", ", bq);
  p.op("mul.wide.u32 ", boff, ", ", bcol, ", ", c.bias_bf16 ? 2 : 4);
  p.op("add.s64 ", o.bp, ", ", bias, ", ", boff);
  return o;
}

// The lane bits of `quad` as predicates (b1: bit 1, b0: bit 0), for quad_transpose.
void quad_bits(Ptx& p, const std::string& quad, std::string& b1, std::string& b0) {
  b1 = p.reg('p');
  b0 = p.reg('p');
  const std::string t1 = p.reg('r'), t0 = p.reg('r');
  p.op("and.b32 ", t1, ", ", quad, ", 2");
  p.op("setp.ne.u32 ", b1, ", ", t1, ", 0");
  p.op("and.b32 ", t0, ", ", quad, ", 1");
  p.op("setp.ne.u32 ", b0, ", ", t0, ", 0");
}

// D = act(acc + bias) as BF16 for column groups 0 .. groups - 1 of this thread's rows.
// Accumulator layout of m64nNk16, thread t of the warpgroup, warp w, lane l: d[4i + j], row
// 16w + l/4 (+8 for j = 2, 3), column 8i + 2(l%4) (+1 for j = 1, 3).
void epilogue(Ptx& p, const Common& c, Activation act, const TileOut& o, int groups,
              const std::string& b1, const std::string& b0) {
  p.comment("epilogue: D = act(acc + bias) as BF16");
  for (int g = 0; g < groups; ++g) {
    std::string bv[4][2];
    load_bias(p, c, o.bp, g, bv);
    for (int rs = 0; rs < 2; ++rs) {
      std::string v[8];
      for (int ii = 0; ii < 4; ++ii)
        for (int j = 0; j < 2; ++j) {
          v[2 * ii + j] = p.reg('f');
          p.op("add.rn.f32 ", v[2 * ii + j], ", %acc", acc_index(rs, 4 * g + ii, j), ", ",
               bv[ii][j]);
        }
      store_group(p, act, v, o.dr[rs], g, b1, b0);
    }
  }
}

void defer_groups(Ptx& p, const Common& c, const TileOut& o, const Deferred& df) {
  p.comment("deferred epilogue: keep acc + bias of the last column groups");
  for (int gi = 0; gi < df.groups; ++gi) {
    const int g = kGroups - df.groups + gi;
    std::string bv[4][2];
    load_bias(p, c, o.bp, g, bv);
    for (int rs = 0; rs < 2; ++rs)
      for (int ii = 0; ii < 4; ++ii)
        for (int j = 0; j < 2; ++j)
          p.op("add.rn.f32 ", pv(gi, rs, 2 * ii + j), ", %acc", acc_index(rs, 4 * g + ii, j), ", ",
               bv[ii][j]);
  }
  p.op("mov.b64 ", df.rows[0], ", ", o.dr[0]);
  p.op("mov.b64 ", df.rows[1], ", ", o.dr[1]);
  p.op("mov.u32 ", df.pending, ", 0");
}

void deferred_unit(Ptx& p, Activation act, const Deferred& df, const std::string& b1,
                   const std::string& b0) {
  const std::string done = p.label("dfr_done");
  std::vector<std::string> at(df.units());
  for (int u = 1; u < df.units(); ++u) {
    const std::string is = p.reg('p');
    at[u] = p.label("dfr_unit");
    p.op("setp.eq.u32 ", is, ", ", df.pending, ", ", u);
    p.op("@", is, " bra ", at[u]);
  }
  for (int u = 0; u < df.units(); ++u) {
    if (u > 0) p.place(at[u]);
    const int gi = u / 2, rs = u % 2;
    std::string v[8];
    for (int k = 0; k < 8; ++k) v[k] = pv(gi, rs, k);
    store_group(p, act, v, df.rows[rs], kGroups - df.groups + gi, b1, b0);
    if (u + 1 < df.units()) p.op("bra ", done);
  }
  p.place(done);
  p.op("add.u32 ", df.pending, ", ", df.pending, ", 1");
}

// D = act(acc + bias) as F32 for the TF32 kernel's tile (m_blk, n_blk). The accumulators
// hold D^T: thread (warp w, lane l = 4g + t) has, for each column 8i + 2t + j (j = 0, 1) of
// the two m64 blocks (rows of D: m), the rows 16w + g and + 8 of each block, which are
// columns 32w + 4 chunk(g) + 0, 1 (first block) and + 2, 3 (second) of D: acc[4i + j],
// acc[4i + 2 + j], acc[64 + 4i + j], acc[64 + 4i + 2 + j]. So each row m of D gets 16
// consecutive bytes from this thread, and a warp's 8 g cover 128 consecutive bytes.
void epilogue_f32(Ptx& p, const Common& c, Activation act, const std::string& d,
                  const std::string& bias, const std::string& n, const std::string& m_blk,
                  const std::string& n_blk, const std::string& box_index, const std::string& quad,
                  const std::string& chunk) {
  const Layout& l = c.l;
  p.comment("epilogue: D = act(acc + bias) as F32");
  const std::string m0 = p.reg('r'), n0 = p.reg('r'), ws = p.reg('r'), cs = p.reg('r'),
                    t1 = p.reg('r'), col = p.reg('r'), qs = p.reg('r'), row = p.reg('r');
  p.op("shl.b32 ", m0, ", ", m_blk, ", ", log2_of(T::kM));
  p.op("shl.b32 ", n0, ", ", n_blk, ", ", log2_of(l.tile_n));
  p.op("shl.b32 ", ws, ", ", box_index, ", 5");
  p.op("shl.b32 ", cs, ", ", chunk, ", 2");
  p.op("add.u32 ", t1, ", ", n0, ", ", ws);
  p.op("add.u32 ", col, ", ", t1, ", ", cs);
  p.op("shl.b32 ", qs, ", ", quad, ", 1");
  p.op("add.u32 ", row, ", ", m0, ", ", qs);
  const std::string rn = p.reg('d'), c64 = p.reg('d'), e = p.reg('d'), eb = p.reg('d'),
                    row_bytes = p.reg('d'), step = p.reg('d'), boff = p.reg('d'), bp = p.reg('d');
  p.op("mul.wide.u32 ", rn, ", ", row, ", ", n);
  p.op("cvt.u64.u32 ", c64, ", ", col);
  p.op("add.s64 ", e, ", ", rn, ", ", c64);
  p.op("shl.b64 ", eb, ", ", e, ", 2");
  p.op("mul.wide.u32 ", row_bytes, ", ", n, ", 4");
  p.op("mul.wide.u32 ", step, ", ", n, ", 32");  // 8 rows
  p.op("mul.wide.u32 ", boff, ", ", col, ", 4");
  p.op("add.s64 ", bp, ", ", bias, ", ", boff);
  std::string bv[4];
  for (std::string& v : bv) v = p.reg('f');
  p.op("ld.global.nc.v4.f32 {", bv[0], ", ", bv[1], ", ", bv[2], ", ", bv[3], "}, [", bp, "]");
  std::string dr[2];
  dr[0] = p.reg('d');
  dr[1] = p.reg('d');
  p.op("add.s64 ", dr[0], ", ", d, ", ", eb);
  p.op("add.s64 ", dr[1], ", ", dr[0], ", ", row_bytes);
  for (int i = 0; i < kTf32WarpgroupN / 8; ++i) {
    std::vector<Activated> y;
    for (int j = 0; j < 2; ++j)
      for (int q = 0; q < 4; ++q) {
        const int acc = 64 * (q / 2) + 4 * i + 2 * (q % 2) + j;
        const std::string v = p.reg('f');
        p.op("add.rn.f32 ", v, ", %acc", acc, ", ", bv[q]);
        y.push_back(activate(p, act, v));
      }
    split_division_check(p, y);
    for (int j = 0; j < 2; ++j) {
      p.op("st.global.v4.f32 [", dr[j], "], {", y[4 * j].y, ", ", y[4 * j + 1].y, ", ",
           y[4 * j + 2].y, ", ", y[4 * j + 3].y, "}");
      if (i + 1 < kTf32WarpgroupN / 8) p.op("add.s64 ", dr[j], ", ", dr[j], ", ", step);
    }
  }
}

}  // namespace numr::cuda::sm90
