// The distributed layer within one process: the loaders' failures (no NCCL, no MPI) as
// BackendUnavailable with the reason, the local communicator of a world of one, argument
// checks, unique-id exchange and joining from the environment. The collectives across
// processes are tested by tests/dist (numr_dist_tests, under mpirun and on 2 GPUs).
#include <gtest/gtest.h>
#include <numr/distributed.h>
#include <numr/numr.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "distributed/nccl_library.h"

using namespace numr;
using dist::ReduceOp;

namespace {

// Sets an environment variable for its lifetime, restoring the previous value.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value)
      setenv(name, value, 1);
    else
      unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_)
      setenv(name_, old_->c_str(), 1);
    else
      unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

template <class E, class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  return "(no error)";
}

bool starts_with(const std::string& s, const std::string& p) { return s.rfind(p, 0) == 0; }

TEST(DistributedLoader, MissingNcclIsBackendUnavailableWithTheReason) {
  ScopedEnv env("NUMR_NCCL", "/nonexistent/numr-test/libnccl.so.2");
  EXPECT_EQ(dist::nccl::nccl_candidates(),
            std::vector<std::string>{"/nonexistent/numr-test/libnccl.so.2"});
  std::string reason;
  EXPECT_EQ(dist::nccl::load_nccl(reason), nullptr);
  EXPECT_TRUE(starts_with(reason, "[nccl] libnccl.so.2 could not be loaded")) << reason;
  EXPECT_NE(reason.find("/nonexistent/numr-test/libnccl.so.2"), std::string::npos) << reason;
  EXPECT_NE(reason.find("NUMR_NCCL"), std::string::npos) << reason;
  // The process's NCCL, unless an earlier test loaded a real one.
  if (!dist::nccl::try_nccl()) {
    std::string why;
    EXPECT_FALSE(dist::nccl_available(&why));
    EXPECT_TRUE(starts_with(why, "[nccl]")) << why;
    const std::string e = error_of<BackendUnavailable>(
        [] { dist::nccl_communicator(Device::cuda(0), 0, 2, dist::UniqueId{}); });
    EXPECT_TRUE(starts_with(e, "[nccl]")) << e;
    EXPECT_TRUE(
        starts_with(error_of<BackendUnavailable>([] { dist::nccl_unique_id(); }), "[nccl]"));
  }
}

TEST(DistributedLoader, ALibraryThatIsNotNcclIsRefusedByName) {
  ScopedEnv env("NUMR_NCCL", "libm.so.6");
  std::string reason;
  EXPECT_EQ(dist::nccl::load_nccl(reason), nullptr);
  EXPECT_EQ(reason,
            "[nccl] libm.so.6 has no entry point ncclGetVersion (numr needs NCCL 2.10 "
            "or newer, for ncclAvg)");
  ScopedEnv mpi("NUMR_MPI", "libm.so.6");
  std::string why;
  EXPECT_FALSE(dist::mpi_available(&why));
  EXPECT_EQ(why, "[mpi] libm.so.6 is not Open MPI (no ompi_mpi_comm_world)");
}

// Where NCCL is installed (with or without a GPU), its loader and ncclGetUniqueId run; a
// communicator on a missing GPU is BackendUnavailable, from NCCL's loader or CUDA's.
TEST(DistributedLoader, NcclWhereInstalled) {
  std::string why;
  if (!dist::nccl_available(&why)) GTEST_SKIP() << why;
  EXPECT_GE(dist::nccl_version(), 21000);
  const dist::UniqueId id = dist::nccl_unique_id();
  EXPECT_NE(id, dist::UniqueId{});
  EXPECT_NE(dist::nccl_unique_id(), id);  // a fresh id each time
  int gpus = 0;
  for (const Device& d : available_devices()) gpus += d.type == DeviceType::Cuda;
  if (gpus == 0) {
    const std::string e =
        error_of<BackendUnavailable>([&] { dist::nccl_communicator(Device::cuda(0), 0, 1, id); });
    EXPECT_TRUE(starts_with(e, "[cuda]")) << e;
  }
  EXPECT_THROW(dist::nccl_communicator(Device::cpu(), 0, 1, id), DeviceMismatch);
  EXPECT_THROW(dist::nccl_communicator(Device::cuda(0), 2, 2, id), InvalidArgument);
}

