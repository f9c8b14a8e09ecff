// Discrete samplers: bernoulli, poisson (inversion below rate 10, PTRS above), binomial
// (inversion below n min(p, 1-p) = 10, BTRS above), multinomial and randperm.
#include <cmath>

#include "core/op_scope.h"
#include "numr/distributions.h"
#include "numr/indexing.h"
#include "numr/ops.h"
#include "numr/sort.h"
#include "ops/random_common.h"

namespace numr::random {
namespace {

using detail::Draws;
using detail::scalar_like;

constexpr double kHalfLog2Pi = 0.91893853320467274178;
// Below this the inversion samplers run; from here the transformed-rejection ones.
constexpr double kInversionLimit = 10.0;

Tensor finish(const Tensor& x, DType t) { return x.dtype() == t ? x : cast(x, t); }

// lgamma(z) - ((z - 1/2) log z - z + log(2 pi)/2), Stirling's series, for z >= 10.
Tensor stirling_tail(const Tensor& z) {
  const Tensor r = recip(z);
  const Tensor r2 = r * r;
  return r * (1.0 / 12.0 - r2 * (1.0 / 360.0 - r2 * (1.0 / 1260.0)));
}

// lgamma(a + 1) - lgamma(b + 1) without the cancellation of two large lgammas: Stirling's
// form where both are >= 10, the direct difference elsewhere.
Tensor lfact_diff(const Tensor& a, const Tensor& b) {
  const Tensor a1 = a + 1.0, b1 = b + 1.0;
  const Tensor stirling = (a - b) * (log(a1) - 1.0) + (b + 0.5) * log1p((a - b) / b1) +
                          stirling_tail(a1) - stirling_tail(b1);
  const Tensor ten = scalar_like(a, kInversionLimit);
  const Tensor both_large = logical_and(ge(a, ten), ge(b, ten));
  return where_cond(both_large, stirling, lgamma(a1) - lgamma(b1));
}

// log(rate^k e^-rate / k!), accurate for large rate and k: with lgamma(k + 1) in Stirling's
// form, -rate + k log rate - lgamma(k + 1) becomes a sum of terms of size sqrt(rate).
Tensor poisson_log_pmf(const Tensor& k, const Tensor& rate) {
  const Tensor k1 = k + 1.0;
  const Tensor stirling =
      (k1 - rate) + k * log1p((rate - k1) / k1) - log(k1) * 0.5 - kHalfLog2Pi - stirling_tail(k1);
  const Tensor direct = k * log(rate) - rate - lgamma(k1);
  return where_cond(ge(k, scalar_like(k, kInversionLimit)), stirling, direct);
}

// The number of indices i with F_i <= u, F_i = term_0 + .. + term_i and
// term_{i+1} = term_i * ratio(i): the inverse CDF at u. An element stops counting once its
// term underflows to 0 or i reaches `last` (when given).
template <class Ratio>
Tensor invert_by_counting(const Tensor& u, Tensor term, const Ratio& ratio, const Tensor* last) {
  Tensor cdf = term;
  Tensor k = zeros_like(u);
  const Tensor zero = scalar_like(u, 0.0);
  for (int64_t i = 0;; ++i) {
    Tensor active = logical_and(le(cdf, u), gt(term, zero));
    if (last != nullptr) active = logical_and(active, lt(scalar_like(u, double(i)), *last));
    if (active.numel() == 0 || !any(active).item<bool>()) return k;
    k = k + cast(active, u.dtype());
    term = term * ratio(double(i));
    cdf = cdf + term;
  }
}

}  // namespace

Tensor bernoulli(const Tensor& p, Generator& gen) {
  const OpScope scope("bernoulli");
  const Shape shape = detail::check_params("bernoulli", {&p});
  const DType wd = detail::work_dtype(p.dtype());
  const Tensor pw = detail::prepare(p, shape, wd);
  detail::require_all("bernoulli",
                      logical_and(ge(pw, scalar_like(pw, 0.0)), le(pw, scalar_like(pw, 1.0))),
                      "p must be in [0, 1]");
  const Draws draws(gen, shape, 1, wd, p.device());
  return finish(cast(lt(draws.uniform(0, 0), pw), wd), p.dtype());
}

Tensor poisson(const Tensor& rate, Generator& gen) {
  const OpScope scope("poisson");
  const Shape shape = detail::check_params("poisson", {&rate});
  const DType wd = detail::work_dtype(rate.dtype());
  const Tensor lam = detail::prepare(rate, shape, wd);
  detail::require_all("poisson",
                      logical_and(ge(lam, scalar_like(lam, 0.0)),
                                  le(lam, scalar_like(lam, wd == DType::F64 ? 0x1p52 : 0x1p24))),
                      "rate must be >= 0 (and at most 2^24 in F32, 2^52 in F64)");
  // Draw 0: the inversion uniform (round 0 only); draws 1 and 2: PTRS's pair per round.
  const Draws draws(gen, shape, 3, wd, rate.device());
  const Tensor large = ge(lam, scalar_like(lam, kInversionLimit));

  // Inversion: term_0 = e^-rate, term_{i+1} = term_i rate / (i + 1). Large rates run it
  // with rate 0 (one step) and are replaced below.
  const Tensor lam_small = where_cond(large, scalar_like(lam, 0.0), lam);
  const Tensor small_k = invert_by_counting(
      draws.uniform(0, 0), exp(-lam_small), [&](double i) { return lam_small * (1.0 / (i + 1.0)); },
      nullptr);
  if (!any(large).item<bool>()) return finish(small_k, rate.dtype());

  // PTRS (Hormann 1993), on rates >= 10; smaller ones run with rate 10 and are discarded.
  const Tensor L = where_cond(large, lam, scalar_like(lam, kInversionLimit));
  const Tensor b = sqrt(L) * 2.53 + 0.931;
  const Tensor a = b * 0.02483 - 0.059;
  const Tensor log_inv_alpha = log(recip(b - 3.4) * 1.1328 + 1.1239);
  const Tensor vr = 0.9277 - recip(b - 2.0) * 3.6224;
  const Tensor zero = scalar_like(L, 0.0);
  const Tensor large_k =
      detail::rejection_loop("poisson", zeros_like(L), logical_not(large), [&](int r) {
        const Tensor U = draws.uniform(r, 1) - 0.5;
        const Tensor V = draws.uniform(r, 2);
        const Tensor us = 0.5 - abs(U);
        const Tensor k = floor((a * 2.0 / us + b) * U + L + 0.43);
        const Tensor quick = logical_and(ge(us, scalar_like(us, 0.07)), le(V, vr));
        const Tensor bad =
            logical_or(lt(k, zero), logical_and(lt(us, scalar_like(us, 0.013)), gt(V, us)));
        const Tensor lhs = log(V) + log_inv_alpha - log(a / square(us) + b);
        const Tensor test = logical_and(logical_not(bad), le(lhs, poisson_log_pmf(k, L)));
        return std::pair{k, logical_or(quick, test)};
      });
  return finish(where_cond(large, large_k, small_k), rate.dtype());
}

Tensor binomial(const Tensor& count, const Tensor& prob, Generator& gen) {
  const OpScope scope("binomial");
  const Shape shape = detail::check_params("binomial", {&count, &prob});
  const DType wd = detail::work_dtype(count.dtype());
  const Tensor n = detail::prepare(count, shape, wd);
  const Tensor p0 = detail::prepare(prob, shape, wd);
  const Tensor n_max = scalar_like(n, wd == DType::F64 ? 0x1p52 : 0x1p24);
  detail::require_all(
      "binomial",
      logical_and(logical_and(ge(n, scalar_like(n, 0.0)), le(n, n_max)), eq(floor(n), n)),
      "count must hold non-negative integers (at most 2^24 in F32, 2^52 in F64)");
  detail::require_all("binomial",
                      logical_and(ge(p0, scalar_like(p0, 0.0)), le(p0, scalar_like(p0, 1.0))),
                      "prob must be in [0, 1]");
  // Sample with p <= 1/2 and reflect: X(n, p) = n - X(n, 1 - p).
  const Tensor flip = gt(p0, scalar_like(p0, 0.5));
  const Tensor p = where_cond(flip, 1.0 - p0, p0);
  const Tensor q = 1.0 - p;
  const Draws draws(gen, shape, 3, wd, count.device());
  const Tensor large = ge(n * p, scalar_like(n, kInversionLimit));

  // Inversion: term_0 = q^n, term_{i+1} = term_i (n - i) / (i + 1) p / q, i < n.
  const Tensor n_small = where_cond(large, scalar_like(n, 0.0), n);
  const Tensor p_over_q = p / q;
  const Tensor small_k = invert_by_counting(
      draws.uniform(0, 0), exp(n_small * log1p(-p)),
      [&](double i) { return (n_small - i) * p_over_q * (1.0 / (i + 1.0)); }, &n_small);

  Tensor k = small_k;
  if (any(large).item<bool>()) {
    // BTRS (Hormann 1993) where n p >= 10; other elements run with n = 100, p = 1/2.
    const Tensor N = where_cond(large, n, scalar_like(n, 100.0));
    const Tensor P = where_cond(large, p, scalar_like(p, 0.5));
    const Tensor Q = 1.0 - P;
    const Tensor spq = sqrt(N * P * Q);
    const Tensor b = spq * 2.53 + 1.15;
    const Tensor a = b * 0.0248 + P * 0.01 - 0.0873;
    const Tensor c = N * P + 0.5;
    const Tensor alpha = (recip(b) * 5.1 + 2.83) * spq;
    const Tensor vr = 0.92 - recip(b) * 4.2;
    const Tensor m = floor((N + 1.0) * P);
    const Tensor lpq = log(P / Q);
    const Tensor zero = scalar_like(N, 0.0);
    const Tensor large_k =
        detail::rejection_loop("binomial", zeros_like(N), logical_not(large), [&](int r) {
          const Tensor U = draws.uniform(r, 1) - 0.5;
          const Tensor V = draws.uniform(r, 2);
          const Tensor us = 0.5 - abs(U);
          const Tensor kk = floor((a * 2.0 / us + b) * U + c);
          const Tensor in_range = logical_and(ge(kk, zero), le(kk, N));
          const Tensor quick = logical_and(ge(us, scalar_like(us, 0.07)), le(V, vr));
          // log f(k) - log f(m) = lgamma(m+1) - lgamma(k+1) + lgamma(n-m+1) - lgamma(n-k+1)
          //                      + (k - m) log(p / q)
          const Tensor kc = where_cond(in_range, kk, m);  // keeps lgamma's arguments valid
          const Tensor rhs = lfact_diff(m, kc) + lfact_diff(N - m, N - kc) + (kc - m) * lpq;
          const Tensor lhs = log(V * alpha / (a / square(us) + b));
          const Tensor ok = logical_and(in_range, logical_or(quick, le(lhs, rhs)));
          return std::pair{kk, ok};
        });
    k = where_cond(large, large_k, small_k);
  }
  return finish(where_cond(flip, n - k, k), count.dtype());
}

Tensor multinomial(const Tensor& probs, int64_t num_samples, bool replacement, Generator& gen) {
  const OpScope scope("multinomial");
  detail::check_params("multinomial", {&probs});
  if (probs.dim() != 1 && probs.dim() != 2)
    fail<InvalidArgument>("multinomial", "probs must be [K] or [B, K], got ",
                          shape_str(probs.shape()));
  const int64_t K = probs.size(-1);
  if (K == 0) fail<InvalidArgument>("multinomial", "probs has no categories");
  if (num_samples < 0) fail<InvalidArgument>("multinomial", "num_samples must be >= 0");
  const DType wd = detail::work_dtype(probs.dtype());
  const Tensor w = detail::prepare(probs, probs.shape(), wd);
  const Tensor zero = scalar_like(w, 0.0);
  detail::require_all("multinomial", logical_and(ge(w, zero), lt(abs(w), scalar_like(w, INFINITY))),
                      "probs must be finite and >= 0");
  detail::require_all("multinomial", gt(sum(w, {-1}), zero),
                      "each row of probs needs a weight > 0");
  Shape out_shape = probs.shape();
  out_shape.back() = num_samples;
  if (replacement) {
    // Category = #{j < K-1 : cdf_j <= u total}: the inverse CDF, never past K-1.
    const Tensor cdf = cumsum(w, -1);
    const Tensor total = narrow(cdf, -1, K - 1, 1);
    const Draws draws(gen, out_shape, 1, wd, probs.device());
    const Tensor target = draws.uniform(0, 0) * total;
    if (K == 1) return zeros(out_shape, DType::I64, probs.device());
    return searchsorted(contiguous(narrow(cdf, -1, 0, K - 1)), target, /*right=*/true);
  }
  if (num_samples > K)
    fail<InvalidArgument>("multinomial", "num_samples ", num_samples,
                          " exceeds the number of categories ", K, " without replacement");
  const int64_t nonzero = int64_t(min(sum(cast(gt(w, zero), wd), {-1})).item_double());
  if (num_samples > nonzero)
    fail<InvalidArgument>("multinomial", "num_samples ", num_samples,
                          " exceeds the categories of non-zero weight (", nonzero,
                          ") without replacement");
  // Exponential race: category j finishes at E_j / w_j; the first num_samples to finish.
  const Draws draws(gen, probs.shape(), 1, wd, probs.device());
  const Tensor keys = -log1p(-draws.uniform(0, 0)) / w;
  return topk(keys, num_samples, -1, /*largest=*/false).indices;
}

Tensor randperm(int64_t n, Generator& gen, Device device) {
  const OpScope scope("randperm");
  if (n < 0) fail<InvalidArgument>("randperm", "n must be >= 0, got ", n);
  // Sorting by the pair (k1, k2) of 24-bit keys: a stable sort by k2, then by k1.
  const Draws draws(gen, {n}, 2, DType::F32, device);
  const Tensor k1 = draws.uniform(0, 0), k2 = draws.uniform(0, 1);
  const Tensor by_k2 = argsort(k2);
  const Tensor by_k1 = argsort(index_select(k1, 0, by_k2));
  return index_select(by_k2, 0, by_k1);
}

}  // namespace numr::random
