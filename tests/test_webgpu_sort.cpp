// The WebGPU sort kernels (sort, argsort, topk, searchsorted) against the CPU backend's
// kernels, bit for bit in values and indexes: rows within one tile (several rows to a
// workgroup), rows around the tile sizes and rows merged through global memory (up to
// 2^20), many rows, every dtype the backend sorts, both directions, ties everywhere
// (stability), NaN of either sign with several payloads, ±0, ±Inf, subnormals and integer
// extremes; topk with k = 1, k = n and between; searchsorted on both sides; inputs at an
// offset in their buffer. Every test skips, naming the reason, where no WebGPU device is
// usable.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/backend.h"
#include "core/composition.h"
#include "numr/numr.h"
#include "support/same_bits.h"
#include "support/webgpu_device.h"

namespace numr {
namespace {

const Device kGpu = Device::webgpu(0);
constexpr DType kSortable[] = {DType::F32, DType::F16, DType::BF16,
                               DType::I64, DType::I32, DType::U8};

std::string name_of(DType t, int64_t rows, int64_t n) {
  return std::string(dtype_name(t)) + " [" + std::to_string(rows) + ", " + std::to_string(n) + "]";
}

// [rows, n] of dtype t on the CPU: quarters of integers drawn from [-spread, spread] (few
// distinct values when spread is small, so ties are many), with specials given by their
// bits for floats (NaNs of both signs, quiet and signalling, with payloads; ±0; ±Inf;
// subnormals of both signs) and extremes for integers.
Tensor make_rows(int64_t rows, int64_t n, DType t, int spread, uint64_t seed) {
  std::mt19937_64 rng(seed);
  const size_t count = size_t(rows * n);
  std::uniform_int_distribution<int> pick(-spread, spread);
  std::uniform_int_distribution<int> special(0, 19);
  const Shape shape{rows, n};
  // The specials' bits: NaN, -NaN with a payload, a signalling NaN, -0, +0, +Inf, -Inf,
  // the smallest subnormal, a negative subnormal.
  const auto draw = [&](auto tag, std::vector<uint32_t> specials, auto from_double,
                        auto from_bits) {
    using S = decltype(tag);
    std::vector<S> v(count);
    for (S& x : v) {
      const int s = special(rng);
      x = s < int(specials.size()) ? from_bits(specials[size_t(s)])
                                   : from_double(double(pick(rng)) * 0.25);
    }
    return Tensor::from_vector(v, shape);
  };
  switch (t) {
    case DType::F32:
      return draw(
          float{},
          {0x7fc00000u, 0xffc00005u, 0x7f800001u, 0x80000000u, 0u, 0x7f800000u, 0xff800000u, 1u,
           0x80000003u},
          [](double d) { return float(d); },
          [](uint32_t b) {
            float f;
            std::memcpy(&f, &b, 4);
            return f;
          });
    case DType::F16:
      return draw(
          f16{}, {0x7e00u, 0xfe05u, 0x7c01u, 0x8000u, 0u, 0x7c00u, 0xfc00u, 1u, 0x8003u},
          [](double d) { return f16(d); }, [](uint32_t b) { return f16::from_bits(uint16_t(b)); });
    case DType::BF16:
      return draw(
          bf16{}, {0x7fc0u, 0xffc5u, 0x7f81u, 0x8000u, 0u, 0x7f80u, 0xff80u, 1u, 0x8003u},
          [](double d) { return bf16(d); },
          [](uint32_t b) { return bf16::from_bits(uint16_t(b)); });
    case DType::I64: {
      // The limits, and values on either side of the word boundary.
      constexpr int64_t k32 = int64_t(1) << 32;
      std::vector<int64_t> v(count);
      for (int64_t& x : v) {
        const int s = special(rng);
        x = s == 0   ? std::numeric_limits<int64_t>::min()
            : s == 1 ? std::numeric_limits<int64_t>::max()
            : s == 2 ? k32 + pick(rng)
            : s == 3 ? -k32 + pick(rng)
            : s == 4 ? (int64_t(1) << 62) + pick(rng)
                     : int64_t(pick(rng));
      }
      return Tensor::from_vector(v, shape);
    }
    case DType::I32: {
      std::vector<int32_t> v(count);
      for (int32_t& x : v) {
        const int s = special(rng);
        x = s == 0   ? std::numeric_limits<int32_t>::min()
            : s == 1 ? std::numeric_limits<int32_t>::max()
                     : int32_t(pick(rng));
      }
      return Tensor::from_vector(v, shape);
    }
    default: {  // U8
      std::vector<uint8_t> v(count);
      for (uint8_t& x : v) {
        const int s = special(rng);
        x = s == 0 ? 255 : s == 1 ? 0 : uint8_t(std::clamp(pick(rng) + 128, 0, 255));
      }
      return Tensor::from_vector(v, shape);
    }
  }
}

TEST(WebGpuSort, KernelsListedForEverySortableDtype) {
  NUMR_WEBGPU_OR_SKIP();
  const Backend& be = backend_for(kGpu);
  for (DType t : kSortable)
    for (OpId op : {OpId::sort, OpId::argsort, OpId::topk, OpId::searchsorted})
      EXPECT_TRUE(be.supports(op, t)) << op_name(op) << " " << dtype_name(t);
  // unique is built from sort everywhere; Bool is not sortable; F64 not held.
  EXPECT_FALSE(be.supports(OpId::unique, DType::F32));
  EXPECT_FALSE(be.supports(OpId::sort, DType::Bool));
  EXPECT_FALSE(be.supports(OpId::sort, DType::F64));
  // The front ends take the kernels.
  const Tensor x = make_rows(2, 5, DType::F32, 3, 1).to(kGpu);
  test::expect_kernel_runs(OpId::sort, 1, [&] { (void)sort(x, -1); });
  test::expect_kernel_runs(OpId::searchsorted, 1, [&] { (void)searchsorted(x, x); });
}

TEST(WebGpuSort, RowLengthsAroundTheTilesMatchCpu) {
  NUMR_WEBGPU_OR_SKIP();
  uint64_t seed = 1;
  for (DType t : kSortable)
    for (int64_t n : {1, 2, 3, 1000, 1023, 1024, 1025, 2048, 2049, 4097}) {
      const int64_t rows = n >= 2048 ? 2 : 3;
      // Few distinct values (ties everywhere), then many.
      for (int spread : {4, 100})
        test::expect_sorts_match(make_rows(rows, n, t, spread, seed++), kGpu,
                                 {1, std::min<int64_t>(n, 50), n},
                                 name_of(t, rows, n) + " spread " + std::to_string(spread));
    }
}

TEST(WebGpuSort, RowsMergedInGlobalMemoryMatchCpu) {
  NUMR_WEBGPU_OR_SKIP();
  uint64_t seed = 50;
  // 65537 pads to 2^17: merge stages of one to six strides above a tile, so global passes
  // of one, two and three strides.
  for (DType t : kSortable)
    test::expect_sorts_match(make_rows(1, 65537, t, 300, seed++), kGpu, {3000},
                             name_of(t, 1, 65537), false);
  // Several rows in one scratch buffer, each row's own stages.
  test::expect_sorts_match(make_rows(3, 20000, DType::F32, 50, seed++), kGpu, {},
                           name_of(DType::F32, 3, 20000), false);
  test::expect_sorts_match(make_rows(3, 9000, DType::I64, 50, seed++), kGpu, {},
                           name_of(DType::I64, 3, 9000), false);
}

TEST(WebGpuSort, OneLargeRowMatchesCpu) {
  NUMR_WEBGPU_OR_SKIP();
  const int64_t n = int64_t(1) << 20;
  const Tensor x = make_rows(1, n, DType::F32, 100000, 7);
  const Tensor xg = x.to(kGpu);
  const SortResult got = sort(xg, -1), want = sort(x, -1);
  test::expect_same_bits(got.values, want.values, "F32 [1, 2^20] values");
  test::expect_same_bits(got.indices, want.indices, "F32 [1, 2^20] indices");
  const SortResult tg = topk(xg, 50, -1, true), tw = topk(x, 50, -1, true);
  test::expect_same_bits(tg.values, tw.values, "F32 [1, 2^20] topk 50 values");
  test::expect_same_bits(tg.indices, tw.indices, "F32 [1, 2^20] topk 50 indices");
}

TEST(WebGpuSort, ManyRowsMatchCpu) {
  NUMR_WEBGPU_OR_SKIP();
  uint64_t seed = 100;
  for (DType t : kSortable)
    for (const auto& [rows, n] : std::vector<std::pair<int64_t, int64_t>>{
             {20000, 8}, {4099, 3}, {513, 64}, {7000, 1}, {33, 700}})
      test::expect_sorts_match(make_rows(rows, n, t, 3, seed++), kGpu, {1, n}, name_of(t, rows, n));
}

TEST(WebGpuSort, OtherDimsAndOffsetsMatchCpu) {
  NUMR_WEBGPU_OR_SKIP();
  for (DType t : kSortable) {
    // An odd row length puts packed rows at every lane of a word. Sorting along dim 0 moves
    // it last with a strided copy, which must keep NaN payloads too.
    const Tensor x = make_rows(41, 7, t, 20, 11);
    for (int64_t dim : {0, 1})
      for (bool desc : {false, true}) {
        const std::string w = std::string(dtype_name(t)) + " dim " + std::to_string(dim) +
                              (desc ? " descending" : "");
        const SortResult got = sort(x.to(kGpu), dim, desc), want = sort(x, dim, desc);
        test::expect_same_bits(got, want, w);
      }
    // Rows of a contiguous view that starts inside its buffer.
    const Tensor view_g = x.to(kGpu).narrow(0, 3, 37), view = x.narrow(0, 3, 37);
    const SortResult got = sort(view_g, -1), want = sort(view, -1);
    test::expect_same_bits(got, want, std::string(dtype_name(t)) + " offset view");
  }
}

TEST(WebGpuSort, SortedTwiceIsTheSame) {
  NUMR_WEBGPU_OR_SKIP();
  const Tensor x = make_rows(3, 5000, DType::BF16, 20, 5).to(kGpu);
  const SortResult a = sort(x, -1, true), b = sort(x, -1, true);
  test::expect_same_bits(a.values, b.values, "values");
  test::expect_same_bits(a.indices, b.indices, "indices");
}

TEST(WebGpuSearchSorted, BothSidesMatchCpu) {
  NUMR_WEBGPU_OR_SKIP();
  uint64_t seed = 200;
  for (DType t : kSortable)
    for (const auto& [rows, n, m] : std::vector<std::tuple<int64_t, int64_t, int64_t>>{
             {1, 1, 5}, {1, 2, 9}, {7, 1000, 33}, {3, 2049, 400}, {1, 65537, 3000}}) {
      ASSERT_TRUE(backend_for(kGpu).supports(OpId::searchsorted, t));
      // A sequence with runs of equal elements, NaN and ±0 among them; values from the same
      // range.
      const Tensor seq = sort(make_rows(rows, n, t, 60, seed++), -1).values;
      const Tensor v = make_rows(rows, m, t, 70, seed++);
      for (bool right : {false, true}) {
        const std::string w =
            name_of(t, rows, n) + " m " + std::to_string(m) + (right ? " right" : " left");
        test::expect_same_bits(searchsorted(seq.to(kGpu), v.to(kGpu), right),
                               searchsorted(seq, v, right), w);
      }
      // A 1-D sequence with values of any shape, both at an offset in their buffers.
      const Tensor seq1 = seq.narrow(0, rows - 1, 1).reshape(Shape{n});
      const Tensor v2 = v.reshape(Shape{rows * m}).narrow(0, rows * m - m, m).reshape(Shape{1, m});
      test::expect_same_bits(
          searchsorted(
              seq.to(kGpu).narrow(0, rows - 1, 1).reshape(Shape{n}),
              v.to(kGpu).reshape(Shape{rows * m}).narrow(0, rows * m - m, m).reshape(Shape{1, m}),
              true),
          searchsorted(seq1, v2, true), name_of(t, rows, n) + " 1-D sequence");
    }
}

}  // namespace
}  // namespace numr
