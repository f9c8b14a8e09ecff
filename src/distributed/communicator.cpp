// The Communicator front end: checks every argument (the op's name first in each error),
// turns tensors into buffers (complex tensors as their pairs of reals) and hands them to
// the transport.
#include <algorithm>

#include "distributed/transport.h"
#include "numr/error.h"
#include "numr/shape.h"

namespace numr::dist {

namespace {

// What travels: the real dtype and element count (a complex element is two reals).
struct Wire {
  DType dtype;
  size_t count;
};
Wire wire(const Tensor& t) {
  const size_t n = size_t(t.numel());
  if (t.dtype() == DType::Complex64) return {DType::F32, 2 * n};
  if (t.dtype() == DType::Complex128) return {DType::F64, 2 * n};
  return {t.dtype(), n};
}

void* data(const Tensor& t) {
  return static_cast<char*>(t.storage()->handle()) + t.offset() * int64_t(dtype_size(t.dtype()));
}

void check_tensor(std::string_view op, const Communicator& c, const Tensor& t, bool written) {
  if (!t.defined()) fail<InvalidArgument>(op, "undefined tensor");
  if (t.device() != c.device())
    fail<DeviceMismatch>(op, "tensor on ", t.device().str(), ", communicator on ", c.device().str(),
                         " (", c.backend(), ")");
  if (written && !t.is_contiguous())
    fail<NotContiguous>(op, "the tensor written to must be contiguous (shape ",
                        shape_str(t.shape()), ")");
}

void check_reduce(std::string_view op, DType t, ReduceOp r) {
  if (r == ReduceOp::Avg && !is_floating(t) && !is_complex(t))
    fail<UnsupportedDType>(op, "avg needs a floating or complex dtype, not ", dtype_name(t),
                           " (reduce by sum and divide as you choose)");
  if (t == DType::Bool && r != ReduceOp::Max && r != ReduceOp::Min)
    fail<UnsupportedDType>(op, reduce_op_name(r), " of Bool: use max (any) or min (all)");
  if (is_complex(t) && r != ReduceOp::Sum && r != ReduceOp::Avg)
    fail<UnsupportedDType>(op, reduce_op_name(r), " of ", dtype_name(t), ": only sum and avg");
}

void check_rank(std::string_view op, const char* what, int r, int world) {
  if (r < 0 || r >= world)
    fail<InvalidArgument>(op, what, " ", r, " is not a rank of a world of ", world);
}

void check_same_dtype(std::string_view op, const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype())
    fail<DTypeMismatch>(op, "input ", dtype_name(a.dtype()), ", output ", dtype_name(b.dtype()));
}

// Whether `big` is `world` copies of `small` one after another: [world * d0, ...] for a
// small [d0, ...], or [world, ...small].
bool stacked(const Shape& big, const Shape& small, int world) {
  Shape s = small;
  s.insert(s.begin(), world);
  if (big == s) return true;
  if (small.empty() || big.size() != small.size()) return false;
  if (big[0] != small[0] * world) return false;
  return std::equal(big.begin() + 1, big.end(), small.begin() + 1);
}

}  // namespace

const char* reduce_op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum: return "sum";
    case ReduceOp::Prod: return "prod";
    case ReduceOp::Max: return "max";
    case ReduceOp::Min: return "min";
    case ReduceOp::Avg: return "avg";
  }
  return "?";
}

void Work::wait() {
  if (impl_) impl_->wait();
}
bool Work::completed() { return !impl_ || impl_->completed(); }

Communicator::Communicator(std::unique_ptr<Transport> transport)
    : transport_(std::move(transport)) {}
Communicator::~Communicator() = default;

int Communicator::rank() const { return transport_->rank(); }
int Communicator::world_size() const { return transport_->world_size(); }
Device Communicator::device() const { return transport_->device(); }
std::string Communicator::backend() const { return transport_->name(); }

