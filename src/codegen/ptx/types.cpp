#include "codegen/ptx/types.h"

#include <cmath>
#include <cstdio>
#include <cstring>

#include "numr/error.h"
#include "numr/half.h"

namespace numr::ptx {

std::string_view type_name(PtxType t) {
  switch (t) {
    case PtxType::pred: return "pred";
    case PtxType::b16: return "b16";
    case PtxType::b32: return "b32";
    case PtxType::b64: return "b64";
    case PtxType::u8: return "u8";
    case PtxType::u16: return "u16";
    case PtxType::u32: return "u32";
    case PtxType::u64: return "u64";
    case PtxType::s8: return "s8";
    case PtxType::s16: return "s16";
    case PtxType::s32: return "s32";
    case PtxType::s64: return "s64";
    case PtxType::f16: return "f16";
    case PtxType::bf16: return "bf16";
    case PtxType::f32: return "f32";
    case PtxType::f64: return "f64";
  }
  return "?";
}

int type_size(PtxType t) {
  switch (t) {
    case PtxType::pred: return 0;
    case PtxType::u8:
    case PtxType::s8: return 1;
    case PtxType::b16:
    case PtxType::u16:
    case PtxType::s16:
    case PtxType::f16:
    case PtxType::bf16: return 2;
    case PtxType::b32:
    case PtxType::u32:
    case PtxType::s32:
    case PtxType::f32: return 4;
    case PtxType::b64:
    case PtxType::u64:
    case PtxType::s64:
    case PtxType::f64: return 8;
  }
  return 0;
}

PtxType bits_type(PtxType t) {
  switch (type_size(t)) {
    case 0: return PtxType::pred;
    case 1:  // no 8-bit register type: bytes live in 16-bit or wider registers
    case 2: return PtxType::b16;
    case 4: return PtxType::b32;
    default: return PtxType::b64;
  }
}

PtxType unsigned_type(PtxType t) {
  switch (type_size(t)) {
    case 1: return PtxType::u8;
    case 2: return PtxType::u16;
    case 4: return PtxType::u32;
    case 8: return PtxType::u64;
    default: fail<BackendError>("ptx", "no integer type of the width of ", type_name(t));
  }
}

PtxType signed_type(PtxType t) {
  switch (type_size(t)) {
    case 1: return PtxType::s8;
    case 2: return PtxType::s16;
    case 4: return PtxType::s32;
    case 8: return PtxType::s64;
    default: fail<BackendError>("ptx", "no integer type of the width of ", type_name(t));
  }
}

// One prefix per register type, none the name of a special register (%pm0 ...).
std::string_view reg_prefix(PtxType t) {
  switch (t) {
    case PtxType::pred: return "%p";
    case PtxType::b16: return "%h";
    case PtxType::b32: return "%b";
    case PtxType::b64: return "%bd";
    case PtxType::u16: return "%us";
    case PtxType::u32: return "%u";
    case PtxType::u64: return "%ud";
    case PtxType::s16: return "%ss";
    case PtxType::s32: return "%s";
    case PtxType::s64: return "%sd";
    case PtxType::f16: return "%hf";
    case PtxType::bf16: return "%hb";
    case PtxType::f32: return "%f";
    case PtxType::f64: return "%fd";
    case PtxType::u8:
    case PtxType::s8: break;
  }
  fail<BackendError>("ptx", "type ", type_name(t), " is not a register type");
}

std::string reg_name(Reg r) {
  if (!r.valid()) fail<BackendError>("ptx", "use of a register that was never created");
  return std::string(reg_prefix(r.type)) + std::to_string(r.n);
}

std::string_view cmp_name(Cmp c) {
  switch (c) {
    case Cmp::eq: return "eq";
    case Cmp::ne: return "ne";
    case Cmp::lt: return "lt";
    case Cmp::le: return "le";
    case Cmp::gt: return "gt";
    case Cmp::ge: return "ge";
    case Cmp::equ: return "equ";
    case Cmp::neu: return "neu";
    case Cmp::ltu: return "ltu";
    case Cmp::leu: return "leu";
    case Cmp::gtu: return "gtu";
    case Cmp::geu: return "geu";
    case Cmp::num: return "num";
    case Cmp::nan: return "nan";
  }
  return "?";
}

std::string_view special_name(SpecialReg r) {
  switch (r) {
    case SpecialReg::tid_x: return "%tid.x";
    case SpecialReg::tid_y: return "%tid.y";
    case SpecialReg::tid_z: return "%tid.z";
    case SpecialReg::ntid_x: return "%ntid.x";
    case SpecialReg::ntid_y: return "%ntid.y";
    case SpecialReg::ntid_z: return "%ntid.z";
    case SpecialReg::ctaid_x: return "%ctaid.x";
    case SpecialReg::ctaid_y: return "%ctaid.y";
    case SpecialReg::ctaid_z: return "%ctaid.z";
    case SpecialReg::nctaid_x: return "%nctaid.x";
    case SpecialReg::nctaid_y: return "%nctaid.y";
    case SpecialReg::nctaid_z: return "%nctaid.z";
    case SpecialReg::laneid: return "%laneid";
    case SpecialReg::warpid: return "%warpid";
  }
  return "?";
}

bool special_is_varying(SpecialReg r) {
  return r == SpecialReg::tid_x || r == SpecialReg::tid_y || r == SpecialReg::tid_z ||
         r == SpecialReg::laneid || r == SpecialReg::warpid;
}

std::string float_literal(double v, PtxType t) {
  char buf[32];
  switch (t) {
    case PtxType::f32: {
      const float f = float(v);
      uint32_t u;
      std::memcpy(&u, &f, 4);
      std::snprintf(buf, sizeof buf, "0f%08X", u);
      return buf;
    }
    case PtxType::f64: {
      uint64_t u;
      std::memcpy(&u, &v, 8);
      std::snprintf(buf, sizeof buf, "0d%016llX", static_cast<unsigned long long>(u));
      return buf;
    }
    case PtxType::f16: std::snprintf(buf, sizeof buf, "0x%04X", unsigned(f16(v).bits)); return buf;
    case PtxType::bf16:
      std::snprintf(buf, sizeof buf, "0x%04X", unsigned(bf16(v).bits));
      return buf;
    default: fail<BackendError>("ptx", "a float immediate for type ", type_name(t));
  }
}

}  // namespace numr::ptx
