// What a communicator's transport does: collectives over raw buffers of a device, already
// validated by the front end (src/distributed/communicator.cpp). Counts are in elements of
// `dtype`, which is never complex here (the front end passes complex tensors as their real
// pairs). `keep` holds the tensors the buffers belong to until the collective is done: {input,
// output}, the same tensor twice for in-place collectives.
#pragma once

#include <cstddef>
#include <vector>

#include "numr/distributed.h"

namespace numr::dist {

struct Transport {
  virtual ~Transport() = default;
  virtual int rank() const = 0;
  virtual int world_size() const = 0;
  virtual Device device() const = 0;
  virtual const char* name() const = 0;

  virtual Work all_reduce(const void* send, void* recv, size_t count, DType dtype, ReduceOp op,
                          bool async, std::vector<Tensor> keep) = 0;
  virtual Work broadcast(void* buf, size_t count, DType dtype, int root, bool async,
                         std::vector<Tensor> keep) = 0;
  virtual Work all_gather(const void* send, void* recv, size_t send_count, DType dtype, bool async,
                          std::vector<Tensor> keep) = 0;
  virtual Work reduce_scatter(const void* send, void* recv, size_t recv_count, DType dtype,
                              ReduceOp op, bool async, std::vector<Tensor> keep) = 0;
  virtual Work send(const void* buf, size_t count, DType dtype, int peer, bool async,
                    std::vector<Tensor> keep) = 0;
  virtual Work recv(void* buf, size_t count, DType dtype, int peer, bool async,
                    std::vector<Tensor> keep) = 0;
  // keep = {sent, received}
  virtual Work send_recv(const void* send_buf, size_t send_count, DType send_dtype, int to,
                         void* recv_buf, size_t recv_count, DType recv_dtype, int from, bool async,
                         std::vector<Tensor> keep) = 0;
  virtual void barrier() = 0;
};

std::unique_ptr<Transport> make_local_transport(Device device);
std::unique_ptr<Transport> make_nccl_transport(Device device, int rank, int world_size,
                                               const UniqueId& id);

}  // namespace numr::dist
