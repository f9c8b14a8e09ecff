// Sequence and random kernels (not written yet).
#include "backends/cpu/kernels/kernels.h"

#include "backends/cpu/kernels/isa.h"  // after every system header

namespace numr::cpu::NUMR_ISA {

void sequence(const SequenceCall&) {}
void random(const RandomCall&) {}

}  // namespace numr::cpu::NUMR_ISA

#pragma GCC pop_options