Work Communicator::all_reduce(Tensor& t, ReduceOp op, bool async) {
  check_tensor("all_reduce", *this, t, true);
  check_reduce("all_reduce", t.dtype(), op);
  if (t.numel() == 0) return Work();
  const Wire w = wire(t);
  return transport_->all_reduce(data(t), data(t), w.count, w.dtype, op, async, {t, t});
}

Work Communicator::broadcast(Tensor& t, int root, bool async) {
  check_tensor("broadcast", *this, t, true);
  check_rank("broadcast", "root", root, world_size());
  if (t.numel() == 0) return Work();
  const Wire w = wire(t);
  return transport_->broadcast(data(t), w.count, w.dtype, root, async, {t, t});
}

Work Communicator::all_gather(const Tensor& in, Tensor& out, bool async) {
  check_tensor("all_gather", *this, in, false);
  check_tensor("all_gather", *this, out, true);
  check_same_dtype("all_gather", in, out);
  if (!stacked(out.shape(), in.shape(), world_size()))
    fail<ShapeMismatch>("all_gather", "output ", shape_str(out.shape()), " is not ", world_size(),
                        " inputs ", shape_str(in.shape()), " stacked (world size ", world_size(),
                        ")");
  if (in.numel() == 0) return Work();
  const Tensor src = in.contiguous();
  const Wire w = wire(src);
  return transport_->all_gather(data(src), data(out), w.count, w.dtype, async, {src, out});
}

Work Communicator::reduce_scatter(const Tensor& in, Tensor& out, ReduceOp op, bool async) {
  check_tensor("reduce_scatter", *this, in, false);
  check_tensor("reduce_scatter", *this, out, true);
  check_same_dtype("reduce_scatter", in, out);
  check_reduce("reduce_scatter", out.dtype(), op);
  if (!stacked(in.shape(), out.shape(), world_size()))
    fail<ShapeMismatch>("reduce_scatter", "input ", shape_str(in.shape()), " is not ", world_size(),
                        " outputs ", shape_str(out.shape()), " stacked (world size ", world_size(),
                        ")");
  if (out.numel() == 0) return Work();
  const Tensor src = in.contiguous();
  const Wire w = wire(out);
  return transport_->reduce_scatter(data(src), data(out), w.count, w.dtype, op, async, {src, out});
}

Work Communicator::send(const Tensor& t, int peer, bool async) {
  check_tensor("send", *this, t, false);
  check_rank("send", "peer", peer, world_size());
  if (peer == rank()) fail<InvalidArgument>("send", "peer ", peer, " is this rank");
  if (t.numel() == 0) return Work();
  const Tensor src = t.contiguous();
  const Wire w = wire(src);
  return transport_->send(data(src), w.count, w.dtype, peer, async, {src, src});
}

Work Communicator::recv(Tensor& t, int peer, bool async) {
  check_tensor("recv", *this, t, true);
  check_rank("recv", "peer", peer, world_size());
  if (peer == rank()) fail<InvalidArgument>("recv", "peer ", peer, " is this rank");
  if (t.numel() == 0) return Work();
  const Wire w = wire(t);
  return transport_->recv(data(t), w.count, w.dtype, peer, async, {t, t});
}

Work Communicator::send_recv(const Tensor& out, int to, Tensor& in, int from, bool async) {
  check_tensor("send_recv", *this, out, false);
  check_tensor("send_recv", *this, in, true);
  check_rank("send_recv", "peer", to, world_size());
  check_rank("send_recv", "peer", from, world_size());
  if (to == rank() || from == rank())
    fail<InvalidArgument>("send_recv", "peer ", to == rank() ? to : from, " is this rank");
  const Tensor src = out.contiguous();
  const Wire ws = wire(src), wr = wire(in);
  return transport_->send_recv(data(src), ws.count, ws.dtype, to, data(in), wr.count, wr.dtype,
                               from, async, {src, in});
}

void Communicator::barrier() { transport_->barrier(); }

}  // namespace numr::dist
