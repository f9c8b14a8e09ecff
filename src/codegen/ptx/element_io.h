// Moving tensor elements between memory, in any storage dtype, and compute Values.
//
// Loading converts exactly where the compute type can hold the value (F16/BF16 -> f32,
// ints -> f64, ...); float -> integer truncates toward zero, saturates, and sends NaN to 0.
// Storing rounds to nearest even into F32/F16/BF16 (one correct rounding, also from f64 or
// 64-bit integers); into integers it truncates toward zero like C++'s static_cast for
// in-range values, saturating out-of-range floats to the type's limits (U8: [0, 255]) and
// sending NaN to 0; integer narrowing (I64 -> I32, ints -> U8) wraps modulo 2^n. Bool is
// one byte, loaded as nonzero -> 1 and stored as (v != 0), NaN counting as nonzero.
// These are the CPU backend's conversion rules, so every backend casts alike.
#pragma once

#include <cstdint>

#include "codegen/ptx/value.h"
#include "numr/dtype.h"

namespace numr::ptx {

// The register type holding a raw element of dtype d: f64 f32 f16 bf16 s64 s32, and u32
// (the byte, zero-extended) for U8 and Bool.
PtxType storage_reg_type(DType d);
// The memory type to load/store an element of dtype d with (u8 for U8 and Bool).
PtxType storage_mem_type(DType d);

// A raw element (a register of storage_reg_type(d), e.g. from a vector load) as a Value of
// type compute.
Value from_storage(KernelBuilder& b, Reg raw, DType d, PtxType compute);
// v as a raw element of dtype d (register of storage_reg_type(d)), ready to store.
Reg to_storage(KernelBuilder& b, const Value& v, DType d);

// Loads the element of dtype d at addr + byte_offset as a Value of type compute.
Value load_element(KernelBuilder& b, DType d, Reg addr, PtxType compute, int64_t byte_offset = 0);
// Stores v as an element of dtype d at addr + byte_offset.
void store_element(KernelBuilder& b, DType d, Reg addr, const Value& v, int64_t byte_offset = 0);

// base + index * dtype_size(d), as u64. index: u32, s32 (sign-extended), u64 or s64.
Reg element_address(KernelBuilder& b, Reg base, Reg index, DType d);

}  // namespace numr::ptx
