// The Norm backward kernels: d_x by rows (fused with the weight and bias sums, or not)
// and the weight and bias sums by columns; see norm_kernels.h.
#include <utility>
#include <vector>

#include "backends/cuda/norm_codegen.h"
#include "backends/cuda/reduce_codegen.h"
#include "codegen/ptx/element_io.h"
#include "codegen/ptx/value_math.h"

namespace numr::cuda::norm_gen {

using ptx::Cmp;
using ptx::KernelBuilder;
using ptx::PtxType;
using ptx::Reg;
using ptx::Value;

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

}  // namespace numr::cuda::norm_gen
