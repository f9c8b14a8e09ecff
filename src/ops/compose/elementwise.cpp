// The fused elementwise ops from their formulas (src/math), as chains of tensor ops.
#include <vector>

#include "math/formula.h"
#include "ops/compose/compose.h"
#include "ops/compose/expr.h"

namespace numr::compose {
namespace {

using E = Expr<Tensor>;

// The formula's value over the inputs in the compute dtype, as a tensor of `shape`.
Tensor evaluate(OpId op, std::initializer_list<const Tensor*> ins, const Shape& shape,
                int output) {
  const Tensor& first = **ins.begin();
  const DType wide = compute_dtype(first.dtype());
  std::vector<E> x;
  for (const Tensor* t : ins) x.emplace_back(t->cast(wide));
  while (x.size() < 3) x.emplace_back(0.0);
  const E r = math::formula<E>(op, x.data(), E(0.0), E(0.0), true, true, output);
  Tensor out = r.is_const() ? full(shape, r.c(), wide, first.device()) : r.x();
  if (out.shape() != shape) out = broadcast_to(out, shape).contiguous();
  return out;
}

}  // namespace

Tensor elementwise(OpId op, std::initializer_list<const Tensor*> ins, const Shape& shape) {
  return evaluate(op, ins, shape, 0).cast((*ins.begin())->dtype());
}

std::pair<Tensor, Tensor> act_mul_bwd(OpId op, const Tensor& g, const Tensor& a,
                                      const Tensor& b, const Shape& shape) {
  return {evaluate(op, {&g, &a, &b}, shape, 0), evaluate(op, {&g, &a, &b}, shape, 1)};
}

}  // namespace numr::compose
