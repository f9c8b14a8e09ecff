// sort_rows and search_sorted. Each element becomes an unsigned key whose integer order is
// sort's order, as on the CPU (src/backends/cpu/kernels/sort.cpp): NaN above +inf, -0.0 as
// +0.0, F16 and BF16 in their float order; complemented for descending. Sorting pairs
// (key, position in the row) compared as such, a strict total order, makes any sorting
// network stable. A row is padded to a power of two P with pairs (largest key, position
// >= n), which sort after every element. Bitonic sort: rows with P at most a tile (the
// pairs one workgroup holds) are sorted whole in workgroup memory, several to a workgroup;
// longer rows have their tiles sorted so into a scratch buffer, then each later merge stage
// runs its strides of a tile or more as passes over global memory (up to three strides a
// dispatch) and the rest in workgroup memory, the last stage writing the results. Values
// are copied from the input by position, so every bit is kept. searchsorted: one
// invocation per value, a binary search over the keys.
#include <algorithm>
#include <compare>
#include <cstdint>
#include <string>

#include "backends/webgpu/kernels.h"
#include "backends/webgpu/pipeline_cache.h"
#include "backends/webgpu/shader.h"
#include "core/op_scope.h"
#include "numr/error.h"

namespace numr::webgpu {
namespace {

// Pairs per tile: 16 KiB of workgroup memory, the least every adapter offers. A pair is a
// vec2<u32> (key, position), or for I64 a vec4<u32> (key high word, low word, position, 0).
constexpr uint32_t kTileNarrow = 2048;
constexpr uint32_t kTileWide = 1024;
// Global passes take up to this many strides each (2^kMaxStrides elements an invocation).
constexpr uint32_t kMaxStrides = 3;

bool wide(DType t) { return t == DType::I64; }
uint32_t tile_of(DType t) { return wide(t) ? kTileWide : kTileNarrow; }
uint64_t pair_bytes(DType t) { return wide(t) ? 16 : 8; }
std::string pair_type(DType t) { return wide(t) ? "vec4<u32>" : "vec2<u32>"; }
std::string key_type(DType t) { return wide(t) ? "vec2<u32>" : "u32"; }
std::string u(uint64_t v) { return std::to_string(v) + "u"; }

// numr_before(a, b): pair a sorts before pair b.
std::string before_fn(DType t) {
  const std::string p = pair_type(t);
  if (!wide(t))
    return "fn numr_before(a: " + p + ", b: " + p +
           ") -> bool { return a.x < b.x || (a.x == b.x && a.y < b.y); }\n";
  return "fn numr_before(a: " + p + ", b: " + p +
         ") -> bool {\n"
         "  if (a.x != b.x) { return a.x < b.x; }\n"
         "  if (a.y != b.y) { return a.y < b.y; }\n"
         "  return a.z < b.z;\n"
         "}\n";
}

// fn_name(e): the ascending key of element e of the word binding `words` (dtype t).
std::string key_fn(DType t, const std::string& fn_name, const std::string& words) {
  const std::string head = "fn " + fn_name + "(e: u32) -> " + key_type(t) + " {\n";
  // A float's bits h of `bits` width: NaN (magnitude above inf) last, zeros one key, then
  // negatives complemented and positives with the sign bit set.
  const auto float_key = [&](const std::string& load, uint32_t bits, uint32_t inf) {
    const uint32_t sign = 1u << (bits - 1), all = bits == 32 ? 0xffffffffu : (1u << bits) - 1;
    return head + "  let h = " + load + ";\n  let a = h & " + u(sign - 1) +
           ";\n"
           "  if (a > " +
           u(inf) + ") { return 0xffffffffu; }\n  if (a == 0u) { return " + u(sign) +
           "; }\n"
           "  return select(h | " +
           u(sign) + ", ~h & " + u(all) + ", h >= " + u(sign) + ");\n}\n";
  };
  const std::string half = "((" + words + "[e >> 1u] >> ((e & 1u) * 16u)) & 0xffffu)";
  switch (t) {
    case DType::F32: return float_key(words + "[e]", 32, 0x7f800000u);
    case DType::F16: return float_key(half, 16, 0x7c00u);
    case DType::BF16: return float_key(half, 16, 0x7f80u);
    case DType::I32: return head + "  return " + words + "[e] ^ 0x80000000u;\n}\n";
    case DType::U8:
      return head + "  return (" + words + "[e >> 2u] >> ((e & 3u) * 8u)) & 0xffu;\n}\n";
    default:  // I64: the high word with its sign flipped, then the low word
      return head + "  return vec2<u32>(" + words + "[2u * e + 1u] ^ 0x80000000u, " + words +
             "[2u * e]);\n}\n";
  }
}

// numr_copy(dst, src): element src of the word binding `in` to element dst of `out`, bits
// unchanged (elements narrower than a word through atomics, as Shader::store writes them).
std::string copy_fn(DType t, const std::string& out, const std::string& in) {
  const std::string head = "fn numr_copy(dst: u32, src: u32) {\n";
  if (t == DType::F32 || t == DType::I32)
    return head + "  " + out + "[dst] = " + in + "[src];\n}\n";
  if (t == DType::I64)
    return head + "  " + out + "[2u * dst] = " + in + "[2u * src];\n  " + out +
           "[2u * dst + 1u] = " + in + "[2u * src + 1u];\n}\n";
  const bool h = t == DType::F16 || t == DType::BF16;
  const std::string shift = h ? "1u" : "2u", lane = h ? "1u" : "3u", width = h ? "16u" : "8u",
                    mask = h ? "0xffffu" : "0xffu";
  return head + "  let v = (" + in + "[src >> " + shift + "] >> ((src & " + lane + ") * " + width +
         ")) & " + mask + ";\n  let sh = (dst & " + lane + ") * " + width +
         ";\n"
         "  atomicAnd(&" +
         out + "[dst >> " + shift + "], ~(" + mask + " << sh));\n  atomicOr(&" + out + "[dst >> " +
         shift + "], v << sh);\n}\n";
}

// The pair of key k at position pos, the padding pair at pos, a pair's position.
std::string make_pair(DType t, const std::string& k, const std::string& pos) {
  return wide(t) ? "vec4<u32>(" + k + ".x, " + k + ".y, " + pos + ", 0u)"
                 : "vec2<u32>(" + k + ", " + pos + ")";
}
std::string pad_pair(DType t, const std::string& pos) {
  return wide(t) ? "vec4<u32>(0xffffffffu, 0xffffffffu, " + pos + ", 0u)"
                 : "vec2<u32>(0xffffffffu, " + pos + ")";
}
std::string pos_of(DType t, const std::string& pair) { return pair + (wide(t) ? ".z" : ".y"); }

// The bitonic steps of strides low << (r - 1), .., low on the 2^r pairs arr[a + i * low]
// (a has those r bits clear), held in registers: each pair x, y of a step ends in order
// (ascending when `up`), then all go back.
void merge_group(wgsl::Body& b, DType t, uint32_t r, const std::string& arr) {
  const uint32_t m = 1u << r;
  const auto e = [](uint32_t i) { return "e[" + std::to_string(i) + "]"; };
  const auto at = [&](uint32_t i) { return arr + "[a + " + u(i) + " * low]"; };
  b.line("var e: array<" + pair_type(t) + ", " + std::to_string(m) + ">;");
  for (uint32_t i = 0; i < m; ++i) b.line(e(i) + " = " + at(i) + ";");
  for (uint32_t bit = r; bit-- > 0;)
    for (uint32_t i = 0; i < m; ++i)
      if (!(i & (1u << bit))) {
        const std::string x = e(i), y = e(i | (1u << bit));
        b.line("if (numr_before(" + y + ", " + x + ") == up) { let x = " + x + "; " + x + " = " +
               y + "; " + y + " = x; }");
      }
  for (uint32_t i = 0; i < m; ++i) b.line(at(i) + " = " + e(i) + ";");
}

// The tile pass: a workgroup's tile of pairs (the elements w * tile .. of the batch's rows,
// each padded to P, laid end to end) is loaded from the input or the scratch buffer, runs
// the bitonic stages s0 .. s1 (strides min(s, tile) / 2 .. 1 of each), and goes to the
// scratch buffer or, the positions below k of each row, to the results.
struct TileConfig {
  DType dtype;
  bool from_input, to_output;
  auto operator<=>(const TileConfig&) const = default;
};

enum TileWord : uint32_t {
  kRows,  // rows in this batch
  kN,     // row length
  kK,     // results per row
  kLogP,  // log2 of the padded row length P
  kS0,    // first and last stage
  kS1,
  kDesc,   // 1: descending
  kInOff,  // element offsets of the batch's first row in the input, values and indices
  kValOff,
  kIdxOff,
  kGroups,  // workgroups with a tile
};

std::string tile_wgsl(const TileConfig& c) {
  const DType t = c.dtype;
  const uint32_t tile = tile_of(t);
  Shader s;
  std::string values, indices, scratch;
  if (c.to_output) {
    // Packed dtypes need the atomic view; the rest are copied as words.
    values =
        t == DType::F32 || t == DType::I32 || t == DType::I64 ? s.words(true) : s.buffer(t, true);
    indices = s.words(true);
  }
  if (!(c.from_input && c.to_output)) scratch = s.array(pair_type(t), c.from_input || !c.to_output);
  const std::string in = s.words(false);
  s.decl("var<workgroup> st: array<" + pair_type(t) + ", " + std::to_string(tile) + ">;\n");
  s.decl(before_fn(t));
  if (c.from_input) s.decl(key_fn(t, "numr_key", in));
  if (c.to_output) s.decl(copy_fn(t, values, in));
  wgsl::Body& b = s.body();
  const auto p = [](TileWord w) { return "P[" + std::to_string(w) + "u]"; };
  b.line("if (wid >= " + p(kGroups) + ") { return; }");
  b.line("let logp = " + p(kLogP) + ";");
  b.line("let pmask = (1u << logp) - 1u;");
  b.line("let base = wid * " + u(tile) + ";");
  b.line("for (var i = lid; i < " + u(tile) + "; i = i + " + u(kWorkgroupSize) + ") {");
  if (c.from_input) {
    b.line("  let row = (base + i) >> logp;");
    b.line("  let pos = (base + i) & pmask;");
    b.line("  var pr = " + pad_pair(t, "pos") + ";");
    b.line("  if (row < " + p(kRows) + " && pos < " + p(kN) + ") {");
    b.line("    var k = numr_key(" + p(kInOff) + " + row * " + p(kN) + " + pos);");
    b.line("    if (" + p(kDesc) + " != 0u) { k = ~k; }");
    b.line("    pr = " + make_pair(t, "k", "pos") + ";");
    b.line("  }");
    b.line("  st[i] = pr;");
  } else {
    b.line("  st[i] = " + scratch + "[base + i];");
  }
  b.line("}");
  // Each stage s runs its strides from min(s, tile) / 2 down to 1, three at a time where
  // it can (merge_group), with a barrier between the groups.
  b.line("for (var s = " + p(kS0) + "; s <= " + p(kS1) + "; s = s << 1u) {");
  b.line("var j = min(s, " + u(tile) + ") >> 1u;");
  b.line("while (j > 0u) {");
  b.line("workgroupBarrier();");
  for (uint32_t r = kMaxStrides; r >= 1; --r) {
    const std::string low = "j >> " + u(r - 1);
    b.line(r == kMaxStrides ? "if (j >= " + u(1u << (r - 1)) + ") {"
           : r > 1          ? "} else if (j == " + u(1u << (r - 1)) + ") {"
                            : "} else {");
    b.line("let low = " + low + ";");
    b.line("for (var q = lid; q < " + u(tile >> r) + "; q = q + " + u(kWorkgroupSize) + ") {");
    b.line("let a = ((q & ~(low - 1u)) << " + u(r) + ") | (q & (low - 1u));");
    b.line("let up = ((base + a) & pmask & s) == 0u;");
    merge_group(b, t, r, "st");
    b.line("}");
    b.line("j = low >> 1u;");
  }
  b.line("}");
  b.line("}");
  b.line("}");
  b.line("workgroupBarrier();");
  b.line("for (var i = lid; i < " + u(tile) + "; i = i + " + u(kWorkgroupSize) + ") {");
  if (c.to_output) {
    b.line("  let row = (base + i) >> logp;");
    b.line("  let pos = (base + i) & pmask;");
    b.line("  if (row < " + p(kRows) + " && pos < " + p(kK) + ") {");
    b.line("    let src = " + pos_of(t, "st[i]") + ";");
    b.line("    let o = row * " + p(kK) + " + pos;");
    b.line("    numr_copy(" + p(kValOff) + " + o, " + p(kInOff) + " + row * " + p(kN) + " + src);");
    b.line("    " + indices + "[2u * (" + p(kIdxOff) + " + o)] = src;");
    b.line("    " + indices + "[2u * (" + p(kIdxOff) + " + o) + 1u] = 0u;");
    b.line("  }");
  } else {
    b.line("  " + scratch + "[base + i] = st[i];");
  }
  b.line("}");
  return s.finish();
}

// A global pass: strides j, j / 2, .. (`strides` of them) of stage s over the scratch
// buffer, each invocation taking the 2^strides pairs those strides connect.
struct GlobalConfig {
  DType dtype;
  uint32_t strides;
  auto operator<=>(const GlobalConfig&) const = default;
};

// P: invocations, s, the smallest stride, P - 1.
std::string global_wgsl(const GlobalConfig& c) {
  const DType t = c.dtype;
  Shader s;
  const std::string sc = s.array(pair_type(t), true);
  s.decl(before_fn(t));
  wgsl::Body& b = s.body();
  b.line("if (gi >= P[0]) { return; }");
  b.line("let low = P[2];");
  b.line("let a = ((gi & ~(low - 1u)) << " + u(c.strides) + ") | (gi & (low - 1u));");
  b.line("let up = (a & P[3] & P[1]) == 0u;");
  merge_group(b, t, c.strides, sc);
  return s.finish();
}

struct SearchConfig {
  DType dtype;
  auto operator<=>(const SearchConfig&) const = default;
};

// P: values in all (rows * m), m, n, the offsets of seq, values and out, 1 for right.
std::string search_wgsl(const SearchConfig& c) {
  const DType t = c.dtype;
  Shader s;
  const std::string out = s.words(true);
  const std::string seq = s.words(false);
  const std::string vals = s.words(false);
  s.decl(key_fn(t, "numr_seq_key", seq));
  s.decl(key_fn(t, "numr_value_key", vals));
  s.decl(wide(t) ? "fn numr_lt(a: vec2<u32>, b: vec2<u32>) -> bool { return a.x < b.x || (a.x == "
                   "b.x && a.y < b.y); }\n"
                 : "fn numr_lt(a: u32, b: u32) -> bool { return a < b; }\n");
  wgsl::Body& b = s.body();
  b.line("if (gi >= P[0]) { return; }");
  b.line("let n = P[2];");
  b.line("let row_start = P[3] + (gi / P[1]) * n;");
  b.line("let v = numr_value_key(P[4] + gi);");
  b.line("let right = P[6] != 0u;");
  // The first position whose key is >= v (right: > v).
  b.line("var lo = 0u;");
  b.line("var hi = n;");
  b.line("while (lo < hi) {");
  b.line("  let mid = lo + (hi - lo) / 2u;");
  b.line("  let k = numr_seq_key(row_start + mid);");
  b.line(
      "  if (select(numr_lt(k, v), !numr_lt(v, k), right)) { lo = mid + 1u; } else { hi = mid; }");
  b.line("}");
  b.line(out + "[2u * (P[5] + gi)] = lo;");
  b.line(out + "[2u * (P[5] + gi) + 1u] = 0u;");
  return s.finish();
}

}  // namespace

void run_sort_rows(Context& ctx, const SortCall& c) {
  const DType t = c.in.dtype;
  require_dtype(t, "sort");
  if (c.rows == 0 || c.k == 0) return;
  // Positions and pair indexes are u32, and the stage loop doubles up to P.
  if (c.n > (int64_t(1) << 30))
    fail<BackendLimitation>(current_op("sort"), "webgpu sorts rows of at most 2^30 elements, got ",
                            c.n);
  const uint32_t tile = tile_of(t);
  uint32_t logp = 0;
  while ((int64_t(1) << logp) < c.n) ++logp;
  const uint64_t p = uint64_t(1) << logp;
  const bool global = p > tile;
  // Rows go in batches whose padded pairs fit u32 indexes and, when the rows are longer
  // than a tile, one scratch binding.
  uint64_t batch = std::min<uint64_t>(uint64_t(c.rows), (uint64_t(1) << 31) / p);
  if (global) {
    batch =
        std::min<uint64_t>(batch, ctx.limits().maxStorageBufferBindingSize / (p * pair_bytes(t)));
    if (batch == 0)
      fail<BackendLimitation>(current_op("sort"), "webgpu: a row of ", c.n, " elements needs ",
                              p * pair_bytes(t),
                              " bytes of scratch, over the adapter's largest "
                              "storage binding (",
                              ctx.limits().maxStorageBufferBindingSize, " bytes)");
  }
  Buffer* scratch = global ? ctx.allocate(size_t(batch * p * pair_bytes(t))) : nullptr;
  try {
    for (uint64_t row0 = 0; row0 < uint64_t(c.rows); row0 += batch) {
      const uint64_t rows = std::min<uint64_t>(batch, uint64_t(c.rows) - row0);
      const uint64_t groups = groups_for(rows * p, tile);
      const auto tile_pass = [&](bool from_input, bool to_output, uint64_t s0, uint64_t s1) {
        Params q;
        q.u32(rows);
        q.u32(uint64_t(c.n));
        q.u32(uint64_t(c.k));
        q.u32(logp);
        q.u32(s0);
        q.u32(s1);
        q.u32(c.descending ? 1 : 0);
        q.u32(uint64_t(c.in.offset) + row0 * uint64_t(c.n));
        q.u32(uint64_t(c.values.offset) + row0 * uint64_t(c.k));
        q.u32(uint64_t(c.indices.offset) + row0 * uint64_t(c.k));
        q.u32(groups);
        std::vector<Binding> bs;
        if (to_output)
          bs.push_back({buffer_of(c.values), true}), bs.push_back({buffer_of(c.indices), true});
        if (!(from_input && to_output)) bs.push_back({scratch, !to_output});
        bs.push_back({buffer_of(c.in), false});
        const TileConfig tc{t, from_input, to_output};
        ctx.dispatch(cached_pipeline(ctx, tc, tile_wgsl, "sort_tile"), bs, q.w, groups);
      };
      tile_pass(true, !global, 2, std::min<uint64_t>(p, tile));
      for (uint64_t s = 2 * uint64_t(tile); s <= p; s *= 2) {
        for (uint64_t j = s / 2; j >= tile;) {
          uint32_t strides = 1;
          while (strides < kMaxStrides && (j >> strides) >= tile) ++strides;
          const uint64_t low = j >> (strides - 1);
          const uint64_t invocations = rows * p >> strides;
          Params q;
          q.u32(invocations);
          q.u32(s);
          q.u32(low);
          q.u32(p - 1);
          const Binding bs[] = {{scratch, true}};
          ctx.dispatch(cached_pipeline(ctx, GlobalConfig{t, strides}, global_wgsl, "sort_global"),
                       bs, q.w, groups_for(invocations, kWorkgroupSize));
          j = low / 2;
        }
        tile_pass(false, s == p, s, s);
      }
    }
  } catch (...) {
    ctx.deallocate(scratch);
    throw;
  }
  // Recorded work keeps its own reference to the buffer (bias_act_bwd.cpp).
  ctx.deallocate(scratch);
}

void run_search_sorted(Context& ctx, const SearchSortedCall& c) {
  const DType t = c.seq.dtype;
  require_dtype(t, "searchsorted");
  const uint64_t total = uint64_t(c.rows) * uint64_t(c.m);
  if (total == 0) return;
  Params q;
  q.u32(total);
  q.u32(uint64_t(c.m));
  q.u32(uint64_t(c.n));
  q.u32(uint64_t(c.seq.offset));
  q.u32(uint64_t(c.values.offset));
  q.u32(uint64_t(c.out.offset));
  q.u32(c.right ? 1 : 0);
  const Binding bs[] = {
      {buffer_of(c.out), true}, {buffer_of(c.seq), false}, {buffer_of(c.values), false}};
  ctx.dispatch(cached_pipeline(ctx, SearchConfig{t}, search_wgsl, "searchsorted"), bs, q.w,
               groups_for(total, kWorkgroupSize));
}

}  // namespace numr::webgpu
