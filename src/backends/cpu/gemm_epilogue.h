// GEMM epilogues on the CPU (see GemmEpilogueCall in core/backend.h).
#pragma once

#include "core/backend.h"

namespace numr::cpu {

void matmul_epilogue(const GemmEpilogueCall& call);

}  // namespace numr::cpu
