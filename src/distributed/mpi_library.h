// Open MPI, loaded with dlopen on first use, so numr builds and runs without it.
#pragma once

#include <string>
#include <string_view>

#include "distributed/mpi_api.h"

namespace numr::dist::mpi {

struct Mpi {
  std::string path;
  PfnInitialized initialized = nullptr;
  PfnFinalized finalized = nullptr;
  PfnInitThread init_thread = nullptr;
  PfnFinalize finalize = nullptr;
  PfnCommDup comm_dup = nullptr;
  PfnCommFree comm_free = nullptr;
  PfnCommRank comm_rank = nullptr;
  PfnCommSize comm_size = nullptr;
  PfnCommSetErrhandler comm_set_errhandler = nullptr;
  PfnErrorString error_string = nullptr;
  PfnOpCreate op_create = nullptr;
  PfnIallreduce iallreduce = nullptr;
  PfnIbcast ibcast = nullptr;
  PfnIallgather iallgather = nullptr;
  PfnIreduceScatterBlock ireduce_scatter_block = nullptr;
  PfnIsend isend = nullptr;
  PfnIrecv irecv = nullptr;
  PfnWait wait = nullptr;
  PfnTest test = nullptr;
  PfnBarrier barrier = nullptr;

  // Predefined handles.
  MPI_Comm comm_world = nullptr;
  MPI_Errhandler errors_return = nullptr;
  MPI_Datatype type_f64 = nullptr, type_f32 = nullptr, type_i64 = nullptr, type_i32 = nullptr,
               type_u8 = nullptr, type_u16 = nullptr;
  MPI_Op op_sum = nullptr, op_prod = nullptr, op_max = nullptr, op_min = nullptr;
};

// The process's MPI, loaded and initialised (MPI_Init_thread, finalised at exit) on first
// use. The library is $NUMR_MPI when set, else libmpi.so.40 on the loader's path. Throws
// BackendUnavailable ("[mpi] libmpi.so.40 could not be loaded (...)") when it cannot be.
const Mpi& mpi();
const Mpi* try_mpi(std::string* reason = nullptr);

// Throws BackendError "[op] <call>: <MPI's message>" for a failed call.
void check(int rc, std::string_view op, std::string_view call);

}  // namespace numr::dist::mpi
