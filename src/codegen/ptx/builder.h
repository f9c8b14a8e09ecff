// KernelBuilder: writes one `.visible .entry` PTX kernel from typed calls.
//
//   KernelBuilder b("scale_f32", Target{.sm = 80, .ptx_major = 8, .ptx_minor = 0});
//   Reg x = b.param_ptr("x"), y = b.param_ptr("y");
//   Reg n = b.param(PtxType::u64, "n");
//   Reg i = b.cvt(b.global_index_x(), PtxType::u64);        // ctaid.x * ntid.x + tid.x
//   b.if_then(b.setp(Cmp::lt, i, n), [&] {
//     Reg off = b.mul(i, 4);
//     Reg v = b.ld_global(PtxType::f32, b.add(x, off));
//     b.st_global(b.add(y, off), b.mul(v, 2.0));
//   });
//   std::string ptx = b.finish();  // complete module text; throws if a barrier diverges
//
// Conventions:
// - Every instruction that produces a value returns a fresh virtual register of the
//   result type (ptxas allocates the physical ones). To update a register in place, as a
//   loop counter must be, use assign(dst, src): it emits `mov` into the existing register.
// - Operand types are checked: binary arithmetic wants both registers of one type
//   (immediates take the register's type). Mismatches throw BackendError ("[ptx] ...").
// - Float add/sub/mul are emitted with `.rn`, so ptxas never contracts them into an fma
//   behind the formula's back; fma() is the explicit fused form. div() on floats is IEEE
//   (`div.rn`).
// - f16/bf16 values live in 16-bit registers (declared .b16) and are moved to and from
//   memory as b16 (`st.global.f16` is not valid PTX).
// - Kernel parameters are loaded (ld.param) where param() is called, which is best done
//   at the top of the kernel. Shapes and strides can be passed as scalars or as a fixed
//   size array parameter (param_array): a by-value byte block the host fills with the
//   elements packed at their natural size, loaded here with constant indexes.
// - Errors of use (unplaced labels, registers read but never written, a bar.sync not every
//   thread reaches) are reported by finish() as BackendError naming the kernel.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "codegen/ptx/instr.h"
#include "codegen/ptx/types.h"

namespace numr::ptx {

// One kernel parameter, in declaration order: what the launcher must pass.
struct ParamInfo {
  std::string name;
  PtxType type;   // element type (u64 for pointers)
  int count = 1;  // > 1 (or array = true): a by-value array of `count` elements
  bool array = false;
  int size() const { return type_size(type) * count; }  // bytes
  int align() const { return array ? 8 : type_size(type); }
};

// A parameter declared as `.param .align 8 .b8 name[count * size]`.
struct ParamArray {
  std::string name;
  PtxType type;
  int count;
};

// A shared-memory array (static: count elements; dynamic: sized at launch).
struct SharedArray {
  std::string name;
  PtxType type;
  int64_t count;  // elements; 0 for the dynamic (extern) array
};

class KernelBuilder {
 public:
  explicit KernelBuilder(std::string name, Target target = {});
  KernelBuilder(const KernelBuilder&) = delete;
  KernelBuilder& operator=(const KernelBuilder&) = delete;

  const std::string& name() const { return name_; }
  const Target& target() const { return target_; }
  const std::vector<ParamInfo>& params() const { return params_; }

  // ---- registers and moves ----
  // A fresh register, not yet written.
  Reg reg(PtxType t);
  // A fresh register holding v (mov). A float immediate is written in t's hex form.
  Reg mov(PtxType t, Operand v);
  // mov into an existing register: in-place update, e.g. a loop counter.
  void assign(Reg dst, Operand src);
  // The same bits in a register of another type of the same width (mov.bN).
  Reg bitcast(Reg src, PtxType to);

  // ---- kernel parameters ----
  // Scalars: u32, s32, u64, s64, f32, f64 (also b32/b64).
  Reg param(PtxType t, std::string_view name);
  // A pointer to global memory, converted to a global address (cvta.to.global.u64).
  Reg param_ptr(std::string_view name);
  // A by-value array of `count` elements of type t (shapes, strides); see load_param.
  ParamArray param_array(PtxType t, int count, std::string_view name);
  Reg load_param(const ParamArray& a, int index);

