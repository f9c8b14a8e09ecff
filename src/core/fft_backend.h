// The optional FFT family of the GPU backends: batched 1-D transforms of contiguous rows.
// The CPU runs its own engine on any strides (src/backends/cpu/fft) and is not in this
// table; a device type without a row runs the transforms composed from its other ops
// (src/ops/fft_composed.cpp).
#pragma once

#include <cstdint>

#include "core/backend.h"

namespace numr {

enum class FftKind : uint8_t {
  C2C,  // n complex -> n complex
  R2C,  // n real -> n / 2 + 1 complex
  C2R,  // n / 2 + 1 complex -> n real; may overwrite its input
};

// Unnormalised transforms of `batch` contiguous rows: in [batch, n_in], out [batch, n_out]
// (n_in, n_out from kind and n); part is F32 or F64, the dtype of the real data or of the
// complex data's parts.
struct FftCall {
  FftKind kind = FftKind::C2C;
  bool forward = true;  // C2C only
  DType part = DType::F32;
  int64_t n = 0, batch = 0;
  int device = 0;  // the index of the device in and out live on
  TensorRef in, out;
};

class FftKernels {
 public:
  virtual ~FftKernels() = default;
  virtual void run(const FftCall& call) = 0;
};

// The FFT kernels of the backend on `device`, or nullptr where it has none.
FftKernels* fft_kernels_for(Device device);

// CUDA's, through cuFFT loaded with dlopen (src/backends/cuda/fft.cpp).
FftKernels& cuda_fft_kernels();

}  // namespace numr
