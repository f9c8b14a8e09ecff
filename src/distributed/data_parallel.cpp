// Data-parallel gradient averaging. Parameters are grouped into buckets in reverse order
// (backward produces the last layers' gradients first) and by dtype; a leaf hook copies
// each gradient into its bucket as soon as backward() has it, and a full bucket is
// all-reduced (avg) asynchronously while backward goes on. Buckets start strictly in
// order, so every rank issues the same collectives in the same order.
#include <functional>

#include "numr/distributed.h"
#include "numr/error.h"
#include "numr/ops.h"

namespace numr::dist {

namespace {

struct Bucket {
  DType dtype = DType::F32;
  std::vector<size_t> params;   // indices into State::params
  std::vector<int64_t> offset;  // element offset of each in `flat`
  int64_t numel = 0;
  // Per backward pass:
  Tensor flat;  // [numel], made fresh each pass so earlier results stay valid
  std::vector<bool> ready;
  size_t pending = 0;
  Work work;
};

}  // namespace

struct DataParallel::State {
  Communicator& comm;
  std::vector<Var> params;
  std::vector<Bucket> buckets;
  std::vector<std::pair<size_t, size_t>> where;  // param -> (bucket, slot)
  size_t next_launch = 0;

  State(Communicator& c, std::vector<Var> p) : comm(c), params(std::move(p)) {}

  void begin_pass_if_needed(Bucket& b) {
    if (b.flat.defined()) return;
    b.flat = Tensor::empty({b.numel}, b.dtype, comm.device());
    b.ready.assign(b.params.size(), false);
    b.pending = b.params.size();
  }

  Tensor slot(Bucket& b, size_t s) {
    const Var& p = params[b.params[s]];
    return b.flat.narrow(0, b.offset[s], p.numel());
  }

  void fill(size_t param, const Tensor* grad) {
    const auto [bi, s] = where[param];
    Bucket& b = buckets[bi];
    begin_pass_if_needed(b);
    if (b.ready[s])
      fail<InvalidArgument>("DataParallel", "parameter ", param,
                            " got a second gradient before reduce(): call reduce() after each "
                            "backward()");
    Tensor dst = slot(b, s);
    if (grad)
      dst.copy_(grad->reshape({grad->numel()}));
    else
      dst.fill_(0.0);
    b.ready[s] = true;
    --b.pending;
    launch_ready();
    // MPI moves a nonblocking collective along only inside MPI calls: test the ones in
    // flight at each gradient (on CUDA, an event query).
    for (size_t i = 0; i < next_launch; ++i) (void)buckets[i].work.completed();
  }

  void launch_ready() {
    while (next_launch < buckets.size() && buckets[next_launch].flat.defined() &&
           buckets[next_launch].pending == 0) {
      Bucket& b = buckets[next_launch++];
      b.work = comm.all_reduce(b.flat, ReduceOp::Avg, /*async=*/true);
    }
  }
};

DataParallel::DataParallel(Communicator& comm, std::vector<Var> params, DataParallelOptions options)
    : state_(std::make_shared<State>(comm, std::move(params))) {
  State& st = *state_;
  if (st.params.empty()) fail<InvalidArgument>("DataParallel", "no parameters");
  // Order-sensitive signature of the parameter list, compared across ranks below.
  int64_t total = 0, signature = 17;
  for (size_t i = 0; i < st.params.size(); ++i) {
    const Var& p = st.params[i];
    if (!p.defined() || !p.requires_grad() || !p.is_leaf())
      fail<InvalidArgument>("DataParallel", "parameter ", i, " is not a leaf that requires grad");
    if (p.device() != comm.device())
      fail<DeviceMismatch>("DataParallel", "parameter ", i, " on ", p.device().str(),
                           ", communicator on ", comm.device().str());
    for (size_t j = 0; j < i; ++j)
      if (st.params[j].id() == p.id())
        fail<InvalidArgument>("DataParallel", "parameter ", i, " is listed twice");
    total += p.numel();
    signature = (signature * 1000003 + p.numel() * 31 + int64_t(p.dtype())) % (int64_t(1) << 40);
    for (int64_t d : p.shape()) signature = (signature * 131 + d) % (int64_t(1) << 40);
  }
  if (comm.world_size() > 1) {
    const std::vector<int64_t> mine = {int64_t(st.params.size()), total, signature};
    Tensor hi = Tensor::from_vector(mine, {3}, comm.device());
    Tensor lo = hi.clone();
    comm.all_reduce(hi, ReduceOp::Max);
    comm.all_reduce(lo, ReduceOp::Min);
    if (hi.to_vector<int64_t>() != lo.to_vector<int64_t>())
      fail<InvalidArgument>("DataParallel", "the ranks list different parameters (rank ",
                            comm.rank(), ": ", st.params.size(), " parameters, ", total,
                            " elements)");
  }
  // Buckets in reverse parameter order, a new one at each dtype change or when full.
  st.where.resize(st.params.size());
  for (size_t k = st.params.size(); k-- > 0;) {
    const Var& p = st.params[k];
    const int64_t bytes = p.numel() * int64_t(dtype_size(p.dtype()));
    if (st.buckets.empty() || st.buckets.back().dtype != p.dtype() ||
        (st.buckets.back().numel * int64_t(dtype_size(p.dtype())) + bytes >
             int64_t(options.bucket_bytes) &&
         !st.buckets.back().params.empty())) {
      st.buckets.emplace_back();
      st.buckets.back().dtype = p.dtype();
    }
    Bucket& b = st.buckets.back();
    st.where[k] = {st.buckets.size() - 1, b.params.size()};
    b.params.push_back(k);
    b.offset.push_back(b.numel);
    b.numel += p.numel();
  }
  std::weak_ptr<State> weak = state_;
  for (size_t k = 0; k < st.params.size(); ++k)
    st.params[k].register_hook([weak, k](const Tensor& g) {
      if (auto s = weak.lock()) s->fill(k, &g);
    });
  if (options.broadcast_parameters) broadcast_parameters();
}

DataParallel::~DataParallel() {
  // Collectives still in flight finish before their buffers go.
  for (Bucket& b : state_->buckets) {
    try {
      b.work.wait();
    } catch (...) {  // a destructor must not throw
    }
  }
}

size_t DataParallel::bucket_count() const { return state_->buckets.size(); }
size_t DataParallel::buckets_started() const { return state_->next_launch; }

void DataParallel::broadcast_parameters() {
  State& st = *state_;
  if (st.comm.world_size() == 1) return;
  for (Var& p : st.params) {
    Tensor t = p.tensor().clone();
    st.comm.broadcast(t, 0);
    p.assign(t);
  }
}

Gradients DataParallel::reduce(const Gradients& local) {
  State& st = *state_;
  // Gradients whose hooks did not fire (absent on this rank) go in now, as zeros when absent.
  for (size_t bi = 0; bi < st.buckets.size(); ++bi) {
    Bucket& b = st.buckets[bi];
    st.begin_pass_if_needed(b);
    for (size_t s = 0; s < b.params.size(); ++s) {
      if (b.ready[s]) continue;
      const Var& p = st.params[b.params[s]];
      st.fill(b.params[s], local.contains(p) ? &local[p] : nullptr);
    }
  }
  Gradients out = local;
  for (Bucket& b : st.buckets) {
    b.work.wait();
    b.work = Work();
    for (size_t s = 0; s < b.params.size(); ++s) {
      const Var& p = st.params[b.params[s]];
      out.map()[p.id()] = st.slot(b, s).reshape(p.shape());
    }
    b.flat = Tensor();
  }
  st.next_launch = 0;
  return out;
}

}  // namespace numr::dist
