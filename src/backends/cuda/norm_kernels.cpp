#include "backends/cuda/norm_kernels.h"

#include <functional>
#include <vector>

#include "backends/cuda/reduce_codegen.h"
#include "backends/cuda/reduce_state.h"
#include "codegen/ptx/element_io.h"
#include "codegen/ptx/value_math.h"
#include "numr/error.h"

namespace numr::cuda {

using ptx::Cmp;
using ptx::KernelBuilder;
using ptx::PtxType;
using ptx::Reg;
using ptx::ShflMode;
using ptx::Space;
using ptx::Value;

namespace {

constexpr int kWarps = kNormBlock / 32;
// Vectors of each tensor a thread loads before using any, so that several 16-byte loads
// per thread are in flight.
constexpr int kUnroll = 4;

// The threads of one row: a warp or the whole block.
struct RowGroup {
  Reg tid, size;   // u64: the thread's index in the group, the group's threads
  Reg lane, warp;  // u32
  bool block = false;
};

// Calls body(g, row) for each row this group handles (grid-stride). For blocks the loop is
// uniform, so body may hold barriers.
void for_each_row(KernelBuilder& b, bool block, Reg rows,
                  const std::function<void(const RowGroup&, Reg)>& body) {
  const Reg tid = b.tid_x();
  RowGroup g;
  g.lane = b.and_(tid, 31);
  g.warp = b.shr(tid, 5);
  g.block = block;
  if (!block) {
    g.tid = wide(b, g.lane);
    g.size = b.mov(PtxType::u64, 32);
    const Reg first = b.mad(wide(b, b.ctaid_x()), kWarps, wide(b, g.warp));
    const Reg step = b.mul(wide(b, b.nctaid_x()), kWarps);
    b.for_range(first, rows, step, PtxType::u64, [&](Reg k) { body(g, k); });
  } else {
    g.tid = wide(b, tid);
    g.size = b.mov(PtxType::u64, kNormBlock);
    b.for_range(wide(b, b.ctaid_x()), rows, wide(b, b.nctaid_x()), PtxType::u64,
                [&](Reg k) { body(g, k); });
  }
}

using Raws = std::vector<std::vector<Reg>>;  // per tensor, the raw elements of one unit

// Calls visit(first, raws) for the elements [0, len) of a row, shared among the group's
// threads in units of vec elements (vec > 1: 16-byte vectors, so every base is 16-byte
// aligned and len a multiple of vec). raws[t] holds the unit's elements of the row that
// starts at bases[t] (u64 addresses); first (u64) is the unit's first element index.
void walk_row(KernelBuilder& b, DType d, int vec, const std::vector<Reg>& bases, Reg len,
              const RowGroup& g, const std::function<void(Reg, const Raws&)>& visit) {
  const int size = int(dtype_size(d));
  const Reg units = vec > 1 ? b.div(len, vec) : len;
  const auto load = [&](Reg u) {
    Raws raws;
    const Reg off = b.mul(u, int64_t(vec) * size);
    for (const Reg base : bases) {
      const Reg at = b.add(base, off);
      raws.push_back(vec > 1 ? load_raw_vector(b, d, at) : std::vector<Reg>{load_raw(b, d, at)});
    }
    return raws;
  };
  const Reg u = b.mov(PtxType::u64, g.tid);
  const Reg span = b.mul(g.size, kUnroll - 1);
  b.while_loop([&] { return b.setp(Cmp::lt, b.add(u, span), units); },
               [&] {
                 std::vector<Raws> raws;
                 std::vector<Reg> at;
                 for (int i = 0; i < kUnroll; ++i) {
                   at.push_back(i ? b.add(at.back(), g.size) : u);
                   raws.push_back(load(at.back()));
                 }
                 for (int i = 0; i < kUnroll; ++i)
                   visit(b.mul(at[size_t(i)], vec), raws[size_t(i)]);
                 b.assign(u, b.add(at.back(), g.size));
               });
  b.while_loop([&] { return b.setp(Cmp::lt, u, units); },
               [&] {
                 visit(b.mul(u, vec), load(u));
                 b.assign(u, b.add(u, g.size));
               });
}

// The sums of v over the group, the same in every thread (a butterfly gives each lane the
// same sums, since a + b == b + a; the warps' sums are then added in warp order). Block:
// through buf (kWarps * v.size() values) behind one barrier; buf may be written again only
// after a later barrier that every thread passes once it has read.
std::vector<Value> group_sum(KernelBuilder& b, const RowGroup& g, std::vector<Value> v, Reg buf) {
  for (int m = 16; m >= 1; m /= 2)
    for (Value& x : v) x = x + Value(b.shfl(ShflMode::bfly, x.reg(), m));
  if (!g.block) return v;
  const int size = ptx::type_size(v[0].type());
  const int k = int(v.size());
  const Reg mine = b.mad(g.warp, k * size, buf);
  b.if_then(b.setp(Cmp::eq, g.lane, 0), [&] {
    for (int i = 0; i < k; ++i) b.st_shared(mine, v[size_t(i)].reg(), int64_t(i) * size);
  });
  b.bar_sync();
  std::vector<Value> r;
  for (int i = 0; i < k; ++i) {
    Value s(b.ld_shared(v[0].type(), buf, int64_t(i) * size));
    for (int w = 1; w < kWarps; ++w)
      s = s + Value(b.ld_shared(v[0].type(), buf, (int64_t(w) * k + i) * size));
    r.push_back(s);
  }
  return r;
}

// A register of type t holding 0, updated in place by the walks.
Reg zero(KernelBuilder& b, PtxType t) { return b.mov(t, Value::constant(t, 0.0).reg()); }

void add_to(KernelBuilder& b, Reg acc, const Value& v) { b.assign(acc, (Value(acc) + v).reg()); }

// Stores the unit's raw outputs at row + first elements.
void store_unit(KernelBuilder& b, DType d, int vec, Reg row, Reg first,
                const std::vector<Reg>& raw) {
  const Reg at = b.mad(first, int64_t(dtype_size(d)), row);
  if (vec > 1)
    store_raw_vector(b, d, at, raw);
  else
    b.st(Space::global, ptx::storage_mem_type(d), at, raw[0]);
}

void gen_forward(KernelBuilder& b, const NormKernelConfig& cfg, PtxType acc) {
  const DType dt = cfg.dtype;
  const int size = int(dtype_size(dt));
  const int acc_size = ptx::type_size(acc);
  const int vec = cfg.vec;
  const bool centred = cfg.centred();
  const Reg x = b.param_ptr("x");
  const Reg w = b.param_ptr("weight");
  const Reg bias = b.param_ptr("bias");
  const Reg out = b.param_ptr("out");
  const Reg mean = b.param_ptr("mean");
  const Reg rstd = b.param_ptr("rstd");
  const Reg rows = b.param(PtxType::u64, "rows");
  const Reg d = b.param(PtxType::u64, "d");
  const Reg eps64 = b.param(PtxType::f64, "eps");
  Reg buf_mean{}, buf_var{};
  if (cfg.block) {
    // One buffer per reduction of a row (see group_sum); a barrier ends each row.
    buf_mean = b.address_of(b.shared_array(acc, kWarps, "mean_sums", 16));
    buf_var = b.address_of(b.shared_array(acc, kWarps, "var_sums", 16));
  }
  const Value n(b.cvt(d, acc));
  const Value eps(acc == PtxType::f64 ? eps64 : b.cvt(eps64, acc));
  for_each_row(b, cfg.block, rows, [&](const RowGroup& g, Reg k) {
    const Reg row_off = b.mul(b.mul(k, d), size);
    const Reg x_row = b.add(x, row_off), out_row = b.add(out, row_off);
    Value mu = Value::constant(acc, 0.0);
    if (centred) {
      const Reg s = zero(b, acc);
      walk_row(b, dt, vec, {x_row}, d, g, [&](Reg, const Raws& r) {
        for (const Reg e : r[0]) add_to(b, s, ptx::from_storage(b, e, dt, acc));
      });
      mu = group_sum(b, g, {Value(s)}, buf_mean)[0] / n;
    }
    // Σ(x - mean)² (rms: Σx²) from the row read again.
    const Reg ss = zero(b, acc);
    walk_row(b, dt, vec, {x_row}, d, g, [&](Reg, const Raws& r) {
      for (const Reg e : r[0]) {
        Value t = ptx::from_storage(b, e, dt, acc);
        if (centred) t = t - mu;
        add_to(b, ss, t * t);
      }
    });
    const Value var = group_sum(b, g, {Value(ss)}, buf_var)[0] / n;
    const Value rs = Value::constant(acc, 1.0) / sqrt(var + eps);
    std::vector<Reg> bases = {x_row, w};
    if (centred) bases.push_back(bias);
    walk_row(b, dt, vec, bases, d, g, [&](Reg first, const Raws& r) {
      std::vector<Reg> ys;
      for (size_t e = 0; e < r[0].size(); ++e) {
        Value t = ptx::from_storage(b, r[0][e], dt, acc);
        if (centred) t = t - mu;
        Value y = t * rs * ptx::from_storage(b, r[1][e], dt, acc);
        if (centred) y = y + ptx::from_storage(b, r[2][e], dt, acc);
        ys.push_back(ptx::to_storage(b, y, dt));
      }
      store_unit(b, dt, vec, out_row, first, ys);
    });
    if (cfg.stats)
      b.if_then(b.setp(Cmp::eq, g.tid, 0), [&] {
        if (centred) b.st_global(b.mad(k, acc_size, mean), mu.reg());
        b.st_global(b.mad(k, acc_size, rstd), rs.reg());
      });
    // Every thread has read this row's shared sums before the next row writes them.
    if (cfg.block) b.bar_sync();
  });
}

// The forward with the row in registers: thread t holds units t, t + G, ... (G threads in
// the group) of its row, slot by slot. Slots past the row's end for the whole group are
// skipped (uniform: the test depends on d only); within a slot, threads past the end load
// the row's last unit (so no load is conditional) and count as 0 in both sums. Needs
// vec > 1 and d <= norm_regs_capacity.
void gen_forward_regs(KernelBuilder& b, const NormKernelConfig& cfg, PtxType acc) {
  const DType dt = cfg.dtype;
  const int acc_size = ptx::type_size(acc);
  const int vec = cfg.vec;
  const int slots = norm_reg_slots(dt);
  const bool centred = cfg.centred();
  const Reg x = b.param_ptr("x");
  const Reg w = b.param_ptr("weight");
  const Reg bias = b.param_ptr("bias");
  const Reg out = b.param_ptr("out");
  const Reg mean = b.param_ptr("mean");
  const Reg rstd = b.param_ptr("rstd");
  const Reg rows = b.param(PtxType::u64, "rows");
  const Reg d = b.param(PtxType::u64, "d");
  const Reg eps64 = b.param(PtxType::f64, "eps");
  Reg buf_mean{}, buf_var{};
  if (cfg.block) {
    buf_mean = b.address_of(b.shared_array(acc, kWarps, "mean_sums", 16));
    buf_var = b.address_of(b.shared_array(acc, kWarps, "var_sums", 16));
  }
  const Value n(b.cvt(d, acc));
  const Value eps(acc == PtxType::f64 ? eps64 : b.cvt(eps64, acc));
  const Value zero_v = Value::constant(acc, 0.0);
  const Reg units = b.div(d, vec);
  const Reg last = b.sub(units, 1);
  const size_t ns = size_t(slots);
  for_each_row(b, cfg.block, rows, [&](const RowGroup& g, Reg k) {
    const Reg row_off = b.mul(b.mul(k, d), int64_t(dtype_size(dt)));
    const Reg x_row = b.add(x, row_off), out_row = b.add(out, row_off);
    std::vector<Reg> j, valid, active;
    for (int i = 0; i < slots; ++i) {
      j.push_back(b.add(g.tid, b.mul(g.size, i)));
      valid.push_back(b.setp(Cmp::lt, j.back(), units));
      active.push_back(b.setp(Cmp::gt, units, b.mul(g.size, i)));
    }
    // Every load of the thread first, so that they are all in flight together.
    std::vector<std::vector<Reg>> raw(ns), xs(ns);
    for (size_t i = 0; i < ns; ++i)
      b.if_then(active[i],
                [&] { raw[i] = load_raw_vector(b, dt, b.mad(b.min(j[i], last), 16, x_row)); });
    const Reg s = zero(b, acc);
    for (size_t i = 0; i < ns; ++i) {
      for (int e = 0; e < vec; ++e) xs[i].push_back(zero(b, acc));
      b.if_then(active[i], [&] {
        for (size_t e = 0; e < size_t(vec); ++e) {
          const Value xe =
              select(ptx::Mask(valid[i]), ptx::from_storage(b, raw[i][e], dt, acc), zero_v);
          b.assign(xs[i][e], xe.reg());
          if (centred) add_to(b, s, xe);
        }
      });
    }
    Value mu = zero_v;
    if (centred) mu = group_sum(b, g, {Value(s)}, buf_mean)[0] / n;
    const Reg ss = zero(b, acc);
    for (size_t i = 0; i < ns; ++i)
      b.if_then(active[i], [&] {
        for (size_t e = 0; e < size_t(vec); ++e) {
          const Value t = centred ? Value(xs[i][e]) - mu : Value(xs[i][e]);
          add_to(b, ss, select(ptx::Mask(valid[i]), t * t, zero_v));
        }
      });
    const Value var = group_sum(b, g, {Value(ss)}, buf_var)[0] / n;
    const Value rs = Value::constant(acc, 1.0) / sqrt(var + eps);
    for (size_t i = 0; i < ns; ++i)
      b.if_then(b.and_(active[i], valid[i]), [&] {
        const std::vector<Reg> wr = load_raw_vector(b, dt, b.mad(j[i], 16, w));
        std::vector<Reg> br;
        if (centred) br = load_raw_vector(b, dt, b.mad(j[i], 16, bias));
        std::vector<Reg> ys;
        for (size_t e = 0; e < size_t(vec); ++e) {
          const Value t = centred ? Value(xs[i][e]) - mu : Value(xs[i][e]);
          Value y = t * rs * ptx::from_storage(b, wr[e], dt, acc);
          if (centred) y = y + ptx::from_storage(b, br[e], dt, acc);
          ys.push_back(ptx::to_storage(b, y, dt));
        }
        store_raw_vector(b, dt, b.mad(j[i], 16, out_row), ys);
      });
    if (cfg.stats)
      b.if_then(b.setp(Cmp::eq, g.tid, 0), [&] {
        if (centred) b.st_global(b.mad(k, acc_size, mean), mu.reg());
        b.st_global(b.mad(k, acc_size, rstd), rs.reg());
      });
    if (cfg.block) b.bar_sync();
  });
}

void gen_backward_rows(KernelBuilder& b, const NormKernelConfig& cfg, PtxType acc) {
  const DType dt = cfg.dtype;
  const int size = int(dtype_size(dt));
  const int acc_size = ptx::type_size(acc);
  const int vec = cfg.vec;
  const bool centred = cfg.centred();
  const Reg grad = b.param_ptr("grad");
  const Reg x = b.param_ptr("x");
  const Reg w = b.param_ptr("weight");
  const Reg mean = b.param_ptr("mean");
  const Reg rstd = b.param_ptr("rstd");
  const Reg d_x = b.param_ptr("d_x");
  const Reg d_weight = b.param_ptr("d_weight");
  const Reg d_bias = b.param_ptr("d_bias");
  const Reg partials = b.param_ptr("partials");
  const Reg rows = b.param(PtxType::u64, "rows");
  const Reg d = b.param(PtxType::u64, "d");
  Reg buf{};
  if (cfg.block) buf = b.address_of(b.shared_array(acc, 2 * kWarps, "sums", 16));
  const Value n(b.cvt(d, acc));
  // Fused: the column sums of the group's rows in its own shared region (see the header).
  const int sums = centred ? 2 : 1;
  const Reg tid = b.tid_x();
  Reg cols{}, region{}, region_bias{};
  if (cfg.fused) {
    cols = b.address_of(b.dynamic_shared("cols", acc, 16));
    const Reg span = b.cvt(b.mul(d, int64_t(sums) * acc_size), PtxType::u32);  // one region
    region = cfg.block ? cols : b.mad(b.shr(tid, 5), span, cols);
    region_bias = b.add(region, b.cvt(b.mul(d, acc_size), PtxType::u32));
    const Reg total = b.mul(d, int64_t(sums) * (cfg.block ? 1 : kWarps));
    b.for_range(wide(b, tid), total, int64_t(kNormBlock), PtxType::u64, [&](Reg i) {
      b.st_shared(b.mad(b.cvt(i, PtxType::u32), acc_size, cols), zero(b, acc));
    });
    b.bar_sync();
  }
  // Adds v to the unit's columns [first, first + v.size()) of a region (u32 address).
  const auto add_columns = [&](Reg base, Reg first, const std::vector<Value>& v) {
    const Reg at = b.mad(b.cvt(first, PtxType::u32), acc_size, base);
    const int chunk = 16 / acc_size;
    if (v.size() == 1 || int(v.size()) % chunk != 0) {
      for (size_t e = 0; e < v.size(); ++e) {
        const int64_t off = int64_t(e) * acc_size;
        b.st_shared(at, (Value(b.ld_shared(acc, at, off)) + v[e]).reg(), off);
      }
      return;
    }
    for (size_t c = 0; c < v.size(); c += size_t(chunk)) {
      const int64_t off = int64_t(c) * acc_size;
      const std::vector<Reg> old = b.ld_shared_v(acc, chunk, at, off);
      std::vector<Reg> sum;
      for (size_t e = 0; e < size_t(chunk); ++e) sum.push_back((Value(old[e]) + v[c + e]).reg());
      b.st_shared_v(at, sum, off);
    }
  };
  for_each_row(b, cfg.block, rows, [&](const RowGroup& g, Reg k) {
    const Reg row_off = b.mul(b.mul(k, d), size);
    const Reg g_row = b.add(grad, row_off), x_row = b.add(x, row_off);
    const Reg dx_row = b.add(d_x, row_off);
    const Value mu =
        centred ? Value(b.ld_global_nc(acc, b.mad(k, acc_size, mean))) : Value::constant(acc, 0.0);
    const Value rs(b.ld_global_nc(acc, b.mad(k, acc_size, rstd)));
    // xhat and g * w of element e of a unit.
    const auto terms = [&](const Raws& r, size_t e) {
      Value t = ptx::from_storage(b, r[1][e], dt, acc);
      if (centred) t = t - mu;
      const Value gw =
          ptx::from_storage(b, r[0][e], dt, acc) * ptx::from_storage(b, r[2][e], dt, acc);
      return std::pair{t * rs, gw};
    };
    const Reg s_gwx = zero(b, acc), s_gw = zero(b, acc);
    walk_row(b, dt, vec, {g_row, x_row, w}, d, g, [&](Reg, const Raws& r) {
      for (size_t e = 0; e < r[0].size(); ++e) {
        const auto [xh, gw] = terms(r, e);
        add_to(b, s_gwx, gw * xh);
        if (centred) add_to(b, s_gw, gw);
      }
    });
    std::vector<Value> row_sums = {Value(s_gwx)};
    if (centred) row_sums.push_back(Value(s_gw));
    row_sums = group_sum(b, g, row_sums, buf);
    const Value a = row_sums[0] / n;
    const Value m = centred ? row_sums[1] / n : Value::constant(acc, 0.0);
    walk_row(b, dt, vec, {g_row, x_row, w}, d, g, [&](Reg first, const Raws& r) {
      std::vector<Reg> ys;
      std::vector<Value> gx, gs;
      for (size_t e = 0; e < r[0].size(); ++e) {
        const auto [xh, gw] = terms(r, e);
        Value t = gw - xh * a;
        if (centred) t = t - m;
        ys.push_back(ptx::to_storage(b, t * rs, dt));
        if (cfg.fused) {
          const Value ge = ptx::from_storage(b, r[0][e], dt, acc);
          gx.push_back(ge * xh);
          gs.push_back(ge);
        }
      }
      store_unit(b, dt, vec, dx_row, first, ys);
      if (cfg.fused) {
        add_columns(region, first, gx);
        if (centred) add_columns(region_bias, first, gs);
      }
    });
    if (cfg.block) b.bar_sync();
  });
  if (!cfg.fused) return;
  // The regions' sums, in region order, to d_weight and d_bias (one block) or to this
  // block's row of the partials (d_weight's [blocks, d], then d_bias's).
  b.bar_sync();
  const Reg blocks = wide(b, b.nctaid_x());
  const Reg blk = wide(b, b.ctaid_x());
  const Reg span = b.mul(d, sums);  // elements of one region
  b.for_range(wide(b, tid), span, int64_t(kNormBlock), PtxType::u64, [&](Reg i) {
    Value s(b.ld_shared(acc, b.mad(b.cvt(i, PtxType::u32), acc_size, cols)));
    if (!cfg.block)
      for (int r = 1; r < kWarps; ++r)
        s = s + Value(b.ld_shared(
                    acc, b.mad(b.cvt(b.mad(span, int64_t(r), i), PtxType::u32), acc_size, cols)));
    const Reg is_bias = b.setp(Cmp::ge, i, d);
    const Reg col = b.selp(is_bias, b.sub(i, d), i);
    b.if_then_else(
        b.setp(Cmp::eq, blocks, 1),
        [&] {
          const Reg out = b.selp(is_bias, d_bias, d_weight);
          ptx::store_element(b, dt, ptx::element_address(b, out, col, dt), s);
        },
        [&] {
          const Reg row = b.add(b.selp(is_bias, blocks, b.mov(PtxType::u64, 0)), blk);
          b.st_global(b.mad(b.mad(row, d, col), acc_size, partials), s.reg());
        });
  });
}

void gen_backward_columns(KernelBuilder& b, const NormKernelConfig& cfg, PtxType acc) {
  const DType dt = cfg.dtype;
  const int size = int(dtype_size(dt));
  const int acc_size = ptx::type_size(acc);
  const int vec = cfg.vec;
  const int tile = 32 * vec;  // columns of a block
  const bool centred = cfg.centred();
  const Reg grad = b.param_ptr("grad");
  const Reg x = b.param_ptr("x");
  const Reg mean = b.param_ptr("mean");
  const Reg rstd = b.param_ptr("rstd");
  const Reg d_weight = b.param_ptr("d_weight");
  const Reg d_bias = b.param_ptr("d_bias");
  const Reg partials = b.param_ptr("partials");
  const Reg rows = b.param(PtxType::u64, "rows");
  const Reg d = b.param(PtxType::u64, "d");
  const Reg per_split = b.param(PtxType::u64, "rows_per_split");
  // [warp][column of the tile] for Σ g xhat, then the same for Σ g.
  const Reg smem = b.address_of(b.shared_array(acc, 2 * tile * kNormColWarps, "sums", 16));

  const Reg tx = b.tid_x(), ty = b.tid_y();
  const Reg col = b.mul(b.mad(wide(b, b.ctaid_x()), 32, wide(b, tx)), vec);  // first column
  const Reg valid = b.setp(Cmp::lt, col, d);  // then all vec columns are (d % vec == 0)
  const Reg split = wide(b, b.ctaid_y());
  const Reg r0 = b.mul(split, per_split);
  // Lanes past the last column run no rows but still reach the barrier.
  const Reg r1 = b.selp(valid, b.min(b.add(r0, per_split), rows), r0);
  std::vector<Reg> dw, db;
  for (int j = 0; j < vec; ++j) {
    dw.push_back(zero(b, acc));
    db.push_back(zero(b, acc));
  }
  struct Loaded {
    std::vector<Reg> g, x;
    Value mu, rs;
  };
  const auto load = [&](Reg r) {
    const Reg at = b.mul(b.mad(r, d, col), size);
    const auto elems = [&](Reg base) {
      const Reg p = b.add(base, at);
      return vec > 1 ? load_raw_vector(b, dt, p) : std::vector<Reg>{load_raw(b, dt, p)};
    };
    return Loaded{
        elems(grad), elems(x),
        centred ? Value(b.ld_global_nc(acc, b.mad(r, acc_size, mean))) : Value::constant(acc, 0.0),
        Value(b.ld_global_nc(acc, b.mad(r, acc_size, rstd)))};
  };
  const auto finish = [&](const Loaded& l) {
    for (size_t j = 0; j < size_t(vec); ++j) {
      const Value g = ptx::from_storage(b, l.g[j], dt, acc);
      Value t = ptx::from_storage(b, l.x[j], dt, acc);
      if (centred) t = t - l.mu;
      add_to(b, dw[j], g * (t * l.rs));
      if (centred) add_to(b, db[j], g);
    }
  };
  // Two rows' loads in flight at a time.
  const Reg r = b.mov(PtxType::u64, b.add(r0, wide(b, ty)));
  b.while_loop([&] { return b.setp(Cmp::lt, b.add(r, kNormColWarps), r1); },
               [&] {
                 const Loaded first = load(r);
                 const Loaded second = load(b.add(r, kNormColWarps));
                 finish(first);
                 finish(second);
                 b.assign(r, b.add(r, 2 * kNormColWarps));
               });
  b.if_then(b.setp(Cmp::lt, r, r1), [&] { finish(load(r)); });

  // Warp ty's sums at [ty][lane * vec + j]; warp 0 adds the warps' in order.
  const int64_t bias_off = int64_t(tile) * kNormColWarps * acc_size;
  const Reg mine = b.mad(b.mad(ty, tile, b.mul(tx, vec)), acc_size, smem);
  for (int j = 0; j < vec; ++j) {
    b.st_shared(mine, dw[size_t(j)], int64_t(j) * acc_size);
    if (centred) b.st_shared(mine, db[size_t(j)], bias_off + int64_t(j) * acc_size);
  }
  b.bar_sync();
  const Reg splits = wide(b, b.special(ptx::SpecialReg::nctaid_y));
  b.if_then(b.and_(valid, b.setp(Cmp::eq, ty, 0)), [&] {
    const auto total = [&](Reg own, int64_t off) {
      Value s(own);
      for (int y = 1; y < kNormColWarps; ++y)
        s = s + Value(b.ld_shared(acc, mine, off + int64_t(y) * tile * acc_size));
      return s;
    };
    for (int j = 0; j < vec; ++j) {
      const Reg c = b.add(col, j);
      const Value sw = total(dw[size_t(j)], int64_t(j) * acc_size);
      const Value sb = centred ? total(db[size_t(j)], bias_off + int64_t(j) * acc_size) : sw;
      b.if_then_else(
          b.setp(Cmp::eq, splits, 1),
          [&] {
            ptx::store_element(b, dt, ptx::element_address(b, d_weight, c, dt), sw);
            if (centred) ptx::store_element(b, dt, ptx::element_address(b, d_bias, c, dt), sb);
          },
          [&] {
            b.st_global(b.mad(b.mad(split, d, c), acc_size, partials), sw.reg());
            if (centred)
              b.st_global(b.mad(b.mad(b.add(splits, split), d, c), acc_size, partials), sb.reg());
          });
    }
  });
}

const char* kind_name(NormKernel k) {
  switch (k) {
    case NormKernel::forward: return "fwd";
    case NormKernel::backward_rows: return "bwd";
    case NormKernel::backward_columns: return "bwdcols";
  }
  return "?";
}

}  // namespace

int norm_reg_slots(DType d) { return (dtype_size(d) == 8 ? 16 : 32) / vector_width(d); }

int64_t norm_regs_capacity(DType d, bool block) {
  return int64_t(block ? kNormBlock : 32) * norm_reg_slots(d) * vector_width(d);
}

std::string NormKernelConfig::name() const {
  const bool rows = kind != NormKernel::backward_columns;
  return "norm_" + std::string(kind_name(kind)) + "_" + std::string(op_name(op)) + "_" +
         std::string(dtype_name(dtype)) + (rows ? (block ? "_block" : "_warp") : "") +
         (vec > 1 ? "_v" : "") + (stats ? "_stats" : "") + (fused ? "_fused" : "") +
         (regs ? "_regs" : "");
}

GeneratedKernel generate_norm_kernel(const NormKernelConfig& cfg, const ptx::Target& target) {
  const bool norm_op = cfg.op == OpId::rms_norm || cfg.op == OpId::layer_norm;
  if (!norm_op || !is_floating(cfg.dtype) || (cfg.vec != 1 && cfg.vec != vector_width(cfg.dtype)) ||
      (cfg.stats && cfg.kind != NormKernel::forward) ||
      (cfg.fused && cfg.kind != NormKernel::backward_rows) ||
      (cfg.regs && (cfg.kind != NormKernel::forward || cfg.vec == 1)) ||
      (cfg.block && cfg.kind == NormKernel::backward_columns))
    fail<BackendError>("cuda", "row_norm: invalid kernel configuration ", cfg.name());
  const PtxType acc = reduce_acc_type(cfg.dtype);
  KernelBuilder b(cfg.name(), target);
  // IEEE division and square root, as the CPU kernels compute the statistics.
  ptx::FormulaScope scope(b, acc);
  switch (cfg.kind) {
    case NormKernel::forward:
      if (cfg.regs)
        gen_forward_regs(b, cfg, acc);
      else
        gen_forward(b, cfg, acc);
      break;
    case NormKernel::backward_rows: gen_backward_rows(b, cfg, acc); break;
    case NormKernel::backward_columns: gen_backward_columns(b, cfg, acc); break;
  }
  return {cfg.name(), b.finish()};
}

}  // namespace numr::cuda
