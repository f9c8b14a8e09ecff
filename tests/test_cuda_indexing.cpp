// The CUDA indexing kernels against the CPU backend's results, bit for bit (both walk each
// column's updates in the same order, so even float sums agree exactly), on views, repeats,
// NaN through Amax, and F16/BF16 reductions; IndexOutOfBounds on CUDA with the input left
// untouched; repeated runs giving the same bits. Without a CUDA device these tests skip;
// PtxIndexing assembles every index kernel with ptxas for sm_80 and sm_90 instead.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "backends/cuda/kernel_catalog.h"
#include "numr/numr.h"
#include "support/cuda_test.h"
#include "support/harness.h"
#include "support/ptxas.h"

namespace numr {
namespace {

#define REQUIRE_CUDA_DEVICE()                                     \
  std::string no_cuda_reason_;                                    \
  if (!test::first_cuda_device(&no_cuda_reason_))                 \
    GTEST_SKIP() << "no usable CUDA device: " << no_cuda_reason_; \
  const Device gpu = Device::cuda(0)

// Equal shapes, dtypes and values, NaN matching NaN (compared as F64, exact for every dtype
// but I64 beyond 2^53, which these tests do not reach).
void expect_same(const Tensor& got, const Tensor& want, const std::string& what) {
  ASSERT_EQ(got.shape(), want.shape()) << what;
  ASSERT_EQ(got.dtype(), want.dtype()) << what;
  const std::vector<double> g =
      got.to(Device::cpu()).cast(DType::F64).contiguous().to_vector<double>();
  const std::vector<double> w = want.cast(DType::F64).contiguous().to_vector<double>();
  for (size_t k = 0; k < g.size(); ++k)
    if (!(g[k] == w[k] || (std::isnan(g[k]) && std::isnan(w[k]))))
      FAIL() << what << ": element " << k << " is " << g[k] << ", CPU gives " << w[k];
}

Tensor values(const Shape& s, DType t, uint64_t seed, bool specials = false) {
  test::InputSpec spec;
  spec.specials = specials;
  if (t == DType::U8) spec.lo = 0;
  return test::make_input(s, t, Device::cpu(), spec, seed);
}
Tensor indexes(const Shape& s, int64_t n, uint64_t seed) {
  test::InputSpec spec;
  spec.lo = 0;
  spec.hi = double(n - 1);
  spec.integers = true;
  return test::make_input(s, DType::I64, Device::cpu(), spec, seed);
}

TEST(CudaIndexing, GatherFamilyMatchesCpu) {
  REQUIRE_CUDA_DEVICE();
  for (DType t : kAllDTypes) {
    const std::string what = std::string(dtype_name(t));
    const Tensor x = values({37, 45}, t, 1), idx = indexes({50, 45}, 37, 2);
    expect_same(gather(x.to(gpu), 0, idx.to(gpu)), gather(x, 0, idx), what + " gather");
    const Tensor xt = x.transpose(0, 1);  // a strided view
    const Tensor i1 = indexes({45, 60}, 37, 3);
    expect_same(gather(xt.to(gpu), 1, i1.to(gpu)), gather(xt, 1, i1), what + " gather view");
    const Tensor k = indexes({70}, 37, 4);
    expect_same(index_select(x.to(gpu), 0, k.to(gpu)), index_select(x, 0, k),
                what + " index_select");
    expect_same(embedding_lookup(x.to(gpu), k.to(gpu)), embedding_lookup(x, k),
                what + " embedding_lookup");
    const Tensor f = indexes({9, 8}, 37 * 45, 5);
    expect_same(take(x.to(gpu), f.to(gpu)), take(x, f), what + " take");
    const Tensor mask = test::make_input({37, 45}, DType::Bool, Device::cpu(), {}, 6);
    expect_same(masked_select(x.to(gpu), mask.to(gpu)), masked_select(x, mask),
                what + " masked_select");
    expect_same(nonzero(x.to(gpu)), nonzero(x), what + " nonzero");
  }
}

TEST(CudaIndexing, ScatterFamilyMatchesCpu) {
  REQUIRE_CUDA_DEVICE();
  for (DType t : kAllDTypes) {
    const std::string what = std::string(dtype_name(t));
    const Tensor x = values({20, 33}, t, 10), src = values({300, 33}, t, 11, is_floating(t));
    const Tensor idx = indexes({300, 33}, 20, 12);
    expect_same(scatter(x.to(gpu), 0, idx.to(gpu), src.to(gpu)), scatter(x, 0, idx, src),
                what + " scatter");
    // A box of x off the indexed dim, on a flipped view.
    const Tensor xf = x.flip({1});
    const Tensor ib = indexes({16, 17}, 33, 13);
    const Tensor sb = values({16, 20}, t, 14);
    expect_same(scatter(xf.to(gpu), 1, ib.to(gpu), sb.to(gpu)), scatter(xf, 1, ib, sb),
                what + " scatter box");
    if (t == DType::Bool) continue;
    for (ScatterReduce r : {ScatterReduce::Sum, ScatterReduce::Prod, ScatterReduce::Mean,
                            ScatterReduce::Amax, ScatterReduce::Amin})
      for (bool self : {true, false})
        expect_same(scatter_reduce(x.to(gpu), 0, idx.to(gpu), src.to(gpu), r, self),
                    scatter_reduce(x, 0, idx, src, r, self),
                    what + " scatter_reduce " + std::to_string(int(r)));
    const Tensor p = indexes({50}, 20 * 33, 15);
    const Tensor pv = values({50}, t, 16);
    expect_same(put(x.to(gpu), p.to(gpu), pv.to(gpu), true), put(x, p, pv, true), what + " put");
    const Tensor rows = indexes({64}, 20, 17);
    const Tensor rv = values({64, 33}, t, 18);
    expect_same(index_put(x.to(gpu), {rows.to(gpu)}, rv.to(gpu), true),
                index_put(x, {rows}, rv, true), what + " index_put");
    const Tensor w = values({200}, t, 19);
    const Tensor bins = indexes({200}, 30, 20);
    expect_same(bincount(bins.to(gpu), w.to(gpu), 5), bincount(bins, w, 5), what + " bincount");
  }
}

TEST(CudaIndexing, SameBitsOnEveryRun) {
  REQUIRE_CUDA_DEVICE();
  const Tensor x = values({64, 300}, DType::F32, 30).to(gpu);
  const Tensor idx = indexes({20000, 300}, 64, 31).to(gpu);
  const Tensor src = values({20000, 300}, DType::F32, 32).to(gpu);
  const std::vector<float> first =
      scatter_reduce(x, 0, idx, src, ScatterReduce::Sum).to(Device::cpu()).to_vector<float>();
  for (int run = 0; run < 3; ++run)
    EXPECT_EQ(
        scatter_reduce(x, 0, idx, src, ScatterReduce::Sum).to(Device::cpu()).to_vector<float>(),
        first);
}

TEST(CudaIndexing, OutOfRangeThrowsAndWritesNothing) {
  REQUIRE_CUDA_DEVICE();
  const Tensor x = values({4, 5}, DType::F32, 40).to(gpu);
  const std::vector<float> before = x.to(Device::cpu()).to_vector<float>();
  const Tensor bad = Tensor::from_vector<int64_t>({0, 7, 1}, {3, 1}, gpu);
  const Tensor neg = Tensor::from_vector<int64_t>({0, -1, 1}, {3, 1}, gpu);
  const Tensor src = zeros({3, 1}, DType::F32, gpu);
  for (const Tensor& i : {bad, neg}) {
    EXPECT_THROW(gather(x, 1, i), IndexOutOfBounds);
    EXPECT_THROW(scatter(x, 1, i, src), IndexOutOfBounds);
    EXPECT_THROW(scatter_reduce(x, 1, i, src, ScatterReduce::Sum), IndexOutOfBounds);
    EXPECT_THROW(index_select(x, 1, i.reshape({3})), IndexOutOfBounds);
  }
  try {
    gather(x, 1, bad);
  } catch (const IndexOutOfBounds& e) {
    EXPECT_EQ(std::string(e.what()), "[gather] index 7 out of range for dim 1 of size 5");
  }
  EXPECT_EQ(x.to(Device::cpu()).to_vector<float>(), before);
}

TEST(PtxIndexing, CatalogNamesAreUniqueAndAssemble) {
  for (const ptx::Target t : {ptx::Target{80, 8, 0}, ptx::Target{90, 8, 0}}) {
    const std::vector<cuda::GeneratedKernel> ks = cuda::index_kernels(t);
    std::set<std::string> names;
    for (const auto& k : ks) EXPECT_TRUE(names.insert(k.name).second) << k.name;
    // gather and Assign for 8 dtypes, 4 reductions for 7 (F16 and BF16 into F32).
    EXPECT_EQ(ks.size(), 8u * 2 + 7u * 4);
  }
  NUMR_REQUIRE_PTXAS();
  for (const ptx::Target t : {ptx::Target{80, 8, 0}, ptx::Target{90, 8, 0}})
    for (const cuda::GeneratedKernel& k : cuda::index_kernels(t)) {
      const test::PtxasResult r = test::assemble(k.ptx, t.sm);
      EXPECT_TRUE(r.ok()) << k.name << " sm_" << t.sm << ": " << r.output;
    }
}

}  // namespace
}  // namespace numr
