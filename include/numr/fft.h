// numr::fft: discrete Fourier transforms (torch.fft's semantics). The frequency helpers
// below need no complex dtype and are compositions of other ops, so they run on every
// backend.
#pragma once

#include <cstdint>
#include <vector>

#include "numr/device.h"
#include "numr/dtype.h"
#include "numr/tensor.h"

namespace numr::fft {

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
