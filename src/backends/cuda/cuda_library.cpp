#include "backends/cuda/cuda_library.h"

#include <dlfcn.h>

#include <cstdlib>
#include <vector>

namespace numr::cuda {

OpenedLibrary open_cuda_library(const char* env_var, std::initializer_list<const char*> names) {
  std::vector<std::string> candidates;
  if (const char* env = std::getenv(env_var); env && *env) {
    candidates.emplace_back(env);
  } else {
    candidates.assign(names.begin(), names.end());
    std::vector<std::string> dirs;
    for (const char* var : {"CUDA_HOME", "CUDA_PATH"})
      if (const char* v = std::getenv(var); v && *v) dirs.push_back(std::string(v) + "/lib64/");
    dirs.push_back("/usr/local/cuda/lib64/");
    for (const std::string& dir : dirs)
      for (const char* name : names) candidates.push_back(dir + name);
  }
  OpenedLibrary out;
  for (const std::string& c : candidates) {
    dlerror();
    if (void* h = dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL)) {
      out.handle = h;
      out.path = c;
      out.failure.clear();
      return out;
    }
    const char* why = dlerror();
    if (out.failure.empty()) out.failure = why ? why : c;
  }
  return out;
}

}  // namespace numr::cuda
