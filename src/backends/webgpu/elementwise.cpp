// Elementwise ops: one invocation per output element; every operand (outputs first) walks
// its own strided layout, or, when all are contiguous, takes its offset plus the index;
// the op's formula comes from math/formula.h over wgsl::Value.
#include <array>
#include <compare>
#include <stdexcept>

#include "backends/webgpu/kernels.h"
#include "backends/webgpu/pipeline_cache.h"
#include "backends/webgpu/shader.h"
#include "codegen/wgsl/value_math.h"
#include "math/formula.h"

namespace numr::webgpu {

using wgsl::Type;
using wgsl::Value;

namespace {

struct ElementwiseConfig {
  OpId op;
  int n_in = 0, n_out = 1;
  std::array<DType, 3> ins{};
  std::array<DType, 2> outs{};
  bool has_lo = true, has_hi = true;
  bool flat = false;  // every operand one contiguous row (StridedLayout::flat)
  auto operator<=>(const ElementwiseConfig&) const = default;
};

DType source_dtype(const ElementwiseConfig& c) {
  return c.op == OpId::where_cond ? c.ins[1] : c.ins[0];
}

Value apply(const ElementwiseConfig& c, const std::vector<Value>& x, const Value& s0,
            const Value& s1, int output) {
  if (c.op == OpId::clamp && x[0].type() != Type::f32) {
    // The CPU's integer rule: the lower bound is tested first.
    const Value hi = c.has_hi ? select(x[0] > s1, s1, x[0]) : x[0];
    return c.has_lo ? select(x[0] < s0, s0, hi) : hi;
  }
  return math::formula<Value>(c.op, x.data(), s0, s1, c.has_lo, c.has_hi, output);
}

std::string make_wgsl(const ElementwiseConfig& c) {
  Shader s;
  std::vector<std::string> outs, ins;
  for (int o = 0; o < c.n_out; ++o) outs.push_back(s.buffer(c.outs[size_t(o)], true));
  for (int i = 0; i < c.n_in; ++i) ins.push_back(s.buffer(c.ins[size_t(i)], false));
  const Type compute = compute_type(source_dtype(c));
  wgsl::FormulaScope scope(s.body(), compute);
  s.body().line("if (gi >= P[0]) { return; }");
  const Value gi = Value::named(Type::u32, "gi");
  // P: n, the two scalars in two words each (the second for i64 only), the layout.
  const std::vector<Value> idx = c.flat
                                     ? StridedLayout::emit_flat_offsets(s, 5, c.n_out + c.n_in, gi)
                                     : StridedLayout::emit_offsets(s, 5, c.n_out + c.n_in, gi);
  std::vector<Value> x;
  for (int i = 0; i < c.n_in; ++i)
    x.push_back(s.load(ins[size_t(i)], c.ins[size_t(i)], idx[size_t(c.n_out + i)], compute));
  const Value s0 = s.param(compute, "1"), s1 = s.param(compute, "3");
  for (int o = 0; o < c.n_out; ++o)
    s.store(outs[size_t(o)], c.outs[size_t(o)], idx[size_t(o)], apply(c, x, s0, s1, o));
  return s.finish();
}

}  // namespace

void run_elementwise(Context& ctx, const ElementwiseCall& call) {
  ElementwiseConfig c;
  c.op = call.op;
  c.n_in = call.n_in;
  c.n_out = call.n_out;
  std::vector<const TensorRef*> operands;
  std::vector<Binding> bindings;
  for (int o = 0; o < call.n_out; ++o) {
    const TensorRef& r = o == 0 ? call.out : call.out2;
    require_dtype(r.dtype, op_name(call.op).data());
    c.outs[size_t(o)] = r.dtype;
    operands.push_back(&r);
    bindings.push_back({buffer_of(r), true});
  }
  for (int i = 0; i < call.n_in; ++i) {
    const TensorRef& r = call.in[size_t(i)];
    require_dtype(r.dtype, op_name(call.op).data());
    c.ins[size_t(i)] = r.dtype;
    operands.push_back(&r);
    bindings.push_back({buffer_of(r), false});
  }
  c.has_lo = call.has_lo;
  c.has_hi = call.has_hi;
  const int64_t n = call.out.numel();
  if (n == 0) return;
  Params p;
  p.u32(uint64_t(n));
  // Scalars in the compute type, converted on the host as the CPU converts them.
  for (double v : call.scalars) {
    switch (compute_type(source_dtype(c))) {
      case Type::f32: p.f32(float(v)); break;
      case Type::i64: p.i64(int64_t(v)); break;
      default: p.i32(int64_t(v)); break;
    }
    if (p.w.size() % 2 == 0) p.u32(0);
  }
  StridedLayout::push(p, call.out.shape, operands);
  c.flat = StridedLayout::flat(call.out.shape, operands);
  WGPUComputePipeline pipe = cached_pipeline(ctx, c, make_wgsl, std::string(op_name(call.op)));
  ctx.dispatch(pipe, bindings, p.w, groups_for(uint64_t(n), kWorkgroupSize));
}

}  // namespace numr::webgpu
