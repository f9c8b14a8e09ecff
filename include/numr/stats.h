// Statistics (DESIGN §10): quantiles, median, mode, histogram, covariance, correlation,
// skewness and kurtosis. Each is built from numr's ops (sort, gather, reductions, matmul),
// so it runs on every backend; the Var forms are differentiable to any order. Semantics
// follow PyTorch (quantile, median, mode, histogram, cov, corrcoef) and SciPy (skew,
// kurtosis); docs/semantics.md, "Statistics".
//
//   Tensor q = quantile(x, {0.25, 0.5, 0.75}, /*dim=*/1);  // [3, rows]
//   auto [counts, edges] = histogram(x, 10);
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "numr/autograd.h"
#include "numr/sort.h"
#include "numr/tensor.h"

namespace numr {

enum class QuantileInterpolation { Linear, Lower, Higher, Midpoint, Nearest };

// The q-th quantiles (each q in [0, 1]) of x along dim (all of x, flattened, when dim is
// empty), for floating x. With several q the result has a leading dim of their count. A
// slice holding a NaN gives NaN. Interpolation between the sorted values at floor and
// ceil of q (n - 1) as PyTorch's `interpolation`; Nearest rounds half to even.
Tensor quantile(const Tensor& x, double q, std::optional<int64_t> dim = std::nullopt,
                bool keepdim = false,
                QuantileInterpolation interpolation = QuantileInterpolation::Linear);
Tensor quantile(const Tensor& x, const std::vector<double>& q,
                std::optional<int64_t> dim = std::nullopt, bool keepdim = false,
                QuantileInterpolation interpolation = QuantileInterpolation::Linear);
Var quantile(const Var& x, double q, std::optional<int64_t> dim = std::nullopt,
             bool keepdim = false,
             QuantileInterpolation interpolation = QuantileInterpolation::Linear);
Var quantile(const Var& x, const std::vector<double>& q, std::optional<int64_t> dim = std::nullopt,
             bool keepdim = false,
             QuantileInterpolation interpolation = QuantileInterpolation::Linear);

// The lower median of all of x (the smaller middle value for an even count), NaN if x
// holds one.
Tensor median(const Tensor& x);
Var median(const Var& x);
// Along dim: the lower medians and a position of each in x (I64); a slice holding a NaN
// gives NaN and the position of its first NaN.
SortResult median(const Tensor& x, int64_t dim, bool keepdim = false);
SortVar median(const Var& x, int64_t dim, bool keepdim = false);

// The most frequent value along dim (the smallest of equally frequent ones; NaNs count as
// one value) and the position of its first occurrence (I64).
SortResult mode(const Tensor& x, int64_t dim = -1, bool keepdim = false);

// Counts of x's values in `bins` equal bins over range [lo, hi] (the data's min and max
// when empty; lo - 0.5, hi + 0.5 when they are equal), as torch.histogram: bins are
// [edge_i, edge_i+1) and the last includes hi; values outside the range and NaN are not
// counted. counts in x's dtype (summed weights when weights are given, a density when
// density is set), edges [bins + 1].
struct HistogramResult {
  Tensor counts, edges;
};
HistogramResult histogram(const Tensor& x, int64_t bins,
                          std::optional<std::pair<double, double>> range = std::nullopt,
                          const std::optional<Tensor>& weights = std::nullopt,
                          bool density = false);

// The covariance matrix of the variables in x's rows (observations in columns; a 1-D x is
// one variable, giving a 0-d variance), dividing by N - correction (clamped at 0).
// Optional 1-D weights per observation, as torch.cov: fweights (integer repeat counts) and
// aweights (floating importance weights), both non-negative; with w = fweights * aweights
// the mean is weighted by w and the divisor is sum(w) - correction (without aweights) or
// sum(w) - correction * sum(w * aweights) / sum(w).
Tensor cov(const Tensor& x, int64_t correction = 1,
           const std::optional<Tensor>& fweights = std::nullopt,
           const std::optional<Tensor>& aweights = std::nullopt);
Var cov(const Var& x, int64_t correction = 1, const std::optional<Tensor>& fweights = std::nullopt,
        const std::optional<Tensor>& aweights = std::nullopt);
// Pearson's correlation coefficients, cov(x) scaled by the standard deviations, clipped
// to [-1, 1].
Tensor corrcoef(const Tensor& x);
Var corrcoef(const Var& x);

// Sample skewness m3 / m2^1.5 and kurtosis m4 / m2^2 (minus 3 when fisher) along dim (all
// of x when empty), with the central moments m_k dividing by n; bias = false applies
// SciPy's corrections for the sample size.
Tensor skew(const Tensor& x, std::optional<int64_t> dim = std::nullopt, bool keepdim = false,
            bool bias = true);
Var skew(const Var& x, std::optional<int64_t> dim = std::nullopt, bool keepdim = false,
         bool bias = true);
Tensor kurtosis(const Tensor& x, std::optional<int64_t> dim = std::nullopt, bool keepdim = false,
                bool fisher = true, bool bias = true);
Var kurtosis(const Var& x, std::optional<int64_t> dim = std::nullopt, bool keepdim = false,
             bool fisher = true, bool bias = true);

}  // namespace numr
