// The CUDA elementwise, copy, fill, sequence and random kernels where the parity harness
// does not reach: sizes around the vector width (vector steps against the scalar tail),
// views whose first element is not 16-byte aligned (scalar path), broadcast, transposed,
// flipped and high-rank operands (strided path), a ~10M-element tensor, dtype conversions
// with special values, and random numbers and sequences against the CPU's.
//
// What "equal to the CPU" means here: the same value element by element (NaN matching any
// NaN, since payloads may differ; +0 and -0 distinguished), except for normal random
// numbers, whose double-precision Box-Muller goes through the device math library's log
// and cos instead of the C library's: F64 normals agree to within 4 ulp, and the rounded
// F32/F16/BF16 ones are equal except, rarely, by one unit in the last place (when the
// double lies within a few double ulp of a rounding boundary of the dtype).
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "backends/cuda/context.h"
#include "numr/numr.h"
#include "support/cuda_test.h"
#include "support/harness.h"

namespace {

using namespace numr;
namespace cu = numr::cuda;

const Device kGpu = Device::cuda(0);
const Device kCpu = Device::cpu();

// Values on the host: doubles for float dtypes (exact), int64 for the others (exact).
struct HostValues {
  std::vector<double> f;
  std::vector<int64_t> i;
};
HostValues host_values(const Tensor& t) {
  const Tensor c = t.to(kCpu);
  HostValues h;
  if (is_floating(t.dtype()))
    h.f = c.cast(DType::F64).contiguous().to_vector<double>();
  else
    h.i = c.cast(DType::I64).contiguous().to_vector<int64_t>();
  return h;
}

bool same_double(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return std::bit_cast<uint64_t>(a) == std::bit_cast<uint64_t>(b);
}

// "" when got (any device) holds the same values as want, else the first difference.
std::string same(const Tensor& got, const Tensor& want) {
  if (got.shape() != want.shape()) return "shapes differ";
  if (got.dtype() != want.dtype()) return "dtypes differ";
  const HostValues g = host_values(got), w = host_values(want);
  for (size_t k = 0; k < g.f.size(); ++k)
    if (!same_double(g.f[k], w.f[k])) {
      std::ostringstream os;
      os.precision(17);
      os << "element " << k << ": " << g.f[k] << " vs " << w.f[k];
      return os.str();
    }
  for (size_t k = 0; k < g.i.size(); ++k)
    if (g.i[k] != w.i[k])
      return "element " + std::to_string(k) + ": " + std::to_string(g.i[k]) + " vs " +
             std::to_string(w.i[k]);
  return "";
}

// Values in [lo, hi] (integers for integer dtypes) rounded to dt, on the CPU.
Tensor values(const Shape& shape, DType dt, uint64_t seed, double lo = -4, double hi = 4) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<double> v(size_t(shape_numel(shape)));
  for (double& x : v) x = is_floating(dt) ? u(rng) : std::floor(u(rng));
  if (dt == DType::U8 || dt == DType::Bool)
    for (double& x : v) x = std::fabs(x);
  return Tensor::from_vector<double>(v, shape, kCpu).cast(dt);
}

// n values spread evenly over [lo, hi], shuffled by seed.
std::vector<double> test_values_in(double lo, double hi, int n, uint64_t seed) {
  std::vector<double> v(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) v[static_cast<size_t>(i)] = lo + (hi - lo) * i / (n - 1);
  std::shuffle(v.begin(), v.end(), std::mt19937_64(seed));
  return v;
}

const DType kDtypes[] = {DType::F64, DType::F32, DType::F16, DType::BF16,
                         DType::I64, DType::I32, DType::U8};

// Sizes on both sides of multiples of every vector width (2, 4, 8, 16 elements) and of
// a block of 256 threads.
std::vector<int64_t> vector_sizes() {
  std::vector<int64_t> s;
  for (int64_t n = 1; n <= 40; ++n) s.push_back(n);
  for (int64_t m : {63, 64, 65, 255, 256, 257, 1023, 1024, 1025, 4095, 4096, 4097, 65537})
    s.push_back(m);
  return s;
}

