// NCCL, loaded with dlopen on first use, so numr builds and runs without it.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "distributed/nccl_api.h"

namespace numr::dist::nccl {

struct Nccl {
  std::string path;
  int version = 0;  // ncclGetVersion: 22703 for 2.27.3
  PfnGetVersion get_version = nullptr;
  PfnGetUniqueId get_unique_id = nullptr;
  PfnCommInitRank comm_init_rank = nullptr;
  PfnCommDestroy comm_destroy = nullptr;
  PfnCommAbort comm_abort = nullptr;
  PfnCommGetAsyncError comm_get_async_error = nullptr;
  PfnGetErrorString get_error_string = nullptr;
  PfnAllReduce all_reduce = nullptr;
  PfnBroadcast broadcast = nullptr;
  PfnAllGather all_gather = nullptr;
  PfnReduceScatter reduce_scatter = nullptr;
  PfnSend send = nullptr;
  PfnRecv recv = nullptr;
  PfnGroupStart group_start = nullptr;
  PfnGroupEnd group_end = nullptr;
};

// The places libnccl.so.2 is looked for, in order: $NUMR_NCCL alone when set; else the
// loader's path, the CUDA toolkit's lib64 folders and the nvidia/nccl/lib folders of
// Python's package directories (PyTorch's wheels bring NCCL there).
std::vector<std::string> nccl_candidates();

// The process's NCCL; throws BackendUnavailable ("[nccl] libnccl.so.2 could not be loaded
// (...)") naming the first loader error and the places tried.
// Loads afresh without touching the process's NCCL (for tests): nullptr and *reason on
// failure.
std::unique_ptr<Nccl> load_nccl(std::string& reason);

const Nccl& nccl();
const Nccl* try_nccl(std::string* reason = nullptr);

// Throws BackendError "[op] <call>: <NCCL's message>" for a failed call.
void check(ncclResult_t r, std::string_view op, std::string_view call);

}  // namespace numr::dist::nccl
