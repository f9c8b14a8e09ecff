// Scan and softmax kernels (not written yet).
#include "backends/cpu/kernels/kernels.h"

#include "backends/cpu/kernels/isa.h"  // after every system header

namespace numr::cpu::NUMR_ISA {

void along_axis(const AxisCall&) {}

}  // namespace numr::cpu::NUMR_ISA

#pragma GCC pop_options