TEST(DistributedLoader, NcclIsLookedForWherePythonKeepsIt) {
  ScopedEnv env("NUMR_NCCL", nullptr);
  {
    // A user's site-packages with the CUDA 13 wheels' layout.
    const std::filesystem::path home =
        std::filesystem::temp_directory_path() / ("numr-home-" + std::to_string(::getpid()));
    const std::filesystem::path lib =
        home / ".local/lib/python3.11/site-packages/nvidia/cu13/lib/libnccl.so.2";
    std::filesystem::create_directories(lib.parent_path());
    { std::ofstream(lib.string()) << ""; }
    ScopedEnv h("HOME", home.c_str());
    const std::vector<std::string> c = dist::nccl::nccl_candidates();
    EXPECT_NE(std::find(c.begin(), c.end(), lib.string()), c.end());
    std::filesystem::remove_all(home);
  }
  const std::vector<std::string> c = dist::nccl::nccl_candidates();
  ASSERT_FALSE(c.empty());
  EXPECT_EQ(c.front(), "libnccl.so.2");  // the loader's path first
  EXPECT_NE(std::find(c.begin(), c.end(), "/usr/local/cuda/lib64/libnccl.so.2"), c.end());
  EXPECT_NE(
      std::find(c.begin(), c.end(), "/usr/lib/python3/dist-packages/nvidia/nccl/lib/libnccl.so.2"),
      c.end());
}

TEST(DistributedLoader, MissingMpiIsBackendUnavailableWithTheReason) {
  ScopedEnv env("NUMR_MPI", "/nonexistent/numr-test/libmpi.so.40");
  std::string why;
  EXPECT_FALSE(dist::mpi_available(&why));
  EXPECT_TRUE(starts_with(why, "[mpi] /nonexistent/numr-test/libmpi.so.40 could not be loaded"))
      << why;
  const std::string e = error_of<BackendUnavailable>([] { dist::mpi_communicator(); });
  EXPECT_TRUE(starts_with(e, "[mpi] /nonexistent/numr-test/libmpi.so.40")) << e;
  EXPECT_NE(e.find("libopenmpi-dev"), std::string::npos) << e;
}

TEST(DistributedLocal, EveryCollectiveIsTheIdentity) {
  auto comm = dist::local_communicator(Device::cpu());
  EXPECT_EQ(comm->rank(), 0);
  EXPECT_EQ(comm->world_size(), 1);
  EXPECT_EQ(comm->backend(), "local");
  for (DType t :
       {DType::F64, DType::F32, DType::F16, DType::BF16, DType::I64, DType::I32, DType::U8}) {
    const std::vector<double> v = {1, 2, 3, 4, 5, 6};
    for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Prod, ReduceOp::Max, ReduceOp::Min}) {
      Tensor x = Tensor::from_vector(v, {2, 3}).cast(t);
      comm->all_reduce(x, op, /*async=*/true).wait();
      EXPECT_EQ(x.cast(DType::F64).to_vector<double>(), v) << dtype_name(t);
    }
    Tensor x = Tensor::from_vector(v, {2, 3}).cast(t);
    comm->broadcast(x, 0);
    EXPECT_EQ(x.cast(DType::F64).to_vector<double>(), v);
    Tensor gathered = Tensor::empty({1, 3, 2}, t);
    comm->all_gather(x.transpose(0, 1), gathered);  // a view as input
    EXPECT_EQ(gathered.cast(DType::F64).to_vector<double>(),
              (std::vector<double>{1, 4, 2, 5, 3, 6}));
    Tensor scattered = Tensor::empty({2, 3}, t);
    comm->reduce_scatter(x, scattered, ReduceOp::Sum);
    EXPECT_EQ(scattered.cast(DType::F64).to_vector<double>(), v);
  }
  Tensor f = Tensor::from_vector<float>({1.5f, -2.f}, {2});
  comm->all_reduce(f, ReduceOp::Avg);
  EXPECT_EQ(f.to_vector<float>(), (std::vector<float>{1.5f, -2.f}));
  comm->barrier();
}

