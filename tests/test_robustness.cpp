// Bad or extreme input reaching the public API: each case throws a numr error (or works),
// never crashes, overflows a signed integer or lets a std exception out.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <climits>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "core/thread_count.h"
#include "numr/numr.h"

namespace numr {
namespace {

// Runs f, which must throw E with a message starting "[op]".
template <class E>
void expect_error(const std::string& op, const std::function<void()>& f) {
  try {
    f();
    ADD_FAILURE() << "no exception; expected one starting [" << op << "]";
  } catch (const E& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("[" + op + "]", 0), 0u) << "message: " << what;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "wrong exception type: " << e.what();
  }
}

constexpr int64_t kBig = int64_t(1) << 60;

// ---- 1. Long autograd graphs --------------------------------------------------------------

TEST(RobustAutograd, LongChainIsDestroyedWithoutRecursion) {
  const Var x(Tensor::from_vector<float>({2.0f}, {1}), true);
  {
    Var y = x;
    for (int i = 0; i < 200000; ++i) y = y * 1.0;
    EXPECT_FALSE(y.is_leaf());
  }  // the whole chain goes here
  EXPECT_EQ(x.tensor().to_vector<float>(), std::vector<float>{2.0f});
}

TEST(RobustAutograd, ReleasingAChainKeepsSharedPartsAlive) {
  const Var x(Tensor::from_vector<float>({3.0f}, {1}), true);
  Var mid;
  {
    Var y = x;
    for (int i = 0; i < 50000; ++i) {
      y = y * 1.0;
      if (i == 25000) mid = y;
    }
  }
  // mid's own history (25001 nodes) is still whole: backward reaches x through it.
  const Gradients g = backward(sum(mid * 2.0));
  EXPECT_EQ(g[x].to_vector<float>(), std::vector<float>{2.0f});
}

TEST(RobustAutograd, BackwardThroughLongChain) {
  const Var x(Tensor::from_vector<float>({1.5f, -2.0f}, {2}), true);
  Var y = x;
  for (int i = 0; i < 100000; ++i) y = y * 1.0;
  const Gradients g = backward(sum(y));
  EXPECT_EQ(g[x].to_vector<float>(), (std::vector<float>{1.0f, 1.0f}));
}

// ---- 2. Thread counts ----------------------------------------------------------------------

// OpenBLAS's own count, looked up in the process (the tests do not link the BLAS directly).
int blas_threads() {
  using Fn = int (*)();
  const auto fn = reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, "openblas_get_num_threads"));
  return fn ? fn() : -1;
}

// Puts the thread count back after a test changes it.
class RestoreThreads {
 public:
  RestoreThreads() : n_(num_threads()) {}
  ~RestoreThreads() { set_num_threads(n_); }

 private:
  int n_;
};

TEST(RobustThreads, OutOfRangeCountsThrowAndChangeNothing) {
  const RestoreThreads restore;
  set_num_threads(2);
  // A matmul makes the BLAS follow numr's count from here on.
  const Tensor a = ones({64, 64});
  (void)matmul(a, a);
  const int before = num_threads(), blas_before = blas_threads();
  for (int n : {INT_MAX, kMaxNumThreads + 1, 0, -1, INT_MIN}) {
    expect_error<InvalidArgument>("set_num_threads", [&] { set_num_threads(n); });
    EXPECT_EQ(num_threads(), before) << n;
    EXPECT_EQ(blas_threads(), blas_before) << n;
  }
  const Tensor c = matmul(a, a);
  EXPECT_EQ(c.to_vector<float>()[0], 64.0f);
}

TEST(RobustThreads, BlasFollowsTheCount) {
  const RestoreThreads restore;
  const Tensor a = ones({32, 32}, DType::F64);
  (void)matmul(a, a);
  ASSERT_GT(blas_threads(), 0) << "openblas_get_num_threads not found in the process";
  set_num_threads(3);
  EXPECT_EQ(num_threads(), 3);
  EXPECT_EQ(blas_threads(), 3);
  set_num_threads(1);
  EXPECT_EQ(blas_threads(), 1);
  set_num_threads(2);
  EXPECT_EQ(blas_threads(), 2);
  EXPECT_EQ(matmul(a, a).to_vector<double>()[5], 32.0);
}

