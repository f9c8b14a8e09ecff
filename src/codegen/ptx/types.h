// The vocabulary of the PTX builder: PTX types, typed virtual registers, operands
// (a register or an immediate), labels, compile targets and the small enums that pick an
// instruction's variant. Nothing here emits text; builder.h does.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>

namespace numr::ptx {

// PTX fundamental types. Every type but u8/s8 can be a register type; u8/s8 only name
// memory widths (loads widen them into u32/s32 registers, stores take the low byte).
// f16 and bf16 registers are declared `.b16` (PTX keeps half values in 16-bit registers).
enum class PtxType : uint8_t {
  pred,
  b16,
  b32,
  b64,
  u8,
  u16,
  u32,
  u64,
  s8,
  s16,
  s32,
  s64,
  f16,
  bf16,
  f32,
  f64,
};

// The PTX spelling: "f32", "pred", ...
std::string_view type_name(PtxType t);
// Size in bytes in memory (pred: 0).
int type_size(PtxType t);
constexpr bool is_float(PtxType t) {
  return t == PtxType::f16 || t == PtxType::bf16 || t == PtxType::f32 || t == PtxType::f64;
}
constexpr bool is_half(PtxType t) { return t == PtxType::f16 || t == PtxType::bf16; }
constexpr bool is_signed_int(PtxType t) {
  return t == PtxType::s8 || t == PtxType::s16 || t == PtxType::s32 || t == PtxType::s64;
}
constexpr bool is_unsigned_int(PtxType t) {
  return t == PtxType::u8 || t == PtxType::u16 || t == PtxType::u32 || t == PtxType::u64;
}
constexpr bool is_bits(PtxType t) {
  return t == PtxType::b16 || t == PtxType::b32 || t == PtxType::b64;
}
constexpr bool is_int(PtxType t) { return is_signed_int(t) || is_unsigned_int(t); }
constexpr bool is_register_type(PtxType t) { return t != PtxType::u8 && t != PtxType::s8; }
// The untyped type of the same width (f32 -> b32, u64 -> b64, f16 -> b16; pred stays).
PtxType bits_type(PtxType t);
// The unsigned / signed integer type of the same width (f32 -> u32, b64 -> u64, ...).
PtxType unsigned_type(PtxType t);
PtxType signed_type(PtxType t);

// A virtual register: ptxas allocates the physical ones. Each type has its own name
// prefix (%u for u32, %s for s32, %fd for f64, ...), so names never collide.
struct Reg {
  PtxType type = PtxType::b32;
  uint32_t n = UINT32_MAX;  // index within its type
  bool valid() const { return n != UINT32_MAX; }
  friend bool operator==(const Reg&, const Reg&) = default;
};
// "%f3", "%p0", ...
std::string reg_name(Reg r);
// The name prefix of a register type ("%f" for f32); fails for u8/s8.
std::string_view reg_prefix(PtxType t);

// An immediate: an integer, or a floating-point value written in the hex form of the
// instruction's type (0f3F800000 for f32, 0d... for f64), so no value is rounded by text.
struct Imm {
  bool is_float = false;
  int64_t i = 0;
  double f = 0;
};

// A source operand: a register or an immediate. Integers and doubles convert implicitly,
// so `b.add(x, 1)` and `b.mul(y, 0.5)` read naturally.
class Operand {
 public:
  Operand(Reg r) : reg_(r), is_reg_(true) {}
  template <class I>
  requires std::is_integral_v<I> Operand(I v) : imm_{false, int64_t(v), 0.0} {}
  Operand(double v) : imm_{true, 0, v} {}
  Operand(float v) : imm_{true, 0, double(v)} {}

  bool is_reg() const { return is_reg_; }
  Reg reg() const { return reg_; }
  const Imm& imm() const { return imm_; }

 private:
  Reg reg_{};
  Imm imm_{};
  bool is_reg_ = false;
};

// A branch target; made by KernelBuilder::label(), placed once with place().
struct Label {
  int id = -1;
};

// What the PTX is compiled for. sm is the compute capability times ten (80, 90); the ISA
// version goes into `.version`. Some conversions pick their instruction by sm (bf16 from
// f64 exists natively only from sm_90).
struct Target {
  int sm = 90;
  int ptx_major = 8;
  int ptx_minor = 7;
};

// Comparisons for setp. eq..ge are ordered for floats (false if either is NaN); the *u
// forms are unordered (true if either is NaN); num: neither is NaN; nan: either is.
// For unsigned integers lt/le/gt/ge compare unsigned (PTX spells them lo/ls/hi/hs; either
// spelling is accepted here and the builder writes the right one).
enum class Cmp : uint8_t { eq, ne, lt, le, gt, ge, equ, neu, ltu, leu, gtu, geu, num, nan };
std::string_view cmp_name(Cmp c);

// Rounding for cvt. automatic: round to nearest even when the result is a float that may
// be inexact, truncate toward zero when a float becomes an integer (C's cast), nothing
// when exact. For float -> integral-valued float (cvt.rni.f32.f32 ...) see
// KernelBuilder::rint/floor/ceil/trunc.
enum class Round : uint8_t { automatic, nearest, zero, down, up };

// Special registers; read with KernelBuilder::special(). All read as u32.
enum class SpecialReg : uint8_t {
  tid_x,
  tid_y,
  tid_z,
  ntid_x,
  ntid_y,
  ntid_z,
  ctaid_x,
  ctaid_y,
  ctaid_z,
  nctaid_x,
  nctaid_y,
  nctaid_z,
  laneid,
  warpid,
};
std::string_view special_name(SpecialReg r);
// True for the registers that differ between the threads of one block.
bool special_is_varying(SpecialReg r);

enum class ShflMode : uint8_t { bfly, down, up, idx };

enum class AtomOp : uint8_t { add, min, max, and_, or_, xor_, exch, inc, dec };

// State spaces for loads and stores.
enum class Space : uint8_t { global, shared, local };

// Float immediates in the hex form PTX wants for type t (f32: 0f..., f64: 0d...,
// f16/bf16: 0x... bits rounded to nearest even).
std::string float_literal(double v, PtxType t);

}  // namespace numr::ptx
