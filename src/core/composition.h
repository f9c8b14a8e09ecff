// Kernel or composition: the choice every front end of a composed op (OpInfo::composed)
// makes before it calls its backend.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <vector>

#include "numr/dtype.h"
#include "numr/op_info.h"

namespace numr {

class Backend;

// True when `op` runs as be's kernel for dtype t; false when the front end must run the
// op's composition instead: the backend has no kernel for it (Backend::supports), or a
// ForceComposition on this thread names it. Counts the choice (composition_runs).
bool use_kernel(const Backend& be, OpId op, DType t);

// Test support: while alive, the ops named (every composed op when the list is empty) run
// their compositions on this thread, whatever the backend supports. Scopes nest.
class ForceComposition {
 public:
  explicit ForceComposition(std::initializer_list<OpId> ops = {})
      : ForceComposition(true, ops) {}
  // Forces nothing when `when` is false.
  ForceComposition(bool when, std::initializer_list<OpId> ops);
  ~ForceComposition();
  ForceComposition(const ForceComposition&) = delete;
  ForceComposition& operator=(const ForceComposition&) = delete;

 private:
  std::vector<OpId> saved_;
  bool saved_all_;
};

// Whether a ForceComposition on this thread names op (or names every op).
bool composition_forced(OpId op);

// How many times this thread ran a composition, and a kernel, of op (through use_kernel).
struct PathCounts {
  uint64_t kernel = 0, composed = 0;
};
PathCounts path_counts(OpId op);

}  // namespace numr
