// Var matmul and its gradient rule. Batch dims broadcast, so each gradient is summed back
// to its operand's shape.
#include "autograd/grad_util.h"
#include "core/op_scope.h"

namespace numr {

using autograd::record;
using autograd::sum_to;

Var matmul(const Var& a, const Var& b) {
  const OpScope scope("matmul");
  // d_a = g @ b^T, d_b = a^T @ g, with ^T swapping the last two dims.
  return record(
      "matmul", matmul(a.tensor(), b.tensor()), {a, b},
      [](const Var& g, const Node& n) -> std::vector<Var> {
        const Var &x = n.input(0), &y = n.input(1);
        return {x.requires_grad() ? sum_to(matmul(g, transpose(y, -1, -2)), x.shape()) : Var(),
                y.requires_grad() ? sum_to(matmul(transpose(x, -1, -2), g), y.shape()) : Var()};
      });
}

}  // namespace numr
