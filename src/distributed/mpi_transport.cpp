// Collectives over MPI on CPU tensors, each started nonblocking (MPI_Iallreduce, ...); a
// synchronous call waits at once. MPI has no half-precision types or average: F16 and BF16
// travel as 16-bit words reduced by numr's own MPI ops (in double, rounded once), and Avg is
// a Sum divided by the world size when the transfer completes.
#include <dlfcn.h>

#include <climits>
#include <cmath>
#include <cstdint>
#include <functional>
#include <mutex>

#include "distributed/mpi_library.h"
#include "distributed/transport.h"
#include "numr/error.h"
#include "numr/half.h"

namespace numr::dist {

namespace {

using namespace mpi;

template <class H, class F>
void reduce_half(void* in, void* inout, int* len, F f) {
  const auto* a = static_cast<const uint16_t*>(in);
  auto* b = static_cast<uint16_t*>(inout);
  for (int i = 0; i < *len; ++i)
    b[i] = H(f(double(H::from_bits(a[i])), double(H::from_bits(b[i])))).bits;
}

double add(double a, double b) { return a + b; }
double mul(double a, double b) { return a * b; }
// NaN propagates, as NCCL's max and min do.
double max_nan(double a, double b) {
  return std::isnan(a) || std::isnan(b) ? NAN : std::fmax(a, b);
}
double min_nan(double a, double b) {
  return std::isnan(a) || std::isnan(b) ? NAN : std::fmin(a, b);
}

#define NUMR_HALF_OP(Name, H, F) \
  void Name(void* in, void* inout, int* len, MPI_Datatype*) { reduce_half<H>(in, inout, len, F); }
NUMR_HALF_OP(f16_sum, f16, add)
NUMR_HALF_OP(f16_prod, f16, mul)
NUMR_HALF_OP(f16_max, f16, max_nan)
NUMR_HALF_OP(f16_min, f16, min_nan)
NUMR_HALF_OP(bf16_sum, bf16, add)
NUMR_HALF_OP(bf16_prod, bf16, mul)
NUMR_HALF_OP(bf16_max, bf16, max_nan)
NUMR_HALF_OP(bf16_min, bf16, min_nan)
#undef NUMR_HALF_OP

int as_int(size_t count, std::string_view op) {
  if (count > size_t(INT_MAX))
    fail<BackendLimitation>(op, count, " elements: MPI takes at most ", INT_MAX, " per call");
  return int(count);
}

// Divides the n elements at p by d in place (Avg = Sum / world size).
void divide(void* p, size_t n, DType t, double d) {
  switch (t) {
    case DType::F64:
      for (size_t i = 0; i < n; ++i) static_cast<double*>(p)[i] /= d;
      break;
    case DType::F32:
      for (size_t i = 0; i < n; ++i)
        static_cast<float*>(p)[i] = float(static_cast<float*>(p)[i] / d);
      break;
    case DType::F16:
      for (size_t i = 0; i < n; ++i) {
        uint16_t& b = static_cast<uint16_t*>(p)[i];
        b = f16(double(f16::from_bits(b)) / d).bits;
      }
      break;
    case DType::BF16:
      for (size_t i = 0; i < n; ++i) {
        uint16_t& b = static_cast<uint16_t*>(p)[i];
        b = bf16(double(bf16::from_bits(b)) / d).bits;
      }
      break;
    default: fail<UnsupportedDType>("all_reduce", "avg of ", dtype_name(t));
  }
}

class MpiWork : public Work::Impl {
 public:
  MpiWork(const Mpi& m, std::vector<MPI_Request> reqs, std::vector<Tensor> keep,
          std::function<void()> then)
      : m_(m), reqs_(std::move(reqs)), keep_(std::move(keep)), then_(std::move(then)) {}
  ~MpiWork() override {
    try {
      wait();
    } catch (...) {  // a destructor must not throw
    }
  }
  void wait() override {
    if (done_) return;
    done_ = true;
    for (MPI_Request& r : reqs_) check(m_.wait(&r, nullptr), "mpi", "MPI_Wait");
    finish();
  }
  bool completed() override {
    if (done_) return true;
    bool all = true;
    for (MPI_Request& r : reqs_) {
      int flag = 0;
      check(m_.test(&r, &flag, nullptr), "mpi", "MPI_Test");
      all = all && flag;
    }
    if (all) {
      done_ = true;
      finish();
    }
    return done_;
  }

