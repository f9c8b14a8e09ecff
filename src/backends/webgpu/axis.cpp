// softmax and log_softmax along n of a contiguous [outer, n, inner] tensor, F32, F16 or
// BF16, computed in f32. Each row is read twice: once for its statistics, online (the
// NaN-sticky max of every element, which is the shift, beside logsumexp's state of the
// finite elements: their max and Σexp(x - max), math/reduce_rules.h), and once for the
// output, exp(x - shift) / Σ or (x - shift) - log Σ. So a row with a NaN or a +inf, or with
// nothing but -inf, comes out NaN, as on the CPU and CUDA.
//   inner == 1: a lane of G invocations per row (G the power of two at or above n, at most
//   the workgroup), 256 / G rows per workgroup; the lanes' states merge in a tree through
//   workgroup memory and every lane then writes its elements of the row (F16 and BF16 a
//   whole u32 word of two at a time). Fewer than 2048 rows of 8192 elements or more are cut
//   into chunks of whole workgroup strides, a workgroup each, as the reductions are: one
//   pass writes each chunk's state, a second merges the row's states in a fixed order
//   (so every chunk of a row takes the same shift and sum) and writes the chunk.
//   inner > 1: an invocation per (outer, inner) column, walking it along n; neighbouring
//   invocations read neighbouring elements.
#include <algorithm>
#include <bit>
#include <compare>
#include <cstdint>
#include <limits>
#include <string>

#include "backends/webgpu/kernels.h"
#include "backends/webgpu/pipeline_cache.h"
#include "backends/webgpu/shader.h"
#include "codegen/wgsl/value_math.h"
#include "core/op_scope.h"
#include "math/reduce_rules.h"
#include "numr/error.h"

