// Sequences and random numbers. Both are specified exactly (numr/random.h, SequenceCall):
// uniform draws into F32 and integer draws into I32 and U8 with a range below 2^32 run on
// the device, with Philox4x32 in 32-bit arithmetic; sequences and the other draws are
// specified in double arithmetic, which WGSL lacks, so they are computed on the host with
// the same formulas and uploaded.
#include <cmath>
#include <compare>
#include <cstring>
#include <vector>

#include "backends/webgpu/kernels.h"
#include "backends/webgpu/pipeline_cache.h"
#include "backends/webgpu/shader.h"
#include "core/random_values.h"
#include "math/random_normal.h"
#include "numr/half.h"
#include "numr/random.h"

namespace numr::webgpu {

namespace {

// Doubles (or int64 values) converted to dst's dtype as the CPU converts them, uploaded.
void upload_values(Context& ctx, const TensorRef& out, const std::vector<double>& d,
                   const std::vector<int64_t>& i) {
  const bool ints = !i.empty();
  const size_t n = ints ? i.size() : d.size();
  const auto sat = [](double v, double lo, double hi) -> int64_t {
    if (std::isnan(v)) return 0;
    if (v <= lo) return int64_t(lo);
    if (v >= hi) return int64_t(hi);
    return int64_t(v);
  };
  std::vector<uint8_t> bytes(n * dtype_size(out.dtype));
  for (size_t k = 0; k < n; ++k) {
    switch (out.dtype) {
      case DType::F32: {
        const float f = ints ? float(i[k]) : float(d[k]);
        std::memcpy(bytes.data() + 4 * k, &f, 4);
        break;
      }
      case DType::I32: {
        const int32_t v = ints ? int32_t(i[k]) : int32_t(sat(d[k], -2147483648.0, 2147483647.0));
        std::memcpy(bytes.data() + 4 * k, &v, 4);
        break;
      }
      case DType::F16:
      case DType::BF16: {
        const double x = ints ? double(i[k]) : d[k];
        const uint16_t h = out.dtype == DType::F16 ? detail::round_to_small_float(x, 10, 5)
                                                   : detail::round_to_small_float(x, 7, 8);
        std::memcpy(bytes.data() + 2 * k, &h, 2);
        break;
      }
      case DType::I64: {
        const int64_t v = ints ? i[k] : saturate_i64(d[k]);
        std::memcpy(bytes.data() + 8 * k, &v, 8);
        break;
      }
      case DType::U8: bytes[k] = ints ? uint8_t(i[k]) : uint8_t(sat(d[k], 0.0, 255.0)); break;
      default: bytes[k] = ints ? i[k] != 0 : d[k] != 0.0; break;  // Bool
    }
  }
  ctx.write(buffer_of(out), size_t(out.offset) * dtype_size(out.dtype), bytes.data(), bytes.size());
}

struct RandomConfig {
  RandomKind kind;
  DType out;
  auto operator<=>(const RandomConfig&) const = default;
};

// Philox4x32-10 (random.h) in u32 arithmetic; the high half of each 32x32 product from
// 16-bit pieces.
constexpr const char* kPhiloxWgsl = R"(fn numr_mulhi(a: u32, b: u32) -> u32 {
  let al = a & 0xffffu; let ah = a >> 16u; let bl = b & 0xffffu; let bh = b >> 16u;
  let ll = al * bl; let lh = al * bh; let hl = ah * bl; let hh = ah * bh;
  let mid = (ll >> 16u) + (lh & 0xffffu) + (hl & 0xffffu);
  return hh + (lh >> 16u) + (hl >> 16u) + (mid >> 16u);
}
fn numr_philox(c0_in: u32, c1_in: u32, k0_in: u32, k1_in: u32) -> vec4<u32> {
  var c0 = c0_in; var c1 = c1_in; var c2 = 0u; var c3 = 0u; var k0 = k0_in; var k1 = k1_in;
  for (var r = 0; r < 10; r = r + 1) {
    let h0 = numr_mulhi(0xD2511F53u, c0); let l0 = 0xD2511F53u * c0;
    let h1 = numr_mulhi(0xCD9E8D57u, c2); let l1 = 0xCD9E8D57u * c2;
    let n0 = h1 ^ c1 ^ k0; let n2 = h0 ^ c3 ^ k1;
    c1 = l1; c3 = l0; c0 = n0; c2 = n2;
    k0 = k0 + 0x9E3779B9u; k1 = k1 + 0xBB67AE85u;
  }
  return vec4<u32>(c0, c1, c2, c3);
}
// (hi * 2^32 + lo) mod m for m >= 1, without 64-bit integers.
fn numr_mod64(lo: u32, hi: u32, m: u32) -> u32 {
  var rem = hi % m;
  for (var k = 31; k >= 0; k = k - 1) {
    let bit = (lo >> u32(k)) & 1u;
    if (rem >= m - rem) { rem = rem - (m - rem) + bit; }
    else { rem = rem + rem + bit; if (rem >= m) { rem = rem - m; } }
  }
  return rem;
}
)";

