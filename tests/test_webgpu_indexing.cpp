// The WebGPU index_gather and index_scatter kernels (and the ops built on them) against the
// CPU backend's kernels, bit for bit: every dtype the backend stores (floats moved as
// random bits, so NaN payloads, subnormals and infinities included), every dim of
// transposed and offset views with strided indexes, every ScatterOp with many duplicate
// indexes (the order of j decides Assign and rounded float sums), NaN for amax and amin,
// integer sums and products that wrap, and an embedding lookup and its gradient of a size
// the compositions could not hold. Every test skips, naming the reason, where no WebGPU
// device is usable.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
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
constexpr DType kStored[] = {DType::F32, DType::F16, DType::BF16, DType::I64,
                             DType::I32, DType::U8,  DType::Bool};

// A CPU tensor of dtype t whose elements are random bits (floats: every class of value,
// NaN payloads included; Bool: 0 or 1).
Tensor random_bits(const Shape& shape, DType t, uint64_t seed) {
  std::mt19937_64 rng(seed);
  const size_t n = size_t(shape_numel(shape));
  const auto fill = [&](auto tag, auto make) {
    using T = decltype(tag);
    std::vector<T> v(n);
    for (T& x : v) x = make(rng());
    return Tensor::from_vector(v, shape);
  };
  switch (t) {
    case DType::F32:
      return fill(float{}, [](uint64_t r) {
        float f;
        const uint32_t b = uint32_t(r);
        std::memcpy(&f, &b, 4);
        return f;
      });
    case DType::F16: return fill(f16{}, [](uint64_t r) { return f16::from_bits(uint16_t(r)); });
    case DType::BF16: return fill(bf16{}, [](uint64_t r) { return bf16::from_bits(uint16_t(r)); });
    case DType::I64: return fill(int64_t{}, [](uint64_t r) { return int64_t(r); });
    case DType::I32: return fill(int32_t{}, [](uint64_t r) { return int32_t(uint32_t(r)); });
    case DType::U8: return fill(uint8_t{}, [](uint64_t r) { return uint8_t(r); });
    default: return fill(uint8_t{}, [](uint64_t r) { return uint8_t(r & 1); }).cast(DType::Bool);
  }
}

// A CPU I64 tensor of indexes drawn from [0, n).
Tensor random_index(const Shape& shape, int64_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int64_t> pick(0, n - 1);
  std::vector<int64_t> v(size_t(shape_numel(shape)));
  for (int64_t& x : v) x = pick(rng);
  return Tensor::from_vector(v, shape);
}

// Runs f on the CPU and on WebGPU (inputs moved there) and compares the results.
template <class F>
void expect_same(const std::string& what, F f, const std::vector<Tensor>& cpu_inputs) {
  std::vector<Tensor> gpu;
  for (const Tensor& t : cpu_inputs) gpu.push_back(t.to(kGpu));
  test::expect_same_bits(f(gpu), f(cpu_inputs), what);
}

TEST(WebGpuIndexing, KernelsAreDeclaredAndRun) {
  NUMR_WEBGPU_OR_SKIP();
  const Backend& be = backend_for(kGpu);
  for (DType t : kStored) EXPECT_TRUE(be.supports(OpId::gather, t)) << dtype_name(t);
  EXPECT_FALSE(be.supports(OpId::gather, DType::F64));
  const Tensor x = random_bits({4, 3}, DType::F32, 1).to(kGpu);
  const Tensor i = random_index({4, 3}, 4, 2).to(kGpu);
  test::expect_kernel_runs(OpId::gather, 2, [&] {
    (void)gather(x, 0, i);
    (void)embedding_lookup(x, i);
  });
  for (DType t : kStored) EXPECT_TRUE(be.supports(OpId::scatter, t)) << dtype_name(t);
  for (DType t : {DType::F32, DType::F16, DType::BF16, DType::I64, DType::I32, DType::U8})
    EXPECT_TRUE(be.supports(OpId::scatter_reduce, t)) << dtype_name(t);
  test::expect_kernel_runs(OpId::scatter, 1, [&] { (void)scatter(x, 0, i, x); });
  test::expect_kernel_runs(OpId::scatter_reduce, 1,
                           [&] { (void)scatter_reduce(x, 0, i, x, ScatterReduce::Sum); });
}

