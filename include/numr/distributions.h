// Random distributions and quasi-random sequences (DESIGN §10), in namespace numr::random
// (gamma and beta there are samplers; numr::gamma and numr::beta stay the special functions).
// Every sampler is composed of rand/randn draws and Tensor ops, so it runs unchanged on
// every backend and a seed gives the same numbers everywhere (docs/semantics.md, "Random
// distributions": the algorithm of each and how it advances the generator).
//
//   Generator g(7);
//   Tensor x = random::gamma(full({1000}, 2.5, DType::F64), g);
//   Tensor k = random::poisson(rates, g);
//   Tensor q = random::sobol(256, 3);
//
// Parameters are tensors of a floating dtype on one device that broadcast together; the
// sample has their broadcast shape, dtype and device. F16/BF16 parameters are sampled in F32
// and rounded once. Samples are constants: nothing is differentiable (pass var.tensor()).
// Bad parameters are InvalidArgument errors naming the op; checking their values reads a
// Bool to the host (on a GPU this waits for queued work).
#pragma once

#include <cstdint>
#include <optional>

#include "numr/random.h"
#include "numr/shape.h"
#include "numr/tensor.h"

namespace numr::random {

// ---- continuous ----
// Exp(rate): -log1p(-u) / rate; rate > 0.
Tensor exponential(const Tensor& rate, Generator& gen);
// Laplace(loc, scale), by the inverse CDF; scale > 0.
Tensor laplace(const Tensor& loc, const Tensor& scale, Generator& gen);
// Gamma(concentration, rate = 1): mean alpha / rate; alpha > 0, rate > 0. Marsaglia-Tsang
// rejection (alpha < 1 through alpha + 1 and the boost u^(1/alpha)).
Tensor gamma(const Tensor& concentration, Generator& gen);
Tensor gamma(const Tensor& concentration, const Tensor& rate, Generator& gen);
// Beta(a, b) = X / (X + Y), X ~ Gamma(a), Y ~ Gamma(b); a, b > 0.
Tensor beta(const Tensor& a, const Tensor& b, Generator& gen);
// Chi-squared(df) = 2 Gamma(df / 2); df > 0.
Tensor chi_squared(const Tensor& df, Generator& gen);
// Student's t(df) = Z / sqrt(Chi2(df) / df); df > 0.
Tensor student_t(const Tensor& df, Generator& gen);
// F(d1, d2) = (Chi2(d1) / d1) / (Chi2(d2) / d2); d1, d2 > 0.
Tensor fisher_f(const Tensor& d1, const Tensor& d2, Generator& gen);

// ---- discrete (values as floats of the parameter's dtype, as torch.poisson) ----
// 1 with probability p, else 0: rand < p; 0 <= p <= 1.
Tensor bernoulli(const Tensor& p, Generator& gen);
// Poisson(rate); rate >= 0 (and below 2^24 in F32, where larger counts are not exact).
Tensor poisson(const Tensor& rate, Generator& gen);
// Binomial(count, prob): the number of successes in count trials; count a non-negative
// integer value, 0 <= prob <= 1.
Tensor binomial(const Tensor& count, const Tensor& prob, Generator& gen);
// probs [K] or [B, K] (non-negative weights, not all zero in a row) -> I64 [num_samples] or
// [B, num_samples], category indices. Without replacement, num_samples must not exceed
// the number of non-zero weights of any row.
Tensor multinomial(const Tensor& probs, int64_t num_samples, bool replacement, Generator& gen);
// A uniformly random permutation of 0 .. n-1 (I64 on device).
Tensor randperm(int64_t n, Generator& gen, Device device = Device::cpu());

// ---- multivariate normal ----
// mean [.., D] and exactly one of cov [.., D, D] (symmetric positive definite) or
// scale_tril [.., D, D] (lower triangular, positive diagonal): samples of shape
// sample_shape + broadcast(batch dims) + [D], mean + L z with L = cholesky(cov).
Tensor multivariate_normal(const Tensor& mean, const std::optional<Tensor>& cov,
                           const std::optional<Tensor>& scale_tril, const Shape& sample_shape,
                           Generator& gen);

// ---- quasi-random, [n, d] points in [0, 1)^d ----
// Sobol points 0 .. n-1 (Joe-Kuo new-joe-kuo-6.21201 direction numbers, 30 bits, Gray-code
// order, the first point 0 as scipy.stats.qmc.Sobol(scramble=False)); 1 <= d <= 1024. With
// a generator, each dimension is scrambled by a random digital shift (XOR with a 30-bit
// word), which keeps the net's balance.
Tensor sobol(int64_t n, int64_t d, DType dtype = DType::F64, Device device = Device::cpu());
Tensor sobol(int64_t n, int64_t d, Generator& gen, DType dtype = DType::F64,
             Device device = Device::cpu());
// Halton points 0 .. n-1: column j is the radical inverse of the index in the j-th prime;
// 1 <= d <= 1024. Not scrambled.
Tensor halton(int64_t n, int64_t d, DType dtype = DType::F64, Device device = Device::cpu());
// Latin hypercube: column j is (perm_j + u) / n with perm_j a random permutation of
// 0 .. n-1 and u uniform, so each of the n strata of every axis holds one point.
Tensor latin_hypercube(int64_t n, int64_t d, Generator& gen, DType dtype = DType::F64,
                       Device device = Device::cpu());

}  // namespace numr::random
