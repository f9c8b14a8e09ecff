// Matmul and the GEMM epilogue forward, F32, F16 or BF16 (accumulated in f32): out = act(a @ b +
// bias) (+ residual), with pre = a @ b + bias when asked. Each workgroup of 16x16 invocations
// computes a 64x64 tile of one batch item's output, each invocation a 4x4 block of it (rows ty +
// 16i, columns tx + 16j, so neighbouring invocations touch neighbouring words). K is walked in
// slices of 16 staged in workgroup memory; reads past M, N or K load zeros and stores past M or N
// are skipped, so any size runs. Operands are read through their own strides (transposed, strided,
// flipped and broadcast batches alike); the staging loads run along whichever of an operand's two
// dims is contiguous. The epilogue applies math/activation.h at the store. Where the device has
// subgroups the kernel stages only B and passes A's values along the subgroup (shuffled_loop).
// Large products take the wide kernel instead: 128x128 tiles, an 8x8 block per invocation read
// from workgroup memory as vec4s, K in slices of 8 loaded into registers while the previous
// slice is multiplied.
#include <atomic>
#include <compare>
#include <cstdlib>
#include <string>
#include <vector>

#include "backends/webgpu/kernels.h"
#include "backends/webgpu/pipeline_cache.h"
#include "backends/webgpu/shader.h"
#include "codegen/wgsl/value_math.h"
#include "core/dim_merge.h"
#include "core/op_scope.h"
#include "math/activation.h"
#include "numr/error.h"

