// The shared code-generation pieces of the Norm kernels (norm_codegen.h).
#include "backends/cuda/norm_codegen.h"

#include "backends/cuda/reduce_codegen.h"
#include "codegen/ptx/element_io.h"

namespace numr::cuda::norm_gen {

using ptx::Cmp;
using ptx::KernelBuilder;
using ptx::PtxType;
using ptx::Reg;
using ptx::ShflMode;
using ptx::Space;
using ptx::Value;

namespace {

// Vectors of each tensor a thread loads before using any, so that several 16-byte loads
// per thread are in flight.
constexpr int kUnroll = 4;

}  // namespace

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

Reg zero(KernelBuilder& b, PtxType t) { return b.mov(t, Value::constant(t, 0.0).reg()); }

void add_to(KernelBuilder& b, Reg acc, const Value& v) { b.assign(acc, (Value(acc) + v).reg()); }

void store_unit(KernelBuilder& b, DType d, int vec, Reg row, Reg first,
                const std::vector<Reg>& raw) {
  const Reg at = b.mad(first, int64_t(dtype_size(d)), row);
  if (vec > 1)
    store_raw_vector(b, d, at, raw);
  else
    b.st(Space::global, ptx::storage_mem_type(d), at, raw[0]);
}

}  // namespace numr::cuda::norm_gen
