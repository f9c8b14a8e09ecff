// GEMM epilogues on the CPU (see GemmEpilogueCall in core/backend.h).
#pragma once

#include "core/backend.h"

namespace numr::cpu {

void matmul_epilogue(const GemmEpilogueCall& call);

// Whether an epilogue of this dtype and activation (without a residual) runs numr's own
// GEMM on this CPU (see gemm_epilogue.cpp; BF16 products of fewer than kOnednnMinMacs
// multiply-adds do not), and how many products it has run.
bool uses_own_gemm(DType dtype, Activation act);
int64_t own_gemm_count();
// Tests: the f32 stage of a band of rows on an OpenMP team (<= 0: back to the default).
void set_team_stage_bytes_for_testing(int64_t bytes);
// Whether oneDNN runs its AMX kernels on this CPU (BF16 epilogues then go to oneDNN).
bool onednn_uses_amx();

}  // namespace numr::cpu
