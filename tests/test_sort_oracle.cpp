// The Sort family against oracles independent of numr's reference: NumPy's stable sort,
// stable argsort and searchsorted of inputs with ties, NaN, ±inf and ±0
// (tests/data/sort_oracle.inc, from scripts/sort_oracle.py), and std::stable_sort for the
// descending order and topk. Every float dtype holds these values exactly; each check runs
// through the backend's kernel and through the composition.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "core/composition.h"
#include "numr/numr.h"

namespace numr {
namespace {

constexpr double kNaN = __builtin_nan("");
constexpr double kInf = __builtin_inf();

struct Oracle {
  std::string name;
  std::vector<double> x, sorted;
  std::vector<int64_t> order;
  std::vector<double> probes;
  std::vector<int64_t> left, right;
};

const std::vector<Oracle>& oracles() {
  static const std::vector<Oracle> o = {
#include "data/sort_oracle.inc"
  };
  return o;
}

// Equal as doubles, NaN to NaN, and zeros with the same sign.
bool same(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return a == b && std::signbit(a) == std::signbit(b);
}

void expect_values(const Tensor& got, const std::vector<double>& want, const std::string& what) {
  const std::vector<double> g = got.cast(DType::F64).to_vector<double>();
  ASSERT_EQ(g.size(), want.size()) << what;
  for (size_t i = 0; i < g.size(); ++i)
    EXPECT_TRUE(same(g[i], want[i]))
        << what << " element " << i << ": " << g[i] << " vs " << want[i];
}

// Runs f once as the backend chooses and once with the family's compositions forced.
template <class F>
void both_paths(F f) {
  f("kernel");
  const ForceComposition force;
  f("composition");
}

TEST(SortOracle, NumpyStableSortArgsortSearchsorted) {
  for (DType t : {DType::F64, DType::F32, DType::F16, DType::BF16})
    for (const Oracle& o : oracles())
      both_paths([&](const char* path) {
        const std::string what = o.name + " " + std::string(dtype_name(t)) + " " + path;
        const Tensor x = Tensor::from_vector(o.x, {int64_t(o.x.size())}).cast(t);
        const SortResult s = sort(x);
        expect_values(s.values, o.sorted, what + " values");
        EXPECT_EQ(s.indices.to_vector<int64_t>(), o.order) << what;
        EXPECT_EQ(argsort(x).to_vector<int64_t>(), o.order) << what;
        const Tensor seq = Tensor::from_vector(o.sorted, {int64_t(o.sorted.size())}).cast(t);
        const Tensor probes = Tensor::from_vector(o.probes, {int64_t(o.probes.size())}).cast(t);
        EXPECT_EQ(searchsorted(seq, probes).to_vector<int64_t>(), o.left) << what << " left";
        EXPECT_EQ(searchsorted(seq, probes, true).to_vector<int64_t>(), o.right)
            << what << " right";
      });
}

// NaN above everything, ±0 equal: a strictly before b.
bool before(double a, double b) { return !std::isnan(a) && (std::isnan(b) || a < b); }

TEST(SortOracle, StdStableSortDescendingAndTopk) {
  for (DType t : {DType::F64, DType::F32, DType::I64, DType::I32})
    for (const Oracle& o : oracles()) {
      std::vector<double> x = o.x;
      if (!is_floating(t))  // integers: the same ties, no specials
        for (double& v : x) v = std::isfinite(v) ? std::round(v) + 0.0 : 9.0;  // no -0.0
      std::vector<int64_t> desc(x.size());
      std::iota(desc.begin(), desc.end(), 0);
      std::stable_sort(desc.begin(), desc.end(),
                       [&](int64_t a, int64_t b) { return before(x[size_t(b)], x[size_t(a)]); });
      std::vector<double> desc_values;
      for (int64_t i : desc) desc_values.push_back(x[size_t(i)]);
      both_paths([&](const char* path) {
        const std::string what = o.name + " " + std::string(dtype_name(t)) + " " + path;
        const Tensor xt = Tensor::from_vector(x, {int64_t(x.size())}).cast(t);
        const SortResult s = sort(xt, 0, true);
        expect_values(s.values, desc_values, what + " descending");
        EXPECT_EQ(s.indices.to_vector<int64_t>(), desc) << what;
        const int64_t k = int64_t(x.size()) / 3;
        const SortResult top = topk(xt, k);
        EXPECT_EQ(top.indices.to_vector<int64_t>(),
                  std::vector<int64_t>(desc.begin(), desc.begin() + k))
            << what << " topk";
      });
    }
}

// Rows long enough for the CPU kernel to sort them in pieces and merge (and shorter ones
// beside them) against std::stable_sort, in both directions.
TEST(SortOracle, LongRows) {
  for (const Shape& shape : {Shape{200003}, Shape{3, 70001}})
    for (DType t : {DType::F32, DType::BF16, DType::I32}) {
      const int64_t n = shape.back(), rows = shape_numel(shape) / n;
      std::vector<double> x(size_t(rows * n));
      uint64_t state = 12345;
      for (double& v : x) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        const int64_t r = int64_t(state >> 33) % 131;
        v = r == 0 && is_floating(t) ? kNaN : r == 1 && is_floating(t) ? -0.0 : double(r - 65);
      }
      const Tensor xt = Tensor::from_vector(x, shape).cast(t);
      for (bool desc : {false, true}) {
        const SortResult got = sort(xt, -1, desc);
        const std::vector<double> gv = got.values.cast(DType::F64).to_vector<double>();
        const std::vector<int64_t> gi = got.indices.to_vector<int64_t>();
        for (int64_t r = 0; r < rows; ++r) {
          std::vector<int64_t> order(static_cast<size_t>(n));
          std::iota(order.begin(), order.end(), 0);
          const double* row = x.data() + r * n;
          std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
            return desc ? before(row[b], row[a]) : before(row[a], row[b]);
          });
          for (int64_t j = 0; j < n; ++j) {
            const size_t at = size_t(r * n + j);
            ASSERT_EQ(gi[at], order[size_t(j)]) << dtype_name(t) << " row " << r << " at " << j;
            ASSERT_TRUE(same(gv[at], row[order[size_t(j)]])) << dtype_name(t) << " at " << j;
          }
        }
      }
    }
}

// Stability is kept across rows and along a dim that is not the last.
TEST(SortOracle, StableAlongDim0) {
  const Tensor x = Tensor::from_vector(std::vector<double>{1, 0, 1, 0, 1, 0, 0, 1}, {4, 2});
  both_paths([&](const char* path) {
    const Tensor i = argsort(x, 0);
    EXPECT_EQ(i.to_vector<int64_t>(), (std::vector<int64_t>{3, 0, 0, 1, 1, 2, 2, 3})) << path;
    const Tensor d = argsort(x, 0, true);
    EXPECT_EQ(d.to_vector<int64_t>(), (std::vector<int64_t>{0, 3, 1, 0, 2, 1, 3, 2})) << path;
  });
}

}  // namespace
}  // namespace numr