// Gathers along each dim of x plain, transposed and narrowed to an offset, with indexes
// plain, transposed (strided) and smaller than x off the gathered dim.
TEST(WebGpuIndexing, GatherEveryDtypeAndLayoutMatchesCpu) {
  NUMR_WEBGPU_OR_SKIP();
  uint64_t seed = 10;
  for (DType t : kStored) {
    const Tensor base = random_bits({6, 7, 9}, t, ++seed);
    const std::vector<std::pair<std::string, Tensor>> xs = {
        {"plain", base},
        {"transposed", base.transpose(0, 2)},
        {"offset", base.narrow(1, 2, 4).narrow(2, 1, 7)}};
    for (const auto& [xn, x] : xs)
      for (int64_t d = 0; d < 3; ++d) {
        Shape is = x.shape();
        is[size_t(d)] = 11;  // more indexes than x's extent: repeats
        const Tensor plain = random_index(is, x.shape()[size_t(d)], ++seed);
        Shape ts = is;
        std::swap(ts[0], ts[2]);
        // Transposed on each device into `is`, so that the index is strided there.
        const Tensor strided = random_index(ts, x.shape()[size_t(d)], ++seed);
        Shape small = is;
        for (int64_t k = 0; k < 3; ++k)
          if (k != d) small[size_t(k)] = std::max<int64_t>(1, x.shape()[size_t(k)] - 1);
        const Tensor fewer = random_index(small, x.shape()[size_t(d)], ++seed);
        const auto view = [&](const Tensor& b) {  // x's view of base, on b's device
          return xn == "plain"        ? b
                 : xn == "transposed" ? b.transpose(0, 2)
                                      : b.narrow(1, 2, 4).narrow(2, 1, 7);
        };
        const Tensor xg = view(base.to(kGpu));
        for (int k = 0; k < 3; ++k) {
          const Tensor& ib = k == 0 ? plain : k == 1 ? strided : fewer;
          const Tensor ic = k == 1 ? ib.transpose(0, 2) : ib;
          const Tensor ig = k == 1 ? ib.to(kGpu).transpose(0, 2) : ib.to(kGpu);
          const std::string what = std::string(dtype_name(t)) + " " + xn + " dim " +
                                   std::to_string(d) + " index " + shape_str(ic.shape()) +
                                   (k == 1 ? " strided" : "");
          test::expect_same_bits(gather(xg, d, ig), gather(x, d, ic), what);
        }
      }
  }
}

// A CPU tensor of dtype t for reductions: floats are quarters in [-2, 2] (sums of a few
// are exact, of many are rounded, so order shows) with NaN of either sign among them when
// asked; integers are random bits, so sums and products wrap.
Tensor reduce_values(const Shape& shape, DType t, bool nan, uint64_t seed) {
  if (t != DType::F32 && t != DType::F16 && t != DType::BF16) return random_bits(shape, t, seed);
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> pick(-8, 8), special(0, 9);
  std::vector<float> v(size_t(shape_numel(shape)));
  for (float& x : v) {
    const int k = special(rng);
    x = nan && k == 0   ? std::numeric_limits<float>::quiet_NaN()
        : nan && k == 1 ? -std::numeric_limits<float>::quiet_NaN()
                        : float(pick(rng)) * 0.25f;
  }
  return Tensor::from_vector(v, shape).cast(t);
}

const char* reduce_name(ScatterReduce r) {
  switch (r) {
    case ScatterReduce::Sum: return "sum";
    case ScatterReduce::Prod: return "prod";
    case ScatterReduce::Mean: return "mean";
    case ScatterReduce::Amax: return "amax";
    default: return "amin";
  }
}

