// Gradients of the transforms, in PyTorch's convention: the adjoint of a scaled DFT is
// the scaled transform the other way, so each rule is a transform again.
#include "autograd/grad_util.h"
#include "ops/fft_compose.h"

namespace numr::fft::detail {

using autograd::record;
using Grads = std::vector<Var>;

Var c2c(const Var& z, int64_t dim, bool forward, double scale) {
  return record(forward ? "fft" : "ifft", c2c(z.tensor(), dim, forward, scale), {z},
                [dim, forward, scale](const Var& g, const Node&) -> Grads {
                  return {c2c(g, dim, !forward, scale)};
                });
}

// y = scale * (the first n/2 + 1 rows of F) x for real x: the gradient is the real part of
// the inverse transform of g padded back to n.
Var r2c(const Var& x, int64_t dim, double scale) {
  const int64_t n = x.shape()[size_t(dim)];
  return record("rfft", r2c(x.tensor(), dim, scale), {x},
                [dim, n, scale](const Var& g, const Node&) -> Grads {
                  return {real(c2c(resized("rfft", g, dim, n), dim, false, scale))};
                });
}

// y = scale * C2R(z): each frequency strictly between 0 and n/2 stands for itself and
// its mirror image, so it gets twice the forward transform of g; the ends get it once.
Var c2r(const Var& z, int64_t dim, int64_t n, double scale) {
  const int64_t m = n / 2 + 1;
  return record("irfft", c2r(z.tensor(), dim, n, scale), {z},
                [dim, n, m, scale](const Var& g, const Node& node) -> Grads {
                  const Var& in = node.input(0);
                  std::vector<double> w(size_t(m), 2.0);
                  w[0] = 1.0;
                  if (n % 2 == 0) w[size_t(m - 1)] = 1.0;
                  Shape shape(size_t(in.dim()), 1);
                  shape[size_t(dim)] = m;
                  const Tensor weights = Tensor::from_vector(w, shape)
                                             .cast(in.dtype())
                                             .to(in.tensor().device());
                  return {r2c(g, dim, scale) * weights};
                });
}

}  // namespace numr::fft::detail
