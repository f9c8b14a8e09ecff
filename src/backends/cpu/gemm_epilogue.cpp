#include "backends/cpu/gemm_epilogue.h"

#include "numr/error.h"

namespace numr::cpu {

void matmul_epilogue(const GemmEpilogueCall&) {
  fail<BackendLimitation>("matmul_bias_activation", "not implemented on the CPU yet");
}

}  // namespace numr::cpu
