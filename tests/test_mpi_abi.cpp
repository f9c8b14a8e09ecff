// numr's declarations of Open MPI (src/distributed/mpi_api.h) against Open MPI's mpi.h,
// where libopenmpi-dev is installed (tests/CMakeLists.txt finds it). Only this file sees the
// header; the library never includes it.
#include <gtest/gtest.h>

#include "distributed/mpi_api.h"
#include "support/abi_check.h"

#ifdef NUMR_TEST_MPI_HEADER
// numr's constants share their names with mpi.h's macros: read them before it is included.
constexpr int kOurSuccess = numr::dist::mpi::MPI_SUCCESS;
constexpr int kOurThreadSerialized = numr::dist::mpi::MPI_THREAD_SERIALIZED;
constexpr int kOurMaxErrorString = numr::dist::mpi::MPI_MAX_ERROR_STRING;
static void* const kOurInPlace = numr::dist::mpi::MPI_IN_PLACE;

#define OMPI_SKIP_MPICXX 1  // the C API only
#include <mpi.h>

#include <string>

#define NUMR_TEST_STRINGIFY2(x) #x
#define NUMR_TEST_STRINGIFY(x) NUMR_TEST_STRINGIFY2(x)

namespace ours = numr::dist::mpi;
using numr::test::same_abi;

static_assert(kOurSuccess == MPI_SUCCESS);
static_assert(kOurThreadSerialized == MPI_THREAD_SERIALIZED);
static_assert(kOurMaxErrorString == MPI_MAX_ERROR_STRING);
static_assert(sizeof(ours::MPI_Comm) == sizeof(::MPI_Comm));
static_assert(sizeof(ours::MPI_Datatype) == sizeof(::MPI_Datatype));
static_assert(sizeof(ours::MPI_Op) == sizeof(::MPI_Op));
static_assert(sizeof(ours::MPI_Request) == sizeof(::MPI_Request));
static_assert(sizeof(ours::MPI_Errhandler) == sizeof(::MPI_Errhandler));
static_assert(OMPI_MAJOR_VERSION >= 4, "numr speaks the ABI of libmpi.so.40 (Open MPI 4 and 5)");

#define NUMR_SAME_FN(ours_type, theirs) \
  static_assert(same_abi<ours::ours_type, decltype(&::theirs)>(), #theirs)
NUMR_SAME_FN(PfnInitialized, MPI_Initialized);
NUMR_SAME_FN(PfnFinalized, MPI_Finalized);
NUMR_SAME_FN(PfnInitThread, MPI_Init_thread);
NUMR_SAME_FN(PfnFinalize, MPI_Finalize);
NUMR_SAME_FN(PfnCommDup, MPI_Comm_dup);
NUMR_SAME_FN(PfnCommFree, MPI_Comm_free);
NUMR_SAME_FN(PfnCommRank, MPI_Comm_rank);
NUMR_SAME_FN(PfnCommSize, MPI_Comm_size);
NUMR_SAME_FN(PfnCommSetErrhandler, MPI_Comm_set_errhandler);
NUMR_SAME_FN(PfnErrorString, MPI_Error_string);
NUMR_SAME_FN(PfnOpCreate, MPI_Op_create);
NUMR_SAME_FN(PfnIallreduce, MPI_Iallreduce);
NUMR_SAME_FN(PfnIbcast, MPI_Ibcast);
NUMR_SAME_FN(PfnIallgather, MPI_Iallgather);
NUMR_SAME_FN(PfnIreduceScatterBlock, MPI_Ireduce_scatter_block);
NUMR_SAME_FN(PfnIsend, MPI_Isend);
NUMR_SAME_FN(PfnIrecv, MPI_Irecv);
NUMR_SAME_FN(PfnWait, MPI_Wait);
NUMR_SAME_FN(PfnTest, MPI_Test);
NUMR_SAME_FN(PfnBarrier, MPI_Barrier);
#undef NUMR_SAME_FN

// MPI_IN_PLACE is a constant address, and the predefined handles are the addresses of the
// ompi_mpi_* globals numr resolves by name.
TEST(DistributedAbi, MpiDeclarationsMatchMpiH) {
  EXPECT_EQ(kOurInPlace, MPI_IN_PLACE);
  const std::string comm_world = NUMR_TEST_STRINGIFY(MPI_COMM_WORLD);
  EXPECT_NE(comm_world.find("ompi_mpi_comm_world"), std::string::npos) << comm_world;
  const std::string sum = NUMR_TEST_STRINGIFY(MPI_SUM);
  EXPECT_NE(sum.find("ompi_mpi_op_sum"), std::string::npos) << sum;
  const std::string f16 = NUMR_TEST_STRINGIFY(MPI_UINT16_T);
  EXPECT_NE(f16.find("ompi_mpi_uint16_t"), std::string::npos) << f16;
}
#else
TEST(DistributedAbi, MpiDeclarationsMatchMpiH) {
  GTEST_SKIP() << "no Open MPI mpi.h found: the declarations were not compared";
}
#endif
