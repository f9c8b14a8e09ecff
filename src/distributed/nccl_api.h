// Our own declarations of the subset of NCCL's C API numr uses (nccl.h, NCCL 2.x): numr
// never includes nccl.h and loads libnccl.so.2 with dlopen at run time.
#pragma once

#include <cstddef>

#include "backends/cuda/driver_api.h"

namespace numr::dist::nccl {

struct ncclComm;
using ncclComm_t = ncclComm*;

// NCCL_UNIQUE_ID_BYTES; passed by value to ncclCommInitRank.
struct ncclUniqueId {
  char internal[128];
};

enum ncclResult_t : int {
  ncclSuccess = 0,
  ncclUnhandledCudaError = 1,
  ncclSystemError = 2,
  ncclInternalError = 3,
  ncclInvalidArgument = 4,
  ncclInvalidUsage = 5,
  ncclRemoteError = 6,
  ncclInProgress = 7,
};

enum ncclRedOp_t : int { ncclSum = 0, ncclProd = 1, ncclMax = 2, ncclMin = 3, ncclAvg = 4 };

enum ncclDataType_t : int {
  ncclInt8 = 0,
  ncclUint8 = 1,
  ncclInt32 = 2,
  ncclUint32 = 3,
  ncclInt64 = 4,
  ncclUint64 = 5,
  ncclFloat16 = 6,
  ncclFloat32 = 7,
  ncclFloat64 = 8,
  ncclBfloat16 = 9,
};

// cudaStream_t is the driver's CUstream.
using Stream = cuda::CUstream;

using PfnGetVersion = ncclResult_t (*)(int*);
using PfnGetUniqueId = ncclResult_t (*)(ncclUniqueId*);
using PfnCommInitRank = ncclResult_t (*)(ncclComm_t*, int, ncclUniqueId, int);
using PfnCommDestroy = ncclResult_t (*)(ncclComm_t);
using PfnCommAbort = ncclResult_t (*)(ncclComm_t);
using PfnCommGetAsyncError = ncclResult_t (*)(ncclComm_t, ncclResult_t*);
using PfnGetErrorString = const char* (*)(ncclResult_t);
using PfnAllReduce = ncclResult_t (*)(const void*, void*, size_t, ncclDataType_t, ncclRedOp_t,
                                      ncclComm_t, Stream);
using PfnBroadcast = ncclResult_t (*)(const void*, void*, size_t, ncclDataType_t, int, ncclComm_t,
                                      Stream);
using PfnAllGather = ncclResult_t (*)(const void*, void*, size_t, ncclDataType_t, ncclComm_t,
                                      Stream);
using PfnReduceScatter = ncclResult_t (*)(const void*, void*, size_t, ncclDataType_t, ncclRedOp_t,
                                          ncclComm_t, Stream);
using PfnSend = ncclResult_t (*)(const void*, size_t, ncclDataType_t, int, ncclComm_t, Stream);
using PfnRecv = ncclResult_t (*)(void*, size_t, ncclDataType_t, int, ncclComm_t, Stream);
using PfnGroupStart = ncclResult_t (*)();
using PfnGroupEnd = ncclResult_t (*)();

}  // namespace numr::dist::nccl