 private:
  void finish() {
    if (then_) then_();
    keep_.clear();
  }
  const Mpi& m_;
  std::vector<MPI_Request> reqs_;  // MPI sets each to MPI_REQUEST_NULL once complete
  std::vector<Tensor> keep_;
  std::function<void()> then_;
  bool done_ = false;
};

class MpiTransport : public Transport {
 public:
  MpiTransport() : m_(mpi::mpi()) {
    check(m_.comm_dup(m_.comm_world, &comm_), "mpi_communicator", "MPI_Comm_dup");
    check(m_.comm_set_errhandler(comm_, m_.errors_return), "mpi_communicator",
          "MPI_Comm_set_errhandler");
    check(m_.comm_rank(comm_, &rank_), "mpi_communicator", "MPI_Comm_rank");
    check(m_.comm_size(comm_, &world_), "mpi_communicator", "MPI_Comm_size");
  }
  ~MpiTransport() override { (void)m_.comm_free(&comm_); }

  int rank() const override { return rank_; }
  int world_size() const override { return world_; }
  Device device() const override { return Device::cpu(); }
  const char* name() const override { return "mpi"; }

  Work all_reduce(const void* send, void* recv, size_t count, DType dtype, ReduceOp op, bool async,
                  std::vector<Tensor> keep) override {
    MPI_Request req = nullptr;
    check(m_.iallreduce(send == recv ? MPI_IN_PLACE : send, recv, as_int(count, "all_reduce"),
                        type(dtype), reduce_op(dtype, op), comm_, &req),
          "all_reduce", "MPI_Iallreduce");
    return finish(req, std::move(keep), async, average(recv, count, dtype, op));
  }
  Work broadcast(void* buf, size_t count, DType dtype, int root, bool async,
                 std::vector<Tensor> keep) override {
    MPI_Request req = nullptr;
    check(m_.ibcast(buf, as_int(count, "broadcast"), type(dtype), root, comm_, &req), "broadcast",
          "MPI_Ibcast");
    return finish(req, std::move(keep), async, nullptr);
  }
  Work all_gather(const void* send, void* recv, size_t send_count, DType dtype, bool async,
                  std::vector<Tensor> keep) override {
    MPI_Request req = nullptr;
    const int n = as_int(send_count, "all_gather");
    as_int(send_count * size_t(world_), "all_gather");
    check(m_.iallgather(send, n, type(dtype), recv, n, type(dtype), comm_, &req), "all_gather",
          "MPI_Iallgather");
    return finish(req, std::move(keep), async, nullptr);
  }
  Work reduce_scatter(const void* send, void* recv, size_t recv_count, DType dtype, ReduceOp op,
                      bool async, std::vector<Tensor> keep) override {
    MPI_Request req = nullptr;
    as_int(recv_count * size_t(world_), "reduce_scatter");
    check(m_.ireduce_scatter_block(send, recv, as_int(recv_count, "reduce_scatter"), type(dtype),
                                   reduce_op(dtype, op), comm_, &req),
          "reduce_scatter", "MPI_Ireduce_scatter_block");
    return finish(req, std::move(keep), async, average(recv, recv_count, dtype, op));
  }
  Work send(const void* buf, size_t count, DType dtype, int peer, bool async,
            std::vector<Tensor> keep) override {
    MPI_Request req = nullptr;
    check(m_.isend(buf, as_int(count, "send"), type(dtype), peer, kTag, comm_, &req), "send",
          "MPI_Isend");
    return finish(req, std::move(keep), async, nullptr);
  }
  Work recv(void* buf, size_t count, DType dtype, int peer, bool async,
            std::vector<Tensor> keep) override {
    MPI_Request req = nullptr;
    check(m_.irecv(buf, as_int(count, "recv"), type(dtype), peer, kTag, comm_, &req), "recv",
          "MPI_Irecv");
    return finish(req, std::move(keep), async, nullptr);
  }
  Work send_recv(const void* send_buf, size_t send_count, DType send_dtype, int to, void* recv_buf,
                 size_t recv_count, DType recv_dtype, int from, bool async,
                 std::vector<Tensor> keep) override {
    std::vector<MPI_Request> reqs(2, nullptr);
    check(m_.irecv(recv_buf, as_int(recv_count, "send_recv"), type(recv_dtype), from, kTag, comm_,
                   &reqs[0]),
          "send_recv", "MPI_Irecv");
    check(m_.isend(send_buf, as_int(send_count, "send_recv"), type(send_dtype), to, kTag, comm_,
                   &reqs[1]),
          "send_recv", "MPI_Isend");
    return finish(std::move(reqs), std::move(keep), async, nullptr);
  }
  void barrier() override { check(m_.barrier(comm_), "barrier", "MPI_Barrier"); }