TEST(RobustThreads, MaximumCountIsAccepted) {
  const RestoreThreads restore;
  set_num_threads(kMaxNumThreads);
  EXPECT_EQ(num_threads(), kMaxNumThreads);
  const Tensor x = arange(0, 100000, 1, DType::I64);
  EXPECT_EQ(sum(x).item<int64_t>(), int64_t(4999950000));
}

TEST(RobustThreads, ParseThreadCount) {
  EXPECT_EQ(parse_thread_count("1"), 1);
  EXPECT_EQ(parse_thread_count("8"), 8);
  EXPECT_EQ(parse_thread_count("1024"), 1024);
  EXPECT_EQ(parse_thread_count("0008"), 8);
  for (const char* bad : {"", "0", "-1", "+4", " 4", "4 ", "4x", "0x10", "1025", "2147483647",
                          "99999999999999999999", "four"})
    EXPECT_EQ(parse_thread_count(bad), 0) << "'" << bad << "'";
  EXPECT_EQ(parse_thread_count(nullptr), 0);
}

// The expected default: the hardware's count, within the bounds.
int hardware_threads() {
  return int(std::min(std::max(1u, std::thread::hardware_concurrency()), unsigned(kMaxNumThreads)));
}

// NUMR_NUM_THREADS is read once, when the pool starts: each case runs in a fresh process.
TEST(RobustThreads, EnvironmentVariable) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        setenv("NUMR_NUM_THREADS", "3", 1);
        std::exit(num_threads() == 3 ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
  for (const char* bad : {"abc", "0", "-2", "2147483647", "5000", " 3", "+3"}) {
    EXPECT_EXIT(
        {
          setenv("NUMR_NUM_THREADS", bad, 1);
          const bool ok =
              num_threads() == hardware_threads() && sum(ones({1000})).item<float>() == 1000.0f;
          std::exit(ok ? 0 : 1);
        },
        ::testing::ExitedWithCode(0), "ignoring NUMR_NUM_THREADS")
        << bad;
  }
}

#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
// The process's virtual memory size in bytes.
uint64_t virtual_size() {
  std::ifstream statm("/proc/self/statm");
  uint64_t pages = 0;
  statm >> pages;
  return pages * uint64_t(sysconf(_SC_PAGESIZE));
}

// With address space too small for the new threads' stacks, thread creation fails: that is
// a numr error, and the pool keeps its threads.
TEST(RobustThreads, ThreadCreationFailureChangesNothing) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        set_num_threads(2);
        const Tensor a = ones({16, 16});
        (void)matmul(a, a);
        rlimit limit{};
        getrlimit(RLIMIT_AS, &limit);
        limit.rlim_cur = rlim_t(virtual_size() + (64u << 20));
        if (setrlimit(RLIMIT_AS, &limit) != 0) std::exit(2);
        bool ok = false;
        try {
          set_num_threads(512);
        } catch (const BackendError& e) {
          ok = std::string(e.what()).rfind("[set_num_threads]", 0) == 0;
        } catch (...) {
        }
        ok = ok && num_threads() == 2 && blas_threads() == 2 &&
             sum(ones({1000})).item<float>() == 1000.0f;
        // _exit, not exit: an OpenBLAS worker that started after the limit retries its
        // buffer's mmap forever, and exit's library teardown would join it.
        _exit(ok ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}
#endif

// ---- 3. from_host -------------------------------------------------------------------------

TEST(RobustTensor, FromHostNullData) {
  expect_error<InvalidArgument>(
      "from_host", [] { Tensor::from_host(nullptr, 3, DType::F32, {3}, Device::cpu()); });
  const Tensor t = Tensor::from_host(nullptr, 0, DType::F32, {0}, Device::cpu());
  EXPECT_EQ(t.numel(), 0);
  EXPECT_EQ(t.shape(), (Shape{0}));
  const Tensor u = Tensor::from_host(nullptr, 0, DType::I64, {2, 0, 3}, Device::cpu());
  EXPECT_EQ(u.shape(), (Shape{2, 0, 3}));
}