namespace numr::webgpu {

using wgsl::Type;
using wgsl::Value;

namespace {

// Long rows, few of them, are cut into chunks, a workgroup each: the partial pass writes
// each chunk's state, and the final pass merges its row's states and writes its chunk.
enum class Pass { whole, partial, final };

struct AxisConfig {
  OpId op;
  DType dt;
  bool columns = false;  // inner > 1: an invocation per column
  uint32_t lanes = 1;    // rows: invocations per row, a power of two up to the workgroup
  Pass pass = Pass::whole;
  auto operator<=>(const AxisConfig&) const = default;
};

std::string u(uint32_t v) { return std::to_string(v) + "u"; }

// F16 and BF16 rows are written a u32 word (two elements) per step, rather than an
// element at a time through the atomic and/or that keep a word's other half.
bool half_words(const AxisConfig& c) {
  return !c.columns && (c.dt == DType::F16 || c.dt == DType::BF16);
}

// The running state of some elements of a row: the NaN-sticky max of all of them (the
// shift) and logsumexp's (max, Σexp) of the finite ones.
struct State {
  Value shift, max, sum;
};

State named_state(const std::string& prefix) {
  return {Value::named(Type::f32, prefix + "_shift"), Value::named(Type::f32, prefix + "_max"),
          Value::named(Type::f32, prefix + "_sum")};
}

void assign(wgsl::Body& b, const State& to, const State& v) {
  b.line(to.shift.str() + " = " + v.shift.str() + ";");
  b.line(to.max.str() + " = " + v.max.str() + ";");
  b.line(to.sum.str() + " = " + v.sum.str() + ";");
}

State feed(const State& s, const Value& x) {
  const math::LogSumExp<Value> l = math::lse_add(math::LogSumExp<Value>{s.max, s.sum}, x);
  return {math::extreme_merge<true>(s.shift, x), l.max, l.sum};
}

State merge(const State& a, const State& o) {
  const math::LogSumExp<Value> l =
      math::lse_merge(math::LogSumExp<Value>{a.max, a.sum}, math::LogSumExp<Value>{o.max, o.sum});
  return {math::extreme_merge<true>(a.shift, o.shift), l.max, l.sum};
}

// Declares `acc_*`, the empty state, and feeds it the elements of the loop `loop_head`
// ({ ... } over j, the element at `index`).
State emit_stats(Shader& s, const std::string& in, DType dt, const std::string& loop_head,
                 const std::string& index) {
  wgsl::Body& b = s.body();
  const Value ninf = Value::constant(Type::f32, -std::numeric_limits<double>::infinity());
  const State acc = named_state("acc");
  b.line("var acc_shift: f32 = " + ninf.str() + ";");
  b.line("var acc_max: f32 = " + ninf.str() + ";");
  b.line("var acc_sum: f32 = 0.0;");
  b.line(loop_head);
  assign(b, acc, feed(acc, s.load(in, dt, Value::let(Type::u32, index), Type::f32)));
  b.line("}");
  return acc;
}

// The output of the elements of the loop `loop_head`, read at `in_index` and written at
// `out_index`, from the row's state.
void emit_write(Shader& s, const AxisConfig& c, const std::string& out, const std::string& in,
                const State& st, const std::string& loop_head, const std::string& in_index,
                const std::string& out_index) {
  wgsl::Body& b = s.body();
  const Value sum = math::lse_shifted_sum(st.shift, st.sum);
  const Value factor = c.op == OpId::softmax ? Value(1.0) / sum : log(sum);
  const auto y_of = [&](const std::string& index) {
    const Value d = s.load(in, c.dt, Value::let(Type::u32, index), Type::f32) - st.shift;
    return c.op == OpId::softmax ? exp(d) * factor : d - factor;
  };
  if (half_words(c)) {
    // Words of the row's output, a lane taking every G-th: a word wholly inside the row is
    // stored at once; one shared with the next or previous row keeps that row's half.
    const std::string to_bits = c.dt == DType::F16 ? "numr_f32_to_f16(" : "numr_f32_to_bf16(";
    b.line("let e0 = out_off + base;");
    b.line("let e1 = e0 + len;");
    b.line("let w_end = select(e0 >> 1u, (e1 + 1u) >> 1u, len > 0u);");
    b.line("for (var w: u32 = (e0 >> 1u) + lane; w < w_end; w = w + " + u(c.lanes) + ") {");
    b.line("let lo_in = 2u * w >= e0;");
    b.line("let hi_in = 2u * w + 1u < e1;");
    // An element outside the row reads the row's first or last element instead.
    const Value lo = Value::let(
        Type::u32, to_bits + y_of("in_off + select(e0, 2u * w, lo_in) - out_off").str() + ")");
    const Value hi = Value::let(
        Type::u32,
        to_bits + y_of("in_off + select(e1 - 1u, 2u * w + 1u, hi_in) - out_off").str() + ")");
    b.line("if (lo_in && hi_in) {");
    b.line("atomicStore(&" + out + "[w], " + lo.str() + " | (" + hi.str() + " << 16u));");
    b.line("} else if (lo_in) {");
    s.store_half_bits(out, Value::let(Type::u32, "2u * w"), lo);
    b.line("} else {");
    s.store_half_bits(out, Value::let(Type::u32, "2u * w + 1u"), hi);
    b.line("}");
    b.line("}");
    return;
  }
  b.line(loop_head);
  s.store(out, c.dt, Value::let(Type::u32, out_index), y_of(in_index));
  b.line("}");
}

// P: outer, n, inner, in's offset, out's offset; chunks: their count per row and length.
std::string axis_wgsl(const AxisConfig& c) {
  Shader s;
  // Partial: the chunks' states (shift, max, sum) out; final: read.
  const std::string out = c.pass == Pass::partial ? s.array("f32", true) : s.buffer(c.dt, true);
  const std::string in = s.buffer(c.dt, false);
  const std::string states = c.pass == Pass::final ? s.array("f32", false) : "";
  wgsl::Body& b = s.body();
  wgsl::FormulaScope scope(b, Type::f32);
  b.line("let outer = P[0];");
  b.line("let n = P[1];");
  b.line("let inner = P[2];");
  b.line("let in_off = P[3];");
  b.line("let out_off = P[4];");
  if (c.columns) {
    b.line("if (gi >= outer * inner) { return; }");
    b.line("let col_o = gi / inner;");
    b.line("let base = col_o * n * inner + (gi - col_o * inner);");
    const std::string loop = "for (var j: u32 = 0u; j < n; j = j + 1u) {";
    const State st = emit_stats(s, in, c.dt, loop, "in_off + base + j * inner");
    emit_write(s, c, out, in, st, loop, "in_off + base + j * inner", "out_off + base + j * inner");
    return s.finish();
  }
  // Rows past the end take part in the barriers with nothing to feed.
  const uint32_t g = c.lanes;
  s.shared("s_shift", Type::f32, kWorkgroupSize);
  s.shared("s_max", Type::f32, kWorkgroupSize);
  s.shared("s_sum", Type::f32, kWorkgroupSize);
  b.line("let lane = lid % " + u(g) + ";");
  if (c.pass == Pass::whole) {
    b.line("let row = wid * " + u(kWorkgroupSize / g) + " + lid / " + u(g) + ";");
    b.line("let len = select(0u, n, row < outer);");
    b.line("let base = row * n;");
  } else {
    // Workgroup wid takes chunk wid % chunks of row wid / chunks (elements base + j).
    b.line("let chunks = P[5];");
    b.line("if (wid >= outer * chunks) { return; }");
    b.line("let row = wid / chunks;");
    b.line("let lo = (wid % chunks) * P[6];");
    b.line("let len = min(n, lo + P[6]) - lo;");
    b.line("let base = row * n + lo;");
  }
  const std::string loop = "for (var j: u32 = lane; j < len; j = j + " + u(g) + ") {";
  State st = named_state("acc");
  if (c.pass == Pass::final) {
    // The row's chunk states, each invocation merging every 256th in order, then the tree:
    // the same order in every workgroup of the row, so they agree on the row's state.
    const Value ninf = Value::constant(Type::f32, -std::numeric_limits<double>::infinity());
    b.line("var acc_shift: f32 = " + ninf.str() + ";");
    b.line("var acc_max: f32 = " + ninf.str() + ";");
    b.line("var acc_sum: f32 = 0.0;");
    b.line("for (var k: u32 = lid; k < chunks; k = k + " + u(kWorkgroupSize) + ") {");
    b.line("let at = 3u * (row * chunks + k);");
    const State other{Value::let(Type::f32, states + "[at]"),
                      Value::let(Type::f32, states + "[at + 1u]"),
                      Value::let(Type::f32, states + "[at + 2u]")};
    assign(b, st, merge(st, other));
    b.line("}");
  } else {
    st = emit_stats(s, in, c.dt, loop, "in_off + base + j");
  }
  if (g > 1) {
    b.line("s_shift[lid] = acc_shift;");
    b.line("s_max[lid] = acc_max;");
    b.line("s_sum[lid] = acc_sum;");
    b.line("workgroupBarrier();");
    for (uint32_t w = g / 2; w >= 1; w /= 2) {
      b.line("if (lane < " + u(w) + ") {");
      const State other{Value::let(Type::f32, "s_shift[lid + " + u(w) + "]"),
                        Value::let(Type::f32, "s_max[lid + " + u(w) + "]"),
                        Value::let(Type::f32, "s_sum[lid + " + u(w) + "]")};
      const State m = merge(st, other);
      assign(b, st, m);
      b.line("s_shift[lid] = acc_shift;");
      b.line("s_max[lid] = acc_max;");
      b.line("s_sum[lid] = acc_sum;");
      b.line("}");
      b.line("workgroupBarrier();");
    }
    if (c.pass == Pass::partial) {
      b.line("if (lid == 0u) {");
      b.line(out + "[3u * wid] = s_shift[0];");
      b.line(out + "[3u * wid + 1u] = s_max[0];");
      b.line(out + "[3u * wid + 2u] = s_sum[0];");
      b.line("}");
      return s.finish();
    }
    // Every lane takes the row's state from its first lane.
    b.line("let head = lid - lane;");
    st = {Value::let(Type::f32, "s_shift[head]"), Value::let(Type::f32, "s_max[head]"),
          Value::let(Type::f32, "s_sum[head]")};
  }
  emit_write(s, c, out, in, st, loop, "in_off + base + j", "out_off + base + j");
  return s.finish();
}

}  // namespace

// Rows are cut into chunks when they alone would give fewer workgroups than this many; a
// chunk has at least kMinChunk elements.
constexpr int64_t kSplitGroups = 2048;
constexpr int64_t kMinChunk = 16 * kWorkgroupSize;

void run_along_axis(Context& ctx, const AxisCall& call) {
  const char* name = op_name(call.op).data();
  if (call.op != OpId::softmax && call.op != OpId::log_softmax)
    fail<BackendError>(current_op(name), "webgpu along_axis has no kernel for this op");
  if (call.in.dtype != call.out.dtype || compute_type(call.in.dtype) != Type::f32)
    fail<BackendError>(current_op(name), "webgpu along_axis takes F32, F16 or BF16 alike");
  require_dtype(call.in.dtype, name);
  if (call.outer <= 0 || call.n <= 0 || call.inner <= 0) return;
  // Element indexes are u32 in the shader.
  const uint64_t numel = uint64_t(call.outer) * uint64_t(call.n) * uint64_t(call.inner);
  const uint64_t limit = std::numeric_limits<uint32_t>::max();
  if (numel + uint64_t(std::max(call.in.offset, call.out.offset)) > limit)
    fail<BackendLimitation>(current_op(name), "webgpu: ", numel,
                            " elements along an axis exceed 32-bit indexes");
  AxisConfig c{call.op, call.in.dtype};
  Params p;
  p.u32(uint64_t(call.outer));
  p.u32(uint64_t(call.n));
  p.u32(uint64_t(call.inner));
  p.u32(uint64_t(call.in.offset));
  p.u32(uint64_t(call.out.offset));
  int64_t chunks = 1;
  if (call.inner == 1 && call.outer < kSplitGroups && call.n >= 2 * kMinChunk)
    chunks = std::min((call.n + kMinChunk - 1) / kMinChunk,
                      (kSplitGroups + call.outer - 1) / call.outer);
  if (chunks > 1) {
    // Chunks of whole workgroup strides.
    const int64_t len = (call.n + chunks - 1) / chunks;
    const int64_t chunk = (len + kWorkgroupSize - 1) / kWorkgroupSize * kWorkgroupSize;
    chunks = (call.n + chunk - 1) / chunk;
    p.u32(uint64_t(chunks));
    p.u32(uint64_t(chunk));
    const uint64_t groups = uint64_t(call.outer) * uint64_t(chunks);
    c.lanes = kWorkgroupSize;
    Buffer* states = ctx.allocate(size_t(groups) * 3 * sizeof(float));
    try {
      c.pass = Pass::partial;
      const Binding bp[] = {{states, true}, {buffer_of(call.in), false}};
      ctx.dispatch(cached_pipeline(ctx, c, axis_wgsl, name), bp, p.w, groups);
      c.pass = Pass::final;
      const Binding bf[] = {
          {buffer_of(call.out), true}, {buffer_of(call.in), false}, {states, false}};
      ctx.dispatch(cached_pipeline(ctx, c, axis_wgsl, name), bf, p.w, groups);
    } catch (...) {
      ctx.deallocate(states);
      throw;
    }
    // Recorded work holds its own reference (as in reduce.cpp).
    ctx.deallocate(states);
    return;
  }
  uint64_t groups = 0;
  if (call.inner > 1) {
    c.columns = true;
    groups = groups_for(uint64_t(call.outer) * uint64_t(call.inner), kWorkgroupSize);
  } else {
    c.lanes = uint32_t(std::min<uint64_t>(std::bit_ceil(uint64_t(call.n)), kWorkgroupSize));
    groups = groups_for(uint64_t(call.outer), kWorkgroupSize / c.lanes);
  }
  const Binding b[] = {{buffer_of(call.out), true}, {buffer_of(call.in), false}};
  ctx.dispatch(cached_pipeline(ctx, c, axis_wgsl, name), b, p.w, groups);
}

}  // namespace numr::webgpu