  // ---- special registers (u32) ----
  Reg special(SpecialReg r);
  Reg tid_x() { return special(SpecialReg::tid_x); }
  Reg tid_y() { return special(SpecialReg::tid_y); }
  Reg ntid_x() { return special(SpecialReg::ntid_x); }
  Reg ctaid_x() { return special(SpecialReg::ctaid_x); }
  Reg ctaid_y() { return special(SpecialReg::ctaid_y); }
  Reg nctaid_x() { return special(SpecialReg::nctaid_x); }
  Reg laneid() { return special(SpecialReg::laneid); }
  // ctaid.x * ntid.x + tid.x, as u32.
  Reg global_index_x();

  // ---- arithmetic (result has a's type) ----
  // Integers wrap; floats round to nearest even (.rn).
  Reg add(Reg a, Operand b);
  Reg sub(Reg a, Operand b);
  Reg mul(Reg a, Operand b);  // ints: mul.lo
  Reg mul_hi(Reg a, Operand b);
  // 32 x 32 -> 64 bits (u32 -> u64, s32 -> s64); also 16 -> 32.
  Reg mul_wide(Reg a, Operand b);
  Reg mad(Reg a, Operand b, Operand c);       // ints: mad.lo; floats: fma.rn
  Reg mad_wide(Reg a, Operand b, Operand c);  // a*b (wide) + c, c of the wide type
  Reg fma(Reg a, Operand b, Operand c);       // floats: fma.rn, one rounding
  Reg div(Reg a, Operand b);                  // ints: truncating; floats: IEEE div.rn
  Reg div_full(Reg a, Operand b);             // f32 div.full: 2 ulp, faster
  Reg rem(Reg a, Operand b);                  // ints: C's %
  Reg min(Reg a, Operand b);                  // floats: the non-NaN operand if one is NaN
  Reg max(Reg a, Operand b);
  // f32 min/max that return NaN when either operand is NaN (min.NaN, max.NaN: sm_80+,
  // PTX 7.0+), e.g. a clamp that lets NaN through in one instruction.
  Reg min_nan(Reg a, Operand b);
  Reg max_nan(Reg a, Operand b);
  Reg abs(Reg a);
  Reg neg(Reg a);

  // ---- bits (pred registers give and.pred ...) ----
  Reg and_(Reg a, Operand b);
  Reg or_(Reg a, Operand b);
  Reg xor_(Reg a, Operand b);
  Reg not_(Reg a);
  Reg shl(Reg a, Operand amount);  // amount: u32 register or immediate
  Reg shr(Reg a, Operand amount);  // arithmetic for signed types, logical otherwise

  // ---- special functions (floats) ----
  Reg ex2_approx(Reg a);      // 2^a, f32
  Reg ex2_approx_ftz(Reg a);  // 2^a, f32, subnormal arguments and results as 0 (cheaper)
  Reg lg2_approx(Reg a);      // log2(a), f32
  Reg sin_approx(Reg a);      // f32
  Reg cos_approx(Reg a);      // f32
  Reg tanh_approx(Reg a);     // f32, sm_75+
  Reg rcp_rn(Reg a);          // IEEE 1/a, f32 or f64
  Reg rcp_approx(Reg a);      // f32; f64 as rcp.approx.ftz.f64
  Reg sqrt_rn(Reg a);         // IEEE sqrt, f32 or f64
  Reg sqrt_approx(Reg a);     // f32
  Reg rsqrt_approx(Reg a);    // f32 or f64

  // ---- rounding to an integral value of the same float type ----
  Reg rint(Reg a);   // nearest, ties to even (cvt.rni)
  Reg floor(Reg a);  // cvt.rmi
  Reg ceil(Reg a);   // cvt.rpi
  Reg trunc(Reg a);  // cvt.rzi