// ---- 4. The public constructor -------------------------------------------------------------

TEST(RobustTensor, ConstructorRejectsBadViews) {
  const Tensor base = Tensor::from_vector<float>({0, 1, 2, 3, 4, 5}, {6});
  const std::shared_ptr<Storage> st = base.storage();
  const auto bad = [&](Shape shape, Strides strides, int64_t offset, DType t = DType::F32) {
    expect_error<InvalidArgument>("Tensor", [&] { (void)Tensor(st, shape, strides, offset, t); });
  };
  expect_error<InvalidArgument>("Tensor", [] { (void)Tensor(nullptr, {2}, {1}, 0, DType::F32); });
  bad({2, 3}, {1}, 0);                  // ranks differ
  bad({2}, {1, 1}, 0);                  // ranks differ
  bad({-1}, {1}, 0);                    // negative extent
  bad({2, -3}, {1, 1}, 0);              // negative extent
  bad({2}, {1}, -1);                    // negative offset
  bad({7}, {1}, 0);                     // one past the end
  bad({2, 3}, {3, 1}, 1);               // last element 1 + 3 + 2 = 6
  bad({3}, {2}, 2);                     // last element 6
  bad({3}, {-2}, 3);                    // first element -1
  bad({2}, {-1}, 0);                    // first element -1
  bad({4}, {1}, 0, DType::F64);         // 24 bytes hold 3 F64
  bad({2}, {INT64_MAX}, 0);             // far past the end
  bad({3}, {INT64_MAX / 2 + 1}, 0);     // (3 - 1) * stride overflows
  bad({3, 2}, {INT64_MIN / 2, -1}, 0);  // the lowest element overflows
  bad({2}, {1}, INT64_MAX);             // offset + 1 overflows
  bad({kBig, 4}, {0, 0}, 0);            // more than 2^60 elements
  bad({1}, {1}, 0, DType(200));         // invalid dtype
}

