#include "backends/cuda/cublaslt.h"

#include <dlfcn.h>

#include "backends/cuda/allocator.h"
#include "backends/cuda/context.h"
#include "backends/cuda/cuda_library.h"
#include "core/op_scope.h"
#include "numr/error.h"

namespace numr::cuda {
namespace {

template <class Fn>
void resolve(void* lib, const std::string& path, Fn& out, const char* name) {
  void* sym = dlsym(lib, name);
  if (!sym) fail<BackendUnavailable>("cuda", path, " has no entry point ", name);
  out = reinterpret_cast<Fn>(sym);
}

struct Loaded {
  const CublasLt* lib = nullptr;
  std::string failure;
};

Loaded load() {
  const OpenedLibrary opened = open_cuda_library(
      "NUMR_CUBLASLT", {"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so"});
  if (!opened.handle)
    return {nullptr, detail::message("cuda", "cuBLASLt could not be loaded (", opened.failure,
                                     "); install libcublasLt (CUDA 12 or 13) or set "
                                     "NUMR_CUBLASLT to its path")};
  void* lib = opened.handle;
  const std::string& path = opened.path;
  // Never unloaded: the process keeps it for its lifetime.
  auto* lt = new CublasLt;
  lt->path = path;
  lt->library = lib;
  try {
    resolve(lib, path, lt->create, "cublasLtCreate");
    resolve(lib, path, lt->destroy, "cublasLtDestroy");
    resolve(lib, path, lt->get_version, "cublasLtGetVersion");
    resolve(lib, path, lt->get_status_name, "cublasLtGetStatusName");
    resolve(lib, path, lt->get_status_string, "cublasLtGetStatusString");
    resolve(lib, path, lt->matmul_desc_create, "cublasLtMatmulDescCreate");
    resolve(lib, path, lt->matmul_desc_destroy, "cublasLtMatmulDescDestroy");
    resolve(lib, path, lt->matmul_desc_set_attribute, "cublasLtMatmulDescSetAttribute");
    resolve(lib, path, lt->matrix_layout_create, "cublasLtMatrixLayoutCreate");
    resolve(lib, path, lt->matrix_layout_destroy, "cublasLtMatrixLayoutDestroy");
    resolve(lib, path, lt->matrix_layout_set_attribute, "cublasLtMatrixLayoutSetAttribute");
    resolve(lib, path, lt->matmul_preference_create, "cublasLtMatmulPreferenceCreate");
    resolve(lib, path, lt->matmul_preference_destroy, "cublasLtMatmulPreferenceDestroy");
    resolve(lib, path, lt->matmul_preference_set_attribute, "cublasLtMatmulPreferenceSetAttribute");
    resolve(lib, path, lt->matmul_algo_get_heuristic, "cublasLtMatmulAlgoGetHeuristic");
    resolve(lib, path, lt->matmul, "cublasLtMatmul");
  } catch (const BackendUnavailable& e) {
    delete lt;
    dlclose(lib);
    return {nullptr, e.what()};
  }
  lt->version = lt->get_version();
  return {lt, {}};
}

const Loaded& loaded() {
  static const Loaded* l = new Loaded(load());  // thread-safe once; never destroyed
  return *l;
}

}  // namespace

const CublasLt* try_cublaslt(std::string* reason) {
  const Loaded& l = loaded();
  if (!l.lib && reason) *reason = l.failure;
  return l.lib;
}

const CublasLt& cublaslt() {
  std::string reason;
  if (const CublasLt* lt = try_cublaslt(&reason)) return *lt;
  throw BackendUnavailable(reason);
}

std::string status_text(cublasStatus_t s) {
  std::string out = "CUBLAS_STATUS " + std::to_string(int(s));
  if (const CublasLt* lt = try_cublaslt()) {
    if (const char* name = lt->get_status_name(s)) out = name;
    if (const char* text = lt->get_status_string(s)) out += std::string(": ") + text;
  }
  return out;
}

void check(cublasStatus_t s, std::string_view call) {
  if (s == CUBLAS_STATUS_SUCCESS) return;
  if (s == CUBLAS_STATUS_ALLOC_FAILED)
    fail<OutOfMemory>(current_op("cuda"), call, ": ", status_text(s));
  fail<BackendError>("cuda", call, ": ", status_text(s));
}

CublasLtHandle::CublasLtHandle(CudaDevice& d) : dev(d) {
  const CublasLt& lt = cublaslt();
  dev.make_current();
  check(lt.create(&handle), "cublasLtCreate");
  try {
    workspace = dev.allocator().allocate(workspace_bytes);
  } catch (...) {
    lt.destroy(handle);
    throw;
  }
}

CublasLtHandle::~CublasLtHandle() {
  dev.allocator().deallocate(workspace);
  if (const CublasLt* lt = try_cublaslt()) (void)lt->destroy(handle);
}

}  // namespace numr::cuda