namespace numr::webgpu {

using wgsl::Type;
using wgsl::Value;

namespace {

constexpr uint32_t kTile = 64;   // output rows and columns per workgroup
constexpr uint32_t kSlice = 16;  // K per staging step
constexpr uint32_t kSide = 16;   // invocations per tile side (16 x 16 = kWorkgroupSize)
constexpr uint32_t kBlock = kTile / kSide;
// Staged rows are one word longer than the tile, so invocations storing along K hit
// different banks.
constexpr uint32_t kStride = kTile + 1;
static_assert(kSide * kSide == kWorkgroupSize && kBlock == 4);
static_assert(kTile * kSlice % kWorkgroupSize == 0);

struct MatmulConfig {
  DType dtype = DType::F32;  // every operand's
  bool a_k_fast = true;      // a's staging loads run along K (else along M)
  bool b_n_fast = true;      // b's staging loads run along N (else along K)
  bool has_bias = false, has_residual = false, has_pre = false;
  Activation act = Activation::None;
  bool subgroups = false;  // A's slice reaches the inner loop through subgroup shuffles
  bool wide = false;       // the 128x128 kernel (subgroups unused)
  auto operator<=>(const MatmulConfig&) const = default;
};

// The parameter words: sizes and tiling, then offsets and matrix strides, then the batch
// dims (merged) with a's and b's strides over them.
enum Word : uint32_t {
  kM,
  kN,
  kK,
  kTilesN,
  kTiles,  // tiles per batch item
  kItems,  // batch items
  kAOff,
  kAStrideM,
  kAStrideK,
  kBOff,
  kBStrideK,
  kBStrideN,
  kOutOff,
  kBiasOff,
  kResOff,
  kPreOff,
  kBatchDims,  // then extents, a's strides, b's strides
};

std::string u(uint32_t v) { return std::to_string(v) + "u"; }
std::string w(Word x) { return "P[" + u(x) + "]"; }
std::string wi(Word x) { return "bitcast<i32>(" + w(x) + ")"; }

// Stages one operand's 64 x 16 slice into workgroup memory `dst`, laid out [slice][tile]
// with rows of kStride words: each load's tile and slice coordinates (ti, si) run along
// the tile dim when `fast_is_tile`, else along the slice dim.
void stage(Shader& s, DType dtype, const std::string& src, const std::string& dst,
           bool fast_is_tile, const std::string& tile0, const std::string& tile_n,
           const std::string& tile_stride, const std::string& slice_stride,
           const std::string& base) {
  wgsl::Body& b = s.body();
  constexpr uint32_t per = kTile * kSlice / kWorkgroupSize;
  for (uint32_t p = 0; p < per; ++p) {
    const std::string t = "(lid + " + u(p * kWorkgroupSize) + ")";
    const std::string ti = fast_is_tile ? t + " % " + u(kTile) : t + " / " + u(kSlice);
    const std::string si = fast_is_tile ? t + " / " + u(kTile) : t + " % " + u(kSlice);
    b.line("{");
    b.line("  let ti = " + ti + ";");
    b.line("  let si = " + si + ";");
    b.line("  var v = 0.0;");
    b.line("  if (" + tile0 + " + ti < " + tile_n + " && k0 + si < K) {");
    const Value idx =
        Value::let(Type::u32, "u32(" + base + " + i32(" + tile0 + " + ti) * " + tile_stride +
                                  " + i32(k0 + si) * " + slice_stride + ")");
    b.line("    v = " + s.load(src, dtype, idx, Type::f32).str() + ";");
    b.line("  }");
    b.line("  " + dst + "[si * " + u(kStride) + " + ti] = v;");
    b.line("}");
  }
}

// One step of the inner loop: the 4x4 block's FMAs with the 4 values of A's column `acol`
// (rows ty + 16i) and B's row at slice position `kk` from workgroup memory.
void fma_block(wgsl::Body& b, const std::string& kk, const std::string& acol) {
  b.line("let ka = (" + kk + ") * " + u(kStride) + ";");
  std::string bv = "vec4<f32>(";
  for (uint32_t j = 0; j < kBlock; ++j)
    bv += std::string(j ? ", " : "") + "sb[ka + tx + " + u(kSide * j) + "]";
  b.line("let bv = " + bv + ");");
  for (uint32_t i = 0; i < kBlock; ++i) {
    const std::string acc = "acc" + std::to_string(i);
    b.line(acc + " = fma(vec4<f32>(" + acol + "[" + u(i) + "]), bv, " + acc + ");");
  }
}

// The K loop with both slices staged in workgroup memory.
void staged_loop(Shader& s, const MatmulConfig& c, const std::string& a, const std::string& bb) {
  wgsl::Body& b = s.body();
  b.line("for (var k0: u32 = 0u; k0 < K; k0 = k0 + " + u(kSlice) + ") {");
  stage(s, c.dtype, a, "sa", !c.a_k_fast, "m0", "M", "sam", "sak", "ao");
  stage(s, c.dtype, bb, "sb", c.b_n_fast, "n0", "N", "sbn", "sbk", "bo");
  b.line("workgroupBarrier();");
  b.line("for (var kk: u32 = 0u; kk < " + u(kSlice) + "; kk = kk + 1u) {");
  std::string acol = "vec4<f32>(";
  for (uint32_t i = 0; i < kBlock; ++i)
    acol += std::string(i ? ", " : "") + "sa[kk * " + u(kStride) + " + ty + " + u(kSide * i) + "]";
  b.line("let acol = " + acol + ");");
  fma_block(b, "kk", "acol");
  b.line("}");
  b.line("workgroupBarrier();");
  b.line("}");
}

// Whether this workgroup's subgroups are laid out as the shuffled loop needs: all full, of
// one power-of-two size, each a run of consecutive local indices starting at a multiple of
// its size (what Vulkan drivers do, though WebGPU promises none of it). Sets the uniform
// `sg_linear` and `sg_g`, the lanes sharing one row of invocations (ty) in a subgroup:
// min(subgroup size, 16). A workgroup laid out otherwise takes the staged loop.
void emit_subgroup_layout(Shader& s) {
  s.decl("var<workgroup> numr_sg: atomic<u32>;\n");
  wgsl::Body& b = s.body();
  b.line("let sg_lanes = subgroupAdd(1u);");
  b.line("let sg_first = subgroupBroadcast(lid, 0u);");
  b.line("let sg_ok = sg_size >= 1u && sg_size <= " + u(kWorkgroupSize) +
         " && (sg_size & (sg_size - 1u)) == 0u && sg_lanes == sg_size && "
         "sg_id == lid % max(sg_size, 1u) && sg_first + sg_id == lid;");
  // Every invocation ORs in its g, or a bit above any g when its subgroup is not so laid
  // out; subgroups of different sizes OR to a g that is not a power of two.
  b.line("atomicOr(&numr_sg, select(0x10000u, min(sg_size, " + u(kSide) + "), sg_ok));");
  b.line("let sg_g = workgroupUniformLoad(&numr_sg);");
  b.line("let sg_linear = sg_g < 0x10000u && (sg_g & (sg_g - 1u)) == 0u;");
}

// The K loop with B staged in workgroup memory and A read straight into registers: in each
// run of g slice positions, the lane at position p of its row's g lanes loads A's 4 values
// (rows ty + 16i) at K position p, and the run's FMAs take each position's values from its
// lane with subgroupShuffle. The inner loop thus reads one word of workgroup memory per 4
// FMAs where the staged loop reads two, and each slice stores half as many words, for one
// register exchange per value of A; with g < 16 a row's lanes span several subgroups, each
// loading A's values of that row once more (from cache).
void shuffled_loop(Shader& s, const MatmulConfig& c, const std::string& a, const std::string& bb) {
  wgsl::Body& b = s.body();
  b.line("let sg_p = tx & (sg_g - 1u);");
  b.line("let sg_row0 = sg_id - sg_p;");
  b.line("for (var k0: u32 = 0u; k0 < K; k0 = k0 + " + u(kSlice) + ") {");
  stage(s, c.dtype, bb, "sb", c.b_n_fast, "n0", "N", "sbn", "sbk", "bo");
  b.line("workgroupBarrier();");
  b.line("for (var kc: u32 = 0u; kc < " + u(kSlice) + "; kc = kc + sg_g) {");
  b.line("let kq = k0 + kc + sg_p;");
  b.line("var areg = vec4<f32>(0.0);");
  b.line("if (kq < K) {");
  for (uint32_t i = 0; i < kBlock; ++i) {
    b.line("let row" + std::to_string(i) + " = m0 + ty + " + u(kSide * i) + ";");
    b.line("if (row" + std::to_string(i) + " < M) {");
    const Value idx =
        Value::let(Type::u32, "u32(ao + i32(row" + std::to_string(i) + ") * sam + i32(kq) * sak)");
    b.line("areg[" + u(i) + "] = " + s.load(a, c.dtype, idx, Type::f32).str() + ";");
    b.line("}");
  }
  b.line("}");
  b.line("for (var t: u32 = 0u; t < sg_g; t = t + 1u) {");
  b.line("let acol = subgroupShuffle(areg, sg_row0 + t);");
  fma_block(b, "kc + t", "acol");
  b.line("}");
  b.line("}");
  b.line("workgroupBarrier();");
  b.line("}");
}

// The module's bindings, in the order run() binds them.
struct Bindings {
  std::string out, pre, a, b, bias, res;
};

Bindings declare_bindings(Shader& s, const MatmulConfig& c) {
  Bindings n;
  n.out = s.buffer(c.dtype, true);
  if (c.has_pre) n.pre = s.buffer(c.dtype, true);
  n.a = s.buffer(c.dtype, false);
  n.b = s.buffer(c.dtype, false);
  if (c.has_bias) n.bias = s.buffer(c.dtype, false);
  if (c.has_residual) n.res = s.buffer(c.dtype, false);
  return n;
}

// Sizes, the workgroup's batch item and tile origin (m0, n0) for tiles of `tile`, a's and
// b's offsets for that item (walking the merged batch dims) and their matrix strides.
void emit_prologue(wgsl::Body& b, uint32_t tile) {
  b.line("let M = " + w(kM) + ";");
  b.line("let N = " + w(kN) + ";");
  b.line("let K = " + w(kK) + ";");
  b.line("if (wid >= " + w(kTiles) + " * " + w(kItems) + ") { return; }");
  b.line("let item = wid / " + w(kTiles) + ";");
  b.line("let tile = wid % " + w(kTiles) + ";");
  b.line("let m0 = (tile / " + w(kTilesN) + ") * " + u(tile) + ";");
  b.line("let n0 = (tile % " + w(kTilesN) + ") * " + u(tile) + ";");
  b.line("let tx = lid % " + u(kSide) + ";");
  b.line("let ty = lid / " + u(kSide) + ";");
  b.line("let nb = " + w(kBatchDims) + ";");
  b.line("var ao: i32 = " + wi(kAOff) + ";");
  b.line("var bo: i32 = " + wi(kBOff) + ";");
  b.line("var r: u32 = item;");
  b.line("for (var d: i32 = i32(nb) - 1; d >= 0; d = d - 1) {");
  b.line("  let e = P[" + u(kBatchDims + 1) + " + u32(d)];");
  b.line("  let ci = i32(r % e);");
  b.line("  r = r / e;");
  b.line("  ao = ao + ci * bitcast<i32>(P[" + u(kBatchDims + 1) + " + nb + u32(d)]);");
  b.line("  bo = bo + ci * bitcast<i32>(P[" + u(kBatchDims + 1) + " + 2u * nb + u32(d)]);");
  b.line("}");
  b.line("let sam = " + wi(kAStrideM) + ";");
  b.line("let sak = " + wi(kAStrideK) + ";");
  b.line("let sbk = " + wi(kBStrideK) + ";");
  b.line("let sbn = " + wi(kBStrideN) + ";");
}

// The store of the f32 value `x` at output (row, col), inside the caller's bounds checks:
// the bias, the saved pre-activation, the activation and the residual.
void emit_store(Shader& s, const MatmulConfig& c, const Bindings& n, const std::string& x) {
  wgsl::Body& b = s.body();
  b.line("let e = item * M * N + row * N + col;");
  Value v = Value::let(Type::f32, x);
  if (c.has_bias)
    v = v + s.load(n.bias, c.dtype, Value::let(Type::u32, w(kBiasOff) + " + col"), Type::f32);
  if (c.has_pre) s.store(n.pre, c.dtype, Value::let(Type::u32, w(kPreOff) + " + e"), v);
  Value y = math::activate(c.act, v);
  if (c.has_residual)
    y = y + s.load(n.res, c.dtype, Value::let(Type::u32, w(kResOff) + " + e"), Type::f32);
  s.store(n.out, c.dtype, Value::let(Type::u32, w(kOutOff) + " + e"), y);
}

// The store of every accumulator, with the epilogue written once: the vec4 accumulators are
// gathered into an array indexed only here, after the K loop; element j of accumulator i is
// output (row, col) for the WGSL expressions `row` (of i) and `col` (of i and j).
void emit_accumulator_store(Shader& s, const MatmulConfig& c, const Bindings& n,
                            const std::vector<std::string>& accs, const std::string& row,
                            const std::string& col) {
  wgsl::Body& b = s.body();
  std::string list;
  for (const std::string& a : accs) list += (list.empty() ? "" : ", ") + a;
  const std::string count = std::to_string(accs.size());
  b.line("var accs = array<vec4<f32>, " + count + ">(" + list + ");");
  b.line("for (var i: u32 = 0u; i < " + count + "u; i = i + 1u) {");
  b.line("let row = " + row + ";");
  b.line("if (row < M) {");
  b.line("for (var j: u32 = 0u; j < 4u; j = j + 1u) {");
  b.line("let col = " + col + ";");
  b.line("if (col < N) {");
  emit_store(s, c, n, "accs[i][j]");
  b.line("}");
  b.line("}");
  b.line("}");
  b.line("}");
}

std::string narrow_wgsl(const MatmulConfig& c) {
  Shader s;
  if (c.subgroups) s.use_subgroups();
  const Bindings n = declare_bindings(s, c);
  s.shared("sa", Type::f32, kSlice * kStride);
  s.shared("sb", Type::f32, kSlice * kStride);
  wgsl::Body& b = s.body();
  wgsl::FormulaScope scope(b, Type::f32);
  emit_prologue(b, kTile);
  for (uint32_t i = 0; i < kBlock; ++i)
    b.line("var acc" + std::to_string(i) + " = vec4<f32>(0.0);");
  if (c.subgroups) {
    emit_subgroup_layout(s);
    b.line("if (sg_linear) {");
    shuffled_loop(s, c, n.a, n.b);
    b.line("} else {");
    staged_loop(s, c, n.a, n.b);
    b.line("}");
  } else {
    staged_loop(s, c, n.a, n.b);
  }
  std::vector<std::string> accs;
  for (uint32_t i = 0; i < kBlock; ++i) accs.push_back("acc" + std::to_string(i));
  emit_accumulator_store(s, c, n, accs, "m0 + ty + " + u(kSide) + " * i",
                         "n0 + tx + " + u(kSide) + " * j");
  return s.finish();
}

// The wide kernel. Invocation (tx, ty) owns rows ty*4 + r and 64 + ty*4 + r, columns tx*4 + j
// and 64 + tx*4 + j (r, j < 4): each step of K reads two vec4s of A's column and two of B's
// row from workgroup memory for 64 FMAs. The slices are held as vec4s along the tile dim:
// wa[k * 32 + row / 4][row % 4].
constexpr uint32_t kWideTile = 128;
constexpr uint32_t kWideSlice = 8;
constexpr uint32_t kWideQuads = kWideTile / 4;  // vec4s per slice position
static_assert(kWideTile * kWideSlice == 4 * kWorkgroupSize);

// One operand's loads of slice k0 + [0, 8) into registers `reg`0..3 (zero past the tile or K),
// and their store into workgroup memory `dst`. Each invocation takes four elements: along the
// slice dim when the tile dim is not the contiguous one (four neighbouring words of one row),
// else one tile position at four slice positions.
struct WideOperand {
  std::string src, dst, reg, tile0, tile_n, tile_stride, slice_stride, base;
  bool fast_is_tile;
  std::string ti() const { return fast_is_tile ? "lid % " + u(kWideTile) : "lid / 2u"; }
  std::string si(uint32_t j) const {
    return fast_is_tile ? "lid / " + u(kWideTile) + " + " + u(2 * j) : "(lid % 2u) * 4u + " + u(j);
  }
};

void wide_load(Shader& s, DType dtype, const WideOperand& o, const std::string& k0) {
  wgsl::Body& b = s.body();
  b.line("{");
  b.line("let ti = " + o.ti() + ";");
  b.line("let inside = " + o.tile0 + " + ti < " + o.tile_n + ";");
  for (uint32_t j = 0; j < 4; ++j) {
    const std::string r = o.reg + std::to_string(j);
    b.line(r + " = 0.0;");
    b.line("if (inside && " + k0 + " + " + o.si(j) + " < K) {");
    const Value idx =
        Value::let(Type::u32, "u32(" + o.base + " + i32(" + o.tile0 + " + ti) * " + o.tile_stride +
                                  " + i32(" + k0 + " + " + o.si(j) + ") * " + o.slice_stride + ")");
    b.line(r + " = " + s.load(o.src, dtype, idx, Type::f32).str() + ";");
    b.line("}");
  }
  b.line("}");
}

void wide_store(wgsl::Body& b, const WideOperand& o) {
  b.line("{");
  b.line("let ti = " + o.ti() + ";");
  for (uint32_t j = 0; j < 4; ++j)
    b.line(o.dst + "[(" + o.si(j) + ") * " + u(kWideQuads) + " + ti / 4u][ti % 4u] = " + o.reg +
           std::to_string(j) + ";");
  b.line("}");
}

std::string acc_name(uint32_t r, uint32_t h) {
  return "acc" + std::to_string(r) + "_" + std::to_string(h);
}

std::string wide_wgsl(const MatmulConfig& c) {
  Shader s;
  const Bindings n = declare_bindings(s, c);
  const std::string quads = std::to_string(kWideSlice * kWideQuads);
  s.decl("var<workgroup> wa: array<vec4<f32>, " + quads + ">;\n");
  s.decl("var<workgroup> wb: array<vec4<f32>, " + quads + ">;\n");
  wgsl::Body& b = s.body();
  wgsl::FormulaScope scope(b, Type::f32);
  emit_prologue(b, kWideTile);
  const WideOperand a{n.a, "wa", "pa", "m0", "M", "sam", "sak", "ao", !c.a_k_fast};
  const WideOperand bo{n.b, "wb", "pb", "n0", "N", "sbn", "sbk", "bo", c.b_n_fast};
  for (uint32_t r = 0; r < 8; ++r)
    for (uint32_t h = 0; h < 2; ++h) b.line("var " + acc_name(r, h) + " = vec4<f32>(0.0);");
  for (uint32_t j = 0; j < 4; ++j) {
    b.line("var pa" + std::to_string(j) + ": f32;");
    b.line("var pb" + std::to_string(j) + ": f32;");
  }
  wide_load(s, c.dtype, a, "0u");
  wide_load(s, c.dtype, bo, "0u");
  b.line("for (var k0: u32 = 0u; k0 < K; k0 = k0 + " + u(kWideSlice) + ") {");
  wide_store(b, a);
  wide_store(b, bo);
  b.line("workgroupBarrier();");
  b.line("let k1 = k0 + " + u(kWideSlice) + ";");
  b.line("if (k1 < K) {");
  wide_load(s, c.dtype, a, "k1");
  wide_load(s, c.dtype, bo, "k1");
  b.line("}");
  for (uint32_t kk = 0; kk < kWideSlice; ++kk) {
    const std::string base = u(kk * kWideQuads);
    b.line("{");
    b.line("let a0 = wa[" + base + " + ty];");
    b.line("let a1 = wa[" + base + " + " + u(kSide) + " + ty];");
    b.line("let b0 = wb[" + base + " + tx];");
    b.line("let b1 = wb[" + base + " + " + u(kSide) + " + tx];");
    for (uint32_t r = 0; r < 8; ++r) {
      const std::string av = "vec4<f32>(a" + std::to_string(r / 4) + "[" + u(r % 4) + "])";
      for (uint32_t h = 0; h < 2; ++h)
        b.line(acc_name(r, h) + " = fma(" + av + ", b" + std::to_string(h) + ", " + acc_name(r, h) +
               ");");
    }
    b.line("}");
  }
  b.line("workgroupBarrier();");
  b.line("}");
  // Accumulator i = 2r + h holds four neighbouring columns of one row.
  std::vector<std::string> accs;
  for (uint32_t r = 0; r < 8; ++r)
    for (uint32_t h = 0; h < 2; ++h) accs.push_back(acc_name(r, h));
  emit_accumulator_store(s, c, n, accs, "m0 + (i / 8u) * 64u + (i / 2u) % 4u + ty * 4u",
                         "n0 + (i % 2u) * 64u + tx * 4u + j");
  return s.finish();
}

std::string matmul_wgsl(const MatmulConfig& c) { return c.wide ? wide_wgsl(c) : narrow_wgsl(c); }

// Whether the staging loads of a matrix with strides (s_tile, s_slice) should run along the
// tile dim: when that one is the contiguous dim and the slice dim is not.
bool tile_is_fast(int64_t s_tile, int64_t s_slice) { return s_tile == 1 && s_slice != 1; }

std::atomic<uint64_t> subgroup_dispatches{0};
std::atomic<uint64_t> wide_dispatches{0};

// The wide kernel where its tiles still give every multiprocessor of a large GPU a few
// workgroups; NUMR_WEBGPU_GEMM=wide or =narrow picks one kernel for every size (read at each
// call, as NUMR_WEBGPU_SUBGROUPS is).
bool use_wide(uint64_t m, uint64_t n, uint64_t items) {
  if (const char* env = std::getenv("NUMR_WEBGPU_GEMM")) {
    if (std::string(env) == "wide") return true;
    if (std::string(env) == "narrow") return false;
  }
  constexpr uint64_t kMinWideTiles = 256;
  return groups_for(m, kWideTile) * groups_for(n, kWideTile) * items >= kMinWideTiles;
}

// The subgroup kernel where the device has subgroups, unless NUMR_WEBGPU_SUBGROUPS=0 (read
// at each call, so that one process can run both kernels).
bool subgroups_enabled(const Context& ctx) {
  if (!ctx.has_subgroups()) return false;
  const char* env = std::getenv("NUMR_WEBGPU_SUBGROUPS");
  return !(env && std::string(env) == "0");
}

struct Operands {
  const TensorRef *a, *b, *out;
  const TensorRef *bias = nullptr, *residual = nullptr, *pre = nullptr;
  Activation act = Activation::None;
};

void run(Context& ctx, const Operands& o, const char* op) {
  const DType dt = o.a->dtype;
  if (dt != DType::F32 && dt != DType::F16 && dt != DType::BF16)
    fail<UnsupportedDType>(current_op(op), "the webgpu backend's GEMM takes F32, F16 or BF16, got ",
                           dtype_name(dt));
  for (const TensorRef* r : {o.b, o.out, o.bias, o.residual, o.pre})
    if (r && r->dtype != dt)
      fail<BackendError>(current_op(op), "webgpu: GEMM operands of ", dtype_name(dt), " and ",
                         dtype_name(r->dtype));
  const TensorRef& a = *o.a;
  const TensorRef& b = *o.b;
  const size_t nd = a.shape.size();
  const int64_t m = a.shape[nd - 2], k = a.shape[nd - 1], n = b.shape[nd - 1];
  if (b.shape.size() != nd)
    fail<BackendError>(current_op(op), "webgpu: a ", shape_str(a.shape), " and b ",
                       shape_str(b.shape), " need the same batch dims");
  if (o.out->numel() == 0) return;
  const Shape batch(a.shape.begin(), a.shape.end() - 2);
  const int64_t items = shape_numel(batch);
  MatmulConfig c;
  c.wide = use_wide(uint64_t(m), uint64_t(n), uint64_t(items));
  const uint64_t tile = c.wide ? kWideTile : kTile;
  const int64_t tiles_n = int64_t(groups_for(uint64_t(n), tile));
  const int64_t tiles = int64_t(groups_for(uint64_t(m), tile)) * tiles_n;

  c.dtype = dt;
  c.a_k_fast = !tile_is_fast(a.strides[nd - 2], a.strides[nd - 1]);
  c.b_n_fast = tile_is_fast(b.strides[nd - 1], b.strides[nd - 2]);
  c.has_bias = o.bias != nullptr;
  c.has_residual = o.residual != nullptr;
  c.has_pre = o.pre != nullptr;
  c.act = o.act;
  c.subgroups = !c.wide && subgroups_enabled(ctx);

  Params p;
  p.u32(uint64_t(m));
  p.u32(uint64_t(n));
  p.u32(uint64_t(k));
  p.u32(uint64_t(tiles_n));
  p.u32(uint64_t(tiles));
  p.u32(uint64_t(items));
  p.i32(a.offset);
  p.i32(a.strides[nd - 2]);
  p.i32(a.strides[nd - 1]);
  p.i32(b.offset);
  p.i32(b.strides[nd - 2]);
  p.i32(b.strides[nd - 1]);
  p.u32(uint64_t(o.out->offset));
  p.u32(uint64_t(o.bias ? o.bias->offset : 0));
  p.u32(uint64_t(o.residual ? o.residual->offset : 0));
  p.u32(uint64_t(o.pre ? o.pre->offset : 0));
  const Strides a_batch(a.strides.begin(), a.strides.end() - 2);
  const Strides b_batch(b.strides.begin(), b.strides.end() - 2);
  const Strides* bs[] = {&a_batch, &b_batch};
  const MergedDims md = merge_dims(batch, bs);
  p.u32(md.extents.size());
  for (int64_t e : md.extents) p.u32(uint64_t(e));
  for (const auto& st : md.strides)
    for (int64_t x : st) p.i32(x);

  std::vector<Binding> bindings = {{buffer_of(*o.out), true}};
  if (o.pre) bindings.push_back({buffer_of(*o.pre), true});
  bindings.push_back({buffer_of(a), false});
  bindings.push_back({buffer_of(b), false});
  if (o.bias) bindings.push_back({buffer_of(*o.bias), false});
  if (o.residual) bindings.push_back({buffer_of(*o.residual), false});
  WGPUComputePipeline pipe = cached_pipeline(ctx, c, matmul_wgsl, op);
  ctx.dispatch(pipe, bindings, p.w, uint64_t(items * tiles));
  if (c.subgroups) subgroup_dispatches.fetch_add(1, std::memory_order_relaxed);
  if (c.wide) wide_dispatches.fetch_add(1, std::memory_order_relaxed);
}

std::string layout_probe_wgsl(const int&) {
  Shader s;
  s.use_subgroups();
  const std::string out = s.words(true);
  emit_subgroup_layout(s);
  s.body().line("if (lid == 0u) { " + out + "[0] = sg_g; " + out + "[1] = sg_size; }");
  return s.finish();
}

}  // namespace

uint64_t matmul_subgroup_dispatches() { return subgroup_dispatches.load(); }
uint64_t matmul_wide_dispatches() { return wide_dispatches.load(); }

SubgroupLayout probe_subgroup_layout(Context& ctx) {
  SubgroupLayout r;
  if (!ctx.has_subgroups()) return r;
  WGPUComputePipeline pipe = cached_pipeline(ctx, 0, layout_probe_wgsl, "subgroup_layout");
  Buffer* out = ctx.allocate(8);
  const Binding bind{out, true};
  ctx.dispatch(pipe, std::span<const Binding>(&bind, 1), std::span<const uint32_t>(), 1);
  uint32_t words[2] = {0, 0};
  ctx.read(words, out, 0, sizeof words);
  ctx.deallocate(out);
  r.linear = words[0] < 0x10000u && words[0] != 0 && (words[0] & (words[0] - 1)) == 0;
  r.size = words[1];
  return r;
}

void run_matmul(Context& ctx, const MatmulCall& call) {
  run(ctx, Operands{&call.a, &call.b, &call.out}, "matmul");
}

void run_matmul_epilogue(Context& ctx, const GemmEpilogueCall& call) {
  Operands o{&call.a, &call.b, &call.out};
  o.bias = &call.bias;
  if (call.has_residual) o.residual = &call.residual;
  if (call.has_pre) o.pre = &call.pre;
  o.act = call.act;
  run(ctx, o, "matmul_epilogue");
}

}  // namespace numr::webgpu
