#include "core/composition.h"

#include <algorithm>
#include <array>

#include "core/backend.h"

namespace numr {
namespace {

constexpr size_t kOpCount = [] {
  size_t n = 0;
#define NUMR_OP(name, family, dtypes, grad) ++n;
#include "numr/op_table.def"
  return n;
}();

struct ThreadState {
  std::vector<OpId> forced;
  bool force_all = false;
  std::array<PathCounts, kOpCount> counts{};
};

ThreadState& state() {
  thread_local ThreadState s;
  return s;
}

bool forced(const ThreadState& s, OpId op) {
  return s.force_all || std::find(s.forced.begin(), s.forced.end(), op) != s.forced.end();
}

}  // namespace

bool use_kernel(const Backend& be, OpId op, DType t) {
  ThreadState& s = state();
  const bool kernel = !forced(s, op) && be.supports(op, t);
  PathCounts& c = s.counts[size_t(op)];
  ++(kernel ? c.kernel : c.composed);
  return kernel;
}

ForceComposition::ForceComposition(bool when, std::initializer_list<OpId> ops)
    : saved_(state().forced), saved_all_(state().force_all) {
  if (!when) return;
  ThreadState& s = state();
  if (ops.size() == 0) s.force_all = true;
  s.forced.insert(s.forced.end(), ops.begin(), ops.end());
}

ForceComposition::~ForceComposition() {
  ThreadState& s = state();
  s.forced = std::move(saved_);
  s.force_all = saved_all_;
}

bool composition_forced(OpId op) { return forced(state(), op); }

PathCounts path_counts(OpId op) {
  op_info(op);  // validates op
  return state().counts[size_t(op)];
}

}  // namespace numr
