// Collective communication between processes, one process per device, and data-parallel
// training on top of it.
//
//   auto comm = dist::init_from_env(Device::cuda(0));   // launched by scripts/launch-dp.sh
//   Tensor t = full({4}, double(comm->rank()), DType::F32, comm->device());
//   comm->all_reduce(t, dist::ReduceOp::Sum);           // every rank: 0 + 1 + ... + (n-1)
//
// Three transports behind one Communicator: NCCL for CUDA tensors (libnccl.so.2, loaded with
// dlopen), MPI for CPU tensors (Open MPI's libmpi.so.40, loaded with dlopen), and a local
// one for a world of one process (every collective is the identity). Without the library,
// making the communicator throws BackendUnavailable saying why; numr builds without either.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "numr/autograd.h"
#include "numr/device.h"
#include "numr/tensor.h"

namespace numr::dist {

// Avg is Sum divided by the world size, for floating and complex dtypes only (see
// docs/semantics.md).
enum class ReduceOp { Sum, Prod, Max, Min, Avg };
const char* reduce_op_name(ReduceOp op);

// The handle of a collective started with async = true. wait() makes the result visible to
// what follows: on CPU it blocks until the transfer is done; on CUDA it orders numr's stream
// after the collective (the host does not block), like torch.distributed's Work.wait().
// The tensors of the collective are kept alive until then; a handle destroyed without
// wait() waits in its destructor. A handle from a synchronous call is already complete.
class Work {
 public:
  struct Impl {
    virtual ~Impl() = default;
    virtual void wait() = 0;
    virtual bool completed() = 0;
  };
  Work() = default;
  explicit Work(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}
  void wait();
  // Whether the collective has finished, without blocking.
  bool completed();

 private:
  std::shared_ptr<Impl> impl_;
};

// NCCL's 128-byte unique id: made by rank 0 (nccl_unique_id), passed to every rank.
using UniqueId = std::array<uint8_t, 128>;
std::string to_hex(const UniqueId& id);
UniqueId unique_id_from_hex(const std::string& hex);  // throws InvalidArgument

struct Transport;

class Communicator {
 public:
  explicit Communicator(std::unique_ptr<Transport> transport);
  ~Communicator();
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  int rank() const;
  int world_size() const;
  Device device() const;        // the device every tensor passed here must be on
  std::string backend() const;  // "nccl", "mpi" or "local"

  // Every rank calls each collective in the same order with tensors of the same dtype and
  // shape. Tensors written to must be contiguous; those only read may be any view.
  // async = false: the call returns once the result may be used (on CUDA, in stream order
  // on numr's stream). async = true: it may still run; use the tensors after Work::wait().
  // On CUDA an async collective runs on the communicator's own stream, so it overlaps the
  // kernels numr queues meanwhile.

  // t <- op over ranks of t, in place.
  Work all_reduce(Tensor& t, ReduceOp op = ReduceOp::Sum, bool async = false);
  // t <- root's t.
  Work broadcast(Tensor& t, int root, bool async = false);
  // out <- the inputs of ranks 0..n-1 one after another: out is [n * d0, ...] for an input
  // [d0, ...], or [n, ...].
  Work all_gather(const Tensor& in, Tensor& out, bool async = false);
  // out <- block `rank` of op over ranks of in, where in is [n * d0, ...] (or [n, ...]) and
  // out is [d0, ...] (or [...]).
  Work reduce_scatter(const Tensor& in, Tensor& out, ReduceOp op = ReduceOp::Sum,
                      bool async = false);
  // Point to point: a send on one rank matches a recv of the same size and dtype on `peer`.
  Work send(const Tensor& t, int peer, bool async = false);
  Work recv(Tensor& t, int peer, bool async = false);
  // Sends `out` to rank `to` and receives `in` from rank `from` together, so that a ring of
  // ranks exchanging with their neighbours cannot wait on each other (NCCL blocks a lone
  // send until its recv is posted: send and recv alone suit one-way transfers).
  Work send_recv(const Tensor& out, int to, Tensor& in, int from, bool async = false);
  // Returns once every rank has reached it (and, on CUDA, once the work queued before it on
  // this device has finished).
  void barrier();

  Transport& transport() { return *transport_; }

