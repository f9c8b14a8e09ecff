// The WebGPU context for tests that need one: null, with the reason in *why, where none is
// usable (no Dawn or no Vulkan driver: scripts/install-webgpu.sh, then source
// .deps/webgpu/env.sh), so the test can skip naming it.
#pragma once

#include <string>

#include "backends/webgpu/context.h"
#include "numr/error.h"

namespace numr::test {

inline webgpu::Context* usable_webgpu(std::string* why) {
  try {
    return &webgpu::Context::get(0);
  } catch (const BackendUnavailable& e) {
    *why = e.what();
    return nullptr;
  }
}

}  // namespace numr::test

// Skips the calling test, naming the reason, where no WebGPU device is usable.
#define NUMR_WEBGPU_OR_SKIP()                                                                     \
  do {                                                                                            \
    std::string why_;                                                                             \
    if (!::numr::test::usable_webgpu(&why_)) GTEST_SKIP() << "no usable WebGPU device: " << why_; \
  } while (0)
