// Reductions. One workgroup per output element: each invocation feeds the elements
// lid, lid + 256, ... of its row into a state in index order; the states then merge in a
// tree through workgroup memory. When there are too few outputs to fill the device and the
// rows are long, each row is cut into chunks of consecutive elements, one workgroup each,
// whose states go to a scratch buffer (the partial pass); a final pass then merges each
// row's chunk states in the same way, one workgroup per output. Feeding and merging follow
// math/reduce_rules.h (NaN-sticky max/min, first index on ties for argmax/argmin).
#include <algorithm>
#include <compare>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "backends/webgpu/kernels.h"
#include "backends/webgpu/pipeline_cache.h"
#include "backends/webgpu/shader.h"
#include "math/reduce_rules.h"

namespace numr::webgpu {

using wgsl::Type;
using wgsl::Value;

namespace {

// Direct: tensor to tensor. Partial: chunks of the tensor's rows to scratch states.
// Final: each row's scratch states to the tensor.
enum class Pass { direct, partial, final };

struct ReduceConfig {
  OpId op;
  DType in, out;
  Pass pass = Pass::direct;
  bool flat = false;  // the input is one contiguous row (StridedLayout::flat)
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
  // any/all test U8 and Bool in i32; float and I64 elements are tested whole.
  const Type t = (c.op == OpId::any || c.op == OpId::all) && compute_type(c.in) == Type::i32
                     ? Type::i32
                     : compute_type(c.in);
  const Type st = c.op == OpId::any || c.op == OpId::all ? Type::i32 : t;
  const bool kmax = c.op == OpId::argmax;
  // Bindings, outputs first: the result (or the partial states and their indexes), then
  // the input (or the states).
  std::string out, out_i, in, in_i;
  if (c.pass == Pass::partial) {
    out = s.array(wgsl::type_name(st), true);
    if (arg) out_i = s.array("i32", true);
  } else {
    out = arg ? s.words(true) : s.buffer(c.out, true);
  }
  if (c.pass == Pass::final) {
    in = s.array(wgsl::type_name(st), false);
    if (arg) in_i = s.array("i32", false);
  } else {
    in = s.buffer(c.in, false);
  }
  s.shared("sv", st, kWorkgroupSize);
  if (arg) s.shared("si", Type::i32, kWorkgroupSize);
  wgsl::Body& b = s.body();
  wgsl::FormulaScope scope(b, t);
  // P, direct: outputs, R (reduced count), the output's offset, the input's layout from
  // word 3. Partial: workgroups (outputs x chunks), R, chunks, the chunk length, the
  // input's layout from word 4. Final: outputs, chunks, the output's offset.
  b.line("if (wid >= P[0]) { return; }");
  {
    wgsl::FormulaScope sts(b, st);
    b.line("var acc: " + std::string(wgsl::type_name(st)) + " = " + identity(c.op, st).str() + ";");
  }
  b.line("var acc_i: i32 = -1;");
  const std::string step = std::to_string(kWorkgroupSize) + "u";
  const Value acc = Value::named(st, "acc");
  const Value ai = Value::named(Type::i32, "acc_i");
  const Value zero_i = Value::constant(Type::i32, 0);
  if (c.pass == Pass::final) {
    // The row's chunk states in order: each merges into the state of the earlier ones.
    b.line("let R = P[1];");
    b.line("for (var j: u32 = lid; j < R; j = j + " + step + ") {");
    {
      wgsl::FormulaScope sts(b, st);
      const Value x = Value::let(st, in + "[wid * R + j]");
      if (arg) {
        const Value xi = Value::let(Type::i32, in_i + "[wid * R + j]");
        const auto m =
            kmax ? math::arg_merge_takes<true>(xi >= zero_i, ai < zero_i, xi < ai, x, acc)
                 : math::arg_merge_takes<false>(xi >= zero_i, ai < zero_i, xi < ai, x, acc);
        b.line("if (" + m.str() + ") { acc = " + x.str() + "; acc_i = " + xi.str() + "; }");
      } else {
        b.line("acc = " + combine(c.op, acc, x).str() + ";");
      }
    }
    b.line("}");
  } else {
    if (c.pass == Pass::partial) {
      // Workgroup wid takes chunk wid % chunks of row wid / chunks.
      b.line("let R = P[1];");
      b.line("let row = wid / P[2];");
      b.line("let lo = (wid % P[2]) * P[3];");
      b.line("let hi = min(R, lo + P[3]);");
    } else {
      b.line("let R = P[1];");
      b.line("let row = wid;");
      b.line("let lo = 0u;");
      b.line("let hi = R;");
    }
    b.line("for (var j: u32 = lo + lid; j < hi; j = j + " + step + ") {");
    const uint32_t base = c.pass == Pass::partial ? 4 : 3;
    const Value lin = Value::let(Type::u32, "row * R + j");
    const Value idx = c.flat ? StridedLayout::emit_flat_offsets(s, base, 1, lin)[0]
                             : StridedLayout::emit_offsets(s, base, 1, lin)[0];
    const Value x = s.load(in, c.in, idx, t);
    if (arg) {
      const auto takes = math::arg_feed_takes<true>([&] { return ai < zero_i; }, x, acc);
      const auto takes_min = math::arg_feed_takes<false>([&] { return ai < zero_i; }, x, acc);
      const auto& tk = kmax ? takes : takes_min;
      b.line("if (" + tk.str() + ") { acc = " + x.str() + "; acc_i = i32(j); }");
    } else {
      b.line("acc = " + combine(c.op, acc, x).str() + ";");
    }
    b.line("}");
  }
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
      const auto m =
          kmax ? math::arg_merge_takes<true>(oi >= zero_i, mi < zero_i, oi < mi, other, mine)
               : math::arg_merge_takes<false>(oi >= zero_i, mi < zero_i, oi < mi, other, mine);
      b.line("if (" + m.str() + ") { sv[lid] = " + other.str() + "; si[lid] = " + oi.str() + "; }");
    } else {
      b.line("sv[lid] = " +
             (c.op == OpId::any   ? select(other != Value::constant(st, 0), other, mine)
              : c.op == OpId::all ? select(other == Value::constant(st, 0), other, mine)
                                  : combine(c.op, mine, other))
                 .str() +
             ";");
    }
  }
  b.line("}");
  b.line("workgroupBarrier();");
  b.line("}");
  b.line("if (lid == 0u) {");
  if (c.pass == Pass::partial) {
    b.line("  " + out + "[wid] = sv[0];");
    if (arg) b.line("  " + out_i + "[wid] = si[0];");
  } else if (arg) {
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

// Rows are cut into chunks when the outputs alone would give fewer workgroups than this
// many; a chunk has at least kMinChunk elements.
constexpr int64_t kSplitGroups = 2048;
constexpr int64_t kMinChunk = 16 * kWorkgroupSize;

void run_reduce(Context& ctx, const ReduceCall& call) {
  require_dtype(call.in.dtype, op_name(call.op).data());
  if (!is_arg(call.op)) require_dtype(call.out.dtype, op_name(call.op).data());
  const int64_t outs = call.out.numel();
  if (outs == 0) return;
  int64_t r = 1;
  for (size_t d = size_t(call.n_keep); d < call.in.shape.size(); ++d) r *= call.in.shape[d];
  const bool flat = StridedLayout::flat(call.in.shape, {&call.in});
  const std::string label(op_name(call.op));
  int64_t chunks = 1;
  if (outs < kSplitGroups && r >= 2 * kMinChunk)
    chunks = std::min((r + kMinChunk - 1) / kMinChunk, (kSplitGroups + outs - 1) / outs);
  if (chunks <= 1) {
    const ReduceConfig c{call.op, call.in.dtype, call.out.dtype, Pass::direct, flat};
    Params p;
    p.u32(uint64_t(outs));
    p.u32(uint64_t(r));
    p.u32(uint64_t(call.out.offset));
    StridedLayout::push(p, call.in.shape, {&call.in});
    const Binding b[] = {{buffer_of(call.out), true}, {buffer_of(call.in), false}};
    ctx.dispatch(cached_pipeline(ctx, c, reduce_wgsl, label), b, p.w, uint64_t(outs));
    return;
  }
  // Chunks of whole workgroup strides, so that every invocation of a chunk but the last
  // row's last has the same count of elements.
  const int64_t len = (r + chunks - 1) / chunks;
  const int64_t chunk = (len + kWorkgroupSize - 1) / kWorkgroupSize * kWorkgroupSize;
  chunks = (r + chunk - 1) / chunk;
  const int64_t groups = outs * chunks;
  const bool arg = is_arg(call.op);
  const bool wide =
      compute_type(call.in.dtype) == Type::i64 && call.op != OpId::any && call.op != OpId::all;
  Buffer* states = ctx.allocate(size_t(groups) * (wide ? 8 : 4));
  Buffer* indexes = arg ? ctx.allocate(size_t(groups) * 4) : nullptr;
  try {
    {
      const ReduceConfig c{call.op, call.in.dtype, call.out.dtype, Pass::partial, flat};
      Params p;
      p.u32(uint64_t(groups));
      p.u32(uint64_t(r));
      p.u32(uint64_t(chunks));
      p.u32(uint64_t(chunk));
      StridedLayout::push(p, call.in.shape, {&call.in});
      std::vector<Binding> b{{states, true}};
      if (arg) b.push_back({indexes, true});
      b.push_back({buffer_of(call.in), false});
      ctx.dispatch(cached_pipeline(ctx, c, reduce_wgsl, label), b, p.w, uint64_t(groups));
    }
    {
      const ReduceConfig c{call.op, call.in.dtype, call.out.dtype, Pass::final, false};
      Params p;
      p.u32(uint64_t(outs));
      p.u32(uint64_t(chunks));
      p.u32(uint64_t(call.out.offset));
      std::vector<Binding> b{{buffer_of(call.out), true}, {states, false}};
      if (arg) b.push_back({indexes, false});
      ctx.dispatch(cached_pipeline(ctx, c, reduce_wgsl, label), b, p.w, uint64_t(outs));
    }
  } catch (...) {
    ctx.deallocate(states);
    ctx.deallocate(indexes);
    throw;
  }
  // Recorded work holds its own reference, and a later use of the reused buffers is ordered
  // after it on the one queue (Context::deallocate).
  ctx.deallocate(states);
  ctx.deallocate(indexes);
}

}  // namespace numr::webgpu
