// Elementwise ops: one invocation per output element; every operand (outputs first) walks
// its own strided layout, or, when all are contiguous, takes its offset plus the index
// (a contiguous F16/BF16 result: two elements per invocation, one whole word); the op's
// formula comes from math/formula.h over wgsl::Value.
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

// Whether each invocation computes the two elements of one output word: a contiguous
// F16/BF16 result computed in f32, so that whole words are stored without the and/or
// pair that a lone 16-bit field needs.
bool word_pairs(const ElementwiseConfig& c) {
  const DType o = c.outs[0];
  return c.flat && c.n_out == 1 && (o == DType::F16 || o == DType::BF16) &&
         compute_type(source_dtype(c)) == Type::f32;
}

// The word-pair kernel: invocation gi takes output word (offset >> 1) + gi, elements k0 and
// k0 + 1 of the row (k0 = 2 gi - the offset's parity); a word with an element outside the
// row keeps the other half through the and/or store.
std::string make_word_pair_wgsl(const ElementwiseConfig& c, Shader& s, const std::string& out,
                                const std::vector<std::string>& ins) {
  wgsl::Body& b = s.body();
  b.line("let nd = P[5u];");
  auto offset = [](int k) { return "P[6u + nd + " + std::to_string(k) + "u * (nd + 1u)]"; };
  b.line("let par = " + offset(0) + " & 1u;");
  b.line("if (gi >= (P[0] + par + 1u) / 2u) { return; }");
  b.line("let k0 = 2u * gi - par;");
  b.line("let k1 = k0 + 1u;");
  b.line("let i0 = min(k0, P[0] - 1u);");
  b.line("let i1 = min(k1, P[0] - 1u);");
  const Value s0 = s.param(Type::f32, "1"), s1 = s.param(Type::f32, "3");
  const char* to_half = c.outs[0] == DType::F16 ? "numr_f32_to_f16" : "numr_f32_to_bf16";
  std::vector<Value> bits;
  for (const char* i : {"i0", "i1"}) {
    std::vector<Value> x;
    for (int k = 0; k < c.n_in; ++k)
      x.push_back(s.load(ins[size_t(k)], c.ins[size_t(k)],
                         Value::let(Type::u32, offset(1 + k) + " + " + i), Type::f32));
    const Value v = wgsl::convert(apply(c, x, s0, s1, 0), Type::f32);
    bits.push_back(Value::let(Type::u32, std::string(to_half) + "(" + v.str() + ")"));
  }
  b.line("if (k0 < P[0] && k1 < P[0]) {");
  b.line("  atomicStore(&" + out + "[(" + offset(0) + " >> 1u) + gi], " + bits[0].str() + " | (" +
         bits[1].str() + " << 16u));");
  b.line("} else if (k0 < P[0]) {");
  s.store_half_bits(out, Value::let(Type::u32, "(" + offset(0) + " + i0)"), bits[0]);
  b.line("} else if (k1 < P[0]) {");
  s.store_half_bits(out, Value::let(Type::u32, "(" + offset(0) + " + i1)"), bits[1]);
  b.line("}");
  return s.finish();
}

std::string make_wgsl(const ElementwiseConfig& c) {
  Shader s;
  std::vector<std::string> outs, ins;
  for (int o = 0; o < c.n_out; ++o) outs.push_back(s.buffer(c.outs[size_t(o)], true));
  for (int i = 0; i < c.n_in; ++i) ins.push_back(s.buffer(c.ins[size_t(i)], false));
  const Type compute = compute_type(source_dtype(c));
  wgsl::FormulaScope scope(s.body(), compute);
  if (word_pairs(c)) return make_word_pair_wgsl(c, s, outs[0], ins);
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
  const uint64_t invocations =
      word_pairs(c) ? (uint64_t(n) + uint64_t(call.out.offset & 1) + 1) / 2 : uint64_t(n);
  ctx.dispatch(pipe, bindings, p.w, groups_for(invocations, kWorkgroupSize));
}

}  // namespace numr::webgpu