// scatter and scatter_reduce (every reduction, with and without self) along each dim of x
// plain, transposed and narrowed to an offset, with 11 indexes into an extent of at most 9
// (duplicates in every column), strided indexes and sources, and boxes smaller than x.
TEST(WebGpuIndexing, ScatterEveryOpDtypeAndLayoutMatchesCpu) {
  NUMR_WEBGPU_OR_SKIP();
  uint64_t seed = 1000;
  for (DType t : kStored) {
    const bool numeric = t != DType::Bool;
    const bool fl = t == DType::F32 || t == DType::F16 || t == DType::BF16;
    for (const char* xn : {"plain", "transposed", "offset"})
      for (int64_t d = 0; d < 3; ++d) {
        const auto view = [&](const Tensor& b) {
          const std::string v = xn;
          return v == "plain"        ? b
                 : v == "transposed" ? b.transpose(0, 2)
                                     : b.narrow(1, 2, 4).narrow(2, 1, 7);
        };
        const Tensor base_bits = random_bits({6, 7, 9}, t, ++seed);
        const Tensor base_red = reduce_values({6, 7, 9}, t, true, ++seed);
        const Shape xs = view(base_bits).shape();
        const int64_t n = xs[size_t(d)];
        Shape is = xs;
        is[size_t(d)] = 11;
        Shape small = is;
        for (int64_t k = 0; k < 3; ++k)
          if (k != d) small[size_t(k)] = std::max<int64_t>(1, xs[size_t(k)] - 1);
        Shape ts = is;
        std::swap(ts[0], ts[2]);
        for (int k = 0; k < 3; ++k) {
          // Index and src: plain, both transposed on each device (strided), or a box.
          const Shape& shape = k == 0 ? is : k == 1 ? ts : small;
          const Tensor ib = random_index(shape, n, ++seed);
          const auto tv = [&](const Tensor& a) { return k == 1 ? a.transpose(0, 2) : a; };
          const std::string what = std::string(dtype_name(t)) + " " + xn + " dim " +
                                   std::to_string(d) + " index " + shape_str(tv(ib).shape()) +
                                   (k == 1 ? " strided" : "");
          {
            const Tensor src = random_bits(shape, t, ++seed);
            test::expect_same_bits(
                scatter(view(base_bits.to(kGpu)), d, tv(ib.to(kGpu)), tv(src.to(kGpu))),
                scatter(view(base_bits), d, tv(ib), tv(src)), what + " assign");
          }
          if (!numeric) continue;
          for (ScatterReduce r : {ScatterReduce::Sum, ScatterReduce::Prod, ScatterReduce::Mean,
                                  ScatterReduce::Amax, ScatterReduce::Amin}) {
            if (r == ScatterReduce::Mean && !fl) continue;
            // NaN where it is sticky; sums and products of NaN leave its payload to the FPU.
            const bool nan = r == ScatterReduce::Amax || r == ScatterReduce::Amin;
            const Tensor src = reduce_values(shape, t, nan, ++seed);
            const Tensor x = nan ? base_red : reduce_values({6, 7, 9}, t, false, ++seed);
            for (bool self : {true, false})
              test::expect_same_bits(
                  scatter_reduce(view(x.to(kGpu)), d, tv(ib.to(kGpu)), tv(src.to(kGpu)), r, self),
                  scatter_reduce(view(x), d, tv(ib), tv(src), r, self),
                  what + " " + reduce_name(r) + (self ? "" : " without self"));
          }
        }
      }
  }
}

// Long columns onto few targets: every j of a column lands on one of 3 elements, so Assign
// keeps the last j and F32 sums of values of mixed magnitude round in j's order.
TEST(WebGpuIndexing, ScatterDuplicatesFollowTheOrderOfJ) {
  NUMR_WEBGPU_OR_SKIP();
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<float> mag(-20.0f, 20.0f);
  std::vector<float> v(2000 * 4);
  for (float& x : v) x = std::ldexp(mag(rng), int(mag(rng)));
  const Tensor src = Tensor::from_vector(v, {2000, 4});
  const Tensor idx = random_index({2000, 4}, 3, 6);
  for (DType t : {DType::F32, DType::F16, DType::BF16}) {
    const Tensor s = src.cast(t), x = zeros({3, 4}, t);
    test::expect_same_bits(scatter(x.to(kGpu), 0, idx.to(kGpu), s.to(kGpu)), scatter(x, 0, idx, s),
                           std::string(dtype_name(t)) + " assign");
    test::expect_same_bits(
        scatter_reduce(x.to(kGpu), 0, idx.to(kGpu), s.to(kGpu), ScatterReduce::Sum),
        scatter_reduce(x, 0, idx, s, ScatterReduce::Sum), std::string(dtype_name(t)) + " sum");
  }
  // The same call twice gives the same bits.
  const Tensor xg = zeros({3, 4}, DType::F32).to(kGpu);
  test::expect_same_bits(scatter_reduce(xg, 0, idx.to(kGpu), src.to(kGpu), ScatterReduce::Sum),
                         scatter_reduce(xg, 0, idx.to(kGpu), src.to(kGpu), ScatterReduce::Sum),
                         "repeat");
}

