// Epilogue kernels (not written yet).
#include "backends/cpu/kernels/kernels.h"

#include "backends/cpu/kernels/isa.h"  // after every system header

namespace numr::cpu::NUMR_ISA {

void bias_activation_bwd(const BiasActBwdCall&) {}

}  // namespace numr::cpu::NUMR_ISA

#pragma GCC pop_options
