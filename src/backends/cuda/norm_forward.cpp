// The Norm forward kernels: rows walked in memory (gen_forward) or held in registers
// (gen_forward_regs); see norm_kernels.h.
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
  const Reg res = b.param_ptr("residual");
  const Reg sum = b.param_ptr("sum");
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
    Reg x_row = b.add(x, row_off);
    const Reg out_row = b.add(out, row_off);
    if (cfg.residual) {
      // sum = x + residual rounded to the dtype; the later passes read it back (each thread
      // its own units, so no barrier).
      const Reg sum_row = b.add(sum, row_off);
      walk_row(b, dt, vec, {x_row, b.add(res, row_off)}, d, g, [&](Reg first, const Raws& r) {
        std::vector<Reg> ss;
        for (size_t e = 0; e < r[0].size(); ++e)
          ss.push_back(ptx::to_storage(
              b, ptx::from_storage(b, r[0][e], dt, acc) + ptx::from_storage(b, r[1][e], dt, acc),
              dt));
        store_unit(b, dt, vec, sum_row, first, ss);
      });
      x_row = sum_row;
    }
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
  const Reg res = b.param_ptr("residual");
  const Reg sum = b.param_ptr("sum");
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
    std::vector<std::vector<Reg>> raw_res(ns);
    for (size_t i = 0; i < ns; ++i)
      b.if_then(active[i], [&] {
        raw[i] = load_raw_vector(b, dt, b.mad(b.min(j[i], last), 16, x_row));
        if (cfg.residual)
          raw_res[i] = load_raw_vector(b, dt, b.mad(b.min(j[i], last), 16, b.add(res, row_off)));
      });
    if (cfg.residual)
      // x + residual rounded to the dtype, stored to sum and normalised in its place.
      for (size_t i = 0; i < ns; ++i)
        b.if_then(active[i], [&] {
          for (size_t e = 0; e < size_t(vec); ++e)
            b.assign(raw[i][e], ptx::to_storage(b,
                                                ptx::from_storage(b, raw[i][e], dt, acc) +
                                                    ptx::from_storage(b, raw_res[i][e], dt, acc),
                                                dt));
          b.if_then(valid[i],
                    [&] { store_raw_vector(b, dt, b.mad(j[i], 16, b.add(sum, row_off)), raw[i]); });
        });
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

}  // namespace numr::cuda::norm_gen