  // ---- conversions ----
  // Value conversion between any register types (not pred), rounding as `r` says:
  // automatic rounds to nearest even into floats and truncates toward zero into integers.
  // Float -> integer saturates and sends NaN to 0; integer -> narrower integer wraps;
  // half types convert exactly to wider floats; bf16 -> f32 is a 16-bit shift (exact on
  // every target); f64 -> bf16 rounds once, correctly, also on sm_80 (which has no
  // direct instruction: it goes through f32 rounded to odd).
  Reg cvt(Reg a, PtxType to, Round r = Round::automatic);
  // {lo, hi} packing: two b32-wide registers -> b64, or two b16-wide -> b32 (mov.bN).
  Reg pack(Reg lo, Reg hi);
  // The halves of a 64-bit (-> two b32) or 32-bit (-> two b16) register, low first.
  std::pair<Reg, Reg> unpack(Reg a);

  // ---- compare and select ----
  // Predicate a <c> b. Unsigned types compare unsigned.
  Reg setp(Cmp c, Reg a, Operand b);
  // p ? a : b, of a's type (or b's, or t's when both are immediates).
  Reg selp(Reg p, Operand a, Operand b);
  Reg selp(Reg p, Operand a, Operand b, PtxType t);

  // ---- control flow ----
  // A new label (hint becomes part of its name); place it exactly once.
  Label label(std::string_view hint = "");
  void place(Label l);
  void bra(Label l);
  // Branch where p (or !p with negate) holds.
  void bra_if(Reg p, Label l, bool negate = false);
  void ret();
  // Threads where p holds (or !p) leave the kernel.
  void ret_if(Reg p, bool negate = false);
  // if (p) { then() }
  void if_then(Reg p, const std::function<void()>& then);
  // if (p) { then() } else { otherwise() }
  void if_then_else(Reg p, const std::function<void()>& then,
                    const std::function<void()>& otherwise);
  // for (i = start; i < end; i += step) body(i). i is a fresh register of start's type
  // (use assign() to change it inside the body if needed); end and step must keep that
  // type. The comparison is signed or unsigned as that type is.
  void for_range(Operand start, Operand end, Operand step, PtxType t,
                 const std::function<void(Reg)>& body);
  // while (cond()) body(): cond emits code and returns the predicate to test.
  void while_loop(const std::function<Reg()>& cond, const std::function<void()>& body);

  // ---- memory ----
  // Loads of type t (u8/s8 widen into u32/s32 registers; f16/bf16 load as b16 into f16/bf16
  // registers). addr: a u64/s64/b64 register, or u32 for shared; offset in bytes.
  Reg ld_global(PtxType t, Reg addr, int64_t offset = 0);
  // Through the read-only (non-coherent) cache: for data no thread of the kernel writes.
  Reg ld_global_nc(PtxType t, Reg addr, int64_t offset = 0);
  Reg ld_shared(PtxType t, Reg addr, int64_t offset = 0);
  Reg ld(Space s, PtxType t, Reg addr, int64_t offset = 0, bool nc = false);
  // n = 2 or 4 elements, at most 16 bytes (ld.global.v4.f32, .v2.f64, .v4.b32 ...);
  // addr + offset must be aligned to the whole vector.
  std::vector<Reg> ld_global_v(PtxType t, int n, Reg addr, int64_t offset = 0);
  std::vector<Reg> ld_global_nc_v(PtxType t, int n, Reg addr, int64_t offset = 0);
  std::vector<Reg> ld_shared_v(PtxType t, int n, Reg addr, int64_t offset = 0);
  std::vector<Reg> ld_v(Space s, PtxType t, int n, Reg addr, int64_t offset = 0, bool nc = false);
  // Stores v as its register type (f16/bf16 as b16); a register's low byte with u8.
  void st_global(Reg addr, Reg v, int64_t offset = 0);
  void st_shared(Reg addr, Reg v, int64_t offset = 0);
  // Stores v as memory type t: t may be narrower than v's register (u8 from u32...), and
  // v may be an immediate.
  void st(Space s, PtxType t, Reg addr, Operand v, int64_t offset = 0);
  void st_global_v(Reg addr, std::span<const Reg> v, int64_t offset = 0);
  void st_shared_v(Reg addr, std::span<const Reg> v, int64_t offset = 0);
  void st_v(Space s, Reg addr, std::span<const Reg> v, int64_t offset = 0);

