// The public op running on this thread, for the prefix of errors raised deep inside it.
//   Tensor zeros(...) { const OpScope scope("zeros"); ... }
// Allocation, output-size and device-lookup errors are raised by shared code that does not
// know which op called it; it asks current_op() so the message names the op the user called.
#pragma once

#include <string_view>

namespace numr {

// Opens a scope naming `op` (a string with static lifetime). The outermost scope wins, so
// an op built from other ops reports itself, not a helper it called.
class OpScope {
 public:
  explicit OpScope(std::string_view op) noexcept;
  ~OpScope();
  OpScope(const OpScope&) = delete;
  OpScope& operator=(const OpScope&) = delete;

 private:
  bool owner_;
};

// The name of the outermost open scope on this thread, or `fallback` when none is open.
std::string_view current_op(std::string_view fallback) noexcept;

}  // namespace numr
