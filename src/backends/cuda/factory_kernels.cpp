#include "backends/cuda/factory_kernels.h"

#include <array>
#include <cctype>
#include <memory>

#include "codegen/ptx/element_io.h"
#include "codegen/ptx/value_math.h"
#include "math/random_normal.h"

namespace numr::cuda {

using ptx::Cmp;
using ptx::FormulaScope;
using ptx::KernelBuilder;
using ptx::PtxType;
using ptx::Reg;
using ptx::Value;

namespace {

std::string lower(std::string_view s) {
  std::string r(s);
  for (char& ch : r) ch = char(std::tolower(static_cast<unsigned char>(ch)));
  return r;
}

const char* kind_name(RandomKind k) {
  switch (k) {
    case RandomKind::Uniform: return "uniform";
    case RandomKind::Normal: return "normal";
    case RandomKind::Integer: return "integer";
  }
  return "?";
}

// Philox4x32-10 on counter (lo, hi, 0, 0) and key (seed lo, seed hi), as numr/random.h.
std::array<Reg, 4> philox(KernelBuilder& b, Reg counter, Reg seed) {
  const auto halves = [&](Reg v64) { return b.unpack(b.bitcast(v64, PtxType::b64)); };
  auto [c0b, c1b] = halves(counter);
  auto [k0b, k1b] = halves(seed);
  Reg c0 = b.bitcast(c0b, PtxType::u32), c1 = b.bitcast(c1b, PtxType::u32);
  Reg k0 = b.bitcast(k0b, PtxType::u32), k1 = b.bitcast(k1b, PtxType::u32);
  Reg c2 = b.mov(PtxType::u32, 0), c3 = b.mov(PtxType::u32, 0);
  for (int r = 0; r < 10; ++r) {
    const Reg lo0 = b.mul(c0, 0xD2511F53u), hi0 = b.mul_hi(c0, 0xD2511F53u);
    const Reg lo1 = b.mul(c2, 0xCD9E8D57u), hi1 = b.mul_hi(c2, 0xCD9E8D57u);
    const Reg n0 = b.xor_(b.xor_(hi1, c1), k0);
    const Reg n2 = b.xor_(b.xor_(hi0, c3), k1);
    c1 = lo1;
    c3 = lo0;
    c0 = n0;
    c2 = n2;
    if (r < 9) {
      k0 = b.add(k0, 0x9E3779B9u);
      k1 = b.add(k1, 0xBB67AE85u);
    }
  }
  return {c0, c1, c2, c3};
}

constexpr double kTwoPow24Inv = 1.0 / 16777216.0;

}  // namespace

std::string sequence_key(const SequenceConfig& c) {
  return std::string("seq_") + lower(dtype_name(c.out)) + (c.symmetric ? "_sym_" : "_") +
         c.shape.key();
}

GeneratedKernel generate_sequence(const SequenceConfig& c, const ptx::Target& target) {
  MapSpec spec;
  spec.name = sequence_key(c);
  spec.outs = {c.out};
  spec.shape = c.shape;
  spec.needs_index = true;
  auto p = std::make_shared<std::array<Reg, 5>>();  // start, step, end, half, last
  spec.setup = [p](KernelBuilder& b) {
    (*p)[0] = b.param(PtxType::f64, "start");
    (*p)[1] = b.param(PtxType::f64, "step");
    (*p)[2] = b.param(PtxType::f64, "end");
    (*p)[3] = b.param(PtxType::u64, "half");
    (*p)[4] = b.param(PtxType::u64, "last");
  };
  spec.body = [c, p](KernelBuilder& b, std::span<const Reg>, Reg i) -> std::vector<Reg> {
    const auto& [start, step, end, half, last] = *p;
    // mul and add are emitted with .rn, which ptxas never contracts into an fma.
    Reg v = b.add(start, b.mul(b.cvt(i, PtxType::f64), step));
    if (c.symmetric) {
      const Reg from_end = b.sub(end, b.mul(b.cvt(b.sub(last, i), PtxType::f64), step));
      v = b.selp(b.setp(Cmp::ge, i, half), from_end, v);
    }
    FormulaScope scope(b, PtxType::f64);
    return {ptx::to_storage(b, Value(v), c.out)};
  };
  return generate_map(spec, target);
}

std::string random_key(const RandomConfig& c) {
  return std::string("rand_") + kind_name(c.kind) + "_" + lower(dtype_name(c.out)) + "_" +
         c.shape.key();
}

GeneratedKernel generate_random(const RandomConfig& c, const ptx::Target& target) {
  MapSpec spec;
  spec.name = random_key(c);
  spec.outs = {c.out};
  spec.shape = c.shape;
  spec.needs_index = true;
  auto p = std::make_shared<std::array<Reg, 4>>();  // seed, offset, low, range
  spec.setup = [c, p](KernelBuilder& b) {
    (*p)[0] = b.param(PtxType::u64, "seed");
    (*p)[1] = b.param(PtxType::u64, "offset");
    if (c.kind == RandomKind::Integer) {
      (*p)[2] = b.param(PtxType::s64, "low");
      (*p)[3] = b.param(PtxType::u64, "range");
    }
  };
  spec.body = [c, p](KernelBuilder& b, std::span<const Reg>, Reg i) -> std::vector<Reg> {
    const auto& [seed, offset, low, range] = *p;
    const std::array<Reg, 4> r = philox(b, b.add(offset, i), seed);
    switch (c.kind) {
      case RandomKind::Integer: {
        // Unsigned: the range may exceed INT64_MAX; the sum wraps like the CPU's.
        const Reg bits = b.bitcast(
            b.pack(b.bitcast(r[0], PtxType::b32), b.bitcast(r[1], PtxType::b32)), PtxType::u64);
        const Reg v = b.add(b.bitcast(low, PtxType::u64), b.rem(bits, range));
        FormulaScope scope(b, PtxType::s64);
        return {ptx::to_storage(b, Value(b.bitcast(v, PtxType::s64)), c.out)};
      }
      case RandomKind::Uniform: {
        const Reg u24 = b.shr(r[0], 8);
        if (c.out == DType::F64) {
          const Reg u = b.mul(b.cvt(u24, PtxType::f64), kTwoPow24Inv);
          return {u};
        }
        // Exact in f32; F16/BF16 take the largest value <= u (rounding toward zero).
        const Reg u = b.mul(b.cvt(u24, PtxType::f32), kTwoPow24Inv);
        if (c.out == DType::F32) return {u};
        if (c.out == DType::F16 || c.out == DType::BF16)
          return {b.cvt(u, ptx::storage_reg_type(c.out), ptx::Round::zero)};
        FormulaScope scope(b, PtxType::f32);
        return {ptx::to_storage(b, Value(u), c.out)};
      }
      case RandomKind::Normal: {
        FormulaScope scope(b, PtxType::f64);
        const Value u1 =
            (Value(b.cvt(b.shr(r[0], 8), PtxType::f64)) + Value(1.0)) * Value(kTwoPow24Inv);
        const Value u2 = Value(b.cvt(b.shr(r[1], 8), PtxType::f64)) * Value(kTwoPow24Inv);
        const Value z = ::numr::math::box_muller(u1, u2);
        return {ptx::to_storage(b, z, c.out)};
      }
    }
    return {};
  };
  return generate_map(spec, target);
}

}  // namespace numr::cuda
