// Var matmul and its gradient rule. Batch dims broadcast, so each gradient is summed back
// to its operand's shape.
#include "autograd/grad_util.h"
#include "core/op_scope.h"
#include "ops/complex_ops.h"
#include "ops/matmul.h"

namespace numr {

using autograd::record;
using autograd::sum_to;

Var matmul(const Var& a, const Var& b) {
  const OpScope scope("matmul");
  if (is_complex(a.dtype())) {
    ops::matmul_shape(a.tensor(), b.tensor());  // checks the operands
    return complex_ops::matmul(a, b);
  }
  // d_a = g @ b^T, d_b = a^T @ g, with ^T swapping the last two dims. A 1-D operand is
  // promoted as the forward does (a [K] -> [1, K], b [K] -> [K, 1]) and g gets the dims
  // the forward dropped, so the rule only multiplies operands of 2 or more dims.
  return record("matmul", matmul(a.tensor(), b.tensor()), {a, b},
                [](const Var& g, const Node& n) -> std::vector<Var> {
                  const Var &x = n.input(0), &y = n.input(1);
                  const bool x_vec = x.dim() == 1, y_vec = y.dim() == 1;
                  const Var x2 = x_vec ? unsqueeze(x, 0) : x;
                  const Var y2 = y_vec ? unsqueeze(y, -1) : y;
                  Var g2 = y_vec ? unsqueeze(g, -1) : g;
                  if (x_vec) g2 = unsqueeze(g2, -2);
                  Var dx, dy;
                  if (x.requires_grad()) dx = sum_to(matmul(g2, transpose(y2, -1, -2)), x.shape());
                  if (y.requires_grad()) {
                    const Var d = matmul(transpose(x2, -1, -2), g2);  // [.., K, N]
                    dy = sum_to(y_vec ? squeeze(d, -1) : d, y.shape());
                  }
                  return {dx, dy};
                });
}

}  // namespace numr