TEST(CudaElementwise, VectorStepsAndScalarTail) {
  REQUIRE_CUDA();
  for (DType dt : kDtypes)
    for (int64_t n : vector_sizes()) {
      const Tensor a = values({n}, dt, 1), b = values({n}, dt, 2);
      const Tensor ga = a.to(kGpu), gb = b.to(kGpu);
      ASSERT_EQ(same(add(ga, gb), add(a, b)), "") << dt << " n=" << n << " add";
      ASSERT_EQ(same(mul(ga, gb), mul(a, b)), "") << dt << " n=" << n << " mul";
      ASSERT_EQ(same(lt(ga, gb), lt(a, b)), "") << dt << " n=" << n << " lt (Bool out)";
      ASSERT_EQ(same(maximum(ga, gb), maximum(a, b)), "") << dt << " n=" << n;
      ASSERT_EQ(same(ga.cast(DType::F32), a.cast(DType::F32)), "") << dt << " n=" << n;
      ASSERT_EQ(same(where_cond(lt(ga, gb), ga, gb), where_cond(lt(a, b), a, b)), "")
          << dt << " n=" << n;
    }
}

TEST(CudaElementwise, FloatFormulasOnVectorAndTail) {
  REQUIRE_CUDA();
  for (DType dt : {DType::F64, DType::F32, DType::F16, DType::BF16})
    for (int64_t n : {1, 3, 4, 5, 8, 9, 17, 1000, 1027}) {
      const Tensor a = values({n}, dt, 3), b = values({n}, dt, 4);
      const Tensor ga = a.to(kGpu), gb = b.to(kGpu);
      const test::Tolerance tol = test::tolerance_for(dt);
      const test::RefTensor ra = test::to_ref(a), rb = test::to_ref(b);
      EXPECT_EQ(test::compare(silu(ga), reference::elementwise(OpId::silu, {&ra}), tol), "")
          << dt << " n=" << n;
      const Tensor g = values({n}, dt, 5);
      const Tensor gg = g.to(kGpu);
      // Both outputs of the fused backward, from one pass.
      for (int out = 0; out < 2; ++out) {
        const test::RefTensor rg = test::to_ref(g);
        const test::RefTensor want =
            reference::elementwise(OpId::silu_mul_bwd, {&rg, &ra, &rb}, 0, 0, true, true, out);
        const auto [da, db] = silu_mul_bwd(gg, ga, gb);
        EXPECT_EQ(test::compare(out == 0 ? da : db, want, tol), "") << dt << " n=" << n;
      }
    }
}

// erf, erfc and erfinv: F64 runs math/libm/erf.h, the other float dtypes the
// single-precision library (math/libm32) in f32; both against the float64 reference, with
// the special values of the domain.
TEST(CudaElementwise, ErfFamilyMatchesTheReference) {
  REQUIRE_CUDA();
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<double> specials = {0.0, -0.0, 1.0, -1.0, 1.5, -2.0, inf, -inf, nan, 1e-30};
  for (DType dt : {DType::F64, DType::F32, DType::F16, DType::BF16})
    for (OpId op : {OpId::erf, OpId::erfc, OpId::erfinv}) {
      const double lo = op == OpId::erfinv ? -1 : -5, hi = op == OpId::erfinv ? 1 : 8;
      std::vector<double> v = test_values_in(lo, hi, 1027, 6);
      v.insert(v.end(), specials.begin(), specials.end());
      const Tensor a = Tensor::from_vector<double>(v, {int64_t(v.size())}, kCpu).cast(dt);
      const test::RefTensor ra = test::to_ref(a);
      const Tensor got = op == OpId::erf    ? erf(a.to(kGpu))
                         : op == OpId::erfc ? erfc(a.to(kGpu))
                                            : erfinv(a.to(kGpu));
      EXPECT_EQ(test::compare(got, reference::elementwise(op, {&ra}), test::tolerance_for(dt)),
                "")
          << dt << " " << op_info(op).name;
    }
}

