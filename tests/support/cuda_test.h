// Tests that need a CUDA device: they skip, naming the reason, where none is usable.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "backends/cuda/context.h"
#include "numr/error.h"

namespace numr::test {

// The first CUDA device, or nullptr with the reason it cannot be used.
inline cuda::CudaDevice* first_cuda_device(std::string* reason) {
  try {
    return &cuda::cuda_device(0);
  } catch (const BackendUnavailable& e) {
    *reason = e.what();
    return nullptr;
  }
}

}  // namespace numr::test

// Skips the current test when no CUDA device is usable.
#define REQUIRE_CUDA()                                           \
  std::string no_gpu_reason_;                                    \
  if (!::numr::test::first_cuda_device(&no_gpu_reason_)) {       \
    GTEST_SKIP() << "no usable CUDA device: " << no_gpu_reason_; \
  }
