#include "codegen/ptx/element_io.h"

#include "numr/error.h"

namespace numr::ptx {

PtxType storage_reg_type(DType d) {
  switch (d) {
    case DType::F64: return PtxType::f64;
    case DType::F32: return PtxType::f32;
    case DType::F16: return PtxType::f16;
    case DType::BF16: return PtxType::bf16;
    case DType::I64: return PtxType::s64;
    case DType::I32: return PtxType::s32;
    case DType::U8:
    case DType::Bool: return PtxType::u32;
    case DType::Complex64:
    case DType::Complex128: break;  // complex tensors reach kernels as their real parts
  }
  fail<BackendError>("ptx", "unknown dtype");
}

PtxType storage_mem_type(DType d) {
  return d == DType::U8 || d == DType::Bool ? PtxType::u8 : storage_reg_type(d);
}

Value from_storage(KernelBuilder& b, Reg raw, DType d, PtxType compute) {
  if (raw.type != storage_reg_type(d))
    fail<BackendError>("ptx", "a ", dtype_name(d), " element in a ", type_name(raw.type),
                       " register");
  if (d == DType::Bool) {
    const Reg nz = b.setp(Cmp::ne, raw, 0);
    return Value(b.selp(nz, is_float(compute) ? Operand(1.0) : Operand(1),
                        is_float(compute) ? Operand(0.0) : Operand(0), compute));
  }
  // Half types widen exactly to f32 first, so float -> integer has one rounding.
  if (is_half(raw.type) && compute != PtxType::f32 && compute != PtxType::f64)
    raw = b.cvt(raw, PtxType::f32);
  return raw.type == compute ? Value(raw) : Value(b.cvt(raw, compute));
}

Reg to_storage(KernelBuilder& b, const Value& v, DType d) {
  const Reg x = v.reg();
  const bool fl = is_float(x.type);
  switch (d) {
    case DType::Bool: {
      const Reg nz = fl ? b.setp(Cmp::neu, x, 0.0) : b.setp(Cmp::ne, x, 0);
      return b.selp(nz, 1, 0, PtxType::u32);
    }
    case DType::U8: {
      if (!fl) return b.cvt(x, PtxType::u32);  // wraps: the store keeps the low byte
      // Saturate through s32 (NaN -> 0), then clamp to [0, 255].
      const Reg i = b.cvt(x, PtxType::s32, Round::zero);
      return b.bitcast(b.min(b.max(i, 0), 255), PtxType::u32);
    }
    default: return b.cvt(x, storage_reg_type(d));
  }
}

Value load_element(KernelBuilder& b, DType d, Reg addr, PtxType compute, int64_t byte_offset) {
  return from_storage(b, b.ld_global(storage_mem_type(d), addr, byte_offset), d, compute);
}

void store_element(KernelBuilder& b, DType d, Reg addr, const Value& v, int64_t byte_offset) {
  b.st(Space::global, storage_mem_type(d), addr, to_storage(b, v, d), byte_offset);
}

Reg element_address(KernelBuilder& b, Reg base, Reg index, DType d) {
  const int size = int(dtype_size(d));
  switch (index.type) {
    case PtxType::u32:
    case PtxType::s32: {
      const Reg off = b.mul_wide(index, size);
      return b.add(base, index.type == PtxType::u32 ? off : b.bitcast(off, PtxType::u64));
    }
    case PtxType::u64: return b.mad(index, size, base);
    case PtxType::s64: return b.add(base, b.bitcast(b.mul(index, size), PtxType::u64));
    default: fail<BackendError>("ptx", "element_address with a ", type_name(index.type), " index");
  }
}

}  // namespace numr::ptx
