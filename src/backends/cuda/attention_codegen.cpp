// The attention kernels (attention_kernels.h): forward, backward_kv and backward_q, built
// from shared pieces (tile copies, tile products, the masked score).
#include <algorithm>
#include <array>
#include <initializer_list>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "backends/cuda/attention_kernels.h"
#include "codegen/ptx/builder.h"
#include "codegen/ptx/element_io.h"
#include "codegen/ptx/value.h"
#include "codegen/ptx/value_math.h"
#include "core/backend.h"
#include "numr/error.h"

namespace numr::cuda {
namespace {

using ptx::Cmp;
using ptx::KernelBuilder;
using ptx::PtxType;
using ptx::Reg;
using ptx::ShflMode;
using ptx::Value;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr int kUnroll = 4;  // steps of the tile products per loop trip
constexpr int kMmaThreads = 128;

int log2_of(int x) {
  int n = 0;
  while ((1 << n) < x) ++n;
  return n;
}

const char* kind_name(AttentionKernel k) {
  switch (k) {
    case AttentionKernel::forward: return "fwd";
    case AttentionKernel::backward_kv: return "bwdkv";
    case AttentionKernel::backward_q: return "bwdq";
  }
  return "?";
}

class AttentionGen {
 public:
  AttentionGen(KernelBuilder& b, const AttentionKernelConfig& cfg)
      : b_(b),
        dt_(cfg.dtype),
        es_(int(dtype_size(cfg.dtype))),
        t_(cfg.tile()),
        r_(cfg.tile() / 16),
        dp_(cfg.dmax),
        c_(cfg.dmax / 16),
        sd_(cfg.dmax + 1),
        sp_(cfg.tile() + 1) {
    q_ = b.param_ptr("q");
    k_ = b.param_ptr("k");
    v_ = b.param_ptr("v");
    mask_ = b.param_ptr("mask");
    o_ = b.param_ptr("o");
    lse_ = b.param_ptr("lse");
    delta_ = b.param_ptr("delta");
    dq_ = b.param_ptr("d_q");
    dk_ = b.param_ptr("d_k");
    dv_ = b.param_ptr("d_v");
    ow_ = b.param_ptr("o_wide");
    const Reg n1 = b.param(PtxType::u64, "n1");
    lq_ = b.param(PtxType::u64, "lq");
    lk_ = b.param(PtxType::u64, "lk");
    e_ = b.param(PtxType::u64, "e");
    ev_ = b.param(PtxType::u64, "ev");
    const Reg tiles = b.param(PtxType::u64, "tiles");
    scale_ = b.param(PtxType::f32, "scale");
    const Reg flags = b.param(PtxType::u32, "flags");
    const ptx::ParamArray st = b.param_array(PtxType::u64, kAttentionStrides, "strides");
    std::vector<Reg> s;
    for (int i = 0; i < kAttentionStrides; ++i) s.push_back(b.load_param(st, i));

    causal_ = b.setp(Cmp::ne, b.and_(flags, 1), 0);
    const Reg mask_kind = b.and_(b.shr(flags, 1), 3);
    mask_any_ = b.setp(Cmp::ne, mask_kind, 0);
    mask_bool_ = b.setp(Cmp::eq, mask_kind, 1);
    wide_ = b.setp(Cmp::ne, b.and_(flags, 8), 0);

    const Reg tid = b.tid_x();
    ty_ = b.shr(tid, 4);
    tx_ = b.and_(tid, 15);
    tid_ = tid;
    ty64_ = b.cvt(ty_, PtxType::u64);
    tx64_ = b.cvt(tx_, PtxType::u64);

    const Reg block = b.cvt(b.ctaid_x(), PtxType::u64);
    batch_ = b.div(block, tiles);
    tile_ = b.rem(block, tiles);
    const Reg i0 = b.div(batch_, n1), i1 = b.rem(batch_, n1);
    auto base = [&](Reg ptr, int first, Reg size) {
      return b.add(
          ptr, b.mul(b.add(b.mul(i0, s[size_t(first)]), b.mul(i1, s[size_t(first + 1)])), size));
    };
    const Reg es = b.mov(PtxType::u64, es_);
    qb_ = base(q_, 0, es);
    kb_ = base(k_, 3, es);
    vb_ = base(v_, 6, es);
    ob_ = base(o_, 9, es);
    msz_ = b.selp(mask_bool_, 1, es_, PtxType::u64);
    mb_ = base(mask_, 12, msz_);
    qr_ = s[2];
    kr_ = s[5];
    vr_ = s[8];
    or_ = s[11];
    mr_ = s[14];
    mc_ = s[15];
    e32_ = b.cvt(e_, PtxType::u32);
    ev32_ = b.cvt(ev_, PtxType::u32);
    smem_ = b.address_of(b.dynamic_shared("smem", PtxType::b32, 16));
  }

  void forward();
  void forward_mma();
  void backward_kv();
  void backward_q();

