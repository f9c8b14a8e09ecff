// The static barrier check run by KernelBuilder::finish(): a bar.sync must be reached by
// every thread of the block or by none, or the GPU hangs (ptxas accepts such code).
//
// It builds the control-flow graph of the instructions (basic blocks, branch and
// fallthrough edges, ret/exit to a virtual exit), computes post-dominators, and finds the
// thread-varying values by a fixed point: results of %tid/%laneid reads, loads, atomics
// and shuffles vary; so do results computed from varying registers, results of
// instructions under a varying guard, and results written inside the region of a varying
// branch (threads arrive there with different histories). Registers are tracked
// flow-insensitively, so a loop counter updated in place becomes varying as soon as any
// of its writes is. A branch (or a predicated ret) is varying when its predicate is; its
// region is every block reachable from it before its immediate post-dominator. A
// bar.sync inside such a region, or under a varying guard, is rejected.
#pragma once

#include <span>
#include <string_view>

#include "codegen/ptx/instr.h"

namespace numr::ptx {

// Throws BackendError ("[ptx] kernel 'name': ...") naming the first offending bar.sync
// and the branch that makes it divergent. lines[i] is the PTX text line of body[i], for
// the message (may be empty: instruction indexes are reported then).
void check_barriers(std::string_view kernel, std::span<const Instr> body,
                    std::span<const int> lines);

}  // namespace numr::ptx
