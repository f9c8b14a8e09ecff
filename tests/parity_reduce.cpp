// Parity of the Reduce family (sum mean max min prod any all argmax argmin var std
// logsumexp) against the float64 reference: every accepted dtype, odd and empty shapes,
// 0-d tensors, dim sets with negative and repeated-free dims, keepdim, views, special
// values, and sizes large enough to split work across threads.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "core/thread_pool.h"
#include "support/harness.h"

namespace numr::test {
namespace {

constexpr Layout kLayouts[] = {Layout::Contiguous, Layout::Transposed, Layout::Strided,
                               Layout::Flipped};

bool is_arg(OpId op) { return op == OpId::argmax || op == OpId::argmin; }
bool needs_nonempty(OpId op) {
  return is_arg(op) || op == OpId::max || op == OpId::min;
}

Tensor call_reduce(OpId op, const Tensor& x, const std::vector<int64_t>& dims, bool keepdim,
                   int64_t correction = 1) {
  switch (op) {
    case OpId::sum: return sum(x, dims, keepdim);
    case OpId::mean: return mean(x, dims, keepdim);
    case OpId::max: return max(x, dims, keepdim);
    case OpId::min: return min(x, dims, keepdim);
    case OpId::prod: return prod(x, dims, keepdim);
    case OpId::any: return any(x, dims, keepdim);
    case OpId::all: return all(x, dims, keepdim);
    case OpId::argmax:
      return dims.empty() ? argmax(x, std::nullopt, keepdim) : argmax(x, dims[0], keepdim);
    case OpId::argmin:
      return dims.empty() ? argmin(x, std::nullopt, keepdim) : argmin(x, dims[0], keepdim);
    case OpId::var: return var(x, dims, correction, keepdim);
    case OpId::std: return numr::std(x, dims, correction, keepdim);
    case OpId::logsumexp: return logsumexp(x, dims, keepdim);
    default: return {};
  }
}

// The dim sets tried on a tensor of ndim dims: all (empty), each dim, -1, pairs, and
// every dim named explicitly. argmax/argmin take at most one dim.
std::vector<std::vector<int64_t>> dim_sets(OpId op, int64_t ndim) {
  std::vector<std::vector<int64_t>> sets = {{}};
  if (ndim == 0) return sets;
  for (int64_t d = 0; d < ndim; ++d) sets.push_back({d});
  sets.push_back({-1});
  if (is_arg(op)) return sets;
  if (ndim >= 3) {
    sets.push_back({0, 2});
    sets.push_back({-1, 1});
  }
  if (ndim >= 2) {
    std::vector<int64_t> every;
    for (int64_t d = ndim - 1; d >= 0; --d) every.push_back(d);
    sets.push_back(every);
  }
  return sets;
}

std::vector<int64_t> normalized(const std::vector<int64_t>& dims, int64_t ndim) {
  std::vector<int64_t> out;
  for (int64_t d : dims) out.push_back(d < 0 ? d + ndim : d);
  std::sort(out.begin(), out.end());
  return out;
}

int64_t reduced_count(const Shape& shape, const std::vector<int64_t>& dims) {
  if (dims.empty()) return shape_numel(shape);
  int64_t n = 1;
  for (int64_t d : dims) n *= shape[size_t(d)];
  return n;
}

// Integer sums and products wrap: the exact reference taken modulo 2^bits.
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
  switch (op) {
    case OpId::prod:
      // Products stay finite in floats; integer products are powers of two (exact in
      // double, so the wrapped reference is exact too).
      s.lo = is_integral(t) ? 1 : 0.6;
      s.hi = is_integral(t) ? 2 : 1.5;
      break;
    case OpId::any:
    case OpId::all:
      s.integers = true;  // zeros must occur
      s.lo = is_integral(t) && !is_signed(t) ? 0 : -1;
      s.hi = 1;
      break;
    default: break;
  }
  return s;
}

Tolerance tolerance_of(OpId op, DType t, int64_t k) {
  switch (op) {
    case OpId::sum:
    case OpId::mean:
    case OpId::prod:
    case OpId::var:
    case OpId::std:
    case OpId::logsumexp: return accumulation_tolerance(t, k);
    default: return {0.0, 0.0, 0.0};  // selections and logic are exact
  }
}

std::string describe(const Shape& s, const std::vector<int64_t>& dims, bool keepdim,
                     Layout layout) {
  std::string d = "shape " + shape_str(s) + " dims " + shape_str(dims) +
                  (keepdim ? " keepdim" : "") + " layout " + std::to_string(int(layout));
  return d;
}

// One case: returns "" or what went wrong.
std::string check_case(OpId op, DType t, Device dev, const Shape& shape,
                       const std::vector<int64_t>& dims, bool keepdim, const InputSpec& spec,
                       uint64_t seed, int64_t correction = 1) {
  const Tensor x = make_input(shape, t, dev, spec, seed);
  const Tensor got = call_reduce(op, x, dims, keepdim, correction);
  const int64_t nd = int64_t(shape.size());
  std::vector<int64_t> rdims = normalized(dims, nd);
  RefTensor ref = reference::reduce(op, to_ref(x), rdims, keepdim, correction);
  if (op == OpId::sum || op == OpId::prod) wrap_integers(ref, t);
  const std::string msg =
      compare(got, ref, tolerance_of(op, t, reduced_count(shape, rdims)));
  return msg.empty() ? "" : describe(shape, dims, keepdim, spec.layout) + ": " + msg;
}

const std::vector<Shape>& reduce_shapes() {
  static const std::vector<Shape> shapes = {{},     {1},       {7},    {33, 17}, {5, 7, 11},
                                            {0, 3}, {3, 0, 2}, {2, 1030}, {4, 1, 40}};
  return shapes;
}

bool has_empty_reduced(const Shape& s, const std::vector<int64_t>& dims) {
  return reduced_count(s, normalized(dims, int64_t(s.size()))) == 0;
}

void run_parity(OpId op) {
  for_each_case(op, dtypes_of(op), [&](DType t, Device dev) -> std::string {
    uint64_t seed = 1;
    for (const Shape& s : reduce_shapes())
      for (Layout layout : kLayouts)
        for (const auto& dims : dim_sets(op, int64_t(s.size())))
          for (bool keepdim : {false, true}) {
            if (needs_nonempty(op) && has_empty_reduced(s, dims)) continue;
            const std::string m =
                check_case(op, t, dev, s, dims, keepdim, spec_for(op, t, layout), ++seed);
            if (!m.empty()) return m;
          }
    return "";
  });
}

// NaN, ±Inf and ±0 among the values.
void run_specials(OpId op) {
  std::vector<DType> floats;
  for (DType t : dtypes_of(op))
    if (is_floating(t)) floats.push_back(t);
  for_each_case(op, floats, [&](DType t, Device dev) -> std::string {
    uint64_t seed = 100;
    for (const Shape& s : std::vector<Shape>{{7}, {33, 17}, {5, 7, 11}, {2, 1030}})
      for (Layout layout : {Layout::Contiguous, Layout::Transposed})
        for (const auto& dims : dim_sets(op, int64_t(s.size()))) {
          InputSpec spec = spec_for(op, t, layout);
          spec.specials = true;
          const std::string m = check_case(op, t, dev, s, dims, false, spec, ++seed);
          if (!m.empty()) return "specials: " + m;
        }
    return "";
  });
}

#define NUMR_REDUCE_TEST(Name, op) \
  TEST(ParityReduce, Name) {       \
    run_parity(OpId::op);          \
    run_specials(OpId::op);        \
  }
NUMR_REDUCE_TEST(Sum, sum)
NUMR_REDUCE_TEST(Mean, mean)
NUMR_REDUCE_TEST(Max, max)
NUMR_REDUCE_TEST(Min, min)
NUMR_REDUCE_TEST(Prod, prod)
NUMR_REDUCE_TEST(Any, any)
NUMR_REDUCE_TEST(All, all)
NUMR_REDUCE_TEST(Argmax, argmax)
NUMR_REDUCE_TEST(Argmin, argmin)
NUMR_REDUCE_TEST(Var, var)
NUMR_REDUCE_TEST(Std, std)
NUMR_REDUCE_TEST(Logsumexp, logsumexp)
#undef NUMR_REDUCE_TEST

TEST(ParityReduce, VarCorrection) {
  for (OpId op : {OpId::var, OpId::std})
    for_each_case(op, float_dtypes(), [&](DType t, Device dev) -> std::string {
      uint64_t seed = 300;
      for (int64_t corr : {0, 1, 2, 7, 8})
        for (const Shape& s : std::vector<Shape>{{1}, {7}, {5, 7, 11}})
          for (const auto& dims : dim_sets(op, int64_t(s.size()))) {
            const std::string m =
                check_case(op, t, dev, s, dims, true, spec_for(op, t, Layout::Strided), ++seed,
                           corr);
            if (!m.empty()) return "correction " + std::to_string(corr) + ": " + m;
          }
      return "";
    });
}

// Values an empty or degenerate reduction must produce.
TEST(ParityReduce, EmptyAndEdgeValues) {
  const double inf = std::numeric_limits<double>::infinity();
  const Tensor e = zeros({0, 3}, DType::F32);
  EXPECT_EQ(sum(e).item<float>(), 0.0f);
  EXPECT_EQ(prod(e).item<float>(), 1.0f);
  EXPECT_TRUE(std::isnan(mean(e).item<float>()));
  EXPECT_TRUE(std::isnan(var(e).item<float>()));
  EXPECT_TRUE(std::isnan(numr::std(e).item<float>()));
  EXPECT_EQ(logsumexp(e).item<float>(), -float(inf));
  EXPECT_EQ(any(e).item<bool>(), false);
  EXPECT_EQ(all(e).item<bool>(), true);
  EXPECT_EQ(sum(e, {0}).to_vector<float>(), std::vector<float>({0, 0, 0}));
  EXPECT_EQ(sum(e, {0}, true).shape(), Shape({1, 3}));
  EXPECT_EQ(max(e, {1}).shape(), Shape({0}));

  const Tensor one = Tensor::from_vector<double>({2.5}, {1});
  EXPECT_TRUE(std::isnan(var(one).item<double>()));
  EXPECT_EQ(var(one, {}, 0).item<double>(), 0.0);

  const Tensor ninf = full({4}, -inf, DType::F32);
  EXPECT_EQ(logsumexp(ninf).item<float>(), -float(inf));
  const Tensor big = Tensor::from_vector<float>({1000.f, 1000.f}, {2});
  EXPECT_NEAR(logsumexp(big).item<float>(), 1000.f + std::log(2.f), 1e-3);

  const Tensor scalar = Tensor::from_vector<float>({3.f}, {});
  EXPECT_EQ(sum(scalar).item<float>(), 3.f);
  EXPECT_EQ(sum(scalar, {0}).item<float>(), 3.f);
  EXPECT_EQ(sum(scalar, {-1}, true).shape(), Shape({}));
  EXPECT_EQ(argmax(scalar).item<int64_t>(), 0);

  // First index of the extreme; NaN counts as the extreme.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const Tensor ties = Tensor::from_vector<double>({1, 5, 5, -2, -2}, {5});
  EXPECT_EQ(argmax(ties).item<int64_t>(), 1);
  EXPECT_EQ(argmin(ties).item<int64_t>(), 3);
  const Tensor with_nan = Tensor::from_vector<double>({1, 7, nan, 9, nan}, {5});
  EXPECT_EQ(argmax(with_nan).item<int64_t>(), 2);
  EXPECT_EQ(argmin(with_nan).item<int64_t>(), 2);
  EXPECT_TRUE(std::isnan(max(with_nan).item<double>()));
  EXPECT_TRUE(std::isnan(min(with_nan).item<double>()));
  EXPECT_EQ(argmax(ties, std::nullopt, true).shape(), Shape({1}));

  // Integer sums wrap in the dtype.
  const Tensor u8 = full({300}, 1.0, DType::U8);
  EXPECT_EQ(sum(u8).item<uint8_t>(), uint8_t(300 % 256));
}

// Sizes that split work across threads, through every path: whole-tensor reductions
// (split into parts), row reductions, column reductions and the strided fallback.
TEST(ParityReduce, LargeMultiThreaded) {
  ThreadPool& pool = ThreadPool::instance();
  const int saved = pool.size();
  pool.resize(4);
  struct Case {
    Shape shape;
    std::vector<int64_t> dims;
    Layout layout;
  };
  const std::vector<Case> cases = {
      {{1 << 20}, {}, Layout::Contiguous},       {{1024, 1024}, {0}, Layout::Contiguous},
      {{1024, 1024}, {1}, Layout::Contiguous},   {{3, 1 << 18}, {1}, Layout::Contiguous},
      {{1 << 18, 4}, {0}, Layout::Contiguous},   {{256, 4096}, {0}, Layout::Transposed},
      {{64, 128, 128}, {0, 2}, Layout::Strided}, {{1 << 20}, {0}, Layout::Flipped},
  };
  const std::vector<DType> dtypes = {DType::F32, DType::F16, DType::BF16, DType::F64,
                                     DType::I32, DType::I64};
  for (OpId op : {OpId::sum, OpId::mean, OpId::max, OpId::argmin, OpId::var,
                  OpId::logsumexp, OpId::prod, OpId::any, OpId::all}) {
    std::vector<DType> accepted;
    for (DType t : dtypes)
      if (op_accepts(op, t)) accepted.push_back(t);
    for_each_case(op, accepted, [&](DType t, Device dev) -> std::string {
      uint64_t seed = 900;
      for (const Case& c : cases) {
        if (is_arg(op) && c.dims.size() > 1) continue;
        InputSpec spec = spec_for(op, t, c.layout);
        if (op == OpId::prod && !is_integral(t)) {
          spec.lo = 0.999;  // a long product that stays in range
          spec.hi = 1.001;
        }
        const std::string m = check_case(op, t, dev, c.shape, c.dims, false, spec, ++seed);
        if (!m.empty()) return m;
      }
      return "";
    });
  }
  pool.resize(saved);
}

}  // namespace
}  // namespace numr::test
