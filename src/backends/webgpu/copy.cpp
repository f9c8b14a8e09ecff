// Strided copies with dtype conversion, and fills: one invocation per destination element;
// contiguous operands take their offset plus the index, without the strided walk. A
// contiguous copy of whole words within one dtype is the queue's copy command.
#include <algorithm>
#include <cmath>
#include <compare>

#include "backends/webgpu/kernels.h"
#include "backends/webgpu/pipeline_cache.h"
#include "backends/webgpu/shader.h"

namespace numr::webgpu {

using wgsl::Type;
using wgsl::Value;

namespace {

struct CopyConfig {
  DType src, dst;
  bool flat = false;  // both one contiguous row (StridedLayout::flat)
  int vector = 0;     // elements per invocation of the vector kernel; 0: one
  auto operator<=>(const CopyConfig&) const = default;
};

// The vector kernel: invocation q < P[0] converts elements
// c.vector * q ... of the row, whole vec4s of each operand from P[1] (the destination's
// offset in vec4s) and P[2] (the source's); within one dtype the words move as they are.
std::string copy_vector_wgsl(const CopyConfig& c) {
  Shader s;
  const std::string dst = s.array(vec4_type(c.dst), true), src = s.array(vec4_type(c.src), false);
  const Type compute = compute_type(c.src);
  wgsl::FormulaScope scope(s.body(), compute);
  wgsl::Body& b = s.body();
  const int E = c.vector, ws = per_vec4(c.src), wd = per_vec4(c.dst);
  b.line("let groups = P[0];");
  b.line("let dst_base = P[1];");
  b.line("let src_base = P[2];");
  b.line("if (gi < groups) {");
  b.line("let q = gi;");
  auto at = [&](const std::string& name, const char* base, int w, int v) {
    return name + "[" + base + " + q * " + std::to_string(E / w) + "u + " + std::to_string(v) +
           "u]";
  };
  if (c.src == c.dst) {
    for (int v = 0; v < E / ws; ++v)
      b.line(at(dst, "dst_base", wd, v) + " = " + at(src, "src_base", ws, v) + ";");
  } else {
    std::vector<Value> x;
    for (int v = 0; v < E / ws; ++v) {
      const std::string name = "L" + std::to_string(v);
      b.line("let " + name + " = " + at(src, "src_base", ws, v) + ";");
      for (int r = 0; r < ws; ++r) x.push_back(s.vec4_element(c.src, name, r, compute));
    }
    for (int v = 0; v < E / wd; ++v)
      b.line(at(dst, "dst_base", wd, v) + " = " +
             s.vec4_of(c.dst, std::vector<Value>(x.begin() + v * wd, x.begin() + (v + 1) * wd)) +
             ";");
  }
  b.line("}");
  return s.finish();
}

std::string copy_wgsl(const CopyConfig& c) {
  if (c.vector) return copy_vector_wgsl(c);
  Shader s;
  const std::string dst = s.buffer(c.dst, true), src = s.buffer(c.src, false);
  wgsl::FormulaScope scope(s.body(), compute_type(c.src));
  s.body().line("if (gi >= P[0]) { return; }");
  const Value gi = Value::named(Type::u32, "gi");
  const std::vector<Value> idx = c.flat ? StridedLayout::emit_flat_offsets(s, 1, 2, gi)
                                        : StridedLayout::emit_offsets(s, 1, 2, gi);
  if (c.src == c.dst && (c.src == DType::F16 || c.src == DType::BF16))
    s.store_half_bits(dst, idx[0], s.load_half_bits(src, idx[1]));
  else
    s.store(dst, c.dst, idx[0], s.load(src, c.src, idx[1], compute_type(c.src)));
  return s.finish();
}

struct FillConfig {
  DType dst;
  bool flat = false;
  auto operator<=>(const FillConfig&) const = default;
};

std::string fill_wgsl(const FillConfig& c) {
  Shader s;
  const std::string dst = s.buffer(c.dst, true);
  wgsl::FormulaScope scope(s.body(), compute_type(c.dst));
  s.body().line("if (gi >= P[0]) { return; }");
  // P: n, the value in two words (the second for I64 only), the layout.
  const Value v = s.param(compute_type(c.dst), "1");
  const Value gi = Value::named(Type::u32, "gi");
  const std::vector<Value> idx = c.flat ? StridedLayout::emit_flat_offsets(s, 3, 1, gi)
                                        : StridedLayout::emit_offsets(s, 3, 1, gi);
  s.store(dst, c.dst, idx[0], v);
  return s.finish();
}

// value converted to an integer dtype as the CPU converts doubles: NaN -> 0, saturating.
int64_t saturate(double v, double lo, double hi) {
  if (std::isnan(v)) return 0;
  return int64_t(std::fmax(lo, std::fmin(hi, std::trunc(v))));
}

}  // namespace

void run_copy(Context& ctx, const CopyCall& call) {
  require_dtype(call.src.dtype, "copy");
  require_dtype(call.dst.dtype, "copy");
  const int64_t n = call.dst.numel();
  if (n == 0) return;
  const CopyConfig c{call.src.dtype, call.dst.dtype,
                     StridedLayout::flat(call.dst.shape, {&call.dst, &call.src})};
  // A contiguous copy within one dtype, of whole words between different buffers: the
  // copy command, which moves the bytes at the memory's own rate (NaN payloads as they are).
  const uint64_t size = dtype_size(call.dst.dtype);
  const uint64_t src_at = uint64_t(call.src.offset) * size,
                 dst_at = uint64_t(call.dst.offset) * size;
  const uint64_t bytes = uint64_t(n) * size;
  if (c.flat && c.src == c.dst && call.src.base != call.dst.base && src_at % 4 == 0 &&
      dst_at % 4 == 0 && bytes % 4 == 0) {
    ctx.copy(buffer_of(call.dst), dst_at, buffer_of(call.src), src_at, bytes);
    return;
  }
  auto dispatch_scalar = [&](const TensorRef& dst, const TensorRef& src, int64_t count) {
    Params p;
    p.u32(uint64_t(count));
    StridedLayout::push(p, dst.shape, {&dst, &src});
    CopyConfig sc = c;
    sc.vector = 0;
    const Binding b[] = {{buffer_of(dst), true}, {buffer_of(src), false}};
    ctx.dispatch(cached_pipeline(ctx, sc, copy_wgsl, "copy"), b, p.w,
                 groups_for(uint64_t(count), kWorkgroupSize));
  };
  // A source in the destination's buffer at another offset would be read by the tail's
  // dispatch after the vector dispatch wrote it: such copies keep the single dispatch.
  const int e = c.flat ? vector_width({&call.dst, &call.src}) : 0;
  const bool overlap = call.src.base == call.dst.base && call.src.offset != call.dst.offset;
  if (e == 0 || n < e || overlap) {
    dispatch_scalar(call.dst, call.src, n);
    return;
  }
  CopyConfig vc = c;
  vc.vector = e;
  const uint64_t groups = uint64_t(n / e);
  Params p;
  p.u32(groups);
  p.u32(uint64_t(call.dst.offset / per_vec4(call.dst.dtype)));
  p.u32(uint64_t(call.src.offset / per_vec4(call.src.dtype)));
  const Binding b[] = {{buffer_of(call.dst), true}, {buffer_of(call.src), false}};
  ctx.dispatch(cached_pipeline(ctx, vc, copy_wgsl, "copy"), b, p.w,
               groups_for(groups, kWorkgroupSize));
  const int64_t done = int64_t(groups) * e;
  if (done < n)
    dispatch_scalar(row_after(call.dst, done, n - done), row_after(call.src, done, n - done),
                    n - done);
}

void run_fill(Context& ctx, const FillCall& call) {
  require_dtype(call.dst.dtype, "fill");
  const int64_t n = call.dst.numel();
  if (n == 0) return;
  const FillConfig c{call.dst.dtype, StridedLayout::flat(call.dst.shape, {&call.dst})};
  Params p;
  p.u32(uint64_t(n));
  switch (call.dst.dtype) {
    case DType::F32:
    case DType::F16:
    case DType::BF16: p.f32(float(call.value)); break;
    case DType::I32: p.i32(saturate(call.value, -2147483648.0, 2147483647.0)); break;
    case DType::I64: p.i64(saturate_i64(call.value)); break;
    case DType::U8: p.i32(saturate(call.value, 0.0, 255.0)); break;
    default: p.i32(call.value != 0.0 ? 1 : 0); break;  // Bool; NaN is true
  }
  if (p.w.size() == 2) p.u32(0);
  StridedLayout::push(p, call.dst.shape, {&call.dst});
  const Binding b[] = {{buffer_of(call.dst), true}};
  ctx.dispatch(cached_pipeline(ctx, c, fill_wgsl, "fill"), b, p.w,
               groups_for(uint64_t(n), kWorkgroupSize));
}

}  // namespace numr::webgpu