 private:
  int tile_bytes() const { return t_ * sd_ * 4; }
  int p_bytes() const { return t_ * sp_ * 4; }
  Reg shared_at(int offset) { return b_.add(smem_, offset); }
  // This thread's cell (ty, tx) of a shared score tile.
  Reg thread_cell(Reg p) { return b_.add(p, b_.shl(b_.mad(ty_, sp_, tx_), 2)); }

  // Rows [row0, row0 + tile) of a [rows, ncols] matrix at base (row stride rs elements,
  // column stride 1) into the shared tile dst as F32, zeros outside the matrix.
  void load_tile(Reg dst, Reg base, Reg row0, Reg rows, Reg ncols, Reg rs) {
    const int per = kAttentionThreads / dp_;  // rows per pass
    const Reg col = b_.and_(tid_, dp_ - 1);
    const Reg r0 = b_.shr(tid_, log2_of(dp_));
    const Reg col64 = b_.cvt(col, PtxType::u64);
    const Reg col_ok = b_.setp(Cmp::lt, col64, ncols);
    const Reg sdst = b_.add(dst, b_.shl(b_.mad(r0, sd_, col), 2));
    const Reg first = b_.add(row0, b_.cvt(r0, PtxType::u64));
    for (int pass = 0; pass < t_ / per; ++pass) {
      const int row = pass * per;
      const Reg gi = b_.add(first, row);
      const Reg val = b_.mov(PtxType::f32, 0.0);
      b_.if_then(b_.and_(col_ok, b_.setp(Cmp::lt, gi, rows)), [&] {
        const Reg addr = b_.add(base, b_.mul(b_.add(b_.mul(gi, rs), col64), es_));
        b_.assign(val, ptx::load_element(b_, dt_, addr, PtxType::f32).reg());
      });
      b_.st_shared(sdst, val, int64_t(row) * sd_ * 4);
    }
  }

  // s[r * R + c] = Σ_x a[ty + 16 r][x] bt[tx + 16 c][x] for x < n (u32) over two shared
  // tiles; the zeros past the head dim let the loop run to n rounded up.
  std::vector<Reg> dots(Reg a, Reg bt, Reg n) {
    std::vector<Reg> s;
    for (int i = 0; i < r_ * r_; ++i) s.push_back(b_.mov(PtxType::f32, 0.0));
    const Reg n_up = b_.and_(b_.add(n, kUnroll - 1), uint32_t(~uint32_t(kUnroll - 1)));
    const Reg arow = b_.add(a, b_.mul(ty_, sd_ * 4));
    const Reg brow = b_.add(bt, b_.mul(tx_, sd_ * 4));
    b_.for_range(0, n_up, kUnroll, PtxType::u32, [&](Reg x) {
      const Reg x4 = b_.shl(x, 2);
      const Reg pa = b_.add(arow, x4), pb = b_.add(brow, x4);
      for (int u = 0; u < kUnroll; ++u) {
        std::vector<Reg> av, bv;
        for (int r = 0; r < r_; ++r)
          av.push_back(b_.ld_shared(PtxType::f32, pa, (int64_t(r) * 16 * sd_ + u) * 4));
        for (int c = 0; c < r_; ++c)
          bv.push_back(b_.ld_shared(PtxType::f32, pb, (int64_t(c) * 16 * sd_ + u) * 4));
        for (int r = 0; r < r_; ++r)
          for (int c = 0; c < r_; ++c) {
            Reg& acc = s[size_t(r * r_ + c)];
            b_.assign(acc, b_.fma(av[size_t(r)], bv[size_t(c)], acc));
          }
      }
    });
    return s;
  }

  // acc[r * C + c] += Σ_y p[ty + 16 r][y] x[y][tx + 16 c] for y < tile: p a shared score
  // tile (stride tile + 1), x a shared row tile.
  void accumulate(std::vector<Reg>& acc, Reg p, Reg x) {
    const Reg prow = b_.add(p, b_.mul(ty_, sp_ * 4));
    const Reg xcol = b_.add(x, b_.shl(tx_, 2));
    b_.for_range(0, t_, kUnroll, PtxType::u32, [&](Reg y) {
      const Reg pp = b_.add(prow, b_.shl(y, 2));
      const Reg px = b_.add(xcol, b_.mul(y, sd_ * 4));
      for (int u = 0; u < kUnroll; ++u) {
        std::vector<Reg> pv, xv;
        for (int r = 0; r < r_; ++r)
          pv.push_back(b_.ld_shared(PtxType::f32, pp, (int64_t(r) * 16 * sp_ + u) * 4));
        for (int c = 0; c < c_; ++c)
          xv.push_back(b_.ld_shared(PtxType::f32, px, (int64_t(u) * sd_ + c * 16) * 4));
        for (int r = 0; r < r_; ++r)
          for (int c = 0; c < c_; ++c) {
            Reg& a = acc[size_t(r * c_ + c)];
            b_.assign(a, b_.fma(pv[size_t(r)], xv[size_t(c)], a));
          }
      }
    });
  }

