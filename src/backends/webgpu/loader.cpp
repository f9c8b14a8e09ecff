#include "backends/webgpu/loader.h"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

#include "core/op_scope.h"
#include "numr/error.h"

#ifndef NUMR_WEBGPU_DEFAULT_DIR
#define NUMR_WEBGPU_DEFAULT_DIR ""
#endif

namespace numr::webgpu {

namespace {

struct Loaded {
  Api api;
  std::string error;  // why no library loaded; empty on success
};

std::string dir_of(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? std::string() : path.substr(0, slash + 1);
}

// Dawn opens the Vulkan loader by its soname; a loader installed beside the library (the
// install script puts one there on machines without libvulkan1) is opened first, so that
// lookup finds it.
void preload_vulkan_beside(const std::string& lib_path) {
  const std::string dir = dir_of(lib_path);
  if (dir.empty()) return;
  const std::string vk = dir + "libvulkan.so.1";
  dlopen(vk.c_str(), RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD) ||
      dlopen(vk.c_str(), RTLD_NOW | RTLD_GLOBAL);
}

Loaded load() {
  Loaded out;
  std::vector<std::string> candidates;
  if (const char* env = std::getenv("NUMR_WEBGPU_LIB"); env && *env) {
    candidates.push_back(env);
  } else {
    for (const char* name : {"libwebgpu_dawn.so", "libwebgpu.so", "libwebgpu_wrapper.so"})
      candidates.push_back(name);
    if (*NUMR_WEBGPU_DEFAULT_DIR)
      candidates.push_back(std::string(NUMR_WEBGPU_DEFAULT_DIR) + "/lib/libwebgpu_wrapper.so");
  }
  void* handle = nullptr;
  std::string tried;
  for (const std::string& c : candidates) {
    preload_vulkan_beside(c);
    handle = dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle) {
      out.api.path = c;
      break;
    }
    const char* why = dlerror();
    tried += "\n  " + c + ": " + (why ? why : "not found");
  }
  if (!handle) {
    out.error =
        "no webgpu.h library (Dawn) could be opened (set NUMR_WEBGPU_LIB, or run "
        "scripts/install-webgpu.sh); tried:" +
        tried;
    return out;
  }
#define NUMR_WGPU_RESOLVE(name, ret, ...)                                      \
  out.api.name = reinterpret_cast<ret (*)(__VA_ARGS__)>(dlsym(handle, #name)); \
  if (!out.api.name) {                                                         \
    out.error = out.api.path + " has no entry point " #name;                   \
    return out;                                                                \
  }
  NUMR_WGPU_FUNCTIONS(NUMR_WGPU_RESOLVE)
#undef NUMR_WGPU_RESOLVE
  // Dawn exports wgpuGetInstanceCapabilities; the standard header has wgpuGetInstanceFeatures.
  if (dlsym(handle, "wgpuGetInstanceCapabilities")) {
    out.api.variant = AbiVariant::Dawn;
  } else if (dlsym(handle, "wgpuGetInstanceFeatures")) {
    out.api.variant = AbiVariant::Standard;
  } else {
    out.error = out.api.path +
                " exports neither wgpuGetInstanceCapabilities (Dawn) nor "
                "wgpuGetInstanceFeatures (webgpu-headers): unknown ABI";
  }
  return out;
}

}  // namespace

const Api& api() {
  static const Loaded loaded = load();
  if (!loaded.error.empty()) fail<BackendUnavailable>(current_op("webgpu"), loaded.error);
  return loaded.api;
}

}  // namespace numr::webgpu
