// Opening the CUDA libraries numr loads at run time (cuBLASLt, cuBLAS, cuSOLVER, cuFFT):
// one search order for all of them.
#pragma once

#include <dlfcn.h>

#include <initializer_list>
#include <string>

namespace numr::cuda {

struct OpenedLibrary {
  void* handle = nullptr;  // from dlopen; never closed (the process keeps it)
  std::string path;        // the candidate that opened
  std::string failure;     // when handle is null: the first loader error, which says the most
};

// The file named by $env_var when set; else the first of `names` that opens, looked up on
// the loader's path, then under $CUDA_HOME/lib64, $CUDA_PATH/lib64 and /usr/local/cuda/lib64.
OpenedLibrary open_cuda_library(const char* env_var, std::initializer_list<const char*> names);

// Resolves `name` in `lib` into `out`; false (and `missing` = name) when it is absent.
template <class Fn>
bool resolve_symbol(void* lib, Fn& out, const char* name, std::string& missing) {
  void* sym = dlsym(lib, name);
  if (!sym) missing = name;
  out = reinterpret_cast<Fn>(sym);
  return sym != nullptr;
}

}  // namespace numr::cuda