// index_put, put and bincount reach index_scatter through scatter and scatter_reduce.
TEST(WebGpuIndexing, OpsOnScatterMatchCpu) {
  NUMR_WEBGPU_OR_SKIP();
  uint64_t seed = 3000;
  for (DType t : kStored) {
    const std::string n(dtype_name(t));
    const Tensor x = random_bits({5, 6}, t, ++seed);
    const Tensor vals = reduce_values({8}, t, false, ++seed);
    for (bool acc : {false, true}) {
      if (acc && t == DType::Bool) continue;
      expect_same(n + " index_put" + (acc ? " accumulate" : ""),
                  [&](const std::vector<Tensor>& a) {
                    return index_put(a[0], {a[1], a[2]}, a[3], acc);
                  },
                  {x, random_index({8}, 5, ++seed), random_index({8}, 6, ++seed), vals});
      expect_same(n + " put" + (acc ? " accumulate" : ""),
                  [&](const std::vector<Tensor>& a) { return put(a[0], a[1], a[2], acc); },
                  {x, random_index({8}, 30, ++seed), vals});
    }
  }
  expect_same("bincount", [](const std::vector<Tensor>& a) { return bincount(a[0], a[1]); },
              {random_index({300}, 17, ++seed), reduce_values({300}, DType::F32, false, ++seed)});
}

// index_select, take, embedding_lookup, gather_nd and masked_select reach index_gather with
// broadcast (stride 0) and flattened indexes.
TEST(WebGpuIndexing, OpsOnGatherMatchCpu) {
  NUMR_WEBGPU_OR_SKIP();
  uint64_t seed = 100;
  for (DType t : kStored) {
    const std::string n(dtype_name(t));
    const Tensor x = random_bits({5, 6, 4}, t, ++seed);
    const Tensor i1 = random_index({9}, 6, ++seed);
    expect_same(
        n + " index_select",
        [](const std::vector<Tensor>& a) { return index_select(a[0].transpose(0, 1), 0, a[1]); },
        {x, i1});
    expect_same(n + " take", [](const std::vector<Tensor>& a) { return take(a[0], a[1]); },
                {x, random_index({3, 5}, 120, ++seed)});
    expect_same(n + " embedding_lookup",
                [](const std::vector<Tensor>& a) { return embedding_lookup(a[0], a[1]); },
                {x.reshape({30, 4}), random_index({2, 7}, 30, ++seed)});
    expect_same(n + " gather_nd",
                [](const std::vector<Tensor>& a) { return gather_nd(a[0], a[1]); },
                {x, random_index({7, 2}, 5, ++seed)});
    expect_same(n + " masked_select",
                [](const std::vector<Tensor>& a) { return masked_select(a[0], a[1]); },
                {x, random_bits({5, 6, 4}, DType::Bool, ++seed)});
  }
}

// 4096 tokens of a vocabulary of 86 into 128 dims: the composition's one-hot product
// (tokens x vocab x dim) is larger than a storage binding.
TEST(WebGpuIndexing, EmbeddingSizedLookupMatchesCpu) {
  NUMR_WEBGPU_OR_SKIP();
  const Tensor w = random_bits({86, 128}, DType::F32, 7);
  const Tensor tok = random_index({8, 512}, 86, 8);
  test::expect_same_bits(embedding_lookup(w.to(kGpu), tok.to(kGpu)), embedding_lookup(w, tok),
                         "embedding [8, 512] of [86, 128]");
  // The gradient: index_put with accumulate of [4096, 128] rows into [86, 128].
  const Tensor wr = reduce_values({86, 128}, DType::F32, false, 9);
  const Tensor g = reduce_values({8, 512, 128}, DType::F32, false, 10);
  const auto grad = [&](Device dev) {
    const Var wv(wr.to(dev), true);
    const Var loss = (embedding_lookup(wv, tok.to(dev)) * Var(g.to(dev))).sum();
    return backward(loss)[wv];
  };
  test::expect_same_bits(grad(kGpu), grad(Device::cpu()), "embedding gradient");
}

}  // namespace
}  // namespace numr
