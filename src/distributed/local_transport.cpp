// A world of one process: every collective is the identity, computed with numr's own copy
// (so it works on every device); point to point has no peer to talk to.
#include "distributed/transport.h"
#include "numr/error.h"

namespace numr::dist {

namespace {

// keep = {input, output}: the output becomes a copy of the input (nothing when they are the
// same tensor, as for all_reduce).
void copy_over(std::vector<Tensor>& keep) {
  if (keep[0].storage() == keep[1].storage() && keep[0].offset() == keep[1].offset()) return;
  keep[1].copy_(keep[0].reshape(keep[1].shape()));
}

class LocalTransport : public Transport {
 public:
  explicit LocalTransport(Device device) : device_(device) {}
  int rank() const override { return 0; }
  int world_size() const override { return 1; }
  Device device() const override { return device_; }
  const char* name() const override { return "local"; }

  Work all_reduce(const void*, void*, size_t, DType, ReduceOp, bool,
                  std::vector<Tensor> keep) override {
    copy_over(keep);
    return Work();
  }
  Work broadcast(void*, size_t, DType, int, bool, std::vector<Tensor>) override { return Work(); }
  Work all_gather(const void*, void*, size_t, DType, bool, std::vector<Tensor> keep) override {
    copy_over(keep);
    return Work();
  }
  Work reduce_scatter(const void*, void*, size_t, DType, ReduceOp, bool,
                      std::vector<Tensor> keep) override {
    copy_over(keep);
    return Work();
  }
  // Unreachable: the front end refuses a peer that is not another rank.
  Work send(const void*, size_t, DType, int, bool, std::vector<Tensor>) override {
    fail<InvalidArgument>("send", "a world of one process has no peer");
  }
  Work recv(void*, size_t, DType, int, bool, std::vector<Tensor>) override {
    fail<InvalidArgument>("recv", "a world of one process has no peer");
  }
  Work send_recv(const void*, size_t, DType, int, void*, size_t, DType, int, bool,
                 std::vector<Tensor>) override {
    fail<InvalidArgument>("send_recv", "a world of one process has no peer");
  }
  void barrier() override { synchronize(device_); }

 private:
  Device device_;
};

}  // namespace

std::unique_ptr<Transport> make_local_transport(Device device) {
  return std::make_unique<LocalTransport>(device);
}

std::unique_ptr<Communicator> local_communicator(Device device) {
  return std::make_unique<Communicator>(make_local_transport(device));
}

}  // namespace numr::dist
