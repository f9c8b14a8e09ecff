// numr's declarations of NCCL (src/distributed/nccl_api.h) against NVIDIA's nccl.h, where a
// CUDA toolkit with NCCL is installed (tests/CMakeLists.txt finds it). Only this file sees
// the header; the library never includes it.
#include <gtest/gtest.h>

#include "distributed/nccl_api.h"
#include "support/abi_check.h"

#ifdef NUMR_TEST_NCCL_HEADER
#include <nccl.h>

namespace ours = numr::dist::nccl;
using numr::test::same_abi;

static_assert(sizeof(ours::ncclUniqueId) == sizeof(::ncclUniqueId));
static_assert(sizeof(ours::ncclResult_t) == sizeof(::ncclResult_t));
static_assert(sizeof(ours::ncclRedOp_t) == sizeof(::ncclRedOp_t));
static_assert(sizeof(ours::ncclDataType_t) == sizeof(::ncclDataType_t));

#define NUMR_SAME_VALUE(name) static_assert(int(ours::name) == int(::name), #name)
NUMR_SAME_VALUE(ncclSuccess);
NUMR_SAME_VALUE(ncclUnhandledCudaError);
NUMR_SAME_VALUE(ncclSystemError);
NUMR_SAME_VALUE(ncclInternalError);
NUMR_SAME_VALUE(ncclInvalidArgument);
NUMR_SAME_VALUE(ncclInvalidUsage);
NUMR_SAME_VALUE(ncclRemoteError);
NUMR_SAME_VALUE(ncclInProgress);
NUMR_SAME_VALUE(ncclSum);
NUMR_SAME_VALUE(ncclProd);
NUMR_SAME_VALUE(ncclMax);
NUMR_SAME_VALUE(ncclMin);
NUMR_SAME_VALUE(ncclAvg);
NUMR_SAME_VALUE(ncclInt8);
NUMR_SAME_VALUE(ncclUint8);
NUMR_SAME_VALUE(ncclInt32);
NUMR_SAME_VALUE(ncclUint32);
NUMR_SAME_VALUE(ncclInt64);
NUMR_SAME_VALUE(ncclUint64);
NUMR_SAME_VALUE(ncclFloat16);
NUMR_SAME_VALUE(ncclFloat32);
NUMR_SAME_VALUE(ncclFloat64);
NUMR_SAME_VALUE(ncclBfloat16);
#undef NUMR_SAME_VALUE

#define NUMR_SAME_FN(ours_type, theirs) \
  static_assert(same_abi<ours::ours_type, decltype(&::theirs)>(), #theirs)
NUMR_SAME_FN(PfnGetVersion, ncclGetVersion);
NUMR_SAME_FN(PfnGetUniqueId, ncclGetUniqueId);
NUMR_SAME_FN(PfnCommInitRank, ncclCommInitRank);
NUMR_SAME_FN(PfnCommDestroy, ncclCommDestroy);
NUMR_SAME_FN(PfnCommAbort, ncclCommAbort);
NUMR_SAME_FN(PfnCommGetAsyncError, ncclCommGetAsyncError);
NUMR_SAME_FN(PfnGetErrorString, ncclGetErrorString);
NUMR_SAME_FN(PfnAllReduce, ncclAllReduce);
NUMR_SAME_FN(PfnBroadcast, ncclBroadcast);
NUMR_SAME_FN(PfnAllGather, ncclAllGather);
NUMR_SAME_FN(PfnReduceScatter, ncclReduceScatter);
NUMR_SAME_FN(PfnSend, ncclSend);
NUMR_SAME_FN(PfnRecv, ncclRecv);
NUMR_SAME_FN(PfnGroupStart, ncclGroupStart);
NUMR_SAME_FN(PfnGroupEnd, ncclGroupEnd);
#undef NUMR_SAME_FN

TEST(DistributedAbi, NcclDeclarationsMatchNcclH) { SUCCEED() << "checked at compile time"; }
#else
TEST(DistributedAbi, NcclDeclarationsMatchNcclH) {
  GTEST_SKIP() << "no nccl.h in NUMR_CUDA_INCLUDE_DIR: the declarations were not compared";
}
#endif
