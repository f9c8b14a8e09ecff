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

// How many threads one oneDNN primitive runs a product of `total_macs` multiply-adds on:
// the pool's size when the product is large enough (gemm_team_min_macs() per thread), the
// pool has several threads and the caller is not one of its workers; else 0, and numr's
// pool splits the product into blocks run by single-threaded primitives. Run as one, the
// product is blocked by oneDNN for every thread at once (its AMX and AVX-512 kernels reach
// a far higher rate than on separate row blocks) and B is packed by all of them.
// NUMR_CPU_GEMM_TEAM=0 never does; NUMR_CPU_GEMM_TEAM_MIN_MACS sets the size per thread.
int gemm_team_threads(double total_macs);
double gemm_team_min_macs();
// Tests: the size per thread from which products run on a team (< 0: back to the default),
// and how many products (matmuls and epilogues) have run on one, process-wide.
void set_gemm_team_min_macs_for_testing(double macs);
int64_t gemm_team_count();
void count_gemm_team_run();

}  // namespace numr::cpu
