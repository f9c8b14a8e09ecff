// Matmul through oneDNN's matmul primitive: native bf16 products with f32 accumulation
// (AVX512-BF16 where the CPU has it) and AVX-512 f32 kernels. Strided and transposed
// operands and broadcast batches are described to oneDNN as they are, not copied.
#pragma once

#include "core/backend.h"

namespace numr::cpu {

// Computes `call` (BF16 or F32, every operand and out of the same dtype) and returns true,
// or returns false having written nothing when oneDNN has only its slow reference
// implementation for this case; the caller then takes another path.
bool onednn_matmul(const MatmulCall& call);

}  // namespace numr::cpu