TEST(CudaElementwise, MisalignedViewsTakeTheScalarPath) {
  REQUIRE_CUDA();
  for (DType dt : kDtypes)
    for (int64_t start : {1, 2, 3, 5}) {
      const int64_t n = 1000;
      const Tensor a = values({n + 8}, dt, 6), b = values({n + 8}, dt, 7);
      const Tensor ga = a.to(kGpu), gb = b.to(kGpu);
      const Tensor va = a.narrow(0, start, n), vb = b.narrow(0, 8 - start, n);
      const Tensor gva = ga.narrow(0, start, n), gvb = gb.narrow(0, 8 - start, n);
      EXPECT_EQ(same(add(gva, gvb), add(va, vb)), "") << dt << " start " << start;
      EXPECT_EQ(same(gva.cast(DType::F64), va.cast(DType::F64)), "") << dt << " start " << start;
      EXPECT_EQ(same(gva.contiguous(), va.contiguous()), "") << dt << " start " << start;
    }
}

TEST(CudaElementwise, BroadcastTransposedFlippedAndHighRank) {
  REQUIRE_CUDA();
  for (DType dt : {DType::F32, DType::F16, DType::I64, DType::U8}) {
    const Tensor m = values({33, 17}, dt, 8), row = values({17}, dt, 9),
                 col = values({33, 1}, dt, 10), one = values({}, dt, 11);
    const Tensor gm = m.to(kGpu), grow = row.to(kGpu), gcol = col.to(kGpu), gone = one.to(kGpu);
    EXPECT_EQ(same(add(gm, grow), add(m, row)), "") << dt << " row broadcast";
    EXPECT_EQ(same(add(gm, gcol), add(m, gcol.to(kCpu))), "") << dt << " column broadcast";
    EXPECT_EQ(same(mul(gm, gone), mul(m, one)), "") << dt << " one element (uniform input)";
    EXPECT_EQ(same(add(gone, gm), add(one, m)), "") << dt << " uniform first input";
    const Tensor t = values({17, 33}, dt, 12);
    EXPECT_EQ(same(add(gm, t.to(kGpu).transpose(0, 1)), add(m, t.transpose(0, 1))), "")
        << dt << " transposed";
    EXPECT_EQ(same(sub(gm.flip({1}), gm), sub(m.flip({1}), m)), "") << dt << " flipped";
    const Tensor h = values({2, 3, 4, 5, 3}, dt, 13);
    const Tensor p = h.permute({4, 2, 0, 3, 1}), gp = h.to(kGpu).permute({4, 2, 0, 3, 1});
    EXPECT_EQ(same(add(gp, gp), add(p, p)), "") << dt << " permuted rank 5";
    EXPECT_EQ(same(gp.contiguous(), p.contiguous()), "") << dt << " strided copy";
    EXPECT_EQ(same(gp.cast(DType::F64), p.cast(DType::F64)), "") << dt << " strided cast";
    EXPECT_EQ(same(add(gm, grow).narrow(0, 0, 0), add(m, row).narrow(0, 0, 0)), "");
  }
  const Tensor e = values({0, 5}, DType::F32, 14);
  EXPECT_EQ(add(e.to(kGpu), e.to(kGpu)).numel(), 0);
}

TEST(CudaElementwise, LargeTensor) {
  REQUIRE_CUDA();
  const int64_t n = 10'000'003;
  const Tensor a = values({n}, DType::F32, 15), b = values({n}, DType::F32, 16);
  const Tensor ga = a.to(kGpu), gb = b.to(kGpu);
  EXPECT_EQ(same(add(ga, gb), add(a, b)), "");
  const test::RefTensor ra = test::to_ref(a), rb = test::to_ref(b);
  EXPECT_EQ(test::compare(silu_mul(ga, gb), reference::elementwise(OpId::silu_mul, {&ra, &rb}),
                          test::tolerance_for(DType::F32)),
            "");
  const Tensor big = values({2500, 4001}, DType::BF16, 17);
  EXPECT_EQ(same(big.to(kGpu).transpose(0, 1).contiguous(), big.transpose(0, 1).contiguous()), "");
}

