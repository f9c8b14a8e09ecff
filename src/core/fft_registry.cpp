// Which GPU backends have FFT kernels: one row per device type.
#include "core/fft_backend.h"

namespace numr {
namespace {

struct FftEntry {
  DeviceType type;
  FftKernels& (*get)();
};

constexpr FftEntry kFftTable[] = {
    {DeviceType::Cuda, &cuda_fft_kernels},
};

}  // namespace

FftKernels* fft_kernels_for(Device device) {
  for (const FftEntry& e : kFftTable)
    if (e.type == device.type) return &e.get();
  return nullptr;
}

}  // namespace numr