  // The score of query i and key j (u64) from their dot product: scale * dot plus an
  // additive mask; -inf where the pair is outside the sequences, past the causal diagonal
  // or masked out.
  Reg score(Reg dot, Reg i, Reg j) {
    const Reg out = b_.mov(PtxType::f32, -kInf);
    Reg ok = b_.and_(b_.setp(Cmp::lt, i, lq_), b_.setp(Cmp::lt, j, lk_));
    ok = b_.and_(ok, b_.or_(b_.not_(causal_), b_.setp(Cmp::le, j, i)));
    b_.if_then(ok, [&] {
      const Reg x = b_.mul(dot, scale_);
      b_.assign(out, x);
      b_.if_then(mask_any_, [&] {
        const Reg addr = b_.add(mb_, b_.mul(b_.add(b_.mul(i, mr_), b_.mul(j, mc_)), msz_));
        b_.if_then_else(
            mask_bool_,
            [&] {
              const Reg keep = b_.ld_global(PtxType::u8, addr);
              b_.if_then(b_.setp(Cmp::eq, keep, 0), [&] { b_.assign(out, -kInf); });
            },
            [&] {
              b_.assign(out, b_.add(x, ptx::load_element(b_, dt_, addr, PtxType::f32).reg()));
            });
      });
    });
    return out;
  }

  // exp(x), exactly 0 for x = -inf (a key not kept, or a query with none: lse = +inf).
  Value exp0(const Value& x) {
    return select(x == Value::constant(PtxType::f32, -kInf), Value::constant(PtxType::f32, 0.0),
                  exp(x));
  }

  // v reduced over the 16 threads of a half warp (one ty), the same in each.
  Reg half_warp(Reg v, bool is_max) {
    for (int m = 1; m < 16; m *= 2) {
      const Reg o = b_.shfl(ShflMode::bfly, v, m);
      v = is_max ? b_.max(v, o) : b_.add(v, o);
    }
    return v;
  }

  // Loads the F32 element at ptr[index] (index u64) when ok, else `otherwise`.
  Reg load_row_value(Reg ptr, Reg index, Reg ok, double otherwise) {
    const Reg out = b_.mov(PtxType::f32, otherwise);
    b_.if_then(ok, [&] { b_.assign(out, b_.ld_global(PtxType::f32, b_.mad(index, 4, ptr))); });
    return out;
  }

  // The key tiles a query tile starting at q0 meets: all, or those up to the diagonal.
  Reg key_tiles_end(Reg q0) {
    const Reg all = b_.div(b_.add(lk_, t_ - 1), t_);
    const Reg last = b_.sub(b_.min(b_.add(q0, t_), lq_), 1);
    return b_.selp(causal_, b_.min(all, b_.add(b_.div(last, t_), 1)), all);
  }

  // Stores acc[r * C + c] * factor at out[(batch * rows + row0 + ty + 16 r) * ncols + col]
  // (elements of dtype t, the kernel's by default) for the rows below `rows` and the
  // columns col = tx + 16 c below ncols.
  void store_rows(const std::vector<Reg>& acc, Reg out, Reg row0, Reg rows, Reg ncols,
                  const std::vector<Reg>& factor, std::optional<DType> t = std::nullopt) {
    const DType st = t.value_or(dt_);
    for (int r = 0; r < r_; ++r) {
      const Reg row = b_.add(row0, b_.add(ty64_, 16 * r));
      b_.if_then(b_.setp(Cmp::lt, row, rows), [&] {
        const Reg line = b_.mul(b_.add(b_.mul(batch_, rows), row), ncols);
        for (int c = 0; c < c_; ++c) {
          const Reg col = b_.add(tx64_, 16 * c);
          b_.if_then(b_.setp(Cmp::lt, col, ncols), [&] {
            const Value y = Value(acc[size_t(r * c_ + c)]) * Value(factor[size_t(r)]);
            ptx::store_element(b_, st, b_.mad(b_.add(line, col), int64_t(dtype_size(st)), out), y);
          });
        }
      });
    }
  }

  std::vector<Reg> zeros(int n) {
    std::vector<Reg> v;
    for (int i = 0; i < n; ++i) v.push_back(b_.mov(PtxType::f32, 0.0));
    return v;
  }

