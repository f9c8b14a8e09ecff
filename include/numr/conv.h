// Convolution and distance (DESIGN §10), for Tensor and Var, as PyTorch defines them.
// Contracts in docs/semantics.md. Compositions of pad, unfold views and matmul, so every
// backend runs them and the Var forms differentiate to any order.
//
//   Tensor y = conv2d(x, w, b, {2, 2}, {1, 1});  // x [N, C, H, W], w [O, C, KH, KW]
//   Var d = cdist(av, bv, 1.0);                   // [.., P, M], [.., R, M] -> [.., P, R]
#pragma once

#include <array>
#include <cstdint>

#include "numr/autograd.h"
#include "numr/tensor.h"

namespace numr {

using Pair = std::array<int64_t, 2>;

// x [N, C, L] or [C, L], w [O, C/groups, K], bias [O] or undefined -> [N, O, L_out] (or
// [O, L_out]), L_out = (L + 2 padding - dilation (K - 1) - 1) / stride + 1. Zero padding.
Tensor conv1d(const Tensor& x, const Tensor& w, const Tensor& bias = Tensor(), int64_t stride = 1,
              int64_t padding = 0, int64_t dilation = 1, int64_t groups = 1);
// x [N, C, H, W] or [C, H, W], w [O, C/groups, KH, KW] -> [N, O, H_out, W_out], each
// spatial dim as conv1d's L with its own stride, padding and dilation.
Tensor conv2d(const Tensor& x, const Tensor& w, const Tensor& bias = Tensor(), Pair stride = {1, 1},
              Pair padding = {0, 0}, Pair dilation = {1, 1}, int64_t groups = 1);
// conv2d with groups = C: w [C m, 1, KH, KW] gives m output channels per input channel.
Tensor depthwise_conv2d(const Tensor& x, const Tensor& w, const Tensor& bias = Tensor(),
                        Pair stride = {1, 1}, Pair padding = {0, 0}, Pair dilation = {1, 1});
// The gradient of conv1d with respect to its input, as torch.nn.functional.conv_transpose1d:
// x [N, C_in, L] or [C_in, L], w [C_in, C_out/groups, K] -> [N, C_out, L_out],
// L_out = (L - 1) stride - 2 padding + dilation (K - 1) + output_padding + 1;
// output_padding < max(stride, dilation).
Tensor conv_transpose1d(const Tensor& x, const Tensor& w, const Tensor& bias = Tensor(),
                        int64_t stride = 1, int64_t padding = 0, int64_t output_padding = 0,
                        int64_t groups = 1, int64_t dilation = 1);
// How cdist computes p = 2, as torch.cdist's compute_mode: through one GEMM,
// |a - b|^2 = |a|^2 + |b|^2 - 2 a.b (fast; nearby rows lose digits to cancellation and
// identical rows need not give exactly 0), or from the coordinate differences (exact).
// MatmulIfLarge, the default, takes the GEMM when P > 25 or R > 25.
enum class CdistCompute : uint8_t { MatmulIfLarge, Matmul, Differences };
// The p-norm distance between each row of x1 [.., P, M] and each row of x2 [.., R, M]
// (batch dims broadcast) -> [.., P, R], as torch.cdist: p >= 0, p = inf is the largest
// coordinate difference, p = 0 the number of differing coordinates.
Tensor cdist(const Tensor& x1, const Tensor& x2, double p = 2.0,
             CdistCompute compute = CdistCompute::MatmulIfLarge);
// The distances between the rows of x [N, M] for i < j in row-major order -> [N (N - 1) / 2],
// as torch.pdist (p >= 0).
Tensor pdist(const Tensor& x, double p = 2.0);

Var conv1d(const Var& x, const Var& w, const Var& bias = Var(), int64_t stride = 1,
           int64_t padding = 0, int64_t dilation = 1, int64_t groups = 1);
Var conv2d(const Var& x, const Var& w, const Var& bias = Var(), Pair stride = {1, 1},
           Pair padding = {0, 0}, Pair dilation = {1, 1}, int64_t groups = 1);
Var depthwise_conv2d(const Var& x, const Var& w, const Var& bias = Var(), Pair stride = {1, 1},
                     Pair padding = {0, 0}, Pair dilation = {1, 1});
Var conv_transpose1d(const Var& x, const Var& w, const Var& bias = Var(), int64_t stride = 1,
                     int64_t padding = 0, int64_t output_padding = 0, int64_t groups = 1,
                     int64_t dilation = 1);
Var cdist(const Var& x1, const Var& x2, double p = 2.0,
          CdistCompute compute = CdistCompute::MatmulIfLarge);
Var pdist(const Var& x, double p = 2.0);

}  // namespace numr
