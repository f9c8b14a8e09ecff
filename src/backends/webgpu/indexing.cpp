// index_gather and index_scatter. gather: one invocation per output element, reading its
// index and moving the element's bits (it never converts). scatter: one invocation per
// (o, i) column walking j in order, so each element's updates happen in one fixed order
// and no float atomics are needed; Assign moves bits, and F16 and BF16 reductions run on an
// F32 copy of out (run_copy there and back) so that each element is rounded once, as on the
// CPU. Indexes are I64 word pairs whose low word is the index: the front end has checked
// them in [0, n), and n fits a binding.
#include <compare>
#include <cstdint>
#include <string>

#include "backends/webgpu/kernels.h"
#include "backends/webgpu/pipeline_cache.h"
#include "backends/webgpu/shader.h"
#include "math/reduce_rules.h"

namespace numr::webgpu {

using wgsl::Type;
using wgsl::Value;

namespace {

// U8 and Bool move as bytes alike.
DType storage_of(DType t) { return t == DType::Bool ? DType::U8 : t; }

// Element bits of `from` (dtype t) at from_idx into `to` at to_idx.
void move_element(Shader& s, DType t, const std::string& to, const Value& to_idx,
                  const std::string& from, const Value& from_idx) {
  switch (t) {
    case DType::F16:
    case DType::BF16: s.store_half_bits(to, to_idx, s.load_half_bits(from, from_idx)); return;
    case DType::U8: s.store(to, t, to_idx, s.load(from, t, from_idx, Type::i32)); return;
    default: s.body().line(to + "[" + to_idx.str() + "] = " + from + "[" + from_idx.str() + "];");
  }
}

struct GatherConfig {
  DType t;
  auto operator<=>(const GatherConfig&) const = default;
};

// P: the element count, x's stride along the indexed dim, then the layout of out, index and
// x's element for index 0 over out's shape.
std::string gather_wgsl(const GatherConfig& c) {
  Shader s;
  const std::string out = s.buffer(c.t, true), idx = s.buffer(DType::I64, false),
                    x = s.buffer(c.t, false);
  wgsl::FormulaScope scope(s.body(), Type::i32);
  s.body().line("if (gi >= P[0]) { return; }");
  const std::vector<Value> e = StridedLayout::emit_offsets(s, 2, 3, Value::named(Type::u32, "gi"));
  const Value xe = Value::let(Type::u32, "u32(i32(" + e[2].str() + ") + bitcast<i32>(P[1]) * " +
                                             "bitcast<i32>(" + idx + "[" + e[1].str() + "].x))");
  move_element(s, c.t, out, e[0], x, xe);
  return s.finish();
}

struct ScatterConfig {
  ScatterOp op;
  DType out, src;
  auto operator<=>(const ScatterConfig&) const = default;
};

// P: the column count, m, the strides along the scattered dim of out, index and src, then
// the layout of out, index and src at j = 0 over the columns [outer, inner].
std::string scatter_wgsl(const ScatterConfig& c) {
  Shader s;
  const std::string out = s.buffer(c.out, true), idx = s.buffer(DType::I64, false),
                    src = s.buffer(c.src, false);
  const Type ct = compute_type(c.out);
  wgsl::FormulaScope scope(s.body(), ct);
  wgsl::Body& b = s.body();
  b.line("if (gi >= P[0]) { return; }");
  const std::vector<Value> e = StridedLayout::emit_offsets(s, 5, 3, Value::named(Type::u32, "gi"));
  b.line("for (var j: i32 = 0; j < i32(P[1]); j = j + 1) {");
  const Value ie = Value::let(Type::u32, "u32(i32(" + e[1].str() + ") + j * bitcast<i32>(P[3]))");
  const Value te = Value::let(Type::u32, "u32(i32(" + e[0].str() + ") + bitcast<i32>(" + idx + "[" +
                                             ie.str() + "].x) * bitcast<i32>(P[2]))");
  const Value se = Value::let(Type::u32, "u32(i32(" + e[2].str() + ") + j * bitcast<i32>(P[4]))");
  if (c.op == ScatterOp::Assign) {
    move_element(s, c.out, out, te, src, se);
  } else {
    // A U8 out is packed in atomic words: its byte is read with atomicLoad.
    const Value acc =
        c.out == DType::U8
            ? Value::let(Type::i32, "i32((atomicLoad(&" + out + "[" + te.str() + " >> 2u]) >> ((" +
                                        te.str() + " & 3u) * 8u)) & 0xffu)")
            : s.load(out, c.out, te, ct);
    const Value v = s.load(src, c.src, se, ct);
    Value r = acc;
    switch (c.op) {
      case ScatterOp::Sum: r = acc + v; break;
      case ScatterOp::Prod: r = acc * v; break;
      case ScatterOp::Amax: r = math::extreme_merge<true>(acc, v); break;
      default: r = math::extreme_merge<false>(acc, v); break;
    }
    s.store(out, c.out, te, r);
  }
  b.line("}");
  return s.finish();
}

}  // namespace

void run_index_gather(Context& ctx, const GatherCall& call) {
  require_dtype(call.x.dtype, "gather");
  const int64_t n = call.out.numel();
  if (n == 0) return;
  // x at index 0 of the gathered dim, walked over out's shape.
  TensorRef x0 = call.x;
  x0.shape = call.out.shape;
  x0.strides = {call.x.strides[0], 0, call.x.strides[2]};
  Params p;
  p.u32(uint64_t(n));
  p.i32(call.x.strides[1]);
  StridedLayout::push(p, call.out.shape, {&call.out, &call.index, &x0});
  const Binding b[] = {
      {buffer_of(call.out), true}, {buffer_of(call.index), false}, {buffer_of(call.x), false}};
  ctx.dispatch(cached_pipeline(ctx, GatherConfig{storage_of(call.x.dtype)}, gather_wgsl, "gather"),
               b, p.w, groups_for(uint64_t(n), kWorkgroupSize));
}

void run_index_scatter(Context& ctx, const ScatterCall& call) {
  const DType t = call.out.dtype;
  require_dtype(t, "scatter");
  if (call.index.numel() == 0) return;
  if (call.op != ScatterOp::Assign && (t == DType::F16 || t == DType::BF16)) {
    // Reduce in F32 and round once: widen out into scratch, scatter there, narrow back.
    TensorRef wide;
    wide.base = ctx.allocate(size_t(call.out.numel()) * 4);
    wide.dtype = DType::F32;
    wide.shape = call.out.shape;
    wide.strides = {call.out.shape[1] * call.out.shape[2], call.out.shape[2], 1};
    try {
      run_copy(ctx, CopyCall{call.out, wide});
      ScatterCall w = call;
      w.out = wide;
      run_index_scatter(ctx, w);
      run_copy(ctx, CopyCall{wide, call.out});
    } catch (...) {
      ctx.deallocate(buffer_of(wide));
      throw;
    }
    // Recorded work keeps its own reference to the buffer (bias_act_bwd.cpp).
    ctx.deallocate(buffer_of(wide));
    return;
  }
  const int64_t columns = call.index.shape[0] * call.index.shape[2];
  // Each operand at j = 0, walked over the columns.
  const auto column = [&](const TensorRef& r) {
    TensorRef c = r;
    c.shape = {call.index.shape[0], call.index.shape[2]};
    c.strides = {r.strides[0], r.strides[2]};
    return c;
  };
  const TensorRef out0 = column(call.out), index0 = column(call.index), src0 = column(call.src);
  Params p;
  p.u32(uint64_t(columns));
  p.u32(uint64_t(call.index.shape[1]));
  p.i32(call.out.strides[1]);
  p.i32(call.index.strides[1]);
  p.i32(call.src.strides[1]);
  StridedLayout::push(p, out0.shape, {&out0, &index0, &src0});
  const Binding b[] = {
      {buffer_of(call.out), true}, {buffer_of(call.index), false}, {buffer_of(call.src), false}};
  const ScatterConfig c{call.op, storage_of(t), storage_of(call.src.dtype)};
  ctx.dispatch(cached_pipeline(ctx, c, scatter_wgsl, "scatter"), b, p.w,
               groups_for(uint64_t(columns), kWorkgroupSize));
}

}  // namespace numr::webgpu