  // Rows [row0, row0 + tile) of a [rows, ncols] F16/BF16 matrix into a shared tile of raw
  // 16-bit elements, `stride` elements a row, zeros outside the matrix; transposed: element
  // (r, c) goes to c * stride + r. kMmaThreads threads, a row's columns side by side.
  void load_half_tile(Reg dst, Reg base, Reg row0, Reg rows, Reg ncols, Reg rs, int stride,
                      bool transposed) {
    const int per = kMmaThreads / dp_;  // rows per pass
    const Reg col = b_.and_(tid_, dp_ - 1);
    const Reg r0 = b_.shr(tid_, log2_of(dp_));
    const Reg col64 = b_.cvt(col, PtxType::u64);
    const Reg col_ok = b_.setp(Cmp::lt, col64, ncols);
    const Reg cell = transposed ? b_.mad(col, stride, r0) : b_.mad(r0, stride, col);
    const Reg sdst = b_.add(dst, b_.shl(cell, 1));
    const Reg first = b_.add(row0, b_.cvt(r0, PtxType::u64));
    const PtxType ht = dt_ == DType::F16 ? PtxType::f16 : PtxType::bf16;
    for (int pass = 0; pass < t_ / per; ++pass) {
      const int row = pass * per;
      const Reg gi = b_.add(first, row);
      const Reg val = b_.mov(ht, 0.0);
      b_.if_then(b_.and_(col_ok, b_.setp(Cmp::lt, gi, rows)), [&] {
        const Reg addr = b_.add(base, b_.mul(b_.add(b_.mul(gi, rs), col64), 2));
        b_.assign(val, b_.ld_global(ht, addr));
      });
      b_.st_shared(sdst, val, int64_t(transposed ? row : row * stride) * 2);
    }
  }

  // d += a b over one m16n8k16 tile on the tensor cores: a four and b two registers of
  // packed 16-bit pairs, d four F32 registers updated in place.
  void mma(std::array<Reg, 4>& d, const std::array<Reg, 4>& a, const std::array<Reg, 2>& bf) {
    const char* t = dt_ == DType::F16 ? "f16" : "bf16";
    auto list = [](std::initializer_list<Reg> rs) {
      std::string out = "{";
      for (const Reg r : rs) out += (out.size() > 1 ? ", " : "") + ptx::reg_name(r);
      return out + "}";
    };
    b_.raw(std::string("mma.sync.aligned.m16n8k16.row.col.f32.") + t + "." + t + ".f32 " +
               list({d[0], d[1], d[2], d[3]}) + ", " + list({a[0], a[1], a[2], a[3]}) + ", " +
               list({bf[0], bf[1]}) + ", " + list({d[0], d[1], d[2], d[3]}),
           {d[0], d[1], d[2], d[3]},
           {a[0], a[1], a[2], a[3], bf[0], bf[1], d[0], d[1], d[2], d[3]});
  }

  // Two F32 values x0, x1 as packed 16-bit pairs (x0 in the low half): their rounding
  // (first) and the rounding of what that misses (second), so that first + second holds
  // each value to about 2^-17 relative, near F32.
  std::pair<Reg, Reg> split_pair(Reg x0, Reg x1) {
    const PtxType ht = dt_ == DType::F16 ? PtxType::f16 : PtxType::bf16;
    const Reg h0 = b_.cvt(x0, ht);
    const Reg h1 = b_.cvt(x1, ht);
    const Reg l0 = b_.cvt(b_.sub(x0, b_.cvt(h0, PtxType::f32)), ht);
    const Reg l1 = b_.cvt(b_.sub(x1, b_.cvt(h1, PtxType::f32)), ht);
    const Reg hi = b_.pack(h0, h1);
    return {hi, b_.pack(l0, l1)};
  }

