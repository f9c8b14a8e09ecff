// The GEMM epilogue's fused backward pass, F32, F16 or BF16 (computed and summed in f32):
// grad_pre = grad * act'(saved) (from the pre-activation or from the output,
// math/activation.h; a derivative that is not finite counts as 0) and d_bias = Σ_rows
// grad_pre. A workgroup covers 64 columns of a chunk of
// 256 rows, its four lanes of 64 invocations taking every fourth row, and writes the
// chunk's column sums; a second dispatch adds the chunks' sums of each column in order.
#include <algorithm>
#include <compare>

#include "backends/webgpu/kernels.h"
#include "backends/webgpu/pipeline_cache.h"
#include "backends/webgpu/shader.h"
#include "codegen/wgsl/value_math.h"
#include "core/op_scope.h"
#include "math/activation.h"
#include "numr/error.h"

namespace numr::webgpu {

using wgsl::Type;
using wgsl::Value;

namespace {

constexpr uint32_t kCols = 64;                       // columns per workgroup
constexpr uint32_t kLanes = kWorkgroupSize / kCols;  // rows taken at once
constexpr uint32_t kChunk = 256;                     // rows per workgroup
static_assert(kCols * kLanes == kWorkgroupSize);

struct PassConfig {
  DType dt = DType::F32;
  Activation act = Activation::None;
  bool saved_is_pre = true;
  auto operator<=>(const PassConfig&) const = default;
};

std::string u(uint32_t v) { return std::to_string(v) + "u"; }

// P: rows, N, column tiles, grad's, saved's and grad_pre's offsets.
std::string pass_wgsl(const PassConfig& c) {
  Shader s;
  const std::string grad_pre = s.buffer(c.dt, true);
  const std::string partial = s.buffer(DType::F32, true);
  const std::string grad = s.buffer(c.dt, false);
  const std::string saved = s.buffer(c.dt, false);
  s.shared("sv", Type::f32, kWorkgroupSize);
  wgsl::Body& b = s.body();
  wgsl::FormulaScope scope(b, Type::f32);
  b.line("let rows = P[0];");
  b.line("let N = P[1];");
  b.line("let chunks = (rows + " + u(kChunk - 1) + ") / " + u(kChunk) + ";");
  b.line("if (wid >= P[2] * chunks) { return; }");
  b.line("let chunk = wid / P[2];");
  b.line("let col = (wid % P[2]) * " + u(kCols) + " + lid % " + u(kCols) + ";");
  b.line("let end = min(rows, (chunk + 1u) * " + u(kChunk) + ");");
  b.line("var acc = 0.0;");
  b.line("if (col < N) {");
  b.line("for (var r: u32 = chunk * " + u(kChunk) + " + lid / " + u(kCols) + "; r < end; r = r + " +
         u(kLanes) + ") {");
  b.line("let e = r * N + col;");
  const Value g = s.load(grad, c.dt, Value::let(Type::u32, "P[3] + e"), Type::f32);
  const Value x = s.load(saved, c.dt, Value::let(Type::u32, "P[4] + e"), Type::f32);
  const Value gp = g * math::finite_or_zero(math::activation_grad(c.act, x, c.saved_is_pre));
  s.store(grad_pre, c.dt, Value::let(Type::u32, "P[5] + e"), gp);
  b.line("acc = acc + " + gp.str() + ";");
  b.line("}");
  b.line("}");
  b.line("sv[lid] = acc;");
  b.line("workgroupBarrier();");
  b.line("if (lid < " + u(kCols) + " && col < N) {");
  std::string sum = "sv[lid]";
  for (uint32_t l = 1; l < kLanes; ++l) sum = "(" + sum + " + sv[lid + " + u(l * kCols) + "])";
  b.line("  " + partial + "[chunk * N + col] = " + sum + ";");
  b.line("}");
  return s.finish();
}

struct SumConfig {
  DType dt = DType::F32;
  auto operator<=>(const SumConfig&) const = default;
};

// P: chunks, N, d_bias's offset.
std::string sum_wgsl(const SumConfig& c) {
  Shader s;
  const std::string d_bias = s.buffer(c.dt, true);
  const std::string partial = s.buffer(DType::F32, false);
  wgsl::Body& b = s.body();
  wgsl::FormulaScope scope(b, Type::f32);
  b.line("if (gi >= P[1]) { return; }");
  b.line("var acc = 0.0;");
  b.line("for (var c: u32 = 0u; c < P[0]; c = c + 1u) { acc = acc + " + partial +
         "[c * P[1] + gi]; }");
  s.store(d_bias, c.dt, Value::let(Type::u32, "P[2] + gi"), Value::let(Type::f32, "acc"));
  return s.finish();
}

}  // namespace

void run_bias_activation_bwd(Context& ctx, const BiasActBwdCall& call) {
  const DType dt = call.grad.dtype;
  for (const TensorRef* r : {&call.grad, &call.saved, &call.grad_pre, &call.d_bias})
    if (r->dtype != dt || (dt != DType::F32 && dt != DType::F16 && dt != DType::BF16))
      fail<UnsupportedDType>(current_op("bias_activation_bwd"),
                             "the webgpu backend's bias_activation_bwd takes F32, F16 or BF16 "
                             "(one dtype), got ",
                             dtype_name(r->dtype));
  const int64_t n = call.d_bias.numel();
  if (n == 0) return;
  const int64_t rows = call.grad.numel() / n;
  const int64_t chunks = int64_t(groups_for(uint64_t(rows), kChunk));
  const int64_t col_tiles = int64_t(groups_for(uint64_t(n), kCols));
  // An empty sum: the chunk loop below adds nothing.
  Buffer* partial = ctx.allocate(size_t(std::max<int64_t>(chunks * n, 1)) * sizeof(float));
  try {
    Params p;
    p.u32(uint64_t(rows));
    p.u32(uint64_t(n));
    p.u32(uint64_t(col_tiles));
    p.u32(uint64_t(call.grad.offset));
    p.u32(uint64_t(call.saved.offset));
    p.u32(uint64_t(call.grad_pre.offset));
    const Binding pass_bindings[] = {{buffer_of(call.grad_pre), true},
                                     {partial, true},
                                     {buffer_of(call.grad), false},
                                     {buffer_of(call.saved), false}};
    const PassConfig pc{dt, call.act, call.saved_is_pre};
    ctx.dispatch(cached_pipeline(ctx, pc, pass_wgsl, "bias_activation_bwd"), pass_bindings, p.w,
                 uint64_t(chunks * col_tiles));
    Params q;
    q.u32(uint64_t(chunks));
    q.u32(uint64_t(n));
    q.u32(uint64_t(call.d_bias.offset));
    const Binding sum_bindings[] = {{buffer_of(call.d_bias), true}, {partial, false}};
    ctx.dispatch(cached_pipeline(ctx, SumConfig{dt}, sum_wgsl, "bias_activation_bwd_sum"),
                 sum_bindings, q.w, groups_for(uint64_t(n), kWorkgroupSize));
  } catch (...) {
    ctx.deallocate(partial);
    throw;
  }
  // Work recorded with the buffer keeps its own reference, and a later user of the reused
  // buffer is ordered after it on the queue.
  ctx.deallocate(partial);
}

}  // namespace numr::webgpu