TEST(DistributedBadInput, ErrorsNameTheOpFirst) {
  auto comm = dist::local_communicator(Device::cpu());
  Tensor x = zeros({4}, DType::F32);
  EXPECT_TRUE(starts_with(error_of<ShapeMismatch>([&] {
                            Tensor out = Tensor::empty({5}, DType::F32);
                            comm->all_gather(x, out);
                          }),
                          "[all_gather] output [5] is not 1 inputs [4] stacked (world size 1)"));
  EXPECT_TRUE(starts_with(error_of<ShapeMismatch>([&] {
                            Tensor out = Tensor::empty({3}, DType::F32);
                            comm->reduce_scatter(x, out);
                          }),
                          "[reduce_scatter]"));
  EXPECT_TRUE(starts_with(error_of<DTypeMismatch>([&] {
                            Tensor out = Tensor::empty({4}, DType::F64);
                            comm->all_gather(x, out);
                          }),
                          "[all_gather] input F32, output F64"));
  EXPECT_TRUE(starts_with(error_of<UnsupportedDType>([&] {
                            Tensor i = zeros({4}, DType::I32);
                            comm->all_reduce(i, ReduceOp::Avg);
                          }),
                          "[all_reduce] avg needs a floating or complex dtype, not I32"));
  EXPECT_TRUE(starts_with(error_of<UnsupportedDType>([&] {
                            Tensor b = zeros({4}, DType::Bool);
                            comm->all_reduce(b, ReduceOp::Sum);
                          }),
                          "[all_reduce] sum of Bool"));
  EXPECT_TRUE(starts_with(error_of<UnsupportedDType>([&] {
                            Tensor z = zeros({4}, DType::Complex64);
                            comm->all_reduce(z, ReduceOp::Max);
                          }),
                          "[all_reduce] max of Complex64"));
  EXPECT_TRUE(starts_with(error_of<NotContiguous>([&] {
                            Tensor m = zeros({3, 4}, DType::F32).transpose(0, 1);
                            comm->all_reduce(m);
                          }),
                          "[all_reduce] the tensor written to must be contiguous"));
  EXPECT_TRUE(starts_with(error_of<InvalidArgument>([&] { comm->broadcast(x, 1); }),
                          "[broadcast] root 1 is not a rank of a world of 1"));
  EXPECT_TRUE(starts_with(error_of<InvalidArgument>([&] { comm->send(x, 0); }),
                          "[send] peer 0 is this rank"));
  EXPECT_TRUE(starts_with(error_of<InvalidArgument>([&] { comm->recv(x, -1); }), "[recv]"));
  EXPECT_TRUE(starts_with(error_of<InvalidArgument>([&] { comm->send_recv(x, 0, x, 0); }),
                          "[send_recv] peer 0 is this rank"));
  EXPECT_TRUE(starts_with(error_of<InvalidArgument>([&] {
                            Tensor u;
                            comm->all_reduce(u);
                          }),
                          "[all_reduce] undefined tensor"));
  // A communicator of another device: no GPU is touched to find the mismatch.
  auto gpu = dist::local_communicator(Device::cuda(0));
  EXPECT_TRUE(starts_with(error_of<DeviceMismatch>([&] { gpu->all_reduce(x); }),
                          "[all_reduce] tensor on cpu, communicator on cuda:0"));
  // The refused calls changed nothing.
  EXPECT_EQ(x.to_vector<float>(), (std::vector<float>(4, 0.f)));
}

TEST(DistributedUniqueId, HexAndFileRoundTrip) {
  dist::UniqueId id{};
  for (size_t i = 0; i < id.size(); ++i) id[i] = uint8_t(i * 37 + 11);
  const std::string hex = dist::to_hex(id);
  EXPECT_EQ(hex.size(), 256u);
  EXPECT_EQ(hex.substr(0, 6), "0b3055");
  EXPECT_EQ(dist::unique_id_from_hex(hex), id);
  EXPECT_THROW(dist::unique_id_from_hex("abc"), InvalidArgument);
  EXPECT_THROW(dist::unique_id_from_hex(std::string(256, 'g')), InvalidArgument);
  const std::string path =
      (std::filesystem::temp_directory_path() / ("numr-id-" + std::to_string(::getpid()))).string();
  dist::write_unique_id(path, id);
  EXPECT_EQ(dist::read_unique_id(path, 1.0), id);
  std::filesystem::remove(path);
  EXPECT_TRUE(starts_with(error_of<BackendError>([&] { dist::read_unique_id(path, 0.05); }),
                          "[read_unique_id] no unique id in"));
}