  KernelBuilder& b_;
  DType dt_;
  int es_, t_, r_, dp_, c_, sd_, sp_;
  Reg q_, k_, v_, mask_, o_, lse_, delta_, dq_, dk_, dv_, ow_;
  Reg lq_, lk_, e_, ev_, e32_, ev32_, scale_;
  Reg causal_, mask_any_, mask_bool_, wide_;
  Reg tid_, ty_, tx_, ty64_, tx64_, batch_, tile_;
  Reg qb_, kb_, vb_, ob_, mb_, msz_, qr_, kr_, vr_, or_, mr_, mc_;
  Reg smem_;
};

void AttentionGen::forward() {
  KernelBuilder& b = b_;
  const Reg qs = shared_at(0), kv = shared_at(tile_bytes()), ps = shared_at(2 * tile_bytes());
  const Reg p_cell = thread_cell(ps);
  const Reg q0 = b.mul(tile_, t_);
  load_tile(qs, qb_, q0, lq_, e_, qr_);
  std::vector<Reg> acc = zeros(r_ * c_), m, l = zeros(r_), rows;
  for (int r = 0; r < r_; ++r) {
    m.push_back(b.mov(PtxType::f32, -kInf));
    rows.push_back(b.add(q0, b.add(ty64_, 16 * r)));
  }
  b.for_range(b.mov(PtxType::u64, 0), key_tiles_end(q0), 1, PtxType::u64, [&](Reg kt) {
    const Reg j0 = b.mul(kt, t_);
    b.bar_sync();  // the last tile's products are done with kv and ps
    load_tile(kv, kb_, j0, lk_, e_, kr_);
    b.bar_sync();
    const std::vector<Reg> s = dots(qs, kv, e32_);
    for (int r = 0; r < r_; ++r) {
      std::vector<Reg> sc;
      Reg mx = b.mov(PtxType::f32, -kInf);
      for (int c = 0; c < r_; ++c) {
        sc.push_back(
            score(s[size_t(r * r_ + c)], rows[size_t(r)], b.add(j0, b.add(tx64_, 16 * c))));
        mx = b.max(mx, sc.back());
      }
      const Reg m_new = b.max(m[size_t(r)], half_warp(mx, true));
      // A row with nothing kept yet stays at m = -inf; 0 stands in so that no -inf - -inf.
      const Reg m_use = b.selp(b.setp(Cmp::eq, m_new, -kInf), 0.0, m_new);
      const Value alpha = exp0(Value(m[size_t(r)]) - Value(m_use));
      Reg sum = b.mov(PtxType::f32, 0.0);
      for (int c = 0; c < r_; ++c) {
        const Value p = exp0(Value(sc[size_t(c)]) - Value(m_use));
        sum = b.add(sum, p.reg());
        b.st_shared(p_cell, p.reg(), (int64_t(r) * 16 * sp_ + c * 16) * 4);
      }
      b.assign(l[size_t(r)], b.fma(l[size_t(r)], alpha.reg(), half_warp(sum, false)));
      for (int c = 0; c < c_; ++c) {
        Reg& a = acc[size_t(r * c_ + c)];
        b.assign(a, b.mul(a, alpha.reg()));
      }
      b.assign(m[size_t(r)], m_new);
    }
    b.bar_sync();
    load_tile(kv, vb_, j0, lk_, ev_, vr_);
    b.bar_sync();
    accumulate(acc, ps, kv);
  });
  std::vector<Reg> inv;
  for (int r = 0; r < r_; ++r) {
    const Reg dead = b.setp(Cmp::eq, l[size_t(r)], 0.0);
    inv.push_back(b.selp(dead, 0.0, b.div(b.mov(PtxType::f32, 1.0), l[size_t(r)])));
    const Reg row = rows[size_t(r)];
    b.if_then(b.and_(b.setp(Cmp::lt, row, lq_), b.setp(Cmp::eq, tx_, 0)), [&] {
      const Value lse = Value(m[size_t(r)]) + log(Value(l[size_t(r)]));
      const Reg val = b.selp(dead, kInf, lse.reg());
      b.st_global(b.mad(b.add(b.mul(batch_, lq_), row), 4, lse_), val);
    });
  }
  store_rows(acc, o_, q0, lq_, ev_, inv);
  b.if_then(wide_, [&] { store_rows(acc, ow_, q0, lq_, ev_, inv, DType::F32); });
}

void AttentionGen::forward_mma() {
  KernelBuilder& b = b_;
  const int sh = dp_ + 8;  // 16-bit elements per row of the q and k tiles
  const int svt = t_ + 8;  // per row of the transposed v tile
  const Reg qs = shared_at(0), ks = shared_at(t_ * sh * 2), vts = shared_at(2 * t_ * sh * 2);
  const Reg lane = b.and_(tid_, 31), warp = b.shr(tid_, 5);
  const Reg g = b.shr(lane, 2), tig = b.and_(lane, 3);
  const Reg q0 = b.mul(tile_, t_);
  load_half_tile(qs, qb_, q0, lq_, e_, qr_, sh, false);
  const Reg wrow = b.add(b.shl(warp, 4), g);  // the thread's first row in the tile
  const std::array<Reg, 2> rows = {b.add(q0, b.cvt(wrow, PtxType::u64)),
                                   b.add(q0, b.cvt(b.add(wrow, 8), PtxType::u64))};
  b.bar_sync();
  // The warp's 16 query rows as A fragments, one set per 16 columns of the head dim.
  const int ksteps = dp_ / 16, ntiles = dp_ / 8, key_tiles = t_ / 8;
  std::vector<std::array<Reg, 4>> qa;
  const Reg qa_at = b.add(qs, b.shl(b.mad(wrow, sh, b.shl(tig, 1)), 1));
  for (int kk = 0; kk < ksteps; ++kk) {
    const int64_t at = int64_t(kk) * 32;
    qa.push_back({b.ld_shared(PtxType::b32, qa_at, at),
                  b.ld_shared(PtxType::b32, qa_at, at + 8 * sh * 2),
                  b.ld_shared(PtxType::b32, qa_at, at + 16),
                  b.ld_shared(PtxType::b32, qa_at, at + 8 * sh * 2 + 16)});
  }
  std::vector<std::array<Reg, 4>> acc(static_cast<size_t>(ntiles));
  for (auto& a : acc)
    for (Reg& r : a) r = b.mov(PtxType::f32, 0.0);
  std::array<Reg, 2> m = {b.mov(PtxType::f32, -kInf), b.mov(PtxType::f32, -kInf)};
  std::array<Reg, 2> l = {b.mov(PtxType::f32, 0.0),
                          b.mov(PtxType::f32, 0.0)};  // this thread's part
  const Reg kb_at = b.add(ks, b.shl(b.mad(g, sh, b.shl(tig, 1)), 1));
  const Reg vb_at = b.add(vts, b.shl(b.mad(g, svt, b.shl(tig, 1)), 1));
  const Reg key_off = b.cvt(b.shl(tig, 1), PtxType::u64);
  b.for_range(b.mov(PtxType::u64, 0), key_tiles_end(q0), 1, PtxType::u64, [&](Reg kt) {
    const Reg j0 = b.mul(kt, t_);
    b.bar_sync();  // the last tile's products are done with ks and vts
    load_half_tile(ks, kb_, j0, lk_, e_, kr_, sh, false);
    load_half_tile(vts, vb_, j0, lk_, ev_, vr_, svt, true);
    b.bar_sync();
    // s = q k^T: per 8 keys, c0 c1 at row g and c2 c3 at row g + 8, keys 2 tig and 2 tig + 1.
    std::vector<std::array<Reg, 4>> s(static_cast<size_t>(key_tiles));
    for (int nt = 0; nt < key_tiles; ++nt) {
      for (Reg& r : s[size_t(nt)]) r = b.mov(PtxType::f32, 0.0);
      for (int kk = 0; kk < ksteps; ++kk) {
        const int64_t at = (int64_t(nt) * 8 * sh + kk * 16) * 2;
        mma(s[size_t(nt)], qa[size_t(kk)],
            {b.ld_shared(PtxType::b32, kb_at, at), b.ld_shared(PtxType::b32, kb_at, at + 16)});
      }
      const Reg key = b.add(b.add(j0, key_off), nt * 8);
      for (int e = 0; e < 4; ++e)
        s[size_t(nt)][size_t(e)] =
            score(s[size_t(nt)][size_t(e)], rows[size_t(e / 2)], e % 2 ? b.add(key, 1) : key);
    }
    // The online softmax of rows g (h = 0) and g + 8 (h = 1), over the 4 threads of a row.
    for (int h = 0; h < 2; ++h) {
      Reg mx = b.mov(PtxType::f32, -kInf);
      for (int nt = 0; nt < key_tiles; ++nt)
        for (int e = 2 * h; e < 2 * h + 2; ++e) mx = b.max(mx, s[size_t(nt)][size_t(e)]);
      for (int x = 1; x < 4; x *= 2) mx = b.max(mx, b.shfl(ShflMode::bfly, mx, x));
      const Reg m_new = b.max(m[size_t(h)], mx);
      const Reg m_use = b.selp(b.setp(Cmp::eq, m_new, -kInf), 0.0, m_new);
      const Value alpha = exp0(Value(m[size_t(h)]) - Value(m_use));
      Reg sum = b.mov(PtxType::f32, 0.0);
      for (int nt = 0; nt < key_tiles; ++nt)
        for (int e = 2 * h; e < 2 * h + 2; ++e) {
          Reg& x = s[size_t(nt)][size_t(e)];
          x = exp0(Value(x) - Value(m_use)).reg();
          sum = b.add(sum, x);
        }
      b.assign(l[size_t(h)], b.fma(l[size_t(h)], alpha.reg(), sum));
      for (auto& a : acc)
        for (int e = 2 * h; e < 2 * h + 2; ++e)
          b.assign(a[size_t(e)], b.mul(a[size_t(e)], alpha.reg()));
      b.assign(m[size_t(h)], m_new);
    }
    // acc += p v: p is the A fragment as the scores' tiles lie, in two 16-bit parts (the
    // rounding and its remainder) so that p is not rounded to 16 bits.
    for (int kk = 0; kk < key_tiles / 2; ++kk) {
      const auto& s0 = s[size_t(2 * kk)];
      const auto& s1 = s[size_t(2 * kk + 1)];
      const std::pair<Reg, Reg> a0 = split_pair(s0[0], s0[1]), a1 = split_pair(s0[2], s0[3]),
                                a2 = split_pair(s1[0], s1[1]), a3 = split_pair(s1[2], s1[3]);
      const std::array<Reg, 4> hi = {a0.first, a1.first, a2.first, a3.first};
      const std::array<Reg, 4> lo = {a0.second, a1.second, a2.second, a3.second};
      for (int nt = 0; nt < ntiles; ++nt) {
        const int64_t at = (int64_t(nt) * 8 * svt + kk * 16) * 2;
        const std::array<Reg, 2> vf = {b.ld_shared(PtxType::b32, vb_at, at),
                                       b.ld_shared(PtxType::b32, vb_at, at + 16)};
        mma(acc[size_t(nt)], hi, vf);
        mma(acc[size_t(nt)], lo, vf);
      }
    }
  });
  const Reg col0 = b.cvt(b.shl(tig, 1), PtxType::u64);
  for (int h = 0; h < 2; ++h) {
    Reg lt = l[size_t(h)];
    for (int x = 1; x < 4; x *= 2) lt = b.add(lt, b.shfl(ShflMode::bfly, lt, x));
    const Reg dead = b.setp(Cmp::eq, lt, 0.0);
    const Reg inv = b.selp(dead, 0.0, b.div(b.mov(PtxType::f32, 1.0), lt));
    const Reg row = rows[size_t(h)];
    b.if_then(b.setp(Cmp::lt, row, lq_), [&] {
      const Reg line = b.mul(b.add(b.mul(batch_, lq_), row), ev_);
      b.if_then(b.setp(Cmp::eq, tig, 0), [&] {
        const Value lse = Value(m[size_t(h)]) + log(Value(lt));
        b.st_global(b.mad(b.add(b.mul(batch_, lq_), row), 4, lse_), b.selp(dead, kInf, lse.reg()));
      });
      for (int nt = 0; nt < ntiles; ++nt)
        for (int e = 2 * h; e < 2 * h + 2; ++e) {
          const Reg col = b.add(col0, nt * 8 + e % 2);
          b.if_then(b.setp(Cmp::lt, col, ev_), [&] {
            const Value y = Value(acc[size_t(nt)][size_t(e)]) * Value(inv);
            ptx::store_element(b, dt_, b.mad(b.add(line, col), es_, o_), y);
            b.if_then(wide_, [&] { b.st_global(b.mad(b.add(line, col), 4, ow_), y.reg()); });
          });
        }
    });
  }
}

void AttentionGen::backward_kv() {
  KernelBuilder& b = b_;
  const Reg ks = shared_at(0), vs = shared_at(tile_bytes()), qs = shared_at(2 * tile_bytes()),
            gs = shared_at(3 * tile_bytes()), ps = shared_at(4 * tile_bytes()),
            dss = shared_at(4 * tile_bytes() + p_bytes());
  const Reg p_cell = thread_cell(ps), ds_cell = thread_cell(dss);
  const Reg j0 = b.mul(tile_, t_);
  load_tile(ks, kb_, j0, lk_, e_, kr_);
  load_tile(vs, vb_, j0, lk_, ev_, vr_);
  std::vector<Reg> dk = zeros(r_ * c_), dv = zeros(r_ * c_), keys;
  for (int r = 0; r < r_; ++r) keys.push_back(b.add(j0, b.add(ty64_, 16 * r)));
  const Reg q_tiles = b.div(b.add(lq_, t_ - 1), t_);
  // Causal: the queries before j0 keep none of these keys.
  const Reg first = b.selp(causal_, b.div(j0, t_), b.mov(PtxType::u64, 0));
  b.for_range(first, q_tiles, 1, PtxType::u64, [&](Reg qt) {
    const Reg q0 = b.mul(qt, t_);
    b.bar_sync();  // the last tile's products are done with qs, gs, ps and dss
    load_tile(qs, qb_, q0, lq_, e_, qr_);
    load_tile(gs, ob_, q0, lq_, ev_, or_);
    b.bar_sync();
    const std::vector<Reg> s = dots(ks, qs, e32_);
    const std::vector<Reg> dp = dots(vs, gs, ev32_);
    std::vector<Reg> qi, lse, delta;
    for (int c = 0; c < r_; ++c) {
      qi.push_back(b.add(q0, b.add(tx64_, 16 * c)));
      const Reg ok = b.setp(Cmp::lt, qi.back(), lq_);
      const Reg at = b.add(b.mul(batch_, lq_), qi.back());
      lse.push_back(load_row_value(lse_, at, ok, kInf));
      delta.push_back(load_row_value(delta_, at, ok, 0.0));
    }
    for (int r = 0; r < r_; ++r)
      for (int c = 0; c < r_; ++c) {
        const size_t rc = size_t(r * r_ + c);
        const Reg sc = score(s[rc], qi[size_t(c)], keys[size_t(r)]);
        const Value p = exp0(Value(sc) - Value(lse[size_t(c)]));
        const Value ds = p * (Value(dp[rc]) - Value(delta[size_t(c)]));
        const int64_t at = (int64_t(r) * 16 * sp_ + c * 16) * 4;
        b.st_shared(p_cell, p.reg(), at);
        b.st_shared(ds_cell, ds.reg(), at);
      }
    b.bar_sync();
    accumulate(dv, ps, gs);
    accumulate(dk, dss, qs);
  });
  std::vector<Reg> scale(size_t(r_), scale_), one;
  for (int r = 0; r < r_; ++r) one.push_back(b.mov(PtxType::f32, 1.0));
  store_rows(dk, dk_, j0, lk_, e_, scale);
  store_rows(dv, dv_, j0, lk_, ev_, one);
}

void AttentionGen::backward_q() {
  KernelBuilder& b = b_;
  const Reg qs = shared_at(0), gs = shared_at(tile_bytes()), ks = shared_at(2 * tile_bytes()),
            vs = shared_at(3 * tile_bytes()), dss = shared_at(4 * tile_bytes());
  const Reg ds_cell = thread_cell(dss);
  const Reg q0 = b.mul(tile_, t_);
  load_tile(qs, qb_, q0, lq_, e_, qr_);
  load_tile(gs, ob_, q0, lq_, ev_, or_);
  std::vector<Reg> dq = zeros(r_ * c_), rows, lse, delta;
  for (int r = 0; r < r_; ++r) {
    rows.push_back(b.add(q0, b.add(ty64_, 16 * r)));
    const Reg ok = b.setp(Cmp::lt, rows.back(), lq_);
    const Reg at = b.add(b.mul(batch_, lq_), rows.back());
    lse.push_back(load_row_value(lse_, at, ok, kInf));
    delta.push_back(load_row_value(delta_, at, ok, 0.0));
  }
  b.for_range(b.mov(PtxType::u64, 0), key_tiles_end(q0), 1, PtxType::u64, [&](Reg kt) {
    const Reg j0 = b.mul(kt, t_);
    b.bar_sync();  // the last tile's products are done with ks and dss
    load_tile(ks, kb_, j0, lk_, e_, kr_);
    load_tile(vs, vb_, j0, lk_, ev_, vr_);
    b.bar_sync();
    const std::vector<Reg> s = dots(qs, ks, e32_);
    const std::vector<Reg> dp = dots(gs, vs, ev32_);
    for (int r = 0; r < r_; ++r)
      for (int c = 0; c < r_; ++c) {
        const size_t rc = size_t(r * r_ + c);
        const Reg sc = score(s[rc], rows[size_t(r)], b.add(j0, b.add(tx64_, 16 * c)));
        const Value p = exp0(Value(sc) - Value(lse[size_t(r)]));
        const Value ds = p * (Value(dp[rc]) - Value(delta[size_t(r)]));
        b.st_shared(ds_cell, ds.reg(), (int64_t(r) * 16 * sp_ + c * 16) * 4);
      }
    b.bar_sync();
    accumulate(dq, dss, ks);
  });
  std::vector<Reg> scale(size_t(r_), scale_);
  store_rows(dq, dq_, q0, lq_, e_, scale);
}

}  // namespace

int AttentionKernelConfig::threads() const { return mma ? kMmaThreads : kAttentionThreads; }

int AttentionKernelConfig::tile() const {
  return kind != AttentionKernel::forward && dmax > 64 ? 32 : 64;
}

int64_t AttentionKernelConfig::shared_bytes() const {
  const int64_t t = tile(), rows = t * (dmax + 1) * 4, p = t * (t + 1) * 4;
  // The tensor-core forward: q and k tiles of 16-bit rows padded by 8, v transposed.
  if (mma) return 2 * t * (dmax + 8) * 2 + int64_t(dmax) * (t + 8) * 2;
  switch (kind) {
    case AttentionKernel::forward: return 2 * rows + p;
    case AttentionKernel::backward_kv: return 4 * rows + 2 * p;
    case AttentionKernel::backward_q: return 4 * rows + p;
  }
  return 0;
}

std::string AttentionKernelConfig::name() const {
  return "attention_" + std::string(kind_name(kind)) + "_" + std::string(dtype_name(dtype)) + "_d" +
         std::to_string(dmax) + (mma ? "_mma" : "");
}

int attention_dmax(int64_t e, int64_t ev) {
  const int64_t d = std::max(e, ev);
  for (int m : {32, 64, 128, 256})
    if (d <= m) return m;
  fail<BackendError>("scaled_dot_product_attention", "head dim ", d, " is above the kernels' ",
                     kAttentionMaxDim);
}

GeneratedKernel generate_attention_kernel(const AttentionKernelConfig& cfg,
                                          const ptx::Target& target) {
  const bool dtype_ok =
      cfg.dtype == DType::F32 || cfg.dtype == DType::F16 || cfg.dtype == DType::BF16;
  const bool dmax_ok = cfg.dmax == 32 || cfg.dmax == 64 || cfg.dmax == 128 || cfg.dmax == 256;
  const bool mma_ok = !cfg.mma || (cfg.kind == AttentionKernel::forward &&
                                   cfg.dtype != DType::F32 && cfg.dmax <= 128);
  if (!dtype_ok || !dmax_ok || !mma_ok)
    fail<BackendError>("cuda", "attention: invalid kernel configuration ", cfg.name());
  KernelBuilder b(cfg.name(), target);
  // Accurate f32 exp and log and IEEE division: the scores of every dtype are F32.
  ptx::FormulaScope scope(b, PtxType::f32);
  AttentionGen gen(b, cfg);
  switch (cfg.kind) {
    case AttentionKernel::forward:
      if (cfg.mma)
        gen.forward_mma();
      else
        gen.forward();
      break;
    case AttentionKernel::backward_kv: gen.backward_kv(); break;
    case AttentionKernel::backward_q: gen.backward_q(); break;
  }
  return {cfg.name(), b.finish()};
}

}  // namespace numr::cuda
