// Code-generation pieces shared by the reduction, axis (scan, softmax) and bias-gradient
// kernels: 16-byte vector loads of any dtype, walking a contiguous row segment with one
// group of threads (aligned vector body, scalar head and tail), and strided index
// arithmetic over collapsed dims.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "codegen/ptx/builder.h"
#include "numr/dtype.h"

namespace numr::cuda {

// Elements per 16-byte vector of dtype d (2 for F64/I64 ... 16 for U8/Bool).
int vector_width(DType d);

// Raw elements (registers of ptx::storage_reg_type(d)) of one 16-byte vector at addr, which
// must be 16-byte aligned. Read through the non-coherent cache: inputs are never written
// by the kernel that reads them.
std::vector<ptx::Reg> load_raw_vector(ptx::KernelBuilder& b, DType d, ptx::Reg addr);
// One raw element at addr (non-coherent cache).
ptx::Reg load_raw(ptx::KernelBuilder& b, DType d, ptx::Reg addr);
// Stores vector_width(d) raw elements as one 16-byte vector at addr (16-byte aligned).
void store_raw_vector(ptx::KernelBuilder& b, DType d, ptx::Reg addr,
                      const std::vector<ptx::Reg>& raw);

// Calls visit(raw, first) for the elements [0, len) of the contiguous run at `base`
// (u64 address), shared among the threads g_tid (u64) of a group of g_size (u64) threads:
// raw holds one element (unaligned head or tail, index `first`) or vector_width(d)
// elements (indexes first, first + 1, ...), first being a u64 register. Each thread sees
// its elements in increasing index order. The group must have at least vector_width(d)
// threads.
void for_each_in_run(
    ptx::KernelBuilder& b, DType d, ptx::Reg base, ptx::Reg len, ptx::Reg g_tid, ptx::Reg g_size,
    const std::function<void(const std::vector<ptx::Reg>& raw, ptx::Reg first)>& visit);

// Σ_d index_d * strides[d] (s64, in elements) for the row-major flat index `flat` (u64) over
// dims of extents `shape` (u64 registers) with `strides` (s64 registers).
ptx::Reg strided_offset(ptx::KernelBuilder& b, ptx::Reg flat, const std::vector<ptx::Reg>& shape,
                        const std::vector<ptx::Reg>& strides);

// The u64 special register value (tid.x, ctaid.x, ...) widened from u32.
ptx::Reg wide(ptx::KernelBuilder& b, ptx::Reg u32);

}  // namespace numr::cuda