 private:
  static constexpr int kTag = 7;

  MPI_Datatype type(DType t) const {
    switch (t) {
      case DType::F64: return m_.type_f64;
      case DType::F32: return m_.type_f32;
      case DType::F16:
      case DType::BF16: return m_.type_u16;
      case DType::I64: return m_.type_i64;
      case DType::I32: return m_.type_i32;
      case DType::U8:
      case DType::Bool: return m_.type_u8;
      default: break;
    }
    fail<UnsupportedDType>("mpi", "no MPI type for ", dtype_name(t));
  }

  MPI_Op reduce_op(DType t, ReduceOp op) {
    if (t == DType::F16 || t == DType::BF16) return half_op(t, op);
    switch (op) {
      case ReduceOp::Sum:
      case ReduceOp::Avg: return m_.op_sum;
      case ReduceOp::Prod: return m_.op_prod;
      case ReduceOp::Max: return m_.op_max;
      case ReduceOp::Min: return m_.op_min;
    }
    return m_.op_sum;
  }

  // numr's reduction ops for 16-bit floats, made once per process.
  MPI_Op half_op(DType t, ReduceOp op) {
    static std::once_flag once;
    static MPI_Op ops[2][4] = {};
    std::call_once(once, [&] {
      MPI_User_function* fns[2][4] = {{f16_sum, f16_prod, f16_max, f16_min},
                                      {bf16_sum, bf16_prod, bf16_max, bf16_min}};
      for (int d = 0; d < 2; ++d)
        for (int o = 0; o < 4; ++o)
          check(m_.op_create(fns[d][o], 1, &ops[d][o]), "mpi", "MPI_Op_create");
    });
    const int o = op == ReduceOp::Prod ? 1 : op == ReduceOp::Max ? 2 : op == ReduceOp::Min ? 3 : 0;
    return ops[t == DType::BF16 ? 1 : 0][o];
  }

  std::function<void()> average(void* p, size_t n, DType t, ReduceOp op) const {
    if (op != ReduceOp::Avg) return nullptr;
    const double w = world_;
    return [p, n, t, w] { divide(p, n, t, w); };
  }

  Work finish(MPI_Request req, std::vector<Tensor> keep, bool async, std::function<void()> then) {
    return finish(std::vector<MPI_Request>{req}, std::move(keep), async, std::move(then));
  }
  Work finish(std::vector<MPI_Request> reqs, std::vector<Tensor> keep, bool async,
              std::function<void()> then) {
    auto work = std::make_shared<MpiWork>(m_, std::move(reqs), std::move(keep), std::move(then));
    if (!async) {
      work->wait();
      return Work();
    }
    return Work(work);
  }

  const Mpi& m_;
  MPI_Comm comm_ = nullptr;
  int rank_ = 0, world_ = 1;
};

}  // namespace

std::unique_ptr<Communicator> mpi_communicator() {
  return std::make_unique<Communicator>(std::make_unique<MpiTransport>());
}

bool mpi_available(std::string* reason) {
  // Only whether the library opens: initialising MPI outside mpirun is left to callers.
  const char* env = std::getenv("NUMR_MPI");
  const std::string path = env && *env ? env : "libmpi.so.40";
  dlerror();
  if (void* h = dlopen(path.c_str(), RTLD_LAZY | RTLD_GLOBAL)) {
    if (dlsym(h, "ompi_mpi_comm_world")) return true;
    if (reason) *reason = "[mpi] " + path + " is not Open MPI (no ompi_mpi_comm_world)";
    return false;
  }
  const char* why = dlerror();
  if (reason) *reason = "[mpi] " + path + " could not be loaded (" + (why ? why : "?") + ")";
  return false;
}

}  // namespace numr::dist
