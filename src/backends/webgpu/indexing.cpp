// index_gather and index_scatter. gather: one invocation per output element, reading its
// index and moving the element's bits (it never converts). Indexes are I64 word pairs whose
// low word is the index: the front end has checked them in [0, n), and n fits a binding.
#include <compare>
#include <cstdint>
#include <string>

#include "backends/webgpu/kernels.h"
#include "backends/webgpu/pipeline_cache.h"
#include "backends/webgpu/shader.h"

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

}  // namespace numr::webgpu
