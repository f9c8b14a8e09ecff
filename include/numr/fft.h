// numr::fft: discrete Fourier transforms (torch.fft's semantics). The frequency helpers
// need no complex dtype and are compositions of other ops, so they run on every backend;
// the transforms run on the CPU (numr's own engine: any length in O(n log n)).
//
//   Tensor X = fft::fft(x);                       // Complex64 for F32 input
//   Tensor y = fft::irfft(fft::rfft(x), x.size(-1));
//   Tensor P = fft::fftn(img, {}, {-2, -1}, fft::Norm::Ortho);
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "numr/autograd.h"
#include "numr/device.h"
#include "numr/dtype.h"
#include "numr/tensor.h"

namespace numr::fft {

// How a transform is scaled: Backward (none forward, 1/n inverse), Ortho (1/sqrt(n) both
// ways) or Forward (1/n forward, none inverse), n the product of the transformed lengths.
enum class Norm { Backward, Ortho, Forward };

// The transform of x along dim, x first cut or zero-padded to n there. Real inputs (F32,
// F64; F16/BF16 through F32) are taken as complex; the result is Complex64 or Complex128.
Tensor fft(const Tensor& x, std::optional<int64_t> n = std::nullopt, int64_t dim = -1,
           Norm norm = Norm::Backward);
Tensor ifft(const Tensor& x, std::optional<int64_t> n = std::nullopt, int64_t dim = -1,
            Norm norm = Norm::Backward);
// Of a real x: the n / 2 + 1 non-negative frequencies.
Tensor rfft(const Tensor& x, std::optional<int64_t> n = std::nullopt, int64_t dim = -1,
            Norm norm = Norm::Backward);
// The real signal of length n (default 2 (m - 1) for m input frequencies) whose rfft the
// input begins; the imaginary parts of the zero (and, for even n, the last) frequency are
// ignored, as torch.fft.irfft.
Tensor irfft(const Tensor& x, std::optional<int64_t> n = std::nullopt, int64_t dim = -1,
             Norm norm = Norm::Backward);
// Over several dims: dims (default: the last s.size() dims, or all when s is empty too),
// each cut or padded to the matching entry of s. The 2-D forms default to dims {-2, -1}.
Tensor fftn(const Tensor& x, const std::vector<int64_t>& s = {},
            const std::vector<int64_t>& dims = {}, Norm norm = Norm::Backward);
Tensor ifftn(const Tensor& x, const std::vector<int64_t>& s = {},
             const std::vector<int64_t>& dims = {}, Norm norm = Norm::Backward);
Tensor rfftn(const Tensor& x, const std::vector<int64_t>& s = {},
             const std::vector<int64_t>& dims = {}, Norm norm = Norm::Backward);
Tensor irfftn(const Tensor& x, const std::vector<int64_t>& s = {},
              const std::vector<int64_t>& dims = {}, Norm norm = Norm::Backward);
Tensor fft2(const Tensor& x, const std::vector<int64_t>& s = {},
            const std::vector<int64_t>& dims = {-2, -1}, Norm norm = Norm::Backward);
Tensor ifft2(const Tensor& x, const std::vector<int64_t>& s = {},
             const std::vector<int64_t>& dims = {-2, -1}, Norm norm = Norm::Backward);
Tensor rfft2(const Tensor& x, const std::vector<int64_t>& s = {},
             const std::vector<int64_t>& dims = {-2, -1}, Norm norm = Norm::Backward);
Tensor irfft2(const Tensor& x, const std::vector<int64_t>& s = {},
              const std::vector<int64_t>& dims = {-2, -1}, Norm norm = Norm::Backward);

// The same, differentiable (to any order) in PyTorch's convention for complex gradients.
Var fft(const Var& x, std::optional<int64_t> n = std::nullopt, int64_t dim = -1,
        Norm norm = Norm::Backward);
Var ifft(const Var& x, std::optional<int64_t> n = std::nullopt, int64_t dim = -1,
         Norm norm = Norm::Backward);
Var rfft(const Var& x, std::optional<int64_t> n = std::nullopt, int64_t dim = -1,
         Norm norm = Norm::Backward);
Var irfft(const Var& x, std::optional<int64_t> n = std::nullopt, int64_t dim = -1,
          Norm norm = Norm::Backward);
Var fftn(const Var& x, const std::vector<int64_t>& s = {}, const std::vector<int64_t>& dims = {},
         Norm norm = Norm::Backward);
Var ifftn(const Var& x, const std::vector<int64_t>& s = {}, const std::vector<int64_t>& dims = {},
          Norm norm = Norm::Backward);
Var rfftn(const Var& x, const std::vector<int64_t>& s = {}, const std::vector<int64_t>& dims = {},
          Norm norm = Norm::Backward);
Var irfftn(const Var& x, const std::vector<int64_t>& s = {}, const std::vector<int64_t>& dims = {},
           Norm norm = Norm::Backward);

// The sample frequencies of an n-point transform with sample spacing d, as torch.fft.fftfreq:
// [0, 1, .., (n - 1) / 2, -(n / 2), .., -1] / (d n), shape [n] (n >= 0, a floating dtype).
Tensor fftfreq(int64_t n, double d = 1.0, DType dtype = DType::F32, Device device = Device::cpu());
// The non-negative half for rfft's outputs: [0, 1, .., n / 2] / (d n), shape [n / 2 + 1].
Tensor rfftfreq(int64_t n, double d = 1.0, DType dtype = DType::F32, Device device = Device::cpu());
// x rolled by size / 2 along each of dims (all dims when empty), moving the zero frequency
// to the middle; ifftshift rolls back by the same amounts (size / 2 rounded up).
Tensor fftshift(const Tensor& x, const std::vector<int64_t>& dims = {});
Tensor ifftshift(const Tensor& x, const std::vector<int64_t>& dims = {});

}  // namespace numr::fft