TEST(RobustTensor, ConstructorAcceptsViewsInside) {
  const Tensor base = Tensor::from_vector<float>({0, 1, 2, 3, 4, 5}, {6});
  const std::shared_ptr<Storage> st = base.storage();
  EXPECT_EQ(Tensor(st, {2, 3}, {3, 1}, 0, DType::F32).to_vector<float>(),
            (std::vector<float>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(Tensor(st, {3}, {2}, 1, DType::F32).to_vector<float>(), (std::vector<float>{1, 3, 5}));
  EXPECT_EQ(Tensor(st, {3}, {-2}, 4, DType::F32).to_vector<float>(), (std::vector<float>{4, 2, 0}));
  EXPECT_EQ(Tensor(st, {3, 2}, {1, 3}, 0, DType::F32).to_vector<float>(),
            (std::vector<float>{0, 3, 1, 4, 2, 5}));
  EXPECT_EQ(Tensor(st, {2, 2}, {-3, -1}, 5, DType::F32).to_vector<float>(),
            (std::vector<float>{5, 4, 2, 1}));
  EXPECT_EQ(Tensor(st, {4}, {0}, 5, DType::F32).to_vector<float>(),
            (std::vector<float>{5, 5, 5, 5}));
  EXPECT_EQ(Tensor(st, {}, {}, 5, DType::F32).item<float>(), 5.0f);
  EXPECT_EQ(Tensor(st, {3}, {1}, 0, DType::F64).numel(), 3);
  // An empty view addresses nothing, wherever its offset points.
  EXPECT_EQ(Tensor(st, {0, 5}, {5, 1}, 100, DType::F32).numel(), 0);
  // A broadcast view of 2^60 elements over one element.
  EXPECT_EQ(Tensor(st, {kBig}, {0}, 2, DType::F32).numel(), kBig);
}

TEST(RobustTensor, InternalViewsStillWork) {
  const Tensor x = arange(0, 24, 1, DType::F32).reshape({2, 3, 4});
  const Tensor f = x.flip({0, 2});
  EXPECT_EQ(f.narrow(1, 1, 1).to_vector<float>(), (std::vector<float>{19, 18, 17, 16, 7, 6, 5, 4}));
  const Tensor t = x.transpose(0, 2).flip({1});
  EXPECT_EQ(t.shape(), (Shape{4, 3, 2}));
  EXPECT_EQ(t.contiguous().to_vector<float>()[0], 8.0f);
  EXPECT_EQ(x.narrow(2, 4, 0).numel(), 0);
  EXPECT_EQ(x.narrow(0, 2, 0).numel(), 0);
  // Empty views at the far end of a reversed dim.
  EXPECT_EQ(x.flip({0}).narrow(0, 2, 0).numel(), 0);
  EXPECT_EQ(x.flip({0}).narrow(0, -1, 0).numel(), 0);
  EXPECT_EQ(zeros({3, 0}).flip({0}).narrow(0, 3, 0).numel(), 0);
  EXPECT_EQ(split(x.flip({2}), 4, 2).size(), 1u);
  EXPECT_EQ(x.unsqueeze(3).squeeze().shape(), x.shape());
  const Tensor b = zeros({1}).broadcast_to({kBig});
  EXPECT_EQ(b.numel(), kBig);
  EXPECT_EQ(split(x, 2, 2).size(), 2u);
}

// ---- 5. Signed overflow ------------------------------------------------------------------

TEST(RobustOverflow, VarianceCorrection) {
  const Tensor x = Tensor::from_vector<double>({1, 2, 3, 4}, {4});
  expect_error<InvalidArgument>("var", [&] { var(x, {}, INT64_MIN); });
  expect_error<InvalidArgument>("std", [&] { numr::std(x, {}, INT64_MIN); });
  expect_error<InvalidArgument>("var", [&] { var(x, {0}, -1); });
  const Var v(x, true);
  expect_error<InvalidArgument>("var", [&] { var(v, {}, INT64_MIN); });
  expect_error<InvalidArgument>("std", [&] { numr::std(v, {}, -5); });
  // Deviations squared sum to 5.
  EXPECT_DOUBLE_EQ(var(x, {}, 0).item<double>(), 5.0 / 4.0);
  EXPECT_DOUBLE_EQ(var(x, {}, 1).item<double>(), 5.0 / 3.0);
  EXPECT_DOUBLE_EQ(var(x, {}, 3).item<double>(), 5.0);
}

TEST(RobustOverflow, ChunkCount) {
  const Tensor x = arange(0, 5, 1, DType::I64);
  const std::vector<Tensor> parts = chunk(x, INT64_MAX, 0);
  ASSERT_EQ(parts.size(), 5u);
  for (int64_t i = 0; i < 5; ++i) EXPECT_EQ(parts[size_t(i)].to_vector<int64_t>()[0], i);
  const std::vector<Tensor> three = chunk(x, 2, 0);
  ASSERT_EQ(three.size(), 2u);
  EXPECT_EQ(three[0].numel(), 3);
  EXPECT_EQ(three[1].numel(), 2);
  EXPECT_EQ(chunk(zeros({0}), INT64_MAX, 0).size(), 1u);
  EXPECT_EQ(split(x, INT64_MAX, 0).size(), 1u);
}

TEST(RobustOverflow, CatOfHugeViews) {
  const Tensor b = zeros({1}).broadcast_to({kBig});
  // Eight extents of 2^60 sum past INT64_MAX; two sum to 2^61, more than a tensor may hold.
  expect_error<InvalidArgument>("cat", [&] { cat(std::vector<Tensor>(8, b), 0); });
  expect_error<InvalidArgument>("cat", [&] { cat({b, b}, 0); });
  const Tensor c = zeros({1}).broadcast_to({int64_t(1) << 40, 1});
  expect_error<InvalidArgument>("cat", [&] {
    cat({c, c.broadcast_to({int64_t(1) << 40, 1 << 20})}, 1);
  });
}

TEST(RobustOverflow, ShapeNumel) {
  EXPECT_EQ(shape_numel({}), 1);
  EXPECT_EQ(shape_numel({2, 3, 4}), 24);
  EXPECT_EQ(shape_numel({INT64_MAX}), INT64_MAX);
  EXPECT_EQ(shape_numel({int64_t(1) << 62, int64_t(1) << 62, 0}), 0);
  EXPECT_EQ(shape_numel({int64_t(1) << 32, int64_t(1) << 32, 0}), 0);
  expect_error<InvalidArgument>("shape_numel", [] { shape_numel({-1}); });
  expect_error<InvalidArgument>("shape_numel", [] { shape_numel({0, -1}); });
  expect_error<InvalidArgument>("shape_numel", [] { shape_numel({int64_t(1) << 62, 4}); });
  // 2^32 * 2^32 wraps to 0: still an overflow, not an empty shape.
  expect_error<InvalidArgument>("shape_numel", [] {
    shape_numel({int64_t(1) << 32, int64_t(1) << 32});
  });
}

TEST(RobustOverflow, BroadcastShapes) {
  EXPECT_EQ(broadcast_shapes("add", {3, 1}, {1, 4}), (Shape{3, 4}));
  EXPECT_EQ(broadcast_shapes("add", {0, 1}, {1, 4}), (Shape{0, 4}));
  expect_error<InvalidArgument>("add", [] { broadcast_shapes("add", {-1}, {1}); });
  expect_error<InvalidArgument>("mul", [] { broadcast_shapes("mul", {2}, {-2, 1}); });
  const int64_t e = int64_t(1) << 40;
  expect_error<InvalidArgument>("add", [&] { broadcast_shapes("add", {e, 1}, {1, e}); });
  // Through an op: two valid broadcast views whose broadcast has 2^80 elements.
  const Tensor a = zeros({1, 1}).broadcast_to({e, 1});
  const Tensor b = zeros({1, 1}).broadcast_to({1, e});
  expect_error<InvalidArgument>("add", [&] { add(a, b); });
  expect_error<InvalidArgument>("matmul", [&] {
    matmul(zeros({1, 1, 2, 2}).broadcast_to({e, 1, 2, 2}),
           zeros({1, 1, 2, 2}).broadcast_to({1, e, 2, 2}));
  });
}

// ---- 6. Enum values outside their range ---------------------------------------------------

TEST(RobustEnums, InvalidDTypes) {
  const Tensor x = ones({2});
  expect_error<InvalidArgument>("cast", [&] { cast(x, DType(10)); });
  expect_error<InvalidArgument>("cast", [&] { x.cast(DType(255)); });
  expect_error<InvalidArgument>("zeros", [] { zeros({2}, DType(200)); });
  expect_error<InvalidArgument>("ones", [] { ones({2}, DType(10)); });
  expect_error<InvalidArgument>("full", [] { full({2}, 1.0, DType(100)); });
  expect_error<InvalidArgument>("arange", [] { arange(0, 4, 1, DType(200)); });
  expect_error<InvalidArgument>("eye", [] { eye(3, std::nullopt, DType(200)); });
  expect_error<InvalidArgument>("empty", [] { Tensor::empty({2}, DType(200)); });
  const float data[2] = {1, 2};
  expect_error<InvalidArgument>(
      "from_host", [&] { Tensor::from_host(data, 2, DType(200), {2}, Device::cpu()); });
  Generator gen(1);
  expect_error<InvalidArgument>("rand", [&] { rand({2}, DType(200), Device::cpu(), gen); });
  expect_error<InvalidArgument>("randn", [&] { randn({2}, DType(11), Device::cpu(), gen); });
  expect_error<InvalidArgument>("randint",
                                [&] { randint(0, 4, {2}, DType(200), Device::cpu(), gen); });
  const Var v(x, true);
  expect_error<InvalidArgument>("cast", [&] { cast(v, DType(200)); });
  // The message names the value.
  try {
    zeros({2}, DType(200));
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("invalid dtype 200"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(op_accepts(OpId::add, DType(200)));
  EXPECT_FALSE(op_accepts(OpId::add, DType(10)));
  EXPECT_TRUE(op_accepts(OpId::add, DType::F32));
}

TEST(RobustEnums, InvalidOpIdsAndFamilies) {
  expect_error<InvalidArgument>("op_name", [] { op_name(OpId(5000)); });
  expect_error<InvalidArgument>("op_name", [] { op_name(OpId(all_ops().size())); });
  expect_error<InvalidArgument>("op_info", [] { op_info(OpId(5000)); });
  expect_error<InvalidArgument>("op_info", [] { op_accepts(OpId(5000), DType::F32); });
  expect_error<InvalidArgument>("family_name", [] { family_name(OpFamily(99)); });
  expect_error<InvalidArgument>("family_name",
                                [] { family_name(OpFamily(uint8_t(OpFamily::Conv) + 1)); });
  const OpInfo& last = all_ops().back();
  EXPECT_EQ(op_name(last.id), last.name);
  EXPECT_EQ(family_name(OpFamily::Unary), "Unary");
  EXPECT_EQ(family_name(OpFamily::Epilogue), "Epilogue");
  EXPECT_EQ(family_name(OpFamily::Norm), "Norm");
  EXPECT_EQ(family_name(OpFamily::Misc), "Misc");
  EXPECT_EQ(family_name(OpFamily::Index), "Index");
}

// ---- 7. std exceptions turned into numr errors --------------------------------------------

TEST(RobustHost, ToVectorOfAHugeView) {
  const Tensor b = zeros({1}).broadcast_to({int64_t(1) << 40});
  expect_error<OutOfMemory>("to_vector", [&] { b.to_vector<float>(); });
  const Tensor m = zeros({1}, DType::Bool).broadcast_to({int64_t(1) << 42});
  expect_error<OutOfMemory>("to_vector", [&] { m.to_vector<bool>(); });
  // A small view of the same kind still copies.
  EXPECT_EQ(zeros({1}).broadcast_to({3}).to_vector<float>(), (std::vector<float>{0, 0, 0}));
}

// ---- 11. parse_device ----------------------------------------------------------------------

TEST(RobustDevice, ParseDeviceAccepts) {
  EXPECT_EQ(parse_device("cpu"), Device::cpu());
  EXPECT_EQ(parse_device("cpu:0"), Device::cpu());
  EXPECT_EQ(parse_device("cuda"), Device::cuda(0));
  EXPECT_EQ(parse_device("cuda:0"), Device::cuda(0));
  EXPECT_EQ(parse_device("cuda:1"), Device::cuda(1));
  EXPECT_EQ(parse_device("cuda:12"), Device::cuda(12));
  EXPECT_EQ(parse_device("cuda:2147483647"), Device::cuda(INT_MAX));
  EXPECT_EQ(parse_device("webgpu"), Device::webgpu(0));
  EXPECT_EQ(parse_device("webgpu:3"), Device::webgpu(3));
  for (const Device d : {Device::cpu(), Device::cuda(0), Device::cuda(7), Device::webgpu(2)})
    EXPECT_EQ(parse_device(d.str()), d);
}

TEST(RobustDevice, ParseDeviceRejects) {
  for (const char* bad : {"cuda: 1",
                          "cuda:+1",
                          "cuda:-1",
                          "cuda:",
                          "cuda:1x",
                          "cuda:1 ",
                          "cuda :1",
                          " cuda",
                          "cuda ",
                          "cuda:0x1",
                          "cuda:1.0",
                          "cuda:2147483648",
                          "cuda:99999999999999999999",
                          "cuda:1:2",
                          "webgpu: 0",
                          "webgpu:+0",
                          "cpu:1",
                          "cpu:",
                          "CUDA",
                          "gpu",
                          "",
                          ":1",
                          "cuda\t",
                          "cuda:\xd9\xa3"})
    expect_error<InvalidArgument>("parse_device", [&] { parse_device(bad); });
}

}  // namespace
}  // namespace numr
