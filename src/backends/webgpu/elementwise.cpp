// Elementwise ops: one invocation per output element; every operand (outputs first) walks
// its own strided layout, or, when all are contiguous, takes its offset plus the index
// (a contiguous F16/BF16 result: two elements per invocation, one whole word). When all
// are contiguous and each operand's offset is a whole number of 16-byte words, invocations
// take several elements at once through vec4 loads and stores (make_vector_wgsl), and the
// elements after the last whole group go through the contiguous kernel. The op's formula
// comes from math/formula.h over wgsl::Value.
#include <algorithm>
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
  int vector = 0;     // elements per invocation of the vector kernel; 0: one (or a word pair)
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

// The vector kernel: invocation q < P[0] takes elements
// c.vector * q ... c.vector * q + c.vector - 1 of the row: operand k's vec4s from
// P[5 + k] (its offset in vec4s) + q * (c.vector / per_vec4), each a whole number of words
// of that operand alone, so that packed outputs are stored without atomics.
std::string make_vector_wgsl(const ElementwiseConfig& c) {
  Shader s;
  const int n_ops = c.n_out + c.n_in;
  auto dtype = [&](int k) { return k < c.n_out ? c.outs[size_t(k)] : c.ins[size_t(k - c.n_out)]; };
  std::vector<std::string> names;
  for (int k = 0; k < n_ops; ++k) names.push_back(s.array(vec4_type(dtype(k)), k < c.n_out));
  const Type compute = compute_type(source_dtype(c));
  wgsl::FormulaScope scope(s.body(), compute);
  wgsl::Body& b = s.body();
  const Value s0 = s.param(compute, "1"), s1 = s.param(compute, "3");
  const int E = c.vector;
  b.line("let groups = P[0];");
  for (int k = 0; k < n_ops; ++k)
    b.line("let base" + std::to_string(k) + " = P[" + std::to_string(5 + k) + "u];");
  b.line("if (gi < groups) {");
  b.line("let q = gi;");
  // The operand's vec4 v of this group.
  auto at = [&](int k, int v) {
    const int per = E / per_vec4(dtype(k));
    return names[size_t(k)] + "[base" + std::to_string(k) + " + q * " + std::to_string(per) +
           "u + " + std::to_string(v) + "u]";
  };
  // x[j]: the inputs of element j of the group, in the compute type.
  std::vector<std::vector<Value>> x(static_cast<size_t>(E));
  for (int i = 0; i < c.n_in; ++i) {
    const int k = c.n_out + i;
    const DType t = dtype(k);
    const int w = per_vec4(t);
    std::vector<std::string> vecs;
    for (int v = 0; v < E / w; ++v) {
      vecs.push_back("L" + std::to_string(k) + "_" + std::to_string(v));
      b.line("let " + vecs.back() + " = " + at(k, v) + ";");
    }
    for (int j = 0; j < E; ++j)
      x[size_t(j)].push_back(s.vec4_element(t, vecs[size_t(j / w)], j % w, compute));
  }
  for (int o = 0; o < c.n_out; ++o) {
    const DType t = dtype(o);
    const int w = per_vec4(t);
    std::vector<Value> y;
    for (int j = 0; j < E; ++j) y.push_back(apply(c, x[size_t(j)], s0, s1, o));
    for (int v = 0; v < E / w; ++v)
      b.line(at(o, v) + " = " +
             s.vec4_of(t, std::vector<Value>(y.begin() + v * w, y.begin() + (v + 1) * w)) + ";");
  }
  b.line("}");
  return s.finish();
}

std::string make_wgsl(const ElementwiseConfig& c) {
  if (c.vector) return make_vector_wgsl(c);
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
  Params scalars;
  // Scalars in the compute type, converted on the host as the CPU converts them.
  for (double v : call.scalars) {
    switch (compute_type(source_dtype(c))) {
      case Type::f32: scalars.f32(float(v)); break;
      case Type::i64: scalars.i64(int64_t(v)); break;
      default: scalars.i32(int64_t(v)); break;
    }
    if (scalars.w.size() % 2 == 1) scalars.u32(0);  // two words a scalar
  }
  c.flat = StridedLayout::flat(call.out.shape, operands);
  // The scalar kernels over n elements of `ops` (P: n, the two scalars, the layout).
  auto dispatch_scalar = [&](const std::vector<const TensorRef*>& ops, int64_t count,
                             const Shape& shape, int64_t out_offset) {
    Params p;
    p.u32(uint64_t(count));
    p.w.insert(p.w.end(), scalars.w.begin(), scalars.w.end());
    StridedLayout::push(p, shape, ops);
    ElementwiseConfig sc = c;
    sc.vector = 0;
    WGPUComputePipeline pipe = cached_pipeline(ctx, sc, make_wgsl, std::string(op_name(call.op)));
    const uint64_t invocations =
        word_pairs(sc) ? (uint64_t(count) + uint64_t(out_offset & 1) + 1) / 2 : uint64_t(count);
    ctx.dispatch(pipe, bindings, p.w, groups_for(invocations, kWorkgroupSize));
  };
  const int e = c.flat ? vector_width(operands) : 0;
  // An input in an output's buffer at another offset would be read by the tail's dispatch
  // after the vector dispatch wrote it: such calls keep the single dispatch.
  bool overlap = false;
  for (int o = 0; o < c.n_out; ++o)
    for (int i = c.n_out; i < int(operands.size()); ++i)
      overlap |= operands[size_t(o)]->base == operands[size_t(i)]->base &&
                 operands[size_t(o)]->offset != operands[size_t(i)]->offset;
  if (e == 0 || n < e || overlap) {
    dispatch_scalar(operands, n, call.out.shape, call.out.offset);
    return;
  }
  c.vector = e;
  const uint64_t groups = uint64_t(n / e);
  Params p;
  p.u32(groups);
  p.w.insert(p.w.end(), scalars.w.begin(), scalars.w.end());
  for (const TensorRef* r : operands) p.u32(uint64_t(r->offset / per_vec4(r->dtype)));
  ctx.dispatch(cached_pipeline(ctx, c, make_wgsl, std::string(op_name(call.op))), bindings, p.w,
               groups_for(groups, kWorkgroupSize));
  const int64_t done = int64_t(groups) * e, tail = n - done;
  if (tail == 0) return;
  // The last elements: the contiguous kernel over a row that starts after the groups.
  std::vector<TensorRef> rest;
  for (const TensorRef* r : operands) rest.push_back(row_after(*r, done, tail));
  std::vector<const TensorRef*> rest_ops;
  for (const TensorRef& r : rest) rest_ops.push_back(&r);
  dispatch_scalar(rest_ops, tail, rest[0].shape, rest[0].offset);
}

}  // namespace numr::webgpu
