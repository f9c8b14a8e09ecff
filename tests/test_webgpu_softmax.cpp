// The WebGPU softmax and log_softmax kernels (backends/webgpu/axis.cpp) in F32, F16 and
// BF16: rows of lengths around the lane sizes (1 to 256 invocations per row, several rows
// to a workgroup below 256) and past the workgroup, long rows, enough rows for the
// dispatch to spread over a 2-D grid, columns (inner > 1), inputs at an offset, and rows
// with NaN, +inf and -inf. Each result comes from the kernel (the front end's count says
// so) into a poisoned output and is compared with the float64 reference of the same
// inputs and with the CPU backend's result, NaN matching NaN and infinities the same
// infinity. Every test skips, naming the reason, where no WebGPU device is usable.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "backends/webgpu/context.h"
#include "core/backend.h"
#include "core/composition.h"
#include "numr/numr.h"
#include "support/harness.h"
#include "support/webgpu_device.h"

namespace numr::test {
namespace {

const Device kGpu = Device::webgpu(0);
constexpr DType kFloats[] = {DType::F32, DType::F16, DType::BF16};
constexpr OpId kOps[] = {OpId::softmax, OpId::log_softmax};
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Fresh outputs are filled with 0x5A bytes, so an element the kernel skips is a large
// wrong value, never a stale right one from the allocator's cache.
struct PoisonScope {
  PoisonScope() { set_poison_allocations(true); }
  ~PoisonScope() { set_poison_allocations(false); }
};

#define REQUIRE_WEBGPU()                                                                \
  std::string why_;                                                                     \
  if (!test::usable_webgpu(&why_)) GTEST_SKIP() << "no usable WebGPU device: " << why_; \
  const PoisonScope poison_

Tensor call(OpId op, const Tensor& x, int64_t dim) {
  return op == OpId::softmax ? softmax(x, dim) : log_softmax(x, dim);
}

using View = std::function<Tensor(const Tensor&)>;
const View kWhole = [](const Tensor& t) { return t; };

// op along dim of view(base) on the GPU (the same view of base's copy), checked against
// the float64 reference and the CPU's result; "" when both agree.
std::string check(OpId op, const Tensor& base, int64_t dim, const View& view,
                  const std::string& what) {
  const Tensor x = view(base);
  const Tensor xg = view(base.to(kGpu));
  const PathCounts before = path_counts(op);
  const Tensor got = call(op, xg, dim).to(Device::cpu());
  const std::string label = std::string(op_name(op)) + " " + std::string(dtype_name(x.dtype())) +
                            " " + what + " shape " + shape_str(x.shape()) + " dim " +
                            std::to_string(dim);
  if (path_counts(op).kernel != before.kernel + 1) return label + ": the kernel did not run";
  const int64_t n = x.shape()[size_t(dim < 0 ? dim + x.dim() : dim)];
  const Tolerance tol = accumulation_tolerance(x.dtype(), n);
  std::string m = compare(got, reference::along_axis(op, to_ref(x), dim), tol);
  if (!m.empty()) return label + " against float64: " + m;
  m = compare(got, to_ref(call(op, x, dim)), tol);
  if (!m.empty()) return label + " against the CPU: " + m;
  return "";
}

Tensor normal_input(const Shape& shape, DType t, uint64_t seed) {
  Generator g(seed);
  return (randn(shape, DType::F32, Device::cpu(), g) * 3.0).cast(t);
}

TEST(WebGpuSoftmax, RowLengthsAroundTheLanesMatchReference) {
  REQUIRE_WEBGPU();
  // 131 rows: past one workgroup's rows for every lane size down to 2.
  const int64_t rows = 131;
  uint64_t seed = 1;
  for (DType t : kFloats)
    for (int64_t n :
         {1, 2, 3, 5, 31, 32, 33, 63, 64, 65, 127, 128, 129, 255, 256, 257, 511, 513, 1000, 4097})
      for (OpId op : kOps) {
        const Tensor base = normal_input({rows + 1, n}, t, ++seed);
        // The rows from the second on: an input at an offset.
        const View rest = [rows](const Tensor& b) { return b.narrow(0, 1, rows); };
        const std::string m = check(op, base, 1, rest, "rows");
        ASSERT_TRUE(m.empty()) << m;
      }
}

// Rows of 8192 elements or more, fewer than 2048 of them, are cut into chunks of whole
// workgroup strides: just below that (one workgroup per row), two chunks, 25 chunks with a
// short last one (odd rows start inside a word of the 16-bit dtypes), and 257 chunks, more
// than one workgroup merges in one step.
TEST(WebGpuSoftmax, LongRowsMatchReference) {
  REQUIRE_WEBGPU();
  const Shape shapes[] = {{3, 8191}, {3, 8192}, {3, 100001}, {1, (int64_t(1) << 20) + 3}};
  uint64_t seed = 100;
  for (DType t : kFloats)
    for (OpId op : kOps)
      for (const Shape& shape : shapes) {
        const std::string m = check(op, normal_input(shape, t, ++seed), -1, kWhole, "long");
        ASSERT_TRUE(m.empty()) << m;
      }
}

// A row per workgroup past the adapter's workgroups per grid dimension: the dispatch
// spreads over x and y. Also many short rows, several to a workgroup, the last one ragged.
TEST(WebGpuSoftmax, ManyRowsMatchReference) {
  REQUIRE_WEBGPU();
  // WebGPU's default limit; an adapter allowing more runs the same rows in one dimension.
  const int64_t per_dim =
      std::min<int64_t>(webgpu::Context::get(0).limits().maxComputeWorkgroupsPerDimension, 65535);
  const int64_t rows = per_dim + 4465;
  uint64_t seed = 200;
  for (OpId op : kOps) {
    std::string m = check(op, normal_input({rows, 130}, DType::F32, ++seed), 1, kWhole, "many");
    ASSERT_TRUE(m.empty()) << m;
    m = check(op, normal_input({200001, 3}, DType::BF16, ++seed), 1, kWhole, "many short");
    ASSERT_TRUE(m.empty()) << m;
  }
}

TEST(WebGpuSoftmax, ColumnsMatchReference) {
  REQUIRE_WEBGPU();
  struct Case {
    Shape shape;
    int64_t dim;
  };
  const Case cases[] = {{{3, 257, 5}, 1}, {{2, 1000, 33}, 1}, {{300, 7}, 0},
                        {{4, 5, 6}, 0},   {{4, 5, 6}, -2},    {{1, 2, 513}, 1}};
  const View transposed = [](const Tensor& b) { return b.transpose(0, b.dim() - 1); };
  uint64_t seed = 300;
  for (DType t : kFloats)
    for (OpId op : kOps)
      for (const Case& c : cases) {
        std::string m = check(op, normal_input(c.shape, t, ++seed), c.dim, kWhole, "columns");
        ASSERT_TRUE(m.empty()) << m;
        // A transposed view: made contiguous by the front end first.
        Shape ts = c.shape;
        std::swap(ts.front(), ts.back());
        m = check(op, normal_input(ts, t, ++seed), c.dim, transposed, "columns of a transpose");
        ASSERT_TRUE(m.empty()) << m;
      }
}

// Rows of special values, each as a row of n elements (the rest finite): every row with a
// NaN or a +inf, and the row of nothing but -inf, is NaN; -inf elements beside finite ones
// give 0 (log_softmax: -inf). Row 0 is all -inf. Run along rows of 5, 300 (a lane tree)
// and 9000 (two chunks, the values spread over both), and along dim 0 of the transpose (a
// column each).
TEST(WebGpuSoftmax, NonFiniteRowsMatchCpu) {
  REQUIRE_WEBGPU();
  const std::vector<std::vector<double>> patterns = {
      {-kInf},                       // one -inf
      {kNaN},                        // one NaN
      {kInf},                        // one +inf
      {kInf, -kInf},                 // +inf and -inf
      {-kInf, -kInf, 1.5},           // -inf beside finite values
      {kNaN, kInf, -kInf},           // NaN, +inf and -inf
      {3e38, -3e38},                 // a difference past f32's range
      {60000.0, -60000.0, 0.0},      // within F16's range, far apart
      {0.0, -0.0},                   // signed zeros
      {88.0, 89.0, 90.0, -1000.0}};  // large values whose exp alone overflows
  for (int64_t n : {5, 300, 9000}) {
    const int64_t rows = int64_t(patterns.size()) + 1;
    std::vector<double> v(size_t(rows * n));
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t j = 0; j < n; ++j) v[size_t(r * n + j)] = 0.25 * double((r * 7 + j * 3) % 11);
    for (size_t r = 0; r < patterns.size(); ++r) {
      const std::vector<double>& p = patterns[r];
      for (size_t k = 0; k < p.size(); ++k)
        v[(r + 1) * size_t(n) + (k * 4099 + r * 37) % size_t(n)] = p[k];  // over the lanes
    }
    for (int64_t j = 0; j < n; ++j) v[size_t(j)] = -kInf;  // row 0: all -inf
    const Tensor x64 = Tensor::from_vector<double>(v, {rows, n});
    for (DType t : kFloats)
      for (OpId op : kOps) {
        std::string m = check(op, x64.cast(t), 1, kWhole, "specials");
        ASSERT_TRUE(m.empty()) << m;
        m = check(op, x64.transpose(0, 1).contiguous().cast(t), 0, kWhole, "special columns");
        ASSERT_TRUE(m.empty()) << m;
      }
  }
}

}  // namespace
}  // namespace numr::test
