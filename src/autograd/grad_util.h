// Small helpers for writing gradient rules.
#pragma once

#include "autograd/node.h"

namespace numr::autograd {

// A Var without history.
inline Var constant(Tensor t) { return Var(std::move(t), false); }
inline Var zeros_like(const Var& x) { return constant(zeros(x.shape(), x.dtype(), x.device())); }
inline Var scalar_like(const Var& x, double v) {
  return constant(full({}, v, x.dtype(), x.device()));
}
// A Bool tensor as 1/0 in x's dtype, without history.
inline Var mask_like(const Tensor& cond, const Var& x) { return constant(cond.cast(x.dtype())); }

}  // namespace numr::autograd
