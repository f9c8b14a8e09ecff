// The builder's record of one emitted instruction: its text and what the static analysis
// needs (registers read and written, control-flow role, whether its result differs
// between threads regardless of its inputs).
#pragma once

#include <string>
#include <vector>

#include "codegen/ptx/types.h"

namespace numr::ptx {

enum class InstrKind : uint8_t {
  op,       // anything that falls through to the next instruction
  label,    // a branch target (label holds its id)
  branch,   // bra; with a guard it is conditional (label holds the target)
  ret,      // ret or exit; with a guard only some threads leave
  barrier,  // bar.sync
};

struct Instr {
  InstrKind kind = InstrKind::op;
  std::string text;  // without the guard and the ';', e.g. "add.rn.f32 %f3, %f1, %f2"
  Reg guard{};       // valid() when the instruction is predicated: @guard / @!guard
  bool guard_negated = false;
  std::vector<Reg> defs, uses;
  bool varying = false;  // results differ per thread whatever the inputs (tid, loads...)
  int label = -1;
};

}  // namespace numr::ptx
