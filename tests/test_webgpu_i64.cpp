// I64 on WebGPU, held as pairs of 32-bit words: copies, casts, fills, sequences, integer
// arithmetic, comparisons, reductions and the index-consuming ops give the CPU's results bit
// for bit, at the values where a 32-bit word pair goes wrong first (carries across the word
// boundary, signs, the int64 limits, integers past 2^53 that no double or float holds).
// Every test skips, naming the reason, where no WebGPU device is usable.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "core/backend.h"
#include "numr/numr.h"
#include "support/webgpu_device.h"

namespace numr {
namespace {

constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t k31 = int64_t(1) << 31, k32 = int64_t(1) << 32, k53 = int64_t(1) << 53;

// Values around every boundary a word pair has: 0, ±1, ±2^31, ±2^32, ±2^53 + 1, the limits.
const std::vector<int64_t>& edge_values() {
  // clang-format off
  static const std::vector<int64_t> v = {
      0, 1, -1, 2, -3, k31 - 1, k31, -k31, -k31 - 1, k32 - 1, k32, k32 + 1, -k32, -k32 + 1,
      k53 + 1, -k53 - 1, kMax, kMin, kMax - 1, kMin + 1, 123456789012345LL, -98765432109876LL,
      0x00000000ffffffffLL, 0x7fffffff00000001LL};
  // clang-format on
  return v;
}

const Device kGpu = Device::webgpu(0);
const Device kCpu = Device::cpu();

// The elements' bits, whatever the dtype (read through the CPU).
std::vector<uint64_t> bits_of(const Tensor& t) {
  const Tensor c = t.to(kCpu).contiguous();
  std::vector<uint64_t> out;
  switch (c.dtype()) {
    case DType::I64:
      for (int64_t v : c.to_vector<int64_t>()) out.push_back(uint64_t(v));
      break;
    case DType::I32:
      for (int32_t v : c.to_vector<int32_t>()) out.push_back(uint32_t(v));
      break;
    case DType::F32:
      for (float v : c.to_vector<float>()) out.push_back(std::bit_cast<uint32_t>(v));
      break;
    case DType::U8:
      for (uint8_t v : c.to_vector<uint8_t>()) out.push_back(v);
      break;
    case DType::F16:
      for (f16 v : c.to_vector<f16>()) out.push_back(v.bits);
      break;
    case DType::BF16:
      for (bf16 v : c.to_vector<bf16>()) out.push_back(v.bits);
      break;
    case DType::Bool:
      for (bool v : c.to_vector<bool>()) out.push_back(v);
      break;
    default: ADD_FAILURE() << "unexpected dtype " << c.dtype();
  }
  return out;
}

// f on CPU tensors and on the same tensors moved to WebGPU: same dtype, shape and bits.
void expect_same(const std::vector<Tensor>& cpu_in,
                 const std::function<Tensor(const std::vector<Tensor>&)>& f,
                 const std::string& what) {
  std::vector<Tensor> gpu_in;
  for (const Tensor& t : cpu_in) gpu_in.push_back(t.to(kGpu));
  const Tensor want = f(cpu_in), got = f(gpu_in);
  ASSERT_EQ(got.device(), kGpu) << what;
  ASSERT_EQ(got.dtype(), want.dtype()) << what;
  ASSERT_EQ(got.shape(), want.shape()) << what;
  const std::vector<uint64_t> w = bits_of(want), g = bits_of(got);
  ASSERT_EQ(w.size(), g.size()) << what;
  for (size_t i = 0; i < w.size(); ++i)
    ASSERT_EQ(g[i], w[i]) << what << " element " << i << " (cpu bits " << w[i] << ")";
}

Tensor edges() {
  const auto& v = edge_values();
  return Tensor::from_vector(v, Shape{int64_t(v.size())});
}

TEST(WebGpuI64, HeldAndCopiedExactly) {
  NUMR_WEBGPU_OR_SKIP();
  EXPECT_TRUE(backend_for(kGpu).supports_dtype(DType::I64));
  const Tensor g = edges().to(kGpu);
  EXPECT_EQ(g.to(kCpu).to_vector<int64_t>(), edge_values());          // bytes both ways
  EXPECT_EQ(g.clone().to(kCpu).to_vector<int64_t>(), edge_values());  // the copy kernel
  const Tensor m = Tensor::from_vector(edge_values(), Shape{4, 6});
  expect_same(
      {m}, [](auto& x) { return x[0].transpose(0, 1).contiguous(); }, "transpose");
  expect_same(
      {m},
      [](auto& x) {
        return x[0].flip({0, 1}).contiguous();
      },
      "flip");
  expect_same(
      {m}, [](auto& x) { return x[0].narrow(1, 1, 3).contiguous(); }, "narrow");
  expect_same(
      {m},
      [](auto& x) {
        return x[0].narrow(0, 2, 1).broadcast_to(Shape{3, 6}).contiguous();
      },
      "broadcast");
  // Into a strided destination.
  expect_same(
      {m},
      [](auto& x) {
        Tensor d = zeros(Shape{6, 4}, DType::I64, x[0].device());
        d.transpose(0, 1).copy_(x[0]);
        return d;
      },
      "copy_ into a transposed view");
}

TEST(WebGpuI64, CastsMatchTheCpu) {
  NUMR_WEBGPU_OR_SKIP();
  for (DType to : {DType::F32, DType::F16, DType::BF16, DType::I32, DType::U8, DType::Bool})
    expect_same(
        {edges()}, [&](auto& x) { return x[0].cast(to); }, "I64 -> " + std::string(dtype_name(to)));
  // Float -> I64: truncation toward zero, saturating, NaN -> 0; floats past 2^24 are
  // integers whose low bits a word pair must place exactly.
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> f = {
      0.f,          -0.f,          0.75f,         -0.75f,        -1.5f,   2.5f,   -2147483648.f,
      2147483648.f, 4294967296.f,  -4294967296.f, 16777217.f,    1e10f,   -1e10f, 1.5e18f,
      -1.5e18f,     9.2233715e18f, 9.223372e18f,  -9.223372e18f, 1e19f,   -1e19f, inf,
      -inf,         std::nanf(""), 3.9e-40f,      -7.3e15f,      6.02e23f};
  expect_same(
      {Tensor::from_vector(f, Shape{int64_t(f.size())})},
      [](auto& x) { return x[0].cast(DType::I64); }, "F32 -> I64");
  const std::vector<int32_t> i = {0, 1, -1, 2147483647, -2147483647 - 1, 65536, -65537};
  expect_same(
      {Tensor::from_vector(i, Shape{int64_t(i.size())})},
      [](auto& x) { return x[0].cast(DType::I64); }, "I32 -> I64");
  const std::vector<uint8_t> u = {0, 1, 127, 128, 255};
  expect_same(
      {Tensor::from_vector(u, Shape{5})}, [](auto& x) { return x[0].cast(DType::I64); },
      "U8 -> I64");
  expect_same(
      {Tensor::from_vector<bool>({true, false, true}, Shape{3})},
      [](auto& x) { return x[0].cast(DType::I64); }, "Bool -> I64");
  // I64 -> F32 rounds to nearest even: ties just above 2^24, and values past 2^52 with bits
  // on both sides of f32's last place.
  const std::vector<int64_t> r = {16777217,
                                  16777219,
                                  -16777217,
                                  (k53 + 1),
                                  k53 + 3,
                                  (k32 << 20) + (int64_t(1) << 27),
                                  (k32 << 20) + (int64_t(3) << 27),
                                  kMax,
                                  kMin,
                                  kMax - (int64_t(1) << 38),
                                  -(int64_t(1) << 62) - 1};
  expect_same(
      {Tensor::from_vector(r, Shape{int64_t(r.size())})},
      [](auto& x) { return x[0].cast(DType::F32); }, "I64 -> F32 rounding");
  // To BF16 the rounding is single: 2^25 + 2^17 + 1 is just above a tie at BF16's 8 bits,
  // but through f32's nearest (2^25 + 2^17, a tie) it would round to even, down.
  const std::vector<int64_t> h = {(int64_t(1) << 25) + (int64_t(1) << 17) + 1,
                                  -(int64_t(1) << 25) - (int64_t(1) << 17) - 1,
                                  (int64_t(1) << 40) + (int64_t(1) << 32) + 1,
                                  (int64_t(1) << 25) + (int64_t(1) << 17),
                                  65519,
                                  65520,
                                  -65521,
                                  2049,
                                  2051,
                                  kMax,
                                  kMin};
  for (DType to : {DType::F16, DType::BF16})
    expect_same(
        {Tensor::from_vector(h, Shape{int64_t(h.size())})}, [&](auto& x) { return x[0].cast(to); },
        "I64 -> " + std::string(dtype_name(to)) + " rounding");
  for (DType from : {DType::F16, DType::BF16})
    expect_same(
        {Tensor::from_vector(f, Shape{int64_t(f.size())}).cast(from)},
        [](auto& x) { return x[0].cast(DType::I64); }, std::string(dtype_name(from)) + " -> I64");
}

TEST(WebGpuI64, FillsAndSequences) {
  NUMR_WEBGPU_OR_SKIP();
  // Values the front end accepts for I64: integers, the largest double below 2^63 included.
  for (double v : {0.0, -1.0, 4294967296.0, -4294967297.0, 9007199254740992.0,
                   4611686018427387904.0, -9223372036854775808.0, 9223372036854774784.0}) {
    const Tensor g = full(Shape{3, 5}, v, DType::I64, kGpu);
    EXPECT_EQ(bits_of(g), bits_of(full(Shape{3, 5}, v, DType::I64, kCpu))) << v;
  }
  const Tensor a = arange(4294967290.0, 4294967310.0, 3.0, DType::I64, kGpu);
  EXPECT_EQ(bits_of(a), bits_of(arange(4294967290.0, 4294967310.0, 3.0, DType::I64, kCpu)));
  const Tensor b = arange(-5.0, 5.0, 1.0, DType::I64, kGpu);
  EXPECT_EQ(bits_of(b), bits_of(arange(-5.0, 5.0, 1.0, DType::I64, kCpu)));
  Tensor z = zeros(Shape{4, 4}, DType::I64, kGpu);
  z.narrow(1, 1, 2).fill_(-4294967296.0);
  Tensor zc = zeros(Shape{4, 4}, DType::I64, kCpu);
  zc.narrow(1, 1, 2).fill_(-4294967296.0);
  EXPECT_EQ(bits_of(z), bits_of(zc));
}

TEST(WebGpuI64, ArithmeticWrapsAsTheCpu) {
  NUMR_WEBGPU_OR_SKIP();
  const int64_t n = int64_t(edge_values().size());
  // Every pair of edge values: a [n, 1] against b [1, n].
  const Tensor a = edges().reshape(Shape{n, 1}), b = edges().reshape(Shape{1, n});
  expect_same(
      {a, b}, [](auto& x) { return x[0] + x[1]; }, "add");
  expect_same(
      {a, b}, [](auto& x) { return x[0] - x[1]; }, "sub");
  expect_same(
      {a, b}, [](auto& x) { return x[0] * x[1]; }, "mul");
  expect_same(
      {a, b}, [](auto& x) { return maximum(x[0], x[1]); }, "maximum");
  expect_same(
      {a, b}, [](auto& x) { return minimum(x[0], x[1]); }, "minimum");
  expect_same(
      {a, b, edges()}, [](auto& x) { return fused_mul_add(x[0], x[1], x[2]); }, "fused_mul_add");
  expect_same(
      {a, b, edges()}, [](auto& x) { return fused_add_mul(x[0], x[1], x[2]); }, "fused_add_mul");
  expect_same(
      {edges()}, [](auto& x) { return -x[0]; }, "neg");
  expect_same(
      {edges()}, [](auto& x) { return abs(x[0]); }, "abs");
  expect_same(
      {edges()}, [](auto& x) { return sign(x[0]); }, "sign");
  expect_same(
      {edges()}, [](auto& x) { return square(x[0]); }, "square");
  for (double s : {1.0, -1.0, 4294967296.0, -4294967295.0, 9007199254740993.0 - 1}) {
    const std::string at = std::to_string(s);
    expect_same(
        {edges()}, [&](auto& x) { return x[0] + s; }, "add_scalar " + at);
    expect_same(
        {edges()}, [&](auto& x) { return x[0] - s; }, "sub_scalar " + at);
    expect_same(
        {edges()}, [&](auto& x) { return x[0] * s; }, "mul_scalar " + at);
    expect_same(
        {edges()}, [&](auto& x) { return s - x[0]; }, "rsub_scalar " + at);
  }
  expect_same(
      {edges()}, [](auto& x) { return clamp(x[0], -4294967296.0, 4294967295.0); }, "clamp");
  expect_same(
      {edges()}, [](auto& x) { return clamp(x[0], std::nullopt, -1.0); }, "clamp hi");
  // In place on a strided view.
  expect_same(
      {Tensor::from_vector(edge_values(), Shape{4, 6})},
      [](auto& x) {
        Tensor c = x[0].clone();
        c.transpose(0, 1).narrow(0, 1, 4).add_(4294967295.0);
        return c;
      },
      "add_ on a view");
}

TEST(WebGpuI64, ComparisonsAreSigned) {
  NUMR_WEBGPU_OR_SKIP();
  const int64_t n = int64_t(edge_values().size());
  const Tensor a = edges().reshape(Shape{n, 1}), b = edges().reshape(Shape{1, n});
  expect_same(
      {a, b}, [](auto& x) { return eq(x[0], x[1]); }, "eq");
  expect_same(
      {a, b}, [](auto& x) { return ne(x[0], x[1]); }, "ne");
  expect_same(
      {a, b}, [](auto& x) { return lt(x[0], x[1]); }, "lt");
  expect_same(
      {a, b}, [](auto& x) { return le(x[0], x[1]); }, "le");
  expect_same(
      {a, b}, [](auto& x) { return gt(x[0], x[1]); }, "gt");
  expect_same(
      {a, b}, [](auto& x) { return ge(x[0], x[1]); }, "ge");
  expect_same(
      {a, b}, [](auto& x) { return logical_and(x[0], x[1]); }, "logical_and");
  expect_same(
      {a, b}, [](auto& x) { return logical_xor(x[0], x[1]); }, "logical_xor");
  expect_same(
      {edges()}, [](auto& x) { return logical_not(x[0]); }, "logical_not");
  expect_same(
      {a, b}, [](auto& x) { return where_cond(lt(x[0], x[1]), x[0], x[1]); }, "where_cond");
}

TEST(WebGpuI64, ReductionsAndIndexOutputs) {
  NUMR_WEBGPU_OR_SKIP();
  const Tensor m = Tensor::from_vector(edge_values(), Shape{4, 6});
  for (const std::vector<int64_t>& dims : {std::vector<int64_t>{}, {0}, {1}}) {
    const std::string at = std::to_string(dims.size() ? dims[0] : -1);
    expect_same(
        {m}, [&](auto& x) { return sum(x[0], dims); }, "sum over " + at);
    expect_same(
        {m}, [&](auto& x) { return prod(x[0], dims); }, "prod over " + at);
    expect_same(
        {m}, [&](auto& x) { return max(x[0], dims); }, "max over " + at);
    expect_same(
        {m}, [&](auto& x) { return min(x[0], dims); }, "min over " + at);
    expect_same(
        {m}, [&](auto& x) { return any(x[0], dims); }, "any over " + at);
    expect_same(
        {m}, [&](auto& x) { return all(x[0], dims); }, "all over " + at);
  }
  for (int64_t d : {0, 1}) {
    expect_same(
        {m}, [&](auto& x) { return argmax(x[0], d); }, "argmax");
    expect_same(
        {m}, [&](auto& x) { return argmin(x[0], d); }, "argmin");
  }
  // A row whose only non-zero word is the high one: any/all must see the whole value.
  const Tensor hi = Tensor::from_vector<int64_t>({0, k32, 0, 0, -k32, k32}, Shape{2, 3});
  expect_same(
      {hi}, [](auto& x) { return any(x[0], {1}); }, "any of 2^32");
  expect_same(
      {hi}, [](auto& x) { return all(x[0], {1}); }, "all of 2^32");
  // Sums that carry across the words, over more elements than one workgroup.
  const Tensor big = full(Shape{3, 1000}, double(k32 - 7), DType::I64, kCpu) +
                     arange(0, 3000, 1, DType::I64).reshape(Shape{3, 1000});
  expect_same(
      {big}, [](auto& x) { return sum(x[0], {1}); }, "sum of 1000");
  expect_same(
      {big}, [](auto& x) { return argmax(x[0] * -1.0, 1); }, "argmax of 1000");
}

TEST(WebGpuI64, IndexConsumers) {
  NUMR_WEBGPU_OR_SKIP();
  const Tensor m = Tensor::from_vector(edge_values(), Shape{4, 6});
  const Tensor idx = Tensor::from_vector<int64_t>({5, 0, 3, 3, 1}, Shape{5});
  expect_same(
      {m, idx}, [](auto& x) { return index_select(x[0], 1, x[1]); }, "index_select");
  const Tensor gi = Tensor::from_vector<int64_t>({3, 0, 2, 1, 1, 0}, Shape{1, 6});
  expect_same(
      {m, gi}, [](auto& x) { return gather(x[0], 0, x[1]); }, "gather");
  expect_same(
      {m}, [](auto& x) { return sort(x[0], 1).values; }, "sort values");
  expect_same(
      {m}, [](auto& x) { return sort(x[0], 1).indices; }, "sort indices");
  expect_same(
      {m}, [](auto& x) { return argsort(x[0], 0, true); }, "argsort");
  expect_same(
      {Tensor::from_vector<float>({0.5f, -2.f, 7.f, 7.f, 1.f}, Shape{5})},
      [](auto& x) { return topk(x[0], 3).indices; }, "topk indices");
}

}  // namespace
}  // namespace numr
