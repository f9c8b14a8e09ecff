// Kernels not written yet: each throws BackendLimitation naming its family.
#include "backends/cpu/kernels/kernels.h"
#include "numr/error.h"

#include "backends/cpu/kernels/isa.h"  // after every system header


namespace numr::cpu::NUMR_ISA {

void reduce(const ReduceCall& c) { fail<BackendLimitation>(op_name(c.op), "not implemented on the CPU yet"); }
void along_axis(const AxisCall& c) { fail<BackendLimitation>(op_name(c.op), "not implemented on the CPU yet"); }
void sequence(const SequenceCall&) { fail<BackendLimitation>("sequence", "not implemented on the CPU yet"); }
void random(const RandomCall&) { fail<BackendLimitation>("random", "not implemented on the CPU yet"); }

}  // namespace numr::cpu::NUMR_ISA

#pragma GCC pop_options
