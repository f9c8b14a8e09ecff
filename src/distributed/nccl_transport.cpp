// Collectives over NCCL on CUDA tensors. A synchronous collective is queued on numr's
// stream of the device, in order with every kernel; an asynchronous one runs on the
// communicator's own stream after an event recorded on numr's stream, and its Work makes
// numr's stream wait for the event recorded after it.
#include <memory>
#include <string>

#include "backends/cuda/context.h"
#include "backends/cuda/driver.h"
#include "distributed/nccl_library.h"
#include "distributed/transport.h"
#include "numr/error.h"

namespace numr::dist {

namespace {

using namespace nccl;

ncclDataType_t nccl_type(DType t) {
  switch (t) {
    case DType::F64: return ncclFloat64;
    case DType::F32: return ncclFloat32;
    case DType::F16: return ncclFloat16;
    case DType::BF16: return ncclBfloat16;
    case DType::I64: return ncclInt64;
    case DType::I32: return ncclInt32;
    case DType::U8:
    case DType::Bool: return ncclUint8;  // Bool reduces only by max and min (or, and)
    default: break;
  }
  fail<UnsupportedDType>("nccl", "no NCCL type for ", dtype_name(t));
}

ncclRedOp_t nccl_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum: return ncclSum;
    case ReduceOp::Prod: return ncclProd;
    case ReduceOp::Max: return ncclMax;
    case ReduceOp::Min: return ncclMin;
    case ReduceOp::Avg: return ncclAvg;
  }
  return ncclSum;
}

// The end of an asynchronous collective on the side stream.
class NcclWork : public Work::Impl {
 public:
  NcclWork(cuda::CudaDevice& dev, ncclComm_t comm, cuda::CUevent done, std::vector<Tensor> keep)
      : dev_(dev), comm_(comm), done_(done), keep_(std::move(keep)) {}
  ~NcclWork() override {
    try {
      wait();
    } catch (...) {  // a destructor must not throw; wait() reported it to callers who asked
    }
    const cuda::Driver* d = cuda::try_driver();
    if (d && d->ctx_set_current(dev_.context()) == cuda::CUDA_SUCCESS)
      (void)d->event_destroy(done_);
  }
  void wait() override {
    if (waited_) return;
    waited_ = true;
    dev_.make_current();
    cuda::check(cuda::driver().stream_wait_event(dev_.stream(), done_, 0), "cuStreamWaitEvent");
    ncclResult_t async_error = ncclSuccess;
    check(nccl::nccl().comm_get_async_error(comm_, &async_error), "nccl", "ncclCommGetAsyncError");
    check(async_error, "nccl", "collective");
    // numr's stream now runs after the collective, so the buffers may go back to the
    // stream-ordered allocator.
    keep_.clear();
  }
  bool completed() override {
    dev_.make_current();
    const cuda::CUresult r = cuda::driver().event_query(done_);
    if (r == cuda::CUDA_ERROR_NOT_READY) return false;
    cuda::check(r, "cuEventQuery");
    return true;
  }

 private:
  cuda::CudaDevice& dev_;
  ncclComm_t comm_;
  cuda::CUevent done_;
  std::vector<Tensor> keep_;
  bool waited_ = false;
};

class NcclTransport : public Transport {
 public:
  NcclTransport(Device device, int rank, int world_size, const UniqueId& id)
      : nccl_(nccl::nccl()),
        dev_(cuda::cuda_device(device.index)),
        rank_(rank),
        world_(world_size) {
    dev_.make_current();
    ncclUniqueId uid;
    static_assert(sizeof(uid.internal) == std::tuple_size_v<UniqueId>);
    for (size_t i = 0; i < id.size(); ++i) uid.internal[i] = char(id[i]);
    check(nccl_.comm_init_rank(&comm_, world_size, uid, rank), "nccl", "ncclCommInitRank");
    cuda::check(cuda::driver().stream_create(&side_, cuda::CU_STREAM_NON_BLOCKING),
                "cuStreamCreate");
  }
  ~NcclTransport() override {
    const cuda::Driver* d = cuda::try_driver();
    if (d && d->ctx_set_current(dev_.context()) == cuda::CUDA_SUCCESS) {
      (void)d->stream_synchronize(dev_.stream());
      (void)d->stream_synchronize(side_);
      (void)d->stream_destroy(side_);
    }
    (void)nccl_.comm_destroy(comm_);
  }

  int rank() const override { return rank_; }
  int world_size() const override { return world_; }
  Device device() const override { return dev_.device(); }
  const char* name() const override { return "nccl"; }

