// Var's method forms of common ops, and printing.
#include <sstream>

#include "autograd/node.h"
#include "core/print.h"

namespace numr {

Var Var::reshape(const Shape& shape) const { return numr::reshape(*this, shape); }
Var Var::view(const Shape& shape) const { return numr::view(*this, shape); }
Var Var::transpose(int64_t d0, int64_t d1) const { return numr::transpose(*this, d0, d1); }
Var Var::permute(const std::vector<int64_t>& dims) const { return numr::permute(*this, dims); }
Var Var::sum(const std::vector<int64_t>& dims, bool keepdim) const {
  return numr::sum(*this, dims, keepdim);
}
Var Var::mean(const std::vector<int64_t>& dims, bool keepdim) const {
  return numr::mean(*this, dims, keepdim);
}

std::string Var::to_string() const {
  if (!defined()) return "Var(undefined)";
  std::string extra;
  if (grad_fn()) {
    extra = ", grad_fn=" + std::string(grad_fn()->name());
  } else if (requires_grad()) {
    extra = ", requires_grad=true";
  }
  return format_tensor(tensor(), extra);
}

std::ostream& operator<<(std::ostream& os, const Var& v) { return os << v.to_string(); }

}  // namespace numr
