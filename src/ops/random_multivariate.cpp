// multivariate_normal: mean + L z with L the Cholesky factor of the covariance.
#include "core/op_scope.h"
#include "numr/distributions.h"
#include "numr/linalg.h"
#include "numr/ops.h"
#include "ops/common.h"
#include "ops/random_common.h"

namespace numr::random {

Tensor multivariate_normal(const Tensor& mean, const std::optional<Tensor>& cov,
                           const std::optional<Tensor>& scale_tril, const Shape& sample_shape,
                           Generator& gen) {
  constexpr std::string_view op = "multivariate_normal";
  const OpScope scope("multivariate_normal");
  if (cov.has_value() == scale_tril.has_value())
    fail<InvalidArgument>(op, "give exactly one of cov and scale_tril");
  const Tensor& m = cov ? *cov : *scale_tril;
  detail::check_params(op, {&mean});
  detail::check_params(op, {&m});
  ops::check_same(op, {&mean, &m});
  if (mean.dim() < 1) fail<InvalidArgument>(op, "mean must have at least 1 dim");
  const int64_t D = mean.size(-1);
  if (m.dim() < 2 || m.size(-1) != D || m.size(-2) != D)
    fail<ShapeMismatch>(op, cov ? "cov" : "scale_tril", " must be [.., ", D, ", ", D, "] for mean ",
                        shape_str(mean.shape()), ", got ", shape_str(m.shape()));
  for (int64_t s : sample_shape)
    if (s < 0) fail<InvalidArgument>(op, "sample_shape ", shape_str(sample_shape), " is negative");
  const DType wd = detail::work_dtype(mean.dtype());
  const Tensor mw = mean.dtype() == wd ? mean : cast(mean, wd);
  const Tensor mm = m.dtype() == wd ? m : cast(m, wd);
  Tensor L;
  if (cov) {
    L = linalg::cholesky(mm);
  } else {
    L = tril(mm);
    const Tensor diag = sum(L * eye(D, std::nullopt, wd, m.device()), {-1});
    detail::require_all(op, gt(diag, detail::scalar_like(diag, 0.0)),
                        "scale_tril needs a positive diagonal");
  }
  const Shape mean_batch(mean.shape().begin(), mean.shape().end() - 1);
  const Shape l_batch(L.shape().begin(), L.shape().end() - 2);
  Shape out_shape = sample_shape;
  for (int64_t s : broadcast_shapes(op, mean_batch, l_batch)) out_shape.push_back(s);
  out_shape.push_back(D);
  const detail::Draws draws(gen, out_shape, 1, wd, mean.device());
  const Tensor z = draws.normal(0, 0);
  // x_i = mean_i + sum_j L_ij z_j: z as a row vector times L transposed.
  const Tensor lz = squeeze(matmul(unsqueeze(z, -2), transpose(L, -1, -2)), -2);
  const Tensor x = lz + mw;
  return x.dtype() == mean.dtype() ? x : cast(x, mean.dtype());
}

}  // namespace numr::random