TEST(CudaElementwise, ConversionsWithSpecialValues) {
  REQUIRE_CUDA();
  const std::vector<double> special = {
      0.0,  -0.0,  1.5,  -1.5,  2.5, -2.5,     255.5,     256.0, -1.0,  300.7, 65504, 65520,
      1e10, -1e10, 3e38, 1e300, NAN, INFINITY, -INFINITY, 1e-8,  127.5, 0.5,   -0.5,  1e-40};
  const Tensor s = Tensor::from_vector<double>(special, {int64_t(special.size())}, kCpu);
  for (DType from : kDtypes) {
    const Tensor src = s.cast(from), gsrc = src.to(kGpu);
    for (DType to : kDtypes)
      EXPECT_EQ(same(gsrc.cast(to), src.cast(to)), "") << from << " -> " << to;
    EXPECT_EQ(same(gsrc.cast(DType::Bool), src.cast(DType::Bool)), "") << from << " -> Bool";
  }
  // Integer and Bool fills take only values the dtype holds (full rejects others).
  for (DType dt : kDtypes)
    for (double v : is_floating(dt) ? std::vector<double>{300.7, -1.5, 1e10, double(NAN), -0.0}
                                    : std::vector<double>{0.0, 1.0, 7.0})
      for (const Shape& shape : {Shape{}, Shape{7}, Shape{33, 17}, Shape{65537}})
        EXPECT_EQ(same(full(shape, v, dt, kGpu), full(shape, v, dt, kCpu)), "")
            << dt << " fill " << v;
}

TEST(CudaElementwise, SequencesEqualTheCpu) {
  REQUIRE_CUDA();
  for (DType dt : kDtypes) {
    // U8 and Bool hold only small non-negative values (arange rejects others).
    const double lo = dt == DType::U8 || dt == DType::Bool ? 0 : -3;
    const double hi = dt == DType::U8 ? 255.5 : dt == DType::Bool ? 1.5 : 1000.5;
    EXPECT_EQ(same(arange(lo, hi, 1.0, dt, kGpu), arange(lo, hi, 1.0, dt, kCpu)), "") << dt;
    if (!is_floating(dt)) continue;  // fractional starts and steps are for float dtypes
    EXPECT_EQ(same(arange(0.1, 77.3, 0.3, dt, kGpu), arange(0.1, 77.3, 0.3, dt, kCpu)), "") << dt;
    for (int64_t steps : {1, 2, 7, 100, 4097})
      EXPECT_EQ(same(linspace(-1.3, 2.9, steps, dt, kGpu), linspace(-1.3, 2.9, steps, dt, kCpu)),
                "")
          << dt << " " << steps;
  }
}

TEST(CudaElementwise, UniformAndIntegerRandomEqualTheCpu) {
  REQUIRE_CUDA();
  for (const Shape& shape : {Shape{1}, Shape{7}, Shape{33, 17}, Shape{100003}}) {
    for (DType dt : {DType::F64, DType::F32, DType::F16, DType::BF16}) {
      Generator gg(1234), gc(1234);
      for (int draw = 0; draw < 2; ++draw)  // the second draw starts at the advanced offset
        EXPECT_EQ(same(rand(shape, dt, kGpu, gg), rand(shape, dt, kCpu, gc)), "") << dt;
    }
    for (DType dt : kDtypes)
      for (auto [lo, hi] : {std::pair<int64_t, int64_t>{-5, 17}, {0, 2}, {0, 256}}) {
        if (dt == DType::U8 && lo < 0) continue;
        Generator gg(99), gc(99);
        EXPECT_EQ(same(randint(lo, hi, shape, dt, kGpu, gg), randint(lo, hi, shape, dt, kCpu, gc)),
                  "")
            << dt << " [" << lo << ", " << hi << ")";
      }
    Generator gg(7), gc(7);
    const int64_t lo = INT64_MIN / 2, hi = INT64_MAX / 2 + 12345;  // range above INT64_MAX
    EXPECT_EQ(same(randint(lo, hi, shape, DType::I64, kGpu, gg),
                   randint(lo, hi, shape, DType::I64, kCpu, gc)),
              "");
  }
}

TEST(CudaElementwise, NormalRandomEqualsTheCpu) {
  REQUIRE_CUDA();
  // Both backends evaluate the same Box–Muller formula with numr's own log and cos, built
  // from correctly rounded operations only, so every bit must agree.
  const int64_t n = 200003;
  for (DType dt : {DType::F64, DType::F32, DType::F16, DType::BF16}) {
    Generator gg(42), gc(42);
    EXPECT_EQ(same(randn({n}, dt, kGpu, gg), randn({n}, dt, kCpu, gc)), "") << dt;
  }
}

}  // namespace