  Work all_reduce(const void* send, void* recv, size_t count, DType dtype, ReduceOp op, bool async,
                  std::vector<Tensor> keep) override {
    return run(async, std::move(keep), "ncclAllReduce", [&](nccl::Stream s) {
      return nccl_.all_reduce(send, recv, count, nccl_type(dtype), nccl_op(op), comm_, s);
    });
  }
  Work broadcast(void* buf, size_t count, DType dtype, int root, bool async,
                 std::vector<Tensor> keep) override {
    return run(async, std::move(keep), "ncclBroadcast", [&](nccl::Stream s) {
      return nccl_.broadcast(buf, buf, count, nccl_type(dtype), root, comm_, s);
    });
  }
  Work all_gather(const void* send, void* recv, size_t send_count, DType dtype, bool async,
                  std::vector<Tensor> keep) override {
    return run(async, std::move(keep), "ncclAllGather", [&](nccl::Stream s) {
      return nccl_.all_gather(send, recv, send_count, nccl_type(dtype), comm_, s);
    });
  }
  Work reduce_scatter(const void* send, void* recv, size_t recv_count, DType dtype, ReduceOp op,
                      bool async, std::vector<Tensor> keep) override {
    return run(async, std::move(keep), "ncclReduceScatter", [&](nccl::Stream s) {
      return nccl_.reduce_scatter(send, recv, recv_count, nccl_type(dtype), nccl_op(op), comm_, s);
    });
  }
  Work send(const void* buf, size_t count, DType dtype, int peer, bool async,
            std::vector<Tensor> keep) override {
    return run(async, std::move(keep), "ncclSend", [&](nccl::Stream s) {
      return nccl_.send(buf, count, nccl_type(dtype), peer, comm_, s);
    });
  }
  Work recv(void* buf, size_t count, DType dtype, int peer, bool async,
            std::vector<Tensor> keep) override {
    return run(async, std::move(keep), "ncclRecv", [&](nccl::Stream s) {
      return nccl_.recv(buf, count, nccl_type(dtype), peer, comm_, s);
    });
  }
  Work send_recv(const void* send_buf, size_t send_count, DType send_dtype, int to, void* recv_buf,
                 size_t recv_count, DType recv_dtype, int from, bool async,
                 std::vector<Tensor> keep) override {
    return run(async, std::move(keep), "ncclSend/ncclRecv", [&](nccl::Stream s) {
      // One group, so that both progress together; the group is closed even on failure.
      ncclResult_t r = nccl_.group_start();
      if (r != ncclSuccess) return r;
      if (send_count) r = nccl_.send(send_buf, send_count, nccl_type(send_dtype), to, comm_, s);
      if (r == ncclSuccess && recv_count)
        r = nccl_.recv(recv_buf, recv_count, nccl_type(recv_dtype), from, comm_, s);
      const ncclResult_t end = nccl_.group_end();
      return r != ncclSuccess ? r : end;
    });
  }
  void barrier() override {
    Tensor one = Tensor::from_vector<float>({1.f}, {1}, dev_.device());
    void* p = one.storage()->handle();
    all_reduce(p, p, 1, DType::F32, ReduceOp::Sum, false, {one});
    dev_.synchronize();
  }

 private:
  template <class Launch>
  Work run(bool async, std::vector<Tensor> keep, const char* call, Launch&& launch) {
    dev_.make_current();
    const cuda::Driver& d = cuda::driver();
    if (!async) {
      check(launch(dev_.stream()), "nccl", call);
      return Work();
    }
    cuda::CUevent ready = nullptr, done = nullptr;
    cuda::check(d.event_create(&ready, cuda::CU_EVENT_DISABLE_TIMING), "cuEventCreate");
    cuda::check(d.event_record(ready, dev_.stream()), "cuEventRecord");
    cuda::check(d.stream_wait_event(side_, ready, 0), "cuStreamWaitEvent");
    (void)d.event_destroy(ready);  // released once the wait has happened
    cuda::check(d.event_create(&done, cuda::CU_EVENT_DISABLE_TIMING), "cuEventCreate");
    auto work = std::make_shared<NcclWork>(dev_, comm_, done, std::move(keep));
    check(launch(side_), "nccl", call);
    cuda::check(d.event_record(done, side_), "cuEventRecord");
    return Work(work);
  }

  const Nccl& nccl_;
  cuda::CudaDevice& dev_;
  int rank_, world_;
  ncclComm_t comm_ = nullptr;
  cuda::CUstream side_ = nullptr;
};

}  // namespace

std::unique_ptr<Transport> make_nccl_transport(Device device, int rank, int world_size,
                                               const UniqueId& id) {
  return std::make_unique<NcclTransport>(device, rank, world_size, id);
}

std::unique_ptr<Communicator> nccl_communicator(Device device, int rank, int world_size,
                                                const UniqueId& id) {
  if (device.type != DeviceType::Cuda)
    fail<DeviceMismatch>("nccl_communicator", "NCCL runs on CUDA devices, not ", device.str());
  if (world_size < 1 || rank < 0 || rank >= world_size)
    fail<InvalidArgument>("nccl_communicator", "rank ", rank, " in a world of ", world_size);
  return std::make_unique<Communicator>(make_nccl_transport(device, rank, world_size, id));
}

UniqueId nccl_unique_id() {
  ncclUniqueId uid;
  check(nccl::nccl().get_unique_id(&uid), "nccl_unique_id", "ncclGetUniqueId");
  UniqueId out{};
  for (size_t i = 0; i < out.size(); ++i) out[i] = uint8_t(uid.internal[i]);
  return out;
}

int nccl_version() { return nccl::nccl().version; }

bool nccl_available(std::string* reason) { return nccl::try_nccl(reason) != nullptr; }

}  // namespace numr::dist
