// Reductions: one workgroup per output element. Each invocation feeds the elements
// lid, lid + 256, ... of its row into a state in index order; the states then merge in a
// tree through workgroup memory. Feeding and merging follow math/reduce_rules.h (NaN-sticky
// max/min, first index on ties for argmax/argmin).
#include <compare>
#include <cstdint>
#include <limits>

#include "backends/webgpu/kernels.h"
#include "backends/webgpu/pipeline_cache.h"
#include "backends/webgpu/shader.h"
#include "math/reduce_rules.h"

namespace numr::webgpu {

using wgsl::Type;
using wgsl::Value;

namespace {

struct ReduceConfig {
  OpId op;
  DType in, out;
  auto operator<=>(const ReduceConfig&) const = default;
};

bool is_arg(OpId op) { return op == OpId::argmax || op == OpId::argmin; }

// The state's start and how it takes one more element or a partial state (value parts).
Value identity(OpId op, Type t) {
  const bool f = t == Type::f32;
  if (t == Type::i64 && op != OpId::sum && op != OpId::prod) {
    const bool lowest = op == OpId::max || op == OpId::argmax;
    return Value::constant_i64(lowest ? std::numeric_limits<int64_t>::min()
                                      : std::numeric_limits<int64_t>::max());
  }
  switch (op) {
    case OpId::sum:
    case OpId::any: return Value::constant(t, 0);
    case OpId::prod:
    case OpId::all: return Value::constant(t, 1);
    case OpId::max:
    case OpId::argmax: return Value::constant(t, f ? -__builtin_inf() : -2147483648.0);
    default: return Value::constant(t, f ? __builtin_inf() : 2147483647.0);  // min, argmin
  }
}

Value combine(OpId op, const Value& s, const Value& x) {
  switch (op) {
    case OpId::sum: return s + x;
    case OpId::prod: return s * x;
    case OpId::max: return math::extreme_merge<true>(s, x);
    case OpId::min: return math::extreme_merge<false>(s, x);
    case OpId::any:
      return select(x != Value::constant(x.type(), 0), Value::constant(s.type(), 1), s);
    default:
      return select(x == Value::constant(x.type(), 0), Value::constant(s.type(), 0), s);  // all
  }
}

std::string reduce_wgsl(const ReduceConfig& c) {
  Shader s;
  const bool arg = is_arg(c.op);
  const std::string out = arg ? s.words(true) : s.buffer(c.out, true);
  const std::string in = s.buffer(c.in, false);
  // any/all test U8 and Bool in i32; float and I64 elements are tested whole.
  const Type t = (c.op == OpId::any || c.op == OpId::all) && compute_type(c.in) == Type::i32
                     ? Type::i32
                     : compute_type(c.in);
  const Type st = c.op == OpId::any || c.op == OpId::all ? Type::i32 : t;
  const bool kmax = c.op == OpId::argmax;
  s.shared("sv", st, kWorkgroupSize);
  if (arg) s.shared("si", Type::i32, kWorkgroupSize);
  wgsl::Body& b = s.body();
  wgsl::FormulaScope scope(b, t);
  // P: outputs, R (reduced count), the output's offset, the input's layout from word 3.
  b.line("if (wid >= P[0]) { return; }");
  b.line("let R = P[1];");
  {
    wgsl::FormulaScope sts(b, st);
    b.line("var acc: " + std::string(wgsl::type_name(st)) + " = " + identity(c.op, st).str() + ";");
  }
  b.line("var acc_i: i32 = -1;");
  b.line("for (var j: u32 = lid; j < R; j = j + " + std::to_string(kWorkgroupSize) + "u) {");
  {
    const Value lin = Value::let(Type::u32, "wid * R + j");
    const Value idx = StridedLayout::emit_offsets(s, 3, 1, lin)[0];
    const Value x = s.load(in, c.in, idx, t);
    const Value acc = Value::named(st, "acc");
    if (arg) {
      const Value ai = Value::named(Type::i32, "acc_i");
      const auto takes =
          math::arg_feed_takes<true>([&] { return ai < Value::constant(Type::i32, 0); }, x, acc);
      const auto takes_min =
          math::arg_feed_takes<false>([&] { return ai < Value::constant(Type::i32, 0); }, x, acc);
      const auto& tk = kmax ? takes : takes_min;
      b.line("if (" + tk.str() + ") { acc = " + x.str() + "; acc_i = i32(j); }");
    } else {
      b.line("acc = " + combine(c.op, acc, x).str() + ";");
    }
  }
  b.line("}");
  b.line("sv[lid] = acc;");
  if (arg) b.line("si[lid] = acc_i;");
  b.line("workgroupBarrier();");
  b.line("for (var w: u32 = " + std::to_string(kWorkgroupSize / 2) + "u; w > 0u; w = w >> 1u) {");
  b.line("if (lid < w) {");
  {
    wgsl::FormulaScope sts(b, st);
    const Value mine = Value::let(st, "sv[lid]"), other = Value::let(st, "sv[lid + w]");
    if (arg) {
      const Value mi = Value::let(Type::i32, "si[lid]"), oi = Value::let(Type::i32, "si[lid + w]");
      const Value zero = Value::constant(Type::i32, 0);
      const auto m =
          kmax ? math::arg_merge_takes<true>(oi >= zero, mi < zero, oi < mi, other, mine)
               : math::arg_merge_takes<false>(oi >= zero, mi < zero, oi < mi, other, mine);
      b.line("if (" + m.str() + ") { sv[lid] = " + other.str() + "; si[lid] = " + oi.str() + "; }");
    } else {
      const OpId merge_op = c.op == OpId::any ? OpId::any : c.op;
      b.line("sv[lid] = " +
             (c.op == OpId::any   ? select(other != Value::constant(st, 0), other, mine)
              : c.op == OpId::all ? select(other == Value::constant(st, 0), other, mine)
                                  : combine(merge_op, mine, other))
                 .str() +
             ";");
    }
  }
  b.line("}");
  b.line("workgroupBarrier();");
  b.line("}");
  b.line("if (lid == 0u) {");
  if (arg) {
    // I64 index: low word, then the sign extension (0 here: indexes are never negative,
    // and an empty state cannot reach the output).
    b.line("  " + out + "[2u * (P[2] + wid)] = bitcast<u32>(max(si[0], 0));");
    b.line("  " + out + "[2u * (P[2] + wid) + 1u] = 0u;");
  } else {
    wgsl::FormulaScope sts(b, st);
    s.store(out, c.out, Value::let(Type::u32, "P[2] + wid"), Value::let(st, "sv[0]"));
  }
  b.line("}");
  return s.finish();
}

}  // namespace

void run_reduce(Context& ctx, const ReduceCall& call) {
  require_dtype(call.in.dtype, op_name(call.op).data());
  if (!is_arg(call.op)) require_dtype(call.out.dtype, op_name(call.op).data());
  const int64_t outs = call.out.numel();
  if (outs == 0) return;
  int64_t r = 1;
  for (size_t d = size_t(call.n_keep); d < call.in.shape.size(); ++d) r *= call.in.shape[d];
  const ReduceConfig c{call.op, call.in.dtype, call.out.dtype};
  Params p;
  p.u32(uint64_t(outs));
  p.u32(uint64_t(r));
  p.u32(uint64_t(call.out.offset));
  StridedLayout::push(p, call.in.shape, {&call.in});
  const Binding b[] = {{buffer_of(call.out), true}, {buffer_of(call.in), false}};
  ctx.dispatch(cached_pipeline(ctx, c, reduce_wgsl, std::string(op_name(call.op))), b, p.w,
               uint64_t(outs));
}

}  // namespace numr::webgpu
