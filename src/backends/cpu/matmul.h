// Batched GEMM on the CPU through the BLAS (see MatmulCall in core/backend.h).
#pragma once

#include "core/backend.h"

namespace numr::cpu {

void matmul(const MatmulCall& call);

}  // namespace numr::cpu
