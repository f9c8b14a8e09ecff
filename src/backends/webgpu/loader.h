// Opens a webgpu.h implementation (Dawn) with dlopen and resolves the entry points numr
// uses. The library is NUMR_WEBGPU_LIB when set, else the usual names on the loader's
// search path, else the copy scripts/install-webgpu.sh puts in the source tree's
// .deps/webgpu. Which ABI variant it has (Dawn's or the standard header's, api.h) is read
// from the symbols it exports.
#pragma once

#include <string>

#include "backends/webgpu/api.h"

namespace numr::webgpu {

enum class AbiVariant { Dawn, Standard };

struct Api {
#define NUMR_WGPU_POINTER(name, ret, ...) ret (*name)(__VA_ARGS__) = nullptr;
  NUMR_WGPU_FUNCTIONS(NUMR_WGPU_POINTER)
#undef NUMR_WGPU_POINTER
  AbiVariant variant = AbiVariant::Standard;
  std::string path;  // the library that was opened
  // The feature number of shader-f16 in this variant (Dawn's enum lacks one entry).
  uint32_t feature_shader_f16() const { return variant == AbiVariant::Dawn ? 0x0A : 0x0B; }
  // The feature number of subgroups, likewise.
  uint32_t feature_subgroups() const { return variant == AbiVariant::Dawn ? 0x11 : 0x12; }
};

// The loaded API (opened once, thread-safe); throws BackendUnavailable saying why when no
// library loads or one lacks an entry point.
const Api& api();

}  // namespace numr::webgpu
