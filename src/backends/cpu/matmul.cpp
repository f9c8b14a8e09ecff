#include "backends/cpu/matmul.h"

#include "numr/error.h"

namespace numr::cpu {

void matmul(const MatmulCall&) { fail<BackendLimitation>("matmul", "not implemented on the CPU yet"); }

}  // namespace numr::cpu
