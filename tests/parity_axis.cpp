// Parity of the Scan (cumsum, cumprod) and Softmax (softmax, log_softmax) families
// against the float64 reference: every accepted dtype, every dim (negative too), odd and
// empty shapes, 0-d tensors, views, special values and long rows.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "core/thread_pool.h"
#include "support/harness.h"

namespace numr::test {
namespace {

constexpr Layout kLayouts[] = {Layout::Contiguous, Layout::Transposed, Layout::Strided,
                               Layout::Flipped};

Tensor call_axis(OpId op, const Tensor& x, int64_t dim) {
  switch (op) {
    case OpId::cumsum: return cumsum(x, dim);
    case OpId::cumprod: return cumprod(x, dim);
    case OpId::softmax: return softmax(x, dim);
    case OpId::log_softmax: return log_softmax(x, dim);
    default: return {};
  }
}

// Integer scans wrap: the exact reference taken modulo 2^bits.
void wrap_integers(RefTensor& r, DType t) {
  if (!is_integral(t)) return;
  const int bits = t == DType::I64 ? 64 : t == DType::I32 ? 32 : 8;
  const double m = std::ldexp(1.0, bits);
  const double lo = t == DType::U8 ? 0.0 : -m / 2, hi = t == DType::U8 ? m : m / 2;
  for (double& x : r.v) {
    // Inputs keep products to powers of two: past 2^1023 (inf here) they are 0 mod 2^bits.
    if (std::isinf(x)) x = 0.0;
    if (x >= lo && x < hi) continue;  // in range (and maybe not exact for I64): leave it
    x = std::fmod(x, m);
    if (x < 0) x += m;
    if (t != DType::U8 && x >= m / 2) x -= m;
  }
}

InputSpec spec_for(OpId op, DType t, Layout layout) {
  InputSpec s;
  s.layout = layout;
  if (is_integral(t)) {
    s.lo = t == DType::U8 ? 0 : -20;
    s.hi = t == DType::U8 ? 15 : 20;
  }
  if (op == OpId::cumprod) {
    // Float products stay in range; integer products are powers of two (exact in double).
    s.lo = is_integral(t) ? 1 : 0.6;
    s.hi = is_integral(t) ? 2 : 1.5;
  }
  return s;
}

Tolerance tolerance_of(DType t, int64_t n) { return accumulation_tolerance(t, n); }

std::string check_case(OpId op, DType t, Device dev, const Shape& shape, int64_t dim,
                       const InputSpec& spec, uint64_t seed) {
  const Tensor x = make_input(shape, t, dev, spec, seed);
  const Tensor got = call_axis(op, x, dim);
  RefTensor ref = reference::along_axis(op, to_ref(x), dim);
  wrap_integers(ref, t);
  const int64_t nd = int64_t(shape.size());
  const int64_t n = nd == 0 ? 1 : shape[size_t(dim < 0 ? dim + nd : dim)];
  const std::string m = compare(got, ref, tolerance_of(t, n));
  if (m.empty()) return "";
  return "shape " + shape_str(shape) + " dim " + std::to_string(dim) + " layout " +
         std::to_string(int(spec.layout)) + ": " + m;
}

std::vector<int64_t> dims_of(const Shape& s) {
  const int64_t nd = int64_t(s.size());
  if (nd == 0) return {0, -1};
  std::vector<int64_t> out;
  for (int64_t d = 0; d < nd; ++d) out.push_back(d);
  out.push_back(-1);
  return out;
}

void run_parity(OpId op) {
  // {37, 32}: short rows of whole vectors, whose statistics come W rows at a time, in a
  // ragged last group.
  const std::vector<Shape> shapes = {{},     {1},       {7},       {33, 17},   {5, 7, 11},
                                     {0, 3}, {3, 0, 2}, {2, 1030}, {4, 1, 40}, {37, 32}};
  for_each_case(op, dtypes_of(op), [&](DType t, Device dev) -> std::string {
    uint64_t seed = 1;
    for (const Shape& s : shapes)
      for (Layout layout : kLayouts)
        for (int64_t dim : dims_of(s)) {
          const std::string m = check_case(op, t, dev, s, dim, spec_for(op, t, layout), ++seed);
          if (!m.empty()) return m;
        }
    return "";
  });
}

void run_specials(OpId op) {
  std::vector<DType> floats;
  for (DType t : dtypes_of(op))
    if (is_floating(t)) floats.push_back(t);
  for_each_case(op, floats, [&](DType t, Device dev) -> std::string {
    uint64_t seed = 100;
    for (const Shape& s : std::vector<Shape>{{7}, {33, 17}, {5, 7, 11}, {37, 16}, {9, 64}})
      for (int64_t dim : dims_of(s)) {
        InputSpec spec = spec_for(op, t, Layout::Contiguous);
        spec.specials = true;
        const std::string m = check_case(op, t, dev, s, dim, spec, ++seed);
        if (!m.empty()) return "specials: " + m;
      }
    return "";
  });
}

// Long rows and many rows, so chunking and the thread split are exercised.
void run_large(OpId op) {
  ThreadPool& pool = ThreadPool::instance();
  const int saved = pool.size();
  pool.resize(4);
  std::vector<DType> dtypes;
  for (DType t : {DType::F32, DType::F16, DType::F64, DType::I32})
    if (op_accepts(op, t)) dtypes.push_back(t);
  for_each_case(op, dtypes, [&](DType t, Device dev) -> std::string {
    uint64_t seed = 500;
    struct Case {
      Shape shape;
      int64_t dim;
    };
    for (const Case& c : std::vector<Case>{{{1 << 20}, 0},
                                           {{1024, 1024}, 1},
                                           {{1024, 1024}, 0},
                                           {{4, 512, 512}, 1},
                                           {{3, 5000}, -1},
                                           // Outputs past the non-temporal threshold, a
                                           // ragged last tile, rows off the vector grid;
                                           // columns too long to keep softmax's exp terms.
                                           {{2049, 1100}, 0},
                                           {{40000, 24}, 0},
                                           // Rows with outputs past the threshold: staged
                                           // blocks of short rows, on and off the vector
                                           // grid, and rows too long for the stage.
                                           {{33000, 64}, -1},
                                           {{32000, 67}, 1},
                                           {{220, 10000}, -1}}) {
      InputSpec spec = spec_for(op, t, Layout::Contiguous);
      if (op == OpId::cumprod && !is_integral(t)) {
        spec.lo = 0.999;
        spec.hi = 1.001;
      }
      const std::string m = check_case(op, t, dev, c.shape, c.dim, spec, ++seed);
      if (!m.empty()) return "large: " + m;
    }
    return "";
  });
  pool.resize(saved);
}

#define NUMR_AXIS_TEST(Name, op) \
  TEST(ParityAxis, Name) {       \
    run_parity(OpId::op);        \
    run_specials(OpId::op);      \
    run_large(OpId::op);         \
  }
NUMR_AXIS_TEST(Cumsum, cumsum)
NUMR_AXIS_TEST(Cumprod, cumprod)
NUMR_AXIS_TEST(Softmax, softmax)
NUMR_AXIS_TEST(LogSoftmax, log_softmax)
#undef NUMR_AXIS_TEST

// Softmax over dim 0 keeps column maxima per block of rows and rescales each block at the
// end: columns whose maximum comes late, -inf before any finite value, all -inf, +inf or
// NaN in a later block, one huge value in the last row; n = 300 ends in a partial block.
// The cases repeat every 8 columns from the last, so that with 47 columns and 1 to 3 threads (tiles
// of 16 to 48 columns) each comes in chunks of several vectors, of one, and in the columns past the
// last whole vector.
TEST(ParityAxis, SoftmaxColumnsAcrossBlocks) {
  const int64_t n = 300, cols = 47;
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> v(size_t(n * cols));
  uint64_t state = 12345;
  const auto uniform = [&] {  // in [-50, 50)
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return double(state >> 11) / double(uint64_t(1) << 53) * 100.0 - 50.0;
  };
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < cols; ++j) {
      double x = uniform();
      const int64_t k = (cols - 1 - j) % 8;      // the last columns: cases 0, 1, 2, ...
      if (k == 0 && i < 200) x = -inf;           // -inf in the first blocks only
      if (k == 1) x = -inf;                      // all -inf: NaN
      if (k == 2) x = 0.5 * double(i);           // the maximum rises block by block
      if (k == 3 && i == n - 1) x = 1000.0;      // one huge value in the last row
      if (k == 4 && i == 150) x = inf;           // +inf in a later block: NaN
      if (k == 5 && i == 250) x = std::nan("");  // NaN in a later block
      if (k == 6) x = i < 64 ? 40.0 : -40.0;     // the maximum in the first block only
      v[size_t(i * cols + j)] = x;
    }
  const Tensor x64 = Tensor::from_vector<double>(v, {n, cols});
  const int threads = num_threads();
  for (int t_count : {1, 2, 3}) {
    set_num_threads(t_count);
    SCOPED_TRACE("threads " + std::to_string(t_count));
    for (OpId op : {OpId::softmax, OpId::log_softmax}) {
      std::vector<DType> floats;
      for (DType t : dtypes_of(op))
        if (is_floating(t)) floats.push_back(t);
      for_each_case(op, floats, [&](DType t, Device dev) -> std::string {
        const Tensor x = x64.cast(t).to(dev);
        const Tensor got = call_axis(op, x, 0);
        return compare(got, reference::along_axis(op, to_ref(x), 0), tolerance_of(t, n));
      });
    }
  }
  set_num_threads(threads);
}

TEST(ParityAxis, SoftmaxEdgeValues) {
  // Stable for large inputs; rows sum to one.
  const Tensor big = Tensor::from_vector<float>({1000.f, 1000.f, 999.f}, {3});
  const std::vector<float> p = softmax(big, 0).to_vector<float>();
  EXPECT_NEAR(p[0], p[1], 1e-7);
  EXPECT_NEAR(p[0] + p[1] + p[2], 1.f, 1e-6);
  EXPECT_NEAR(log_softmax(big, 0).to_vector<float>()[2], std::log(p[2]), 1e-5);
  // A 0-d tensor is one element along dim 0 / -1.
  const Tensor scalar = Tensor::from_vector<double>({4.0}, {});
  EXPECT_EQ(softmax(scalar, 0).item<double>(), 1.0);
  EXPECT_EQ(log_softmax(scalar, -1).item<double>(), 0.0);
  EXPECT_EQ(cumsum(scalar, 0).item<double>(), 4.0);
  EXPECT_EQ(cumprod(scalar, -1).shape(), Shape({}));
}

}  // namespace
}  // namespace numr::test
