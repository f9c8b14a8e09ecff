#include "backends/cuda/reduce_kernels.h"

#include <vector>

#include "backends/cuda/reduce_codegen.h"
#include "backends/cuda/reduce_state.h"
#include "codegen/ptx/element_io.h"
#include "numr/error.h"

namespace numr::cuda {

using ptx::Cmp;
using ptx::KernelBuilder;
using ptx::PtxType;
using ptx::Reg;
using ptx::Space;
using ptx::Value;

namespace {

const char* variant_name(ReduceVariant v) {
  switch (v) {
    case ReduceVariant::warp_rows: return "warp";
    case ReduceVariant::block_rows: return "block";
    case ReduceVariant::split_rows: return "split";
    case ReduceVariant::columns: return "cols";
    case ReduceVariant::partials: return "partials";
    case ReduceVariant::vec_columns: return "vcols";
  }
  return "?";
}

// The common parameters, loaded at the top of the kernel.
struct Common {
  Reg in, out, partials, K, R, correction, chunk;
  std::vector<Reg> keep_shape, keep_strides, red_shape, red_strides;
};

Common common_params(KernelBuilder& b, const ReduceKernelConfig& cfg) {
  Common c;
  c.in = b.param_ptr("in");
  c.out = b.param_ptr("out");
  c.partials = b.param_ptr("partials");
  c.K = b.param(PtxType::u64, "K");
  c.R = b.param(PtxType::u64, "R");
  c.correction = b.param(PtxType::s64, "correction");
  c.chunk = b.param(PtxType::u64, "chunk");
  const ptx::ParamArray ks = b.param_array(PtxType::u64, kMaxReduceDims, "keep_shape");
  const ptx::ParamArray kt = b.param_array(PtxType::s64, kMaxReduceDims, "keep_strides");
  const ptx::ParamArray rs = b.param_array(PtxType::u64, kMaxReduceDims, "red_shape");
  const ptx::ParamArray rt = b.param_array(PtxType::s64, kMaxReduceDims, "red_strides");
  for (int d = 0; d < cfg.keep_dims; ++d) {
    c.keep_shape.push_back(b.load_param(ks, d));
    c.keep_strides.push_back(b.load_param(kt, d));
  }
  for (int d = 0; d < cfg.red_dims; ++d) {
    c.red_shape.push_back(b.load_param(rs, d));
    c.red_strides.push_back(b.load_param(rt, d));
  }
  return c;
}

Reg as_s64(KernelBuilder& b, Reg u64) { return b.bitcast(u64, PtxType::s64); }

// Feeds the reduced elements [r0, r1) of the output whose kept offset is keep_off (s64
// elements) into st, shared by the threads g_tid of a group of g_size (u64 registers).
void feed_range(KernelBuilder& b, const ReduceKernelConfig& cfg, const Common& c, ReduceState& st,
                Reg keep_off, Reg r0, Reg r1, Reg g_tid, Reg g_size) {
  const DType d = cfg.in;
  const PtxType acc = st.acc();
  const bool arg = cfg.op == OpId::argmax || cfg.op == OpId::argmin;
  if (cfg.contiguous) {
    const Reg start = ptx::element_address(b, c.in, b.add(keep_off, as_s64(b, r0)), d);
    for_each_in_run(b, d, start, b.sub(r1, r0), g_tid, g_size,
                    [&](const std::vector<Reg>& raw, Reg first) {
                      const Reg idx = arg ? as_s64(b, b.add(first, r0)) : Reg{};
                      for (size_t e = 0; e < raw.size(); ++e) {
                        const Reg at = arg && e ? b.add(idx, int64_t(e)) : idx;
                        st.feed(ptx::from_storage(b, raw[e], d, acc), at);
                      }
                    });
    return;
  }
  b.for_range(b.add(r0, g_tid), r1, g_size, PtxType::u64, [&](Reg r) {
    const Reg off = b.add(keep_off, strided_offset(b, r, c.red_shape, c.red_strides));
    const Reg raw = load_raw(b, d, ptx::element_address(b, c.in, off, d));
    st.feed(ptx::from_storage(b, raw, d, acc), arg ? as_s64(b, r) : Reg{});
  });
}

void store_result(KernelBuilder& b, const ReduceKernelConfig& cfg, Reg out, Reg k,
                  const ReduceState& st, Reg count, Reg correction) {
  const DType od = cfg.out();
  ptx::store_element(b, od, ptx::element_address(b, out, k, od), st.result(count, correction));
}

void gen_warp_rows(KernelBuilder& b, const ReduceKernelConfig& cfg, PtxType acc) {
  const Common c = common_params(b, cfg);
  constexpr int kWarps = kReduceBlock / 32;
  const Reg tid = b.tid_x();
  const Reg lane = wide(b, b.and_(tid, 31)), warp = wide(b, b.shr(tid, 5));
  const Reg first = b.mad(wide(b, b.ctaid_x()), kWarps, warp);
  const Reg step = b.mul(wide(b, b.nctaid_x()), kWarps);
  const Reg warp_size = b.mov(PtxType::u64, 32);
  const Reg zero = b.mov(PtxType::u64, 0);
  b.for_range(first, c.K, step, PtxType::u64, [&](Reg k) {
    ReduceState st = ReduceState::identity(b, cfg.op, acc);
    const Reg keep_off = strided_offset(b, k, c.keep_shape, c.keep_strides);
    feed_range(b, cfg, c, st, keep_off, zero, c.R, lane, warp_size);
    st.warp_reduce();
    b.if_then(b.setp(Cmp::eq, lane, 0),
              [&] { store_result(b, cfg, c.out, k, st, c.R, c.correction); });
  });
}

void gen_block_rows(KernelBuilder& b, const ReduceKernelConfig& cfg, PtxType acc) {
  const Common c = common_params(b, cfg);
  const int bytes = ReduceState::bytes(cfg.op, acc);
  const int half = kReduceBlock / 32 * bytes;
  // Two state buffers, alternating from output to output: warp 0 reads buffer p of output
  // i after the barrier of output i, and buffer p is written again only for output i + 2,
  // after the barrier of output i + 1, which warp 0 reaches once it has read. So one
  // barrier per output suffices, and warps 1.. start loading the next row at once.
  const ptx::SharedArray sh = b.shared_array(PtxType::b64, 2 * half / 8, "states", 16);
  const Reg smem0 = b.address_of(sh);
  const Reg flip = b.mov(PtxType::u32, 0);
  const Reg tid32 = b.tid_x();
  const Reg tid = wide(b, tid32);
  const Reg lane = b.and_(tid32, 31), warp = b.shr(tid32, 5);
  const Reg block = b.mov(PtxType::u64, kReduceBlock);
  const Reg zero = b.mov(PtxType::u64, 0);
  // The output loop is uniform (block index and grid size only), so its barriers are too.
  b.for_range(wide(b, b.ctaid_x()), c.K, wide(b, b.nctaid_x()), PtxType::u64, [&](Reg k) {
    ReduceState st = ReduceState::identity(b, cfg.op, acc);
    const Reg keep_off = strided_offset(b, k, c.keep_shape, c.keep_strides);
    feed_range(b, cfg, c, st, keep_off, zero, c.R, tid, block);
    block_reduce(b, st, b.add(smem0, flip), warp, lane, kReduceBlock / 32);
    b.if_then(b.setp(Cmp::eq, tid32, 0),
              [&] { store_result(b, cfg, c.out, k, st, c.R, c.correction); });
    b.assign(flip, b.xor_(flip, half));
  });
}

void gen_split_rows(KernelBuilder& b, const ReduceKernelConfig& cfg, PtxType acc) {
  const Common c = common_params(b, cfg);
  const int bytes = ReduceState::bytes(cfg.op, acc);
  const ptx::SharedArray sh =
      b.shared_array(PtxType::b64, kReduceBlock / 32 * bytes / 8, "states", 16);
  const Reg smem = b.address_of(sh);
  const Reg tid32 = b.tid_x();
  const Reg lane = b.and_(tid32, 31), warp = b.shr(tid32, 5);
  const Reg part = wide(b, b.ctaid_x()), k = wide(b, b.ctaid_y());
  const Reg r0 = b.mul(part, c.chunk);
  const Reg r1 = b.min(b.add(r0, c.chunk), c.R);
  ReduceState st = ReduceState::identity(b, cfg.op, acc);
  const Reg keep_off = strided_offset(b, k, c.keep_shape, c.keep_strides);
  feed_range(b, cfg, c, st, keep_off, r0, r1, wide(b, tid32), b.mov(PtxType::u64, kReduceBlock));
  block_reduce(b, st, smem, warp, lane, kReduceBlock / 32);
  b.if_then(b.setp(Cmp::eq, tid32, 0), [&] {
    const Reg slot = b.mad(k, wide(b, b.nctaid_x()), part);
    st.store(Space::global, b.mad(slot, bytes, c.partials));
  });
}

void gen_columns(KernelBuilder& b, const ReduceKernelConfig& cfg, PtxType acc) {
  const Common c = common_params(b, cfg);
  const int bytes = ReduceState::bytes(cfg.op, acc);
  const ptx::SharedArray sh = b.shared_array(PtxType::b64, kReduceBlock * bytes / 8, "states", 16);
  const Reg smem = b.address_of(sh);
  const Reg tx = b.tid_x(), ty = b.tid_y();
  const Reg k = b.mad(wide(b, b.ctaid_x()), kColumnWidth, wide(b, tx));
  const Reg valid = b.setp(Cmp::lt, k, c.K);
  const Reg slice = wide(b, b.ctaid_y());
  const Reg r0 = b.mul(slice, c.chunk);
  // Threads past the last output run no iterations but still reach the barrier.
  const Reg r1 = b.selp(valid, b.min(b.add(r0, c.chunk), c.R), r0);
  ReduceState st = ReduceState::identity(b, cfg.op, acc);
  const Reg keep_off = strided_offset(b, k, c.keep_shape, c.keep_strides);
  const DType d = cfg.in;
  const bool arg = cfg.op == OpId::argmax || cfg.op == OpId::argmin;
  b.for_range(b.add(r0, wide(b, ty)), r1, b.mov(PtxType::u64, kColumnSlices), PtxType::u64,
              [&](Reg r) {
                const Reg off = b.add(keep_off, strided_offset(b, r, c.red_shape, c.red_strides));
                const Reg raw = load_raw(b, d, ptx::element_address(b, c.in, off, d));
                st.feed(ptx::from_storage(b, raw, d, acc), arg ? as_s64(b, r) : Reg{});
              });
  const Reg slot = b.mad(ty, kColumnWidth, tx);
  st.store(Space::shared, b.mad(slot, bytes, smem));
  b.bar_sync();
  b.if_then(b.and_(valid, b.setp(Cmp::eq, ty, 0)), [&] {
    for (int y = 1; y < kColumnSlices; ++y)
      st.merge(ReduceState::load(b, cfg.op, acc, Space::shared,
                                 b.mad(tx, bytes, b.add(smem, y * kColumnWidth * bytes))));
    const Reg splits = b.special(ptx::SpecialReg::nctaid_y);
    b.if_then_else(
        b.setp(Cmp::eq, splits, 1), [&] { store_result(b, cfg, c.out, k, st, c.R, c.correction); },
        [&] {
          const Reg at = b.mad(k, wide(b, splits), slice);
          st.store(Space::global, b.mad(at, bytes, c.partials));
        });
  });
}

// Writes st, the state of output k over its part `slice` of the reduced range: the result
// when the range is not split, else its slot of the partials.
void finish_column(KernelBuilder& b, const ReduceKernelConfig& cfg, const Common& c,
                   const ReduceState& st, Reg k, Reg slice) {
  const int bytes = ReduceState::bytes(cfg.op, st.acc());
  const Reg splits = b.special(ptx::SpecialReg::nctaid_y);
  b.if_then_else(
      b.setp(Cmp::eq, splits, 1), [&] { store_result(b, cfg, c.out, k, st, c.R, c.correction); },
      [&] {
        const Reg at = b.mad(k, wide(b, splits), slice);
        st.store(Space::global, b.mad(at, bytes, c.partials));
      });
}

// Like columns, with vec = vector_width(in) adjacent outputs per thread: each reduced
// element is one 16-byte load for all of them, kColumnUnroll of them in flight. The 8
// slices merge through shared memory in slice order, one thread per output.
void gen_vec_columns(KernelBuilder& b, const ReduceKernelConfig& cfg, PtxType acc) {
  const Common c = common_params(b, cfg);
  const DType d = cfg.in;
  const int vec = vector_width(d);
  const int bytes = ReduceState::bytes(cfg.op, acc);
  const int tile = kColumnWidth * vec;  // outputs per block
  const ptx::SharedArray sh =
      b.shared_array(PtxType::b64, int64_t(kReduceBlock) * vec * bytes / 8, "states", 16);
  const Reg smem = b.address_of(sh);
  const Reg tx = b.tid_x(), ty = b.tid_y();
  const Reg tile0 = b.mul(wide(b, b.ctaid_x()), tile);
  const Reg k0 = b.mad(wide(b, tx), vec, tile0);
  const Reg valid = b.setp(Cmp::lt, k0, c.K);
  const Reg slice = wide(b, b.ctaid_y());
  const Reg r0 = b.mul(slice, c.chunk);
  // Threads past the last output run no iterations but still reach the barrier.
  const Reg r1 = b.selp(valid, b.min(b.add(r0, c.chunk), c.R), r0);
  std::vector<ReduceState> st;
  for (int e = 0; e < vec; ++e) st.push_back(ReduceState::identity(b, cfg.op, acc));
  const Reg keep_off = strided_offset(b, k0, c.keep_shape, c.keep_strides);
  const bool arg = cfg.op == OpId::argmax || cfg.op == OpId::argmin;
  const auto load_row = [&](Reg r) {
    const Reg off = b.add(keep_off, strided_offset(b, r, c.red_shape, c.red_strides));
    return load_raw_vector(b, d, ptx::element_address(b, c.in, off, d));
  };
  const auto feed_row = [&](const std::vector<Reg>& raw, Reg r) {
    for (int e = 0; e < vec; ++e)
      st[size_t(e)].feed(ptx::from_storage(b, raw[size_t(e)], d, acc), arg ? as_s64(b, r) : Reg{});
  };
  // Rows r, r + 8, ... of this slice, in increasing order; kColumnUnroll loads issued
  // before any is fed.
  const Reg r = b.add(r0, wide(b, ty));
  const int span = kColumnSlices * (kColumnUnroll - 1);
  b.while_loop([&] { return b.setp(Cmp::lt, b.add(r, span), r1); },
               [&] {
                 std::vector<std::vector<Reg>> raws;
                 std::vector<Reg> rows;
                 for (int u = 0; u < kColumnUnroll; ++u) {
                   rows.push_back(u ? b.add(r, u * kColumnSlices) : r);
                   raws.push_back(load_row(rows.back()));
                 }
                 for (int u = 0; u < kColumnUnroll; ++u) feed_row(raws[size_t(u)], rows[size_t(u)]);
                 b.assign(r, b.add(r, kColumnSlices * kColumnUnroll));
               });
  b.while_loop([&] { return b.setp(Cmp::lt, r, r1); },
               [&] {
                 feed_row(load_row(r), r);
                 b.assign(r, b.add(r, kColumnSlices));
               });
  // Shared layout: output o = tx * vec + e of slice y at state (y * tile + o).
  const Reg slot = b.mad(ty, tile, b.mul(tx, vec));
  for (int e = 0; e < vec; ++e)
    st[size_t(e)].store(Space::shared, b.mad(b.add(slot, e), bytes, smem));
  b.bar_sync();
  const Reg o = b.mad(ty, kColumnWidth, tx);  // the output this thread finishes
  const Reg k = b.add(tile0, wide(b, o));
  b.if_then(b.and_(b.setp(Cmp::lt, o, tile), b.setp(Cmp::lt, k, c.K)), [&] {
    ReduceState t = ReduceState::load(b, cfg.op, acc, Space::shared, b.mad(o, bytes, smem));
    for (int y = 1; y < kColumnSlices; ++y)
      t.merge(ReduceState::load(b, cfg.op, acc, Space::shared,
                                b.mad(o, bytes, b.add(smem, y * tile * bytes))));
    finish_column(b, cfg, c, t, k, slice);
  });
}

void gen_partials(KernelBuilder& b, const ReduceKernelConfig& cfg, PtxType acc) {
  const int bytes = ReduceState::bytes(cfg.op, acc);
  const Reg partials = b.param_ptr("partials");
  const Reg out = b.param_ptr("out");
  const Reg K = b.param(PtxType::u64, "K");
  const Reg R = b.param(PtxType::u64, "R");
  const Reg correction = b.param(PtxType::s64, "correction");
  const Reg splits = b.param(PtxType::u64, "splits");
  constexpr int kWarps = kReduceBlock / 32;
  const Reg tid = b.tid_x();
  const Reg lane = wide(b, b.and_(tid, 31)), warp = wide(b, b.shr(tid, 5));
  const Reg first = b.mad(wide(b, b.ctaid_x()), kWarps, warp);
  const Reg step = b.mul(wide(b, b.nctaid_x()), kWarps);
  b.for_range(first, K, step, PtxType::u64, [&](Reg k) {
    ReduceState st = ReduceState::identity(b, cfg.op, acc);
    const Reg row = b.mul(k, splits);
    b.for_range(lane, splits, 32, PtxType::u64, [&](Reg i) {
      const Reg at = b.mad(b.add(row, i), bytes, partials);
      st.merge(ReduceState::load(b, cfg.op, acc, Space::global, at));
    });
    st.warp_reduce();
    b.if_then(b.setp(Cmp::eq, lane, 0), [&] { store_result(b, cfg, out, k, st, R, correction); });
  });
}

}  // namespace

DType ReduceKernelConfig::out() const {
  if (op == OpId::any || op == OpId::all) return DType::Bool;
  if (op == OpId::argmax || op == OpId::argmin) return DType::I64;
  return in;
}

std::string ReduceKernelConfig::name() const {
  std::string n = "reduce_" + std::string(op_name(op)) + "_" + std::string(dtype_name(in)) + "_" +
                  variant_name(variant);
  if (variant == ReduceVariant::partials) return n;
  n += "_k" + std::to_string(keep_dims);
  n += contiguous ? std::string("_c") : "_r" + std::to_string(red_dims);
  return n;
}

GeneratedKernel generate_reduce_kernel(const ReduceKernelConfig& cfg, const ptx::Target& target) {
  if (cfg.keep_dims < 1 || cfg.keep_dims > kMaxReduceDims || cfg.red_dims < 1 ||
      cfg.red_dims > kMaxReduceDims || (cfg.contiguous && cfg.red_dims != 1) ||
      (cfg.contiguous &&
       (cfg.variant == ReduceVariant::columns || cfg.variant == ReduceVariant::vec_columns)) ||
      (cfg.variant == ReduceVariant::vec_columns && vector_width(cfg.in) > kMaxColumnVector))
    fail<BackendError>("cuda", "reduce: invalid kernel configuration ", cfg.name());
  const PtxType acc = reduce_state_type(cfg.op, cfg.in);
  KernelBuilder b(cfg.name(), target);
  ptx::FormulaScope scope(b, acc, reduce_fast_math(cfg.in));
  switch (cfg.variant) {
    case ReduceVariant::warp_rows: gen_warp_rows(b, cfg, acc); break;
    case ReduceVariant::block_rows: gen_block_rows(b, cfg, acc); break;
    case ReduceVariant::split_rows: gen_split_rows(b, cfg, acc); break;
    case ReduceVariant::columns: gen_columns(b, cfg, acc); break;
    case ReduceVariant::partials: gen_partials(b, cfg, acc); break;
    case ReduceVariant::vec_columns: gen_vec_columns(b, cfg, acc); break;
  }
  return {cfg.name(), b.finish()};
}

}  // namespace numr::cuda