 private:
  std::unique_ptr<Transport> transport_;
};

// A world of one process on `device`: every collective is the identity (avg included).
std::unique_ptr<Communicator> local_communicator(Device device);

// NCCL on a CUDA device. The id comes from rank 0's nccl_unique_id(). Throws
// BackendUnavailable when libnccl.so.2 cannot be loaded: it is looked for in $NUMR_NCCL,
// then on the loader's path, under $CUDA_HOME/lib64, /usr/local/cuda/lib64, and in
// Python's package folders (nvidia/nccl/lib, nvidia/cu1*/lib, torch/lib), where PyTorch's
// wheels keep it. Loading NCCL sets NCCL_NVLS_ENABLE=0 unless it is set.
UniqueId nccl_unique_id();
std::unique_ptr<Communicator> nccl_communicator(Device device, int rank, int world_size,
                                                const UniqueId& id);
// The NCCL library's version (22703 for 2.27.3); throws BackendUnavailable as above.
int nccl_version();
// Whether NCCL can be loaded; when not, *reason says why.
bool nccl_available(std::string* reason = nullptr);

// MPI over MPI_COMM_WORLD for CPU tensors (run under mpirun). Initialises MPI on first use
// and finalises it at exit. Throws BackendUnavailable when libmpi.so.40 (Open MPI) cannot
// be loaded: $NUMR_MPI, then the loader's path.
std::unique_ptr<Communicator> mpi_communicator();
bool mpi_available(std::string* reason = nullptr);

// The communicator a launcher asked for, on `device`:
//   - under mpirun (OMPI_COMM_WORLD_SIZE set) with a CPU device: MPI;
//   - NUMR_WORLD_SIZE > 1 (or mpirun's world) with a CUDA device: NCCL, rank NUMR_RANK (or
//     mpirun's), the unique id from NUMR_NCCL_ID (hex), or exchanged through the file
//     NUMR_NCCL_ID_FILE (rank 0 writes it), or under mpirun broadcast over MPI;
//   - otherwise (no launcher): local_communicator(device).
// For CUDA the device used is cuda(device.index + NUMR_LOCAL_RANK) (or mpirun's local rank).
// numr sets NCCL_NVLS_ENABLE=0 before NCCL starts unless it is set: no NVLink multicast.
std::unique_ptr<Communicator> init_from_env(Device device);

// Writes `id` to `path` atomically (a temporary file renamed into place), and reads it,
// waiting up to timeout_s for it to appear. Throws BackendError on failure.
void write_unique_id(const std::string& path, const UniqueId& id);
UniqueId read_unique_id(const std::string& path, double timeout_s = 120.0);

struct DataParallelOptions {
  size_t bucket_bytes = size_t(25) << 20;  // gradients are reduced in buckets of this size
  bool broadcast_parameters = true;        // start from rank 0's parameters
};

// Data-parallel training: each rank runs the model on its share of the batch; the
// gradients are averaged over ranks, in buckets all-reduced as soon as backward() has
// produced every gradient of a bucket, overlapping the rest of the backward pass.
//   dist::DataParallel dp(*comm, model.params());
//   opt.step(dp.reduce(backward(loss)));   // loss: the mean over this rank's share
// With equal shares, the averaged gradient is that of the mean loss over the whole batch.
// Every rank must list the same parameters (checked at construction). Buckets are reduced
// in the same order on every rank; a parameter without a gradient on a rank contributes
// zeros there. Call reduce() once after each backward(): the hooks fill the buckets of one
// backward pass at a time.
class DataParallel {
 public:
  DataParallel(Communicator& comm, std::vector<Var> params, DataParallelOptions options = {});
  ~DataParallel();
  DataParallel(const DataParallel&) = delete;
  DataParallel& operator=(const DataParallel&) = delete;

  // Waits for the buckets and returns `local` with the gradient of every parameter replaced
  // by its average over ranks (a parameter without a local gradient gets one too).
  Gradients reduce(const Gradients& local);
  // Copies rank 0's parameter values to every rank.
  void broadcast_parameters();
  size_t bucket_count() const;
  // How many buckets of the current backward pass have started their all-reduce (all of
  // them once backward() has produced every gradient, before reduce() is called).
  size_t buckets_started() const;

 private:
  struct State;
  std::shared_ptr<State> state_;  // shared with the gradient hooks, which hold it weakly
};

}  // namespace numr::dist
