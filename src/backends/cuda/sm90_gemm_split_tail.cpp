// Split tail's exchange of partial sums (sm90_gemm_schedule.cpp, write_item_table, says
// which CTA computes which part of a split tile): a part's accumulators through the CTA's
// workspace slot, announced by its flag.
#include "backends/cuda/sm90_gemm_parts.h"

namespace numr::cuda::sm90 {
namespace {

// CTA `cta`'s flag and this thread's part of its workspace slot: thread 128 + t keeps its
// accumulators 4i .. 4i + 3 at 16 (256 i + t) bytes, so that each v4 access of the 256
// threads covers 4 KiB in one piece.
void split_addresses(Ptx& p, const Common& c, const std::string& cta, const std::string& tid,
                     std::string& flag, std::string& part) {
  const std::string t = p.reg('r');
  const std::string fp = p.reg('d'), wp = p.reg('d'), fo = p.reg('d'), wo = p.reg('d'),
                    to = p.reg('d'), fg = p.reg('d'), wg = p.reg('d'), wt = p.reg('d');
  p.op("ld.param.u64 ", fp, ", [", c.p_flags, "]");
  p.op("ld.param.u64 ", wp, ", [", c.p_work, "]");
  p.op("cvta.to.global.u64 ", fg, ", ", fp);
  p.op("cvta.to.global.u64 ", wg, ", ", wp);
  p.op("mul.wide.u32 ", fo, ", ", cta, ", 8");
  p.op("mul.wide.u32 ", wo, ", ", cta, ", ", kSplitTileBytes);
  p.op("sub.u32 ", t, ", ", tid, ", 128");
  p.op("mul.wide.u32 ", to, ", ", t, ", 16");
  flag = p.reg('d');
  part = p.reg('d');
  p.op("add.s64 ", flag, ", ", fg, ", ", fo);
  p.op("add.s64 ", wt, ", ", wg, ", ", wo);
  p.op("add.s64 ", part, ", ", wt, ", ", to);
}

// A set flag: (sequence << 32) | 1.
std::string flag_value(Ptx& p, const Common& c) {
  const std::string seq = p.reg('r'), s64 = p.reg('d'), hi = p.reg('d'), v = p.reg('d');
  p.op("ld.param.u32 ", seq, ", [", c.p_seq, "]");
  p.op("cvt.u64.u32 ", s64, ", ", seq);
  p.op("shl.b64 ", hi, ", ", s64, ", 32");
  p.op("or.b64 ", v, ", ", hi, ", 1");
  return v;
}

}  // namespace

// A part this CTA does not own (it ends before its tile does): its accumulators to the
// CTA's workspace slot and the CTA's flag set (release, GPU scope, by thread 128 after the
// named barrier), in place of the epilogue; then on to `next`.
void store_part(Ptx& p, const Common& c, const Work& w, const std::string& tid,
                const std::string& next) {
  const std::string ends = p.reg('p'), owned = p.label("sk_owned");
  p.op("setp.eq.u32 ", ends, ", ", w.kb1, ", ", c.k_blocks);
  p.op("@", ends, " bra ", owned);
  const std::string cta = p.reg('r');
  p.op("mov.u32 ", cta, ", %ctaid.x");
  std::string flag, part;
  split_addresses(p, c, cta, tid, flag, part);
  for (int i = 0; i < 32; ++i)
    p.op("st.global.cg.v4.f32 [", part, "+", 4096 * i, "], {%acc", 4 * i, ", %acc", 4 * i + 1,
         ", %acc", 4 * i + 2, ", %acc", 4 * i + 3, "}");
  const std::string value = flag_value(p, c);
  const std::string leader = p.reg('p');
  p.op("setp.eq.u32 ", leader, ", ", tid, ", 128");
  p.op("bar.sync ", kSplitBarrier, ", 256");
  p.op("@", leader, " st.release.gpu.global.u64 [", flag, "], ", value);
  p.op("bra ", next);
  p.place(owned);
}

// The part this CTA owns, when it does not start its tile (kb0 > 0): the accumulators of
// the tile's other parts added to this thread's, CTA c - 1's first, each once its flag is
// set (thread 128 waits, acquire at GPU scope; the named barrier lets the others read).
void add_parts(Ptx& p, const Common& c, const Work& w, const std::string& tid) {
  const std::string whole = p.reg('p'), done = p.label("sk_added"), loop = p.label("sk_add");
  p.op("setp.eq.u32 ", whole, ", ", w.kb0, ", 0");
  p.op("@", whole, " bra ", done);
  const std::string count = p.reg('r'), from = p.reg('r');
  p.op("ld.shared.u32 ", count, ", [", c.smem, "+", c.l.table_offset + 16 + 12, "]");
  p.op("mov.u32 ", from, ", %ctaid.x");
  p.place(loop);
  {
    const std::string none = p.reg('p');
    p.op("setp.eq.u32 ", none, ", ", count, ", 0");
    p.op("@", none, " bra ", done);
  }
  p.op("sub.u32 ", from, ", ", from, ", 1");
  p.op("sub.u32 ", count, ", ", count, ", 1");
  std::string flag, part;
  split_addresses(p, c, from, tid, flag, part);
  const std::string want = flag_value(p, c);
  const std::string leader = p.reg('p'), got = p.reg('d'), wait = p.reg('p');
  const std::string spin = p.label("sk_spin"), ready = p.label("sk_ready");
  p.op("setp.eq.u32 ", leader, ", ", tid, ", 128");
  p.op("@!", leader, " bra ", ready);
  p.place(spin);
  p.op("ld.acquire.gpu.global.u64 ", got, ", [", flag, "]");
  p.op("setp.ne.u64 ", wait, ", ", got, ", ", want);
  p.op("@", wait, " nanosleep.u32 32");
  p.op("@", wait, " bra ", spin);
  p.place(ready);
  p.op("bar.sync ", kSplitBarrier, ", 256");
  // Four v4 loads at a time, then their 16 additions.
  for (int i0 = 0; i0 < 32; i0 += 4) {
    std::string v[4][4];
    for (int i = 0; i < 4; ++i) {
      for (std::string& r : v[i]) r = p.reg('f');
      p.op("ld.global.cg.v4.f32 {", v[i][0], ", ", v[i][1], ", ", v[i][2], ", ", v[i][3], "}, [",
           part, "+", 4096 * (i0 + i), "]");
    }
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 4; ++j) {
        const int a = 4 * (i0 + i) + j;
        p.op("add.rn.f32 %acc", a, ", %acc", a, ", ", v[i][j]);
      }
  }
  p.op("bra ", loop);
  p.place(done);
}

}  // namespace numr::cuda::sm90