std::string random_wgsl(const RandomConfig& c) {
  Shader s;
  const std::string out = s.buffer(c.out, true);
  wgsl::FormulaScope scope(s.body(), compute_type(c.out));
  wgsl::Body& b = s.body();
  // P: n, offset lo, offset hi, seed lo, seed hi, low (lo 32 bits), range, out offset.
  b.line("if (gi >= P[0]) { return; }");
  b.line("let c0 = P[1] + gi;");
  b.line("let c1 = P[2] + select(0u, 1u, c0 < gi);");
  b.line("let r = numr_philox(c0, c1, P[3], P[4]);");
  const wgsl::Value idx = wgsl::Value::let(wgsl::Type::u32, "P[7] + gi");
  if (c.kind == RandomKind::Uniform) {
    s.store(out, c.out, idx,
            wgsl::Value::let(wgsl::Type::f32, "f32(r.x >> 8u) * (1.0 / 16777216.0)"));
  } else {
    s.store(out, c.out, idx,
            wgsl::Value::let(wgsl::Type::i32, "bitcast<i32>(P[5] + numr_mod64(r.x, r.y, P[6]))"));
  }
  return kPhiloxWgsl + s.finish();
}

}  // namespace

void run_sequence(Context& ctx, const SequenceCall& call) {
  require_dtype(call.out.dtype, "sequence");
  const int64_t n = call.out.numel();
  if (n == 0) return;
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    // Products rounded before the add, never fused (SequenceCall).
    volatile double p =
        call.symmetric && i >= n / 2 ? double(n - 1 - i) * call.step : double(i) * call.step;
    v[size_t(i)] = call.symmetric && i >= n / 2 ? call.end - p : call.start + p;
  }
  upload_values(ctx, call.out, v, {});
}

void run_random(Context& ctx, const RandomCall& call) {
  const DType t = call.out.dtype;
  require_dtype(t, "random");
  const int64_t n = call.out.numel();
  if (n == 0) return;
  const uint64_t range = uint64_t(call.high) - uint64_t(call.low);
  const bool on_device = (call.kind == RandomKind::Uniform && t == DType::F32) ||
                         (call.kind == RandomKind::Integer && (t == DType::I32 || t == DType::U8) &&
                          range >= 1 && range <= 0xffffffffull);
  if (on_device) {
    const RandomConfig c{call.kind, t};
    Params p;
    p.u32(uint64_t(n));
    p.u32(call.offset);
    p.u32(call.offset >> 32);
    p.u32(call.seed);
    p.u32(call.seed >> 32);
    p.u32(uint64_t(call.low));
    p.u32(range);
    p.u32(uint64_t(call.out.offset));
    const Binding b[] = {{buffer_of(call.out), true}};
    ctx.dispatch(cached_pipeline(ctx, c, random_wgsl, "random"), b, p.w,
                 groups_for(uint64_t(n), kWorkgroupSize));
    return;
  }
  std::vector<double> d;
  std::vector<int64_t> iv;
  for (int64_t k = 0; k < n; ++k) {
    const Philox4 r = philox4x32(call.offset + uint64_t(k), call.seed);
    if (call.kind == RandomKind::Integer) {
      const uint64_t bits = uint64_t(r.v[0]) | (uint64_t(r.v[1]) << 32);
      iv.push_back(int64_t(uint64_t(call.low) + bits % range));
    } else if (call.kind == RandomKind::Uniform) {
      d.push_back(uniform_value(r.v[0], t));
    } else {
      const double u1 = (double(r.v[0] >> 8) + 1.0) * (1.0 / 16777216.0);
      d.push_back(math::box_muller(u1, philox_uniform(r.v[1])));
    }
  }
  upload_values(ctx, call.out, d, iv);
}

}  // namespace numr::webgpu
