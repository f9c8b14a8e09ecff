// The CUDA sort kernels (sort, argsort, topk, searchsorted) against the CPU backend's
// kernels, bit for bit in values and indexes: rows that fit one tile, rows cut into tiles
// and merged (lengths around the tile size, 100000, 2^20), many short rows, every NUMERIC
// dtype, both directions, ties (stability), NaN of either sign and several payloads, ±0 and
// ±Inf, integer extremes; topk with k = 1, k = n and k on either side of the tile size;
// searchsorted on both sides. Without a CUDA device these tests skip; PtxSort assembles
// every sort kernel with ptxas for sm_80 and sm_90 instead.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "backends/cuda/kernel_catalog.h"
#include "core/backend.h"
#include "numr/numr.h"
#include "support/cuda_test.h"
#include "support/ptxas.h"
#include "support/same_bits.h"

namespace numr {
namespace {

constexpr DType kNumeric[] = {DType::F64, DType::F32, DType::F16, DType::BF16,
                              DType::I64, DType::I32, DType::U8};

// [rows, n] of dtype t on the CPU: values drawn from `spread` integers around 0 (few
// distinct values when spread is small, so ties are many), with specials for floats (NaN
// of both signs and two payloads, ±0, ±Inf) and extremes for integers.
Tensor make_rows(int64_t rows, int64_t n, DType t, int spread, uint64_t seed) {
  std::mt19937_64 rng(seed);
  const size_t count = size_t(rows * n);
  std::uniform_int_distribution<int> pick(-spread, spread);
  std::uniform_int_distribution<int> special(0, 15);
  const auto draw_float = [&](auto tag) {
    using F = decltype(tag);
    using U = std::conditional_t<sizeof(F) == 8, uint64_t, uint32_t>;
    constexpr U sign = U(1) << (sizeof(U) * 8 - 1);
    const U qnan = std::bit_cast<U>(std::numeric_limits<F>::quiet_NaN());
    std::vector<F> v(count);
    for (F& x : v) {
      switch (special(rng)) {
        case 0: x = std::bit_cast<F>(qnan); break;
        case 1: x = std::bit_cast<F>(U(qnan | sign | 5)); break;
        case 2: x = F(-0.0); break;
        case 3: x = F(0.0); break;
        case 4:
          x = pick(rng) < 0 ? -std::numeric_limits<F>::infinity()
                            : std::numeric_limits<F>::infinity();
          break;
        default: x = F(pick(rng)) * F(0.25);
      }
    }
    return Tensor::from_vector(v, Shape{rows, n});
  };
  if (t == DType::F64) return draw_float(double{});
  if (t == DType::F32 || t == DType::F16 || t == DType::BF16) return draw_float(float{}).cast(t);
  if (t == DType::I64) {
    std::vector<int64_t> v(count);
    for (int64_t& x : v) {
      const int s = special(rng);
      x = s == 0   ? std::numeric_limits<int64_t>::min()
          : s == 1 ? std::numeric_limits<int64_t>::max()
          : s == 2 ? (int64_t(1) << 62) + pick(rng)
                   : int64_t(pick(rng));
    }
    return Tensor::from_vector(v, Shape{rows, n});
  }
  if (t == DType::I32) {
    std::vector<int32_t> v(count);
    for (int32_t& x : v) {
      const int s = special(rng);
      x = s == 0   ? std::numeric_limits<int32_t>::min()
          : s == 1 ? std::numeric_limits<int32_t>::max()
                   : int32_t(pick(rng));
    }
    return Tensor::from_vector(v, Shape{rows, n});
  }
  std::vector<uint8_t> v(count);
  for (uint8_t& x : v) x = uint8_t(pick(rng) + spread);
  return Tensor::from_vector(v, Shape{rows, n});
}

TEST(CudaSort, RowLengthsAroundTheTileMatchCpu) {
  REQUIRE_CUDA();
  const Device gpu = Device::cuda(0);
  uint64_t seed = 1;
  for (DType t : kNumeric)
    for (int64_t n : {1, 2, 31, 32, 1000, 2048, 2049, 5000, 100000}) {
      const int64_t rows = n >= 5000 ? 2 : 3;
      // Few distinct values (ties everywhere), then many.
      for (int spread : {4, 100})
        test::expect_sorts_match(make_rows(rows, n, t, spread, seed++), gpu,
                                 {1, std::min<int64_t>(n, 50), std::min<int64_t>(n, 3000), n},
                                 std::string(dtype_name(t)) + " [" + std::to_string(rows) + ", " +
                                     std::to_string(n) + "] spread " + std::to_string(spread));
    }
}

TEST(CudaSort, OneLongRowMatchesCpu) {
  REQUIRE_CUDA();
  const Device gpu = Device::cuda(0);
  for (DType t : {DType::F32, DType::F64, DType::BF16, DType::I32})
    test::expect_sorts_match(make_rows(1, int64_t(1) << 20, t, 1000, 7), gpu, {1, 50, 2049},
                             std::string(dtype_name(t)) + " [1, 2^20]");
}

TEST(CudaSort, ManyShortRowsMatchCpu) {
  REQUIRE_CUDA();
  const Device gpu = Device::cuda(0);
  uint64_t seed = 100;
  for (DType t : kNumeric)
    for (const auto& [rows, n] :
         std::vector<std::pair<int64_t, int64_t>>{{100000, 8}, {4099, 3}, {513, 64}, {70000, 1}})
      test::expect_sorts_match(make_rows(rows, n, t, 3, seed++), gpu, {1, n},
                               std::string(dtype_name(t)) + " [" + std::to_string(rows) + ", " +
                                   std::to_string(n) + "]");
}

TEST(CudaSort, OtherDimsAndViewsMatchCpu) {
  REQUIRE_CUDA();
  const Device gpu = Device::cuda(0);
  const Tensor x = make_rows(2049, 6, DType::F32, 50, 11);
  for (int64_t dim : {0, 1})
    for (bool desc : {false, true}) {
      const std::string w = "dim " + std::to_string(dim) + (desc ? " descending" : "");
      const SortResult got = sort(x.to(gpu), dim, desc), want = sort(x, dim, desc);
      test::expect_same_bits(got, want, w);
      const Tensor xt = x.transpose(0, 1);
      const SortResult gt = sort(x.to(gpu).transpose(0, 1), dim, desc), wt = sort(xt, dim, desc);
      test::expect_same_bits(gt.values, wt.values, w + " transposed values");
      test::expect_same_bits(gt.indices, wt.indices, w + " transposed indices");
    }
}

TEST(CudaSort, SortedTwiceIsTheSame) {
  REQUIRE_CUDA();
  const Tensor x = make_rows(3, 70000, DType::F32, 20, 5).to(Device::cuda(0));
  const SortResult a = sort(x, -1, true), b = sort(x, -1, true);
  test::expect_same_bits(a.values, b.values.to(Device::cpu()), "values");
  test::expect_same_bits(a.indices, b.indices.to(Device::cpu()), "indices");
}

TEST(CudaSearchSorted, BothSidesMatchCpu) {
  REQUIRE_CUDA();
  const Device gpu = Device::cuda(0);
  uint64_t seed = 200;
  for (DType t : kNumeric)
    for (const auto& [rows, n, m] : std::vector<std::tuple<int64_t, int64_t, int64_t>>{
             {1, 1, 5}, {1, 2, 9}, {7, 1000, 33}, {3, 2049, 4000}, {1, 1 << 20, 3000}}) {
      ASSERT_TRUE(backend_for(gpu).supports(OpId::searchsorted, t));
      const Tensor seq = sort(make_rows(rows, n, t, 60, seed++), -1).values;
      // Values from the same range: many equal sequence elements, NaN and ±0 among them.
      const Tensor v = make_rows(rows, m, t, 70, seed++);
      for (bool right : {false, true}) {
        const std::string w = std::string(dtype_name(t)) + " seq [" + std::to_string(rows) + ", " +
                              std::to_string(n) + "] m " + std::to_string(m) +
                              (right ? " right" : " left");
        test::expect_same_bits(searchsorted(seq.to(gpu), v.to(gpu), right),
                               searchsorted(seq, v, right), w);
      }
      // A 1-D sequence with values of any shape.
      const Tensor seq1 = seq.narrow(0, 0, 1).reshape(Shape{n});
      const Tensor v2 = v.reshape(Shape{rows * m}).narrow(0, 0, m).reshape(Shape{1, m});
      test::expect_same_bits(searchsorted(seq1.to(gpu), v2.to(gpu)), searchsorted(seq1, v2),
                             std::string(dtype_name(t)) + " 1-D sequence");
    }
}

TEST(PtxSort, CatalogNamesAreUniqueAndAssemble) {
  for (const ptx::Target t : {ptx::Target{80, 8, 0}, ptx::Target{90, 8, 0}}) {
    const std::vector<cuda::GeneratedKernel> ks = cuda::sort_kernels(t);
    std::set<std::string> names;
    for (const auto& k : ks) EXPECT_TRUE(names.insert(k.name).second) << k.name;
    EXPECT_EQ(ks.size(), 7u * 4);  // tile, split, merge, search for each NUMERIC dtype
  }
  NUMR_REQUIRE_PTXAS();
  for (const ptx::Target t : {ptx::Target{80, 8, 0}, ptx::Target{90, 8, 0}})
    for (const cuda::GeneratedKernel& k : cuda::sort_kernels(t)) {
      const test::PtxasResult r = test::assemble(k.ptx, t.sm);
      EXPECT_TRUE(r.ok()) << k.name << " sm_" << t.sm << ": " << r.output;
    }
}

}  // namespace
}  // namespace numr
