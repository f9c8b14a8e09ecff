// Strided copies with dtype conversion, and fills: one invocation per destination element;
// contiguous operands take their offset plus the index, without the strided walk. A
// contiguous copy of whole words within one dtype is the queue's copy command.
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
  auto operator<=>(const CopyConfig&) const = default;
};

std::string copy_wgsl(const CopyConfig& c) {
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
  Params p;
  p.u32(uint64_t(n));
  StridedLayout::push(p, call.dst.shape, {&call.dst, &call.src});
  const Binding b[] = {{buffer_of(call.dst), true}, {buffer_of(call.src), false}};
  ctx.dispatch(cached_pipeline(ctx, c, copy_wgsl, "copy"), b, p.w,
               groups_for(uint64_t(n), kWorkgroupSize));
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
