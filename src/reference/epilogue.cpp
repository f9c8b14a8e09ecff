// Reference GEMM epilogues: the triple loop in double, then the formulas from src/math.
#include <vector>

#include "math/activation.h"
#include "numr/error.h"
#include "reference/reference.h"

namespace numr::reference {
RefTensor matmul_bias_act(const RefTensor& a, const RefTensor& b, const RefTensor& bias,
                          Activation act, const RefTensor* residual, RefTensor* pre) {
  const size_t nd = a.shape.size();
  if (nd < 2 || nd > 3 || b.shape.size() < 2 || b.shape.size() > nd)
    fail<InvalidArgument>("matmul_bias_activation", "reference: bad operand ranks");
  const int64_t nb = nd == 3 ? a.shape[0] : 1;
  const int64_t m = a.shape[nd - 2], k = a.shape[nd - 1];
  const int64_t n = b.shape.back();
  const bool b_batched = b.shape.size() == 3;
  RefTensor out;
  out.shape = nd == 3 ? Shape{nb, m, n} : Shape{m, n};
  out.v.assign(size_t(nb * m * n), 0.0);
  if (pre) *pre = out;
  std::vector<double> acc(size_t(m * n));
  for (int64_t t = 0; t < nb; ++t) {
    gemm_rows(a.v.data() + t * m * k, b.v.data() + (b_batched ? t : 0) * k * n, acc.data(), m, k,
              n);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        const size_t o = size_t((t * m + i) * n + j);
        const double s = acc[size_t(i * n + j)] + bias.v[size_t(j)];
        if (pre) pre->v[o] = s;
        out.v[o] = math::activate(act, s) + (residual ? residual->v[o] : 0.0);
      }
  }
  return out;
}

void bias_act_bwd(const RefTensor& grad, const RefTensor& saved, Activation act, bool saved_is_pre,
                  RefTensor& grad_pre, RefTensor& d_bias) {
  const int64_t n = grad.shape.empty() ? 1 : grad.shape.back();
  grad_pre.shape = grad.shape;
  grad_pre.v.assign(grad.v.size(), 0.0);
  d_bias.shape = {n};
  d_bias.v.assign(size_t(n), 0.0);
  for (size_t i = 0; i < grad.v.size(); ++i) {
    const double gp =
        grad.v[i] * math::finite_or_zero(math::activation_grad(act, saved.v[i], saved_is_pre));
    grad_pre.v[i] = gp;
    d_bias.v[i % size_t(n)] += gp;
  }
}

}  // namespace numr::reference
