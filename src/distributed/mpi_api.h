// Our own declarations of the subset of MPI numr uses, in Open MPI's ABI (libmpi.so.40,
// Open MPI 4 and 5): handles are pointers, and the predefined ones (MPI_COMM_WORLD,
// MPI_FLOAT, MPI_SUM, ...) are the addresses of the library's ompi_mpi_* globals. numr
// never includes mpi.h; the library is loaded with dlopen at run time.
#pragma once

namespace numr::dist::mpi {

struct ompi_communicator_t;
struct ompi_datatype_t;
struct ompi_op_t;
struct ompi_request_t;
struct ompi_errhandler_t;
struct ompi_status_public_t;
using MPI_Comm = ompi_communicator_t*;
using MPI_Datatype = ompi_datatype_t*;
using MPI_Op = ompi_op_t*;
using MPI_Request = ompi_request_t*;
using MPI_Errhandler = ompi_errhandler_t*;
using MPI_Status = ompi_status_public_t;

constexpr int MPI_SUCCESS = 0;
constexpr int MPI_THREAD_SERIALIZED = 2;
constexpr int MPI_MAX_ERROR_STRING = 256;
inline void* const MPI_IN_PLACE = reinterpret_cast<void*>(1);

using MPI_User_function = void(void*, void*, int*, MPI_Datatype*);

using PfnInitialized = int (*)(int*);
using PfnFinalized = int (*)(int*);
using PfnInitThread = int (*)(int*, char***, int, int*);
using PfnFinalize = int (*)();
using PfnCommDup = int (*)(MPI_Comm, MPI_Comm*);
using PfnCommFree = int (*)(MPI_Comm*);
using PfnCommRank = int (*)(MPI_Comm, int*);
using PfnCommSize = int (*)(MPI_Comm, int*);
using PfnCommSetErrhandler = int (*)(MPI_Comm, MPI_Errhandler);
using PfnErrorString = int (*)(int, char*, int*);
using PfnOpCreate = int (*)(MPI_User_function*, int, MPI_Op*);
using PfnIallreduce = int (*)(const void*, void*, int, MPI_Datatype, MPI_Op, MPI_Comm,
                              MPI_Request*);
using PfnIbcast = int (*)(void*, int, MPI_Datatype, int, MPI_Comm, MPI_Request*);
using PfnIallgather = int (*)(const void*, int, MPI_Datatype, void*, int, MPI_Datatype, MPI_Comm,
                              MPI_Request*);
using PfnIreduceScatterBlock = int (*)(const void*, void*, int, MPI_Datatype, MPI_Op, MPI_Comm,
                                       MPI_Request*);
using PfnIsend = int (*)(const void*, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request*);
using PfnIrecv = int (*)(void*, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request*);
using PfnWait = int (*)(MPI_Request*, MPI_Status*);
using PfnTest = int (*)(MPI_Request*, int*, MPI_Status*);
using PfnBarrier = int (*)(MPI_Comm);

}  // namespace numr::dist::mpi
