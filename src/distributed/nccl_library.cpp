#include "distributed/nccl_library.h"

#include <dlfcn.h>
#include <glob.h>

#include <cstdlib>
#include <memory>
#include <mutex>

#include "numr/error.h"

namespace numr::dist::nccl {

namespace {

constexpr const char* kName = "libnccl.so.2";

void add_glob(std::vector<std::string>& out, const std::string& pattern) {
  glob_t g{};
  if (glob(pattern.c_str(), 0, nullptr, &g) == 0)
    for (size_t i = 0; i < g.gl_pathc; ++i) out.emplace_back(g.gl_pathv[i]);
  globfree(&g);
}

template <class Fn>
bool resolve(void* lib, Fn& out, const char* name, std::string& missing) {
  out = reinterpret_cast<Fn>(dlsym(lib, name));
  if (!out && missing.empty()) missing = name;
  return out != nullptr;
}

std::unique_ptr<Nccl> load_impl(std::string& reason) {
  // NVLink multicast (NVLS) stays off unless asked for explicitly: set before NCCL first
  // reads its parameters.
  setenv("NCCL_NVLS_ENABLE", "0", /*overwrite=*/0);
  const std::vector<std::string> candidates = nccl_candidates();
  std::string first_error;
  for (const std::string& c : candidates) {
    dlerror();
    void* h = dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      const char* why = dlerror();
      if (first_error.empty()) first_error = why ? why : c;
      continue;
    }
    auto n = std::make_unique<Nccl>();
    n->path = c;
    std::string missing;
    resolve(h, n->get_version, "ncclGetVersion", missing);
    resolve(h, n->get_unique_id, "ncclGetUniqueId", missing);
    resolve(h, n->comm_init_rank, "ncclCommInitRank", missing);
    resolve(h, n->comm_destroy, "ncclCommDestroy", missing);
    resolve(h, n->comm_abort, "ncclCommAbort", missing);
    resolve(h, n->comm_get_async_error, "ncclCommGetAsyncError", missing);
    resolve(h, n->get_error_string, "ncclGetErrorString", missing);
    resolve(h, n->all_reduce, "ncclAllReduce", missing);
    resolve(h, n->broadcast, "ncclBroadcast", missing);
    resolve(h, n->all_gather, "ncclAllGather", missing);
    resolve(h, n->reduce_scatter, "ncclReduceScatter", missing);
    resolve(h, n->send, "ncclSend", missing);
    resolve(h, n->recv, "ncclRecv", missing);
    resolve(h, n->group_start, "ncclGroupStart", missing);
    resolve(h, n->group_end, "ncclGroupEnd", missing);
    if (!missing.empty()) {
      reason = "[nccl] " + c + " has no entry point " + missing +
               " (numr needs NCCL 2.10 or newer, for ncclAvg)";
      return nullptr;
    }
    if (n->get_version(&n->version) != ncclSuccess || n->version < 21000) {
      reason = "[nccl] " + c + " is NCCL version " + std::to_string(n->version) +
               "; numr needs 2.10 or newer (for ncclAvg)";
      return nullptr;
    }
    return n;
  }
  reason = std::string("[nccl] ") + kName + " could not be loaded (" + first_error +
           "); set NUMR_NCCL to its path. Tried " + std::to_string(candidates.size()) +
           " places: the loader's path, CUDA's lib64 and Python's nvidia/nccl/lib folders";
  return nullptr;
}

}  // namespace

std::unique_ptr<Nccl> load_nccl(std::string& reason) { return load_impl(reason); }

std::vector<std::string> nccl_candidates() {
  if (const char* env = std::getenv("NUMR_NCCL"); env && *env) return {env};
  std::vector<std::string> out = {kName};
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"})
    if (const char* v = std::getenv(var); v && *v)
      out.push_back(std::string(v) + "/lib64/" + kName);
  out.push_back(std::string("/usr/local/cuda/lib64/") + kName);
  std::vector<std::string> site_dirs;
  for (const char* var : {"VIRTUAL_ENV", "CONDA_PREFIX"})
    if (const char* v = std::getenv(var); v && *v) {
      add_glob(site_dirs, std::string(v) + "/lib/python3*/site-packages");
      if (std::string(var) == "CONDA_PREFIX") out.push_back(std::string(v) + "/lib/" + kName);
    }
  if (const char* home = std::getenv("HOME"); home && *home)
    add_glob(site_dirs, std::string(home) + "/.local/lib/python3*/site-packages");
  add_glob(site_dirs, "/usr/local/lib/python3*/dist-packages");
  add_glob(site_dirs, "/usr/local/lib/python3*/site-packages");
  site_dirs.emplace_back("/usr/lib/python3/dist-packages");
  add_glob(site_dirs, "/usr/lib/python3*/site-packages");
  add_glob(site_dirs, "/opt/conda/lib/python3*/site-packages");
  // The wheels' layouts: nvidia-nccl-cu12 (nvidia/nccl/lib), the CUDA 13 wheels
  // (nvidia/cu13/lib), and PyTorch builds that carry their own copy (torch/lib).
  for (const std::string& d : site_dirs) {
    out.push_back(d + "/nvidia/nccl/lib/" + kName);
    add_glob(out, d + "/nvidia/cu1*/lib/" + kName);
    out.push_back(d + "/torch/lib/" + kName);
  }
  return out;
}

const Nccl* try_nccl(std::string* reason) {
  static std::mutex mu;
  static std::unique_ptr<Nccl> loaded;
  std::lock_guard<std::mutex> lock(mu);
  if (loaded) return loaded.get();
  // A failure is not remembered: loading again is cheap, and NUMR_NCCL may have changed.
  std::string why;
  loaded = load_nccl(why);
  if (!loaded && reason) *reason = why;
  return loaded.get();
}

const Nccl& nccl() {
  std::string reason;
  const Nccl* n = try_nccl(&reason);
  if (!n) throw BackendUnavailable(reason);
  return *n;
}

void check(ncclResult_t r, std::string_view op, std::string_view call) {
  if (r == ncclSuccess) return;
  const Nccl* n = try_nccl();
  const char* what = n ? n->get_error_string(r) : nullptr;
  fail<BackendError>(op, call, ": ", what ? what : "NCCL error", " (ncclResult_t ", int(r), ")");
}

}  // namespace numr::dist::nccl
