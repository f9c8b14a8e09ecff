#include "core/op_scope.h"

namespace numr {
namespace {
thread_local std::string_view tl_op;
}  // namespace

OpScope::OpScope(std::string_view op) noexcept : owner_(tl_op.empty()) {
  if (owner_) tl_op = op;
}

OpScope::~OpScope() {
  if (owner_) tl_op = {};
}

std::string_view current_op(std::string_view fallback) noexcept {
  return tl_op.empty() ? fallback : tl_op;
}

}  // namespace numr