TEST(DistributedEnv, JoinsTheWorldTheLauncherDescribes) {
  ScopedEnv a("NUMR_WORLD_SIZE", nullptr), b("NUMR_RANK", nullptr),
      c("OMPI_COMM_WORLD_SIZE", nullptr), d("OMPI_COMM_WORLD_RANK", nullptr);
  EXPECT_EQ(dist::init_from_env(Device::cpu())->backend(), "local");
  {
    ScopedEnv w("NUMR_WORLD_SIZE", "2"), r("NUMR_RANK", "1");
    EXPECT_TRUE(starts_with(error_of<InvalidArgument>([] { dist::init_from_env(Device::cpu()); }),
                            "[init_from_env] CPU ranks communicate over MPI"));
    EXPECT_TRUE(starts_with(error_of<InvalidArgument>([] { dist::init_from_env(Device::cuda(0)); }),
                            "[init_from_env] NUMR_WORLD_SIZE=2 needs the NCCL unique id"));
  }
  {
    ScopedEnv w("NUMR_WORLD_SIZE", "2");
    EXPECT_TRUE(starts_with(error_of<InvalidArgument>([] { dist::init_from_env(Device::cpu()); }),
                            "[init_from_env] NUMR_WORLD_SIZE=2 but NUMR_RANK is unset"));
  }
  {
    ScopedEnv w("NUMR_WORLD_SIZE", "2"), m("OMPI_COMM_WORLD_SIZE", "3");
    EXPECT_TRUE(starts_with(error_of<InvalidArgument>([] { dist::init_from_env(Device::cpu()); }),
                            "[init_from_env] world size mismatch: NUMR_WORLD_SIZE=2 but mpirun "
                            "started 3 processes"));
  }
  {
    ScopedEnv w("NUMR_WORLD_SIZE", "two");
    EXPECT_THROW(dist::init_from_env(Device::cpu()), InvalidArgument);
  }
}

// Var-level: y = sum(w * x) gives dy/dw = x; on a world of one the average is that.
TEST(DistributedDataParallel, WorldOfOneKeepsTheGradients) {
  auto comm = dist::local_communicator(Device::cpu());
  Var w(Tensor::from_vector<float>({1, 2, 3}, {3}), true);
  Var v(Tensor::from_vector<float>({4, 5}, {2}), true);
  Var unused(Tensor::from_vector<float>({7}, {1}), true);
  dist::DataParallel dp(*comm, {w, v, unused}, {.bucket_bytes = 8});
  EXPECT_EQ(dp.bucket_count(), 3u);
  for (int step = 0; step < 2; ++step) {
    const Tensor x = Tensor::from_vector<float>({0.5f, -1.f, float(step)}, {3});
    const Var loss = sum(w * Var(x)) + sum(v * v);
    const Gradients g = dp.reduce(backward(loss));
    EXPECT_EQ(g[w].to_vector<float>(), x.to_vector<float>());
    EXPECT_EQ(g[v].to_vector<float>(), (std::vector<float>{8, 10}));
    // A parameter no gradient reached gets zeros, as it would from the other ranks.
    EXPECT_EQ(g[unused].to_vector<float>(), (std::vector<float>{0}));
  }
  EXPECT_TRUE(starts_with(error_of<InvalidArgument>([&] {
                            dist::DataParallel bad(*comm, {w, w});
                          }),
                          "[DataParallel] parameter 1 is listed twice"));
  Var constant(Tensor::from_vector<float>({1}, {1}), false);
  EXPECT_TRUE(
      starts_with(error_of<InvalidArgument>([&] { dist::DataParallel bad(*comm, {constant}); }),
                  "[DataParallel] parameter 0 is not a leaf that requires grad"));
}

}  // namespace
