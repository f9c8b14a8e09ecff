// Collectives and data-parallel training across processes, one program per rank:
//   mpirun -np 2 --oversubscribe numr_dist_tests          CPU tensors over MPI
//   NUMR_DIST_DEVICE=cuda scripts/launch-dp.sh -n 2 numr_dist_tests   CUDA tensors, NCCL
// Every input is rank-dependent with a closed-form result computed here in double. The
// program exits 77 (skipped) with the reason when the transport it is asked for is missing
// or the world has fewer than 2 ranks, so it never passes without communicating.
#include <gtest/gtest.h>
#include <numr/distributed.h>
#include <numr/numr.h>

#include "distributed/nccl_library.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

using namespace numr;
using dist::ReduceOp;

namespace {

dist::Communicator* g_comm = nullptr;

dist::Communicator& comm() { return *g_comm; }
int rank() { return comm().rank(); }
int world() { return comm().world_size(); }
Device dev() { return comm().device(); }

// The tensor's values as doubles (complex: re, im pairs), on the host.
std::vector<double> values(const Tensor& t) {
  Tensor c = t.to(Device::cpu());
  if (c.dtype() == DType::Complex64 || c.dtype() == DType::Complex128) c = view_as_real(c);
  return c.cast(DType::F64).contiguous().to_vector<double>();
}

Tensor make(const std::vector<double>& v, const Shape& shape, DType dtype) {
  if (dtype == DType::Complex64 || dtype == DType::Complex128) {
    // v holds (re, im) pairs
    Shape pairs = shape;
    pairs.push_back(2);
    const DType real = dtype == DType::Complex64 ? DType::F32 : DType::F64;
    Tensor r = Tensor::from_vector(v, pairs).cast(real);
    return view_as_complex(r).to(dev());
  }
  return Tensor::from_vector(v, shape).cast(dtype).to(dev());
}

bool is_cplx(DType t) { return t == DType::Complex64 || t == DType::Complex128; }

// Each rank's input of all_reduce: small integers and quarters, exact in every dtype, so
// every op's result is exact in any order of reduction (avg divides by the world size,
// exact for 2 and 4 ranks). Products take powers of two (floats) or 1..3 (integers).
double input(int r, int64_t i, DType t, ReduceOp op = ReduceOp::Sum) {
  if (t == DType::Bool) return double((r + i) % 2 == 0);
  const bool real = is_floating(t) || is_cplx(t);
  if (op == ReduceOp::Prod)
    return real ? std::ldexp(1.0, int((r + i) % 3) - 1) : double((r + i) % 3 + 1);
  const double base = double(r + 1) * double(i % 5 + 1);
  return real ? base * 0.25 + double(i % 3) : base;
}

double combine(ReduceOp op, double a, double b) {
  switch (op) {
    case ReduceOp::Sum:
    case ReduceOp::Avg: return a + b;
    case ReduceOp::Prod: return a * b;
    case ReduceOp::Max: return std::max(a, b);
    case ReduceOp::Min: return std::min(a, b);
  }
  return 0;
}

std::vector<ReduceOp> ops_for(DType t) {
  if (t == DType::Bool) return {ReduceOp::Max, ReduceOp::Min};
  if (is_cplx(t)) return {ReduceOp::Sum, ReduceOp::Avg};
  if (is_floating(t))
    return {ReduceOp::Sum, ReduceOp::Prod, ReduceOp::Max, ReduceOp::Min, ReduceOp::Avg};
  return {ReduceOp::Sum, ReduceOp::Prod, ReduceOp::Max, ReduceOp::Min};
}

const DType kDTypes[] = {DType::F64, DType::F32, DType::F16,  DType::BF16,      DType::I64,
                         DType::I32, DType::U8,  DType::Bool, DType::Complex64, DType::Complex128};

TEST(DistCollectives, AllReduceEveryDTypeAndOp) {
  const int64_t n = 37;
  for (DType t : kDTypes) {
    const int64_t reals = is_cplx(t) ? 2 * n : n;
    for (ReduceOp op : ops_for(t)) {
      for (bool async : {false, true}) {
        std::vector<double> mine(static_cast<size_t>(reals)), want(static_cast<size_t>(reals));
        for (int64_t i = 0; i < reals; ++i) {
          mine[size_t(i)] = input(rank(), i, t, op);
          double acc = input(0, i, t, op);
          for (int r = 1; r < world(); ++r) acc = combine(op, acc, input(r, i, t, op));
          want[size_t(i)] = op == ReduceOp::Avg ? acc / world() : acc;
        }
        Tensor x = make(mine, {n}, t);
        dist::Work w = comm().all_reduce(x, op, async);
        w.wait();
        EXPECT_TRUE(w.completed());
        EXPECT_EQ(values(x), want)
            << dtype_name(t) << " " << dist::reduce_op_name(op) << (async ? " async" : "");
      }
    }
  }
}

TEST(DistCollectives, BroadcastFromEveryRoot) {
  for (DType t : kDTypes) {
    for (int root = 0; root < world(); ++root) {
      const int64_t reals = is_cplx(t) ? 10 : 5;
      std::vector<double> mine(static_cast<size_t>(reals)), want(static_cast<size_t>(reals));
      for (int64_t i = 0; i < reals; ++i) {
        auto v = [&](int r) { return t == DType::Bool ? double((r + i) % 2) : double(r * 10 + i); };
        mine[size_t(i)] = v(rank());
        want[size_t(i)] = v(root);
      }
      Tensor x = make(mine, {5}, t);
      comm().broadcast(x, root);
      EXPECT_EQ(values(x), want) << dtype_name(t) << " root " << root;
    }
  }
}

TEST(DistCollectives, AllGatherBothLayouts) {
  for (DType t : kDTypes) {
    const int64_t pair = is_cplx(t) ? 2 : 1;
    std::vector<double> mine(static_cast<size_t>(6 * pair));
    auto v = [&](int r, int64_t i) {
      return t == DType::Bool ? double((r + i) % 2) : double(r * 10 + i);
    };
    for (int64_t i = 0; i < 6 * pair; ++i) mine[size_t(i)] = v(rank(), i);
    std::vector<double> want;
    for (int r = 0; r < world(); ++r)
      for (int64_t i = 0; i < 6 * pair; ++i) want.push_back(v(r, i));
    // A transposed view as input: only outputs need be contiguous.
    const Tensor in = make(mine, {2, 3}, t).transpose(0, 1).contiguous().transpose(0, 1);
    ASSERT_FALSE(in.is_contiguous());
    Tensor cat = Tensor::empty({2 * int64_t(world()), 3}, t, dev());
    comm().all_gather(in, cat);
    EXPECT_EQ(values(cat), want) << dtype_name(t);
    Tensor stacked = Tensor::empty({int64_t(world()), 2, 3}, t, dev());
    comm().all_gather(in, stacked, /*async=*/true).wait();
    EXPECT_EQ(values(stacked), want) << dtype_name(t);
  }
}

TEST(DistCollectives, ReduceScatterEveryDTypeAndOp) {
  const int64_t block = 4;
  for (DType t : kDTypes) {
    const int64_t pair = is_cplx(t) ? 2 : 1;
    for (ReduceOp op : ops_for(t)) {
      const int64_t total = block * world() * pair;
      std::vector<double> mine(static_cast<size_t>(total)), want(static_cast<size_t>(block * pair));
      for (int64_t j = 0; j < total; ++j) mine[size_t(j)] = input(rank(), j, t, op);
      for (int64_t k = 0; k < block * pair; ++k) {
        const int64_t j = rank() * block * pair + k;
        double acc = input(0, j, t, op);
        for (int r = 1; r < world(); ++r) acc = combine(op, acc, input(r, j, t, op));
        want[size_t(k)] = op == ReduceOp::Avg ? acc / world() : acc;
      }
      Tensor in = make(mine, {block * world()}, t);
      Tensor out = Tensor::empty({block}, t, dev());
      comm().reduce_scatter(in, out, op);
      EXPECT_EQ(values(out), want) << dtype_name(t) << " " << dist::reduce_op_name(op);
    }
  }
}

TEST(DistCollectives, SendRecvRing) {
  // Every rank sends to the next and receives from the previous one, in one send_recv.
  const int to = (rank() + 1) % world(), from = (rank() + world() - 1) % world();
  for (DType t : kDTypes) {
    for (bool async : {false, true}) {
      const int64_t pair = is_cplx(t) ? 2 : 1;
      std::vector<double> mine(static_cast<size_t>(8 * pair)), want(static_cast<size_t>(8 * pair));
      for (int64_t i = 0; i < 8 * pair; ++i) {
        auto v = [&](int r) { return t == DType::Bool ? double((r + i) % 2) : double(r * 7 + i); };
        mine[size_t(i)] = v(rank());
        want[size_t(i)] = v(from);
      }
      const Tensor x = make(mine, {8}, t);
      Tensor y = Tensor::empty({8}, t, dev());
      comm().send_recv(x, to, y, from, async).wait();
      EXPECT_EQ(values(y), want) << dtype_name(t);
    }
  }
}

TEST(DistCollectives, SendThenRecvOneWay) {
  // Rank 0 sends to the last rank, which sends it back doubled: one-way transfers.
  const int last = world() - 1;
  for (DType t : {DType::F32, DType::BF16, DType::I64, DType::Complex128}) {
    const int64_t pair = is_cplx(t) ? 2 : 1;
    std::vector<double> v(static_cast<size_t>(6 * pair));
    for (size_t i = 0; i < v.size(); ++i) v[i] = double(i) + 1;
    if (rank() == 0) {
      const Tensor x = make(v, {3, 2}, t).transpose(0, 1);  // a view: sent as its values
      comm().send(x, last);
      Tensor back = Tensor::empty({2, 3}, t, dev());
      comm().recv(back, last, /*async=*/true).wait();
      std::vector<double> want = values(x);
      for (double& w : want) w *= 2;
      EXPECT_EQ(values(back), want) << dtype_name(t);
    } else if (rank() == last) {
      Tensor got = Tensor::empty({2, 3}, t, dev());
      comm().recv(got, 0);
      Tensor twice = got + got;
      comm().send(twice, 0, /*async=*/true).wait();
    }
  }
  comm().barrier();
}

TEST(DistCollectives, LargeAllReduceAndBarrier) {
  const int64_t n = int64_t(1) << 20;
  Tensor x = full({n}, double(rank() + 1), DType::F32, dev());
  comm().all_reduce(x, ReduceOp::Sum);
  const double want = double(world()) * double(world() + 1) / 2;
  const std::vector<double> v = values(x);
  EXPECT_EQ(v.front(), want);
  EXPECT_EQ(v[size_t(n / 2)], want);
  EXPECT_EQ(v.back(), want);
  comm().barrier();
}

TEST(DistBadInput, ErrorsNameTheOp) {
  Tensor x = zeros({4}, DType::F32, dev());
  Tensor wrong = Tensor::empty({4 * int64_t(world()) + 1}, DType::F32, dev());
  try {
    comm().all_gather(x, wrong);
    FAIL() << "no error";
  } catch (const ShapeMismatch& e) {
    EXPECT_EQ(std::string(e.what()).rfind("[all_gather]", 0), 0u) << e.what();
    EXPECT_NE(std::string(e.what()).find("world size " + std::to_string(world())),
              std::string::npos)
        << e.what();
  }
  Tensor i32 = Tensor::empty({4 * int64_t(world())}, DType::I32, dev());
  EXPECT_THROW(comm().all_gather(x, i32), DTypeMismatch);
  Tensor ints = zeros({4}, DType::I32, dev());
  EXPECT_THROW(comm().all_reduce(ints, ReduceOp::Avg), UnsupportedDType);
  EXPECT_THROW(comm().broadcast(x, world()), InvalidArgument);
  EXPECT_THROW(comm().send(x, rank()), InvalidArgument);
  Tensor m = zeros({3, 4}, DType::F32, dev()).transpose(0, 1);
  EXPECT_THROW(comm().all_reduce(m), NotContiguous);
  if (!dev().is_cpu()) {
    Tensor host = zeros({4}, DType::F32, Device::cpu());
    EXPECT_THROW(comm().all_reduce(host), DeviceMismatch);
  }
  // Every rank is still in step: a collective after the refused ones works.
  Tensor one = full({1}, 1.0, DType::F32, dev());
  comm().all_reduce(one);
  EXPECT_EQ(values(one)[0], double(world()));
}

// A two-layer network y = tanh(x W1 + b1) W2 + b2 with a mean squared error.
struct Net {
  Var w1, b1, w2, b2;
  Net(DType t, Device d) {
    Generator gen(5);
    auto p = [&](const Shape& s, double scale) {
      return Var((randn(s, DType::F64, Device::cpu(), gen) * scale).cast(t).to(d), true);
    };
    w1 = p({5, 16}, 0.5);
    b1 = p({16}, 0.1);
    w2 = p({16, 3}, 0.3);
    b2 = p({3}, 0.1);
  }
  std::vector<Var> params() const { return {w1, b1, w2, b2}; }
  Var loss(const Tensor& x, const Tensor& y) const {
    const Var h = tanh(matmul(Var(x), w1) + b1);
    const Var d = matmul(h, w2) + b2 - Var(y);
    return mean(d * d);
  }
};

void data_parallel_matches_whole_batch(DType t, double tol) {
  const int64_t per_rank = 6, batch = per_rank * world();
  Generator gen(11);
  const Tensor x_all = randn({batch, 5}, DType::F64, Device::cpu(), gen).cast(t).to(dev());
  const Tensor y_all = randn({batch, 3}, DType::F64, Device::cpu(), gen).cast(t).to(dev());
  // Reference: one process on the whole batch.
  Net ref(t, dev());
  AdamW ref_opt(ref.params(), {.lr = 1e-2});
  // Data parallel: this rank's rows only; small buckets so that several are in flight.
  Net net(t, dev());
  AdamW opt(net.params(), {.lr = 1e-2});
  dist::DataParallel dp(comm(), net.params(), {.bucket_bytes = 128});
  EXPECT_GE(dp.bucket_count(), 3u);
  for (int step = 0; step < 4; ++step) {
    ref_opt.step(backward(ref.loss(x_all, y_all)));
    const Tensor xs = x_all.narrow(0, rank() * per_rank, per_rank);
    const Tensor ys = y_all.narrow(0, rank() * per_rank, per_rank);
    const Gradients local = backward(net.loss(xs, ys));
    // Every bucket started its all-reduce from the hooks, during backward.
    EXPECT_EQ(dp.buckets_started(), dp.bucket_count());
    opt.step(dp.reduce(local));
    EXPECT_EQ(dp.buckets_started(), 0u);
  }
  const std::vector<Var> a = ref.params(), b = net.params();
  for (size_t k = 0; k < a.size(); ++k) {
    const std::vector<double> va = values(a[k].tensor()), vb = values(b[k].tensor());
    ASSERT_EQ(va.size(), vb.size());
    for (size_t i = 0; i < va.size(); ++i)
      EXPECT_NEAR(vb[i], va[i], tol * (1 + std::fabs(va[i])))
          << dtype_name(t) << " param " << k << " [" << i << "]";
  }
}

TEST(DistDataParallel, MatchesOneProcessOnTheWholeBatchF64) {
  data_parallel_matches_whole_batch(DType::F64, 1e-12);
}
TEST(DistDataParallel, MatchesOneProcessOnTheWholeBatchF32) {
  data_parallel_matches_whole_batch(DType::F32, 2e-5);
}

TEST(DistDataParallel, RefusesDifferentParameterLists) {
  Tensor a = zeros({2 + rank()}, DType::F32, dev());
  Var v(a, true);
  try {
    dist::DataParallel dp(comm(), {v});
    FAIL() << "no error";
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(std::string(e.what()).rfind("[DataParallel]", 0), 0u) << e.what();
  }
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  const char* d = std::getenv("NUMR_DIST_DEVICE");
  const Device device = parse_device(d && *d ? d : "cpu");
  if (device.type == DeviceType::Cuda) {
    std::string why;
    if (!dist::nccl_available(&why)) {
      std::printf("SKIPPED: %s\n", why.c_str());
      return 77;
    }
    int gpus = 0;
    for (const Device& a : available_devices()) gpus += a.type == DeviceType::Cuda;
    if (gpus < 2) {
      std::printf("SKIPPED: NCCL %d is here, but %d usable GPU%s (2 needed)\n",
                  dist::nccl_version(), gpus, gpus == 1 ? "" : "s");
      return 77;
    }
  } else if (std::string why; !dist::mpi_available(&why)) {
    std::printf("SKIPPED: %s\n", why.c_str());
    return 77;
  }
  std::unique_ptr<dist::Communicator> c;
  try {
    c = dist::init_from_env(device);
  } catch (const Error& e) {
    std::printf("FAILED to join the world: %s\n", e.what());
    return 1;
  }
  if (c->world_size() < 2) {
    std::printf(
        "SKIPPED: a world of %d process; start 2 or more (mpirun -np 2, or "
        "scripts/launch-dp.sh -n 2)\n",
        c->world_size());
    return 77;
  }
  g_comm = c.get();
  std::printf("rank %d of %d on %s over %s", c->rank(), c->world_size(), c->device().str().c_str(),
              c->backend().c_str());
  if (c->backend() == "nccl")
    std::printf(" %d (%s)", dist::nccl_version(), dist::nccl::nccl().path.c_str());
  std::printf("\n");
  const int rc = RUN_ALL_TESTS();
  // Ranks report together: a failure on any rank fails them all.
  Tensor failed = full({1}, rc == 0 ? 0.0 : 1.0, DType::F32, c->device());
  c->all_reduce(failed, ReduceOp::Max);
  const bool any_failed = failed.to(Device::cpu()).item<float>() != 0.f;
  g_comm = nullptr;
  c.reset();
  return any_failed ? 1 : 0;
}
