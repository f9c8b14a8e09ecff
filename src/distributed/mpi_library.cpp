#include "distributed/mpi_library.h"

#include <dlfcn.h>

#include <cstdlib>
#include <memory>
#include <mutex>

#include "numr/error.h"

namespace numr::dist::mpi {

namespace {

template <class T>
void resolve(void* lib, T& out, const char* name, std::string& missing) {
  out = reinterpret_cast<T>(dlsym(lib, name));
  if (!out && missing.empty()) missing = name;
}

void finalize_at_exit() {
  const Mpi* m = try_mpi();
  int done = 0;
  if (m && m->finalized(&done) == MPI_SUCCESS && !done) (void)m->finalize();
}

std::unique_ptr<Mpi> load(std::string& reason) {
  const char* env = std::getenv("NUMR_MPI");
  const std::string path = env && *env ? env : "libmpi.so.40";
  dlerror();
  // RTLD_GLOBAL: Open MPI's components, which it opens itself, resolve libmpi's symbols.
  void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (!h) {
    const char* why = dlerror();
    reason = "[mpi] " + path + " could not be loaded (" + (why ? why : "unknown error") +
             "); install Open MPI (Debian: libopenmpi-dev) or set NUMR_MPI to its libmpi.so.40";
    return nullptr;
  }
  auto m = std::make_unique<Mpi>();
  m->path = path;
  std::string missing;
  resolve(h, m->initialized, "MPI_Initialized", missing);
  resolve(h, m->finalized, "MPI_Finalized", missing);
  resolve(h, m->init_thread, "MPI_Init_thread", missing);
  resolve(h, m->finalize, "MPI_Finalize", missing);
  resolve(h, m->comm_dup, "MPI_Comm_dup", missing);
  resolve(h, m->comm_free, "MPI_Comm_free", missing);
  resolve(h, m->comm_rank, "MPI_Comm_rank", missing);
  resolve(h, m->comm_size, "MPI_Comm_size", missing);
  resolve(h, m->comm_set_errhandler, "MPI_Comm_set_errhandler", missing);
  resolve(h, m->error_string, "MPI_Error_string", missing);
  resolve(h, m->op_create, "MPI_Op_create", missing);
  resolve(h, m->iallreduce, "MPI_Iallreduce", missing);
  resolve(h, m->ibcast, "MPI_Ibcast", missing);
  resolve(h, m->iallgather, "MPI_Iallgather", missing);
  resolve(h, m->ireduce_scatter_block, "MPI_Ireduce_scatter_block", missing);
  resolve(h, m->isend, "MPI_Isend", missing);
  resolve(h, m->irecv, "MPI_Irecv", missing);
  resolve(h, m->wait, "MPI_Wait", missing);
  resolve(h, m->test, "MPI_Test", missing);
  resolve(h, m->barrier, "MPI_Barrier", missing);
  resolve(h, m->comm_world, "ompi_mpi_comm_world", missing);
  resolve(h, m->errors_return, "ompi_mpi_errors_return", missing);
  resolve(h, m->type_f64, "ompi_mpi_double", missing);
  resolve(h, m->type_f32, "ompi_mpi_float", missing);
  resolve(h, m->type_i64, "ompi_mpi_int64_t", missing);
  resolve(h, m->type_i32, "ompi_mpi_int32_t", missing);
  resolve(h, m->type_u8, "ompi_mpi_uint8_t", missing);
  resolve(h, m->type_u16, "ompi_mpi_uint16_t", missing);
  resolve(h, m->op_sum, "ompi_mpi_op_sum", missing);
  resolve(h, m->op_prod, "ompi_mpi_op_prod", missing);
  resolve(h, m->op_max, "ompi_mpi_op_max", missing);
  resolve(h, m->op_min, "ompi_mpi_op_min", missing);
  if (!missing.empty()) {
    reason = "[mpi] " + path + " has no symbol " + missing +
             " (numr speaks Open MPI's ABI, libmpi.so.40; MPICH's differs)";
    return nullptr;
  }
  return m;
}

}  // namespace

const Mpi* try_mpi(std::string* reason) {
  static std::mutex mu;
  static std::unique_ptr<Mpi> loaded;
  static std::string failure;
  std::lock_guard<std::mutex> lock(mu);
  if (loaded) return loaded.get();
  std::string why;
  std::unique_ptr<Mpi> m = load(why);
  if (m) {
    int flag = 0;
    if (m->initialized(&flag) != MPI_SUCCESS) flag = 0;
    if (!flag) {
      int provided = 0;
      if (m->init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided) != MPI_SUCCESS) {
        why = "[mpi] MPI_Init_thread failed";
        m.reset();
      } else {
        std::atexit(finalize_at_exit);
      }
    }
  }
  if (!m) {
    if (reason) *reason = why;
    return nullptr;
  }
  loaded = std::move(m);
  return loaded.get();
}

const Mpi& mpi() {
  std::string reason;
  const Mpi* m = try_mpi(&reason);
  if (!m) throw BackendUnavailable(reason);
  return *m;
}

void check(int rc, std::string_view op, std::string_view call) {
  if (rc == MPI_SUCCESS) return;
  std::string text = "MPI error " + std::to_string(rc);
  if (const Mpi* m = try_mpi()) {
    char buf[MPI_MAX_ERROR_STRING + 1] = {};
    int len = 0;
    if (m->error_string(rc, buf, &len) == MPI_SUCCESS) text = std::string(buf, size_t(len));
  }
  fail<BackendError>(op, call, ": ", text);
}

}  // namespace numr::dist::mpi