  // ---- shared memory ----
  // A static array: `.shared .align A .b8 name[count * size]` (A: element size, at least 4,
  // or `align`).
  SharedArray shared_array(PtxType t, int64_t count, std::string_view name, int align = 0);
  // The dynamic array sized by the launch (`.extern .shared .align A .b8 name[]`); one per
  // kernel.
  SharedArray dynamic_shared(std::string_view name, PtxType t = PtxType::b32, int align = 16);
  // Its address (u32), for ld_shared/st_shared.
  Reg address_of(const SharedArray& a);

  // ---- synchronization, warps, atomics ----
  void bar_sync();  // bar.sync 0: every thread of the block must reach it (see finish)
  // shfl.sync.<mode>.b32 with member mask; 64-bit values are shuffled as two halves.
  // b: lane mask (bfly), delta (down/up) or source lane (idx). Whole-warp segments.
  Reg shfl(ShflMode mode, Reg v, Operand b, uint32_t member_mask = 0xffffffffu);
  // Atomic op on memory of type t at addr; returns the old value. add: u32 s32 u64 f32 f64
  // (s64 as u64); min/max: u32 s32 u64 s64; and/or/xor/exch: any 32/64-bit type.
  Reg atom(Space s, AtomOp op, PtxType t, Reg addr, Operand v, int64_t offset = 0);
  Reg atom_global(AtomOp op, PtxType t, Reg addr, Operand v, int64_t offset = 0) {
    return atom(Space::global, op, t, addr, v, offset);
  }
  // Compare and swap: writes v where memory equals cmp; returns the old value.
  Reg atom_cas(Space s, PtxType t, Reg addr, Operand cmp, Operand v, int64_t offset = 0);
  // The atomic without a result (red), cheaper when the old value is not needed.
  void red(Space s, AtomOp op, PtxType t, Reg addr, Operand v, int64_t offset = 0);

  // ---- escape hatch ----
  // An instruction this class has no method for (e.g. mma). text is the full instruction
  // without ';'. defs/uses feed the barrier analysis; varying marks results that differ
  // per thread whatever the inputs (loads, warp-level ops).
  void raw(std::string text, std::vector<Reg> defs, std::vector<Reg> uses, bool varying = true);

  // ---- output ----
  // The complete module: .version, .target, .address_size 64, shared declarations and the
  // entry. Appends a final ret if the body falls off its end. Runs the checks: labels
  // placed once, every register read is written somewhere, the barrier check
  // (barrier_check.h). Throws BackendError naming the kernel.
  std::string finish();

  // The instructions so far (for analysis and tests).
  std::span<const Instr> body() const { return body_; }

 private:
  Reg emit_def(PtxType result, std::string text, std::vector<Reg> uses, bool varying = false);
  void emit(Instr in);
  std::string fmt(const Operand& o, PtxType as) const;
  void collect(const Operand& o, std::vector<Reg>& uses) const;
  [[noreturn]] void error(const std::string& what) const;
  void need_type(std::string_view op, PtxType t, const Operand& b) const;
  void need_same(std::string_view op, Reg a, const Operand& b) const { need_type(op, a.type, b); }
  Reg binary(std::string_view op, std::string_view mnemonic, Reg a, Operand b);
  Reg unary_float(std::string_view mnemonic, Reg a, bool f64_ok = true);
  std::string mem_address(Space s, Reg addr, int64_t offset) const;
  std::string new_param_name(std::string_view name);
  Reg f64_to_f32_odd(Reg a);
  Reg int_to_f32_odd(Reg a);

  std::string name_;
  Target target_;
  std::vector<Instr> body_;
  std::vector<ParamInfo> params_;
  std::vector<std::string> shared_decls_;
  std::vector<std::string> symbols_;  // parameter and shared names in use
  std::vector<std::string> label_names_;
  std::vector<int> label_placed_;
  std::array<uint32_t, 16> reg_count_{};
  bool has_dynamic_shared_ = false;
};

}  // namespace numr::ptx
