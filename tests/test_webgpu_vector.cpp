// WebGPU's contiguous elementwise kernels, which take several elements per invocation
// through vec4 loads and stores where every operand's offset is a whole number of 16-byte
// words (the elements after the last whole group by the one-element kernel), and contiguous
// copies within one dtype, which are the queue's copy command where whole words move.
// Counts around a group (1, 3, 4, 5, 1023, 1025, 4 * 65535 + 3, and one of 2^24 + 13), views at
// offsets that are and are not whole vec4s, F32, I32, I64, F16, BF16 and Bool operands, results
// written into views of a poisoned buffer whose other elements must survive: exact ops against the
// CPU's bits, exp and the fused gates against a float64 reference. Skips, naming the reason,
// without WebGPU.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "numr/numr.h"
#include "support/webgpu_device.h"

namespace numr {
namespace {

constexpr int64_t kCounts[] = {1, 3, 4, 5, 1023, 1025, 4 * 65535 + 3};

// n f32 values: normal ones with zeros of both signs, infinities and NaN among them.
std::vector<float> values(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, 4.0f);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = d(rng);
  const float special[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 1e30f, -1e-30f};
  for (size_t i = 0; i < v.size(); i += 7) v[i] = special[(i / 7) % 7];
  return v;
}

// A tensor's elements on the host, in row-major order.
template <class T>
std::vector<T> host(const Tensor& t) {
  return t.to(Device::cpu()).contiguous().to_vector<T>();
}

bool same_f32(float a, float b) {
  return std::isnan(a) ? std::isnan(b) : std::bit_cast<uint32_t>(a) == std::bit_cast<uint32_t>(b);
}

void expect_same_f32(const std::vector<float>& got, const std::vector<float>& want,
                     const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  int failures = 0;
  for (size_t i = 0; i < got.size() && failures < 5; ++i)
    if (!same_f32(got[i], want[i])) {
      ++failures;
      ADD_FAILURE() << what << " element " << i << ": webgpu " << got[i] << ", cpu " << want[i];
    }
}

// a op b written (out=) into a view at `off` of a buffer that both devices poison alike,
// from inputs at offsets `off` and `in_off`: the whole buffer against the CPU's.
TEST(WebGpuVector, ExactF32ResultsAndTheirNeighboursMatchTheCpu) {
  NUMR_WEBGPU_OR_SKIP();
  const Device g = Device::webgpu(0);
  for (int64_t n : kCounts)
    for (int64_t off : {0, 1, 4, 8}) {
      const int64_t len = n + 12;
      const Tensor a = Tensor::from_vector(values(len, 1), {len});
      const Tensor b = Tensor::from_vector(values(len, 2), {len});
      const Tensor ga = a.to(g), gb = b.to(g);
      for (int64_t in_off : {off, int64_t(4)}) {
        Tensor cpu = full({len}, -7.25, DType::F32), gpu = cpu.to(g);
        Tensor cv = cpu.narrow(0, off, n), gv = gpu.narrow(0, off, n);
        add(a.narrow(0, in_off, n), b.narrow(0, off, n), cv);
        add(ga.narrow(0, in_off, n), gb.narrow(0, off, n), gv);
        const std::string what = "add n " + std::to_string(n) + " offsets " + std::to_string(off) +
                                 "/" + std::to_string(in_off);
        expect_same_f32(host<float>(gpu), host<float>(cpu), what);
        Tensor cw = cpu.narrow(0, off, n), gw = gpu.narrow(0, off, n);
        mul(a.narrow(0, off, n), b.narrow(0, in_off, n), cw);
        mul(ga.narrow(0, off, n), gb.narrow(0, in_off, n), gw);
        expect_same_f32(host<float>(gpu), host<float>(cpu), "mul, then " + what);
      }
      // Fresh results of ops with other output dtypes and NaN rules.
      const Tensor as = a.narrow(0, off, n), bs = b.narrow(0, off, n);
      const Tensor gas = ga.narrow(0, off, n), gbs = gb.narrow(0, off, n);
      const std::string what = "n " + std::to_string(n) + " offset " + std::to_string(off);
      expect_same_f32(host<float>(maximum(gas, gbs)), host<float>(maximum(as, bs)),
                      "maximum " + what);
      expect_same_f32(host<float>(-gas), host<float>(-as), "neg " + what);
      expect_same_f32(host<float>(clamp(gas, -1.5, 2.0)), host<float>(clamp(as, -1.5, 2.0)),
                      "clamp " + what);
      EXPECT_EQ(host<bool>(gt(gas, gbs)), host<bool>(gt(as, bs))) << "gt " << what;
      const Tensor cond = lt(as, bs), gcond = lt(gas, gbs);
      expect_same_f32(host<float>(where_cond(gcond, gas, gbs)),
                      host<float>(where_cond(cond, as, bs)), "where " + what);
    }
}

// Integer results, which wrap: I32 and I64 sums and products, against the CPU's.
TEST(WebGpuVector, IntegerResultsMatchTheCpu) {
  NUMR_WEBGPU_OR_SKIP();
  const Device g = Device::webgpu(0);
  std::mt19937 rng(3);
  for (int64_t n : kCounts)
    for (int64_t off : {0, 1, 2, 4}) {
      const int64_t len = n + 8;
      std::vector<int32_t> x(static_cast<size_t>(len)), y(static_cast<size_t>(len));
      std::vector<int64_t> u(static_cast<size_t>(len)), w(static_cast<size_t>(len));
      for (int64_t i = 0; i < len; ++i) {
        x[size_t(i)] = int32_t(rng());
        y[size_t(i)] = int32_t(rng()) >> (i % 17);
        u[size_t(i)] = int64_t((uint64_t(rng()) << 32) | rng());
        w[size_t(i)] = int64_t((uint64_t(rng()) << 32) | rng()) >> (i % 40);
      }
      const Tensor a = Tensor::from_vector(x, {len}).narrow(0, off, n);
      const Tensor b = Tensor::from_vector(y, {len}).narrow(0, 8 - off, n);
      const Tensor c = Tensor::from_vector(u, {len}).narrow(0, off, n);
      const Tensor d = Tensor::from_vector(w, {len}).narrow(0, off, n);
      const std::string what = "n " + std::to_string(n) + " offset " + std::to_string(off);
      EXPECT_EQ(host<int32_t>(a.to(g) + b.to(g)), host<int32_t>(a + b)) << "i32 add " << what;
      EXPECT_EQ(host<int32_t>(a.to(g) * b.to(g)), host<int32_t>(a * b)) << "i32 mul " << what;
      EXPECT_EQ(host<int64_t>(c.to(g) + d.to(g)), host<int64_t>(c + d)) << "i64 add " << what;
      EXPECT_EQ(host<int64_t>(c.to(g) - d.to(g)), host<int64_t>(c - d)) << "i64 sub " << what;
      EXPECT_EQ(host<bool>(ge(c.to(g), d.to(g))), host<bool>(ge(c, d))) << "i64 ge " << what;
    }
}

// F16 and BF16: products and sums of 16-bit values are exact in f32 and both devices round
// the f32 result once, so the bits match; written into views of a poisoned buffer at every
// offset parity and odd and even counts.
template <class H>
void expect_half_results_match() {
  const Device g = Device::webgpu(0);
  const DType t = dtype_of_v<H>;
  // A NaN result is any NaN: arithmetic on a NaN operand gives the operand's payload and
  // sign on x86 but the canonical 0x7fffffff on NVIDIA's GPUs, so NaNs compare as one
  // value and everything else bit for bit.
  const uint16_t exp_mask = t == DType::F16 ? 0x7c00 : 0x7f80;
  auto bits = [exp_mask](const Tensor& x) {
    std::vector<uint16_t> out;
    for (H h : host<H>(x)) {
      const bool nan = (h.bits & exp_mask) == exp_mask && (h.bits & ~exp_mask & 0x7fff) != 0;
      out.push_back(nan ? uint16_t(0x7fff) : h.bits);
    }
    return out;
  };
  for (int64_t n : {int64_t(1), int64_t(3), int64_t(7), int64_t(8), int64_t(9), int64_t(1023),
                    int64_t(1025), int64_t(8 * 65535 + 3)})
    for (int64_t off : {0, 1, 2, 8}) {
      const int64_t len = n + 20;
      const Tensor a = Tensor::from_vector(values(len, 4), {len}).cast(t);
      const Tensor b = Tensor::from_vector(values(len, 5), {len}).cast(t);
      const Tensor ga = a.to(g), gb = b.to(g);
      Tensor cpu = full({len}, 3.0, t), gpu = cpu.to(g);
      Tensor cv = cpu.narrow(0, off, n), gv = gpu.narrow(0, off, n);
      mul(a.narrow(0, off, n), b.narrow(0, 8, n), cv);
      mul(ga.narrow(0, off, n), gb.narrow(0, 8, n), gv);
      const std::string what =
          std::string(dtype_name(t)) + " n " + std::to_string(n) + " offset " + std::to_string(off);
      EXPECT_EQ(bits(gpu), bits(cpu)) << "mul " << what;
      Tensor cw = cpu.narrow(0, off + 8, n), gw = gpu.narrow(0, off + 8, n);
      add(a.narrow(0, off, n), b.narrow(0, off, n), cw);
      add(ga.narrow(0, off, n), gb.narrow(0, off, n), gw);
      EXPECT_EQ(bits(gpu), bits(cpu)) << "add " << what;
      EXPECT_EQ(host<bool>(le(ga.narrow(0, off, n), gb.narrow(0, 0, n))),
                host<bool>(le(a.narrow(0, off, n), b.narrow(0, 0, n))))
          << "le " << what;
    }
}

TEST(WebGpuVector, HalfResultsAndTheirNeighboursMatchTheCpu) {
  NUMR_WEBGPU_OR_SKIP();
  expect_half_results_match<f16>();
  expect_half_results_match<bf16>();
}

double silu(double x) { return x / (1 + std::exp(-x)); }
// numr's gelu: the tanh form.
double gelu(double x) {
  return 0.5 * x * (1 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
}

// Relative error of got against the float64 want, with an absolute floor at f32's scale;
// NaN and infinities must agree exactly.
void expect_near_f64(const std::vector<float>& got, const std::vector<double>& want, double tol,
                     const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  int failures = 0;
  for (size_t i = 0; i < got.size() && failures < 5; ++i) {
    const double w = want[i], x = double(got[i]);
    bool ok;
    if (std::isnan(w))
      ok = std::isnan(x);
    else if (std::isinf(w) || std::fabs(w) > double(std::numeric_limits<float>::max()))
      ok = x == double(float(w));
    else
      ok = std::fabs(x - w) <= tol * std::max(std::fabs(w), 1e-30);
    if (!ok) {
      ++failures;
      ADD_FAILURE() << what << " element " << i << ": webgpu " << x << ", float64 " << w;
    }
  }
}

// exp, silu_mul, gelu_mul and silu_mul's backward (two outputs) on finite inputs of a
// moderate range, against float64; and exp of the same elements through the strided kernel
// (a column of a matrix), whose bits the vector kernel must reproduce.
TEST(WebGpuVector, TranscendentalResultsMatchFloat64) {
  NUMR_WEBGPU_OR_SKIP();
  const Device g = Device::webgpu(0);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> d(-8.0f, 8.0f);
  for (int64_t n : kCounts)
    for (int64_t off : {0, 3, 4}) {
      const int64_t len = n + 8;
      std::vector<float> x(static_cast<size_t>(len)), y(static_cast<size_t>(len)),
          z(static_cast<size_t>(len));
      for (int64_t i = 0; i < len; ++i) {
        x[size_t(i)] = d(rng);
        y[size_t(i)] = d(rng);
        z[size_t(i)] = d(rng);
      }
      const Tensor a = Tensor::from_vector(x, {len}).to(g).narrow(0, off, n);
      const Tensor b = Tensor::from_vector(y, {len}).to(g).narrow(0, 4, n);
      const Tensor gr = Tensor::from_vector(z, {len}).to(g).narrow(0, off, n);
      std::vector<double> e(static_cast<size_t>(n)), sm(static_cast<size_t>(n)),
          gm(static_cast<size_t>(n)), da(static_cast<size_t>(n)), db(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) {
        const double xa = x[size_t(off + i)], yb = y[size_t(4 + i)], gz = z[size_t(off + i)];
        e[size_t(i)] = std::exp(xa);
        sm[size_t(i)] = silu(xa) * yb;
        gm[size_t(i)] = gelu(xa) * yb;
        const double s = 1 / (1 + std::exp(-xa));
        da[size_t(i)] = gz * yb * (s * (1 + xa * (1 - s)));
        db[size_t(i)] = gz * silu(xa);
      }
      const std::string what = "n " + std::to_string(n) + " offset " + std::to_string(off);
      expect_near_f64(host<float>(exp(a)), e, 2e-6, "exp " + what);
      const std::vector<float> ea = host<float>(exp(a));
      // The same elements through the strided kernel: a column of an n x 2 matrix.
      const Tensor col = squeeze(stack({a, a}, 1).narrow(1, 0, 1), 1);
      if (n > 1) {
        ASSERT_FALSE(col.is_contiguous());
      }
      expect_same_f32(ea, host<float>(exp(col)), "exp strided vs contiguous " + what);
      auto near = [&](const Tensor& r, const std::vector<double>& want, const char* name) {
        const std::vector<float> got = host<float>(r);
        // Relative, with an absolute floor at the inputs' scale (products of values near 1
        // round in f32 to about 1e-7 of that scale).
        int failures = 0;
        for (size_t i = 0; i < got.size() && failures < 5; ++i)
          if (!(std::fabs(double(got[i]) - want[i]) <= 1e-5 * std::max(std::fabs(want[i]), 1.0))) {
            ++failures;
            ADD_FAILURE() << name << " " << what << " element " << i << ": webgpu " << got[i]
                          << ", float64 " << want[i];
          }
      };
      near(silu_mul(a, b), sm, "silu_mul");
      near(gelu_mul(a, b), gm, "gelu_mul");
      const auto [ga_, gb_] = silu_mul_bwd(gr, a, b);
      near(ga_, da, "silu_mul_bwd d_a");
      near(gb_, db, "silu_mul_bwd d_b");
    }
}

// A count of 2^24 + 13: 16385 workgroups of vec4s, and a tail.
TEST(WebGpuVector, LargeCountsCoverEveryElement) {
  NUMR_WEBGPU_OR_SKIP();
  const Device g = Device::webgpu(0);
  const int64_t n = (int64_t(1) << 24) + 13;
  std::vector<float> x(static_cast<size_t>(n)), y(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    x[size_t(i)] = float(i % 1000003);
    y[size_t(i)] = float(i % 7) * 0.5f;
  }
  const Tensor a = Tensor::from_vector(x, {n}), b = Tensor::from_vector(y, {n});
  expect_same_f32(host<float>(a.to(g) + b.to(g)), host<float>(a + b), "add");
}

// Contiguous copies within one dtype (the copy command where whole words move, else the
// kernel) and to other dtypes, at every offset parity, and copies between overlapping views
// of one buffer: the whole destination buffer against the CPU's.
TEST(WebGpuVector, ContiguousCopiesMatchTheCpu) {
  NUMR_WEBGPU_OR_SKIP();
  const Device g = Device::webgpu(0);
  for (DType t : {DType::F32, DType::BF16, DType::F16, DType::I64, DType::U8})
    for (int64_t n : {int64_t(1), int64_t(3), int64_t(4), int64_t(5), int64_t(1023), int64_t(1040)})
      for (int64_t so : {0, 1, 2, 16})
        for (int64_t dof : {0, 1, 3, 8}) {
          const int64_t len = n + 24;
          const Tensor src = Tensor::from_vector(values(len, 11), {len}).cast(t);
          Tensor cpu = full({len}, 5.0, t), gpu = cpu.to(g);
          const Tensor gsrc = src.to(g);
          cpu.narrow(0, dof, n).copy_(src.narrow(0, so, n));
          gpu.narrow(0, dof, n).copy_(gsrc.narrow(0, so, n));
          const std::string what = std::string(dtype_name(t)) + " n " + std::to_string(n) +
                                   " offsets " + std::to_string(so) + "/" + std::to_string(dof);
          auto bytes = [](const Tensor& x) {
            const Tensor h = x.to(Device::cpu());
            auto raw = [](const auto& v) {
              std::vector<uint8_t> out(v.size() * sizeof(v[0]));
              std::memcpy(out.data(), v.data(), out.size());
              return out;
            };
            switch (h.dtype()) {
              case DType::F32: return raw(h.to_vector<float>());
              case DType::BF16: return raw(h.to_vector<bf16>());
              case DType::F16: return raw(h.to_vector<f16>());
              case DType::I64: return raw(h.to_vector<int64_t>());
              default: return raw(h.to_vector<uint8_t>());
            }
          };
          // Every value is copied, NaN included, bit for bit (U8 converts nothing here:
          // its source was cast on the CPU).
          EXPECT_EQ(bytes(gpu), bytes(cpu)) << "copy " << what;
          // Overlapping views of one buffer: as if the source were read before any write.
          cpu.narrow(0, dof, n).copy_(cpu.narrow(0, so + 4, n));
          gpu.narrow(0, dof, n).copy_(gpu.narrow(0, so + 4, n));
          EXPECT_EQ(bytes(gpu), bytes(cpu)) << "overlapping copy " << what;
          // Casts: F32 from this dtype, and this dtype from F32 (rounded, saturated, NaN
          // to zero in U8, as on the CPU).
          Tensor cf = full({len}, 1.0, DType::F32), gf = cf.to(g);
          cf.narrow(0, dof, n).copy_(src.narrow(0, so, n));
          gf.narrow(0, dof, n).copy_(gsrc.narrow(0, so, n));
          expect_same_f32(host<float>(gf), host<float>(cf), "cast " + what);
          const Tensor f = Tensor::from_vector(values(len, 12), {len});
          Tensor ct = full({len}, 5.0, t), gt_ = ct.to(g);
          ct.narrow(0, dof, n).copy_(f.narrow(0, so, n));
          gt_.narrow(0, dof, n).copy_(f.to(g).narrow(0, so, n));
          EXPECT_EQ(bytes(gt_), bytes(ct)) << "cast from F32 " << what;
        }
}

// In-place ops, whose output is an input: at vec4-aligned offsets (the vector kernel) and
// not, and an input that overlaps the output at another offset.
TEST(WebGpuVector, InPlaceResultsMatchTheCpu) {
  NUMR_WEBGPU_OR_SKIP();
  const Device g = Device::webgpu(0);
  for (int64_t n : kCounts)
    for (int64_t off : {0, 1, 4}) {
      const int64_t len = n + 12;
      Tensor cpu = Tensor::from_vector(values(len, 21), {len}), gpu = cpu.to(g);
      const Tensor other = Tensor::from_vector(values(len, 22), {len});
      const Tensor gother = other.to(g);
      cpu.narrow(0, off, n).add_(other.narrow(0, 4, n));
      gpu.narrow(0, off, n).add_(gother.narrow(0, 4, n));
      const std::string what = "n " + std::to_string(n) + " offset " + std::to_string(off);
      expect_same_f32(host<float>(gpu), host<float>(cpu), "add_ " + what);
      Tensor cv = cpu.narrow(0, off, n), gv = gpu.narrow(0, off, n);
      cv.mul_(cv);
      gv.mul_(gv);
      expect_same_f32(host<float>(gpu), host<float>(cpu), "x *= x " + what);
      cpu.narrow(0, off, n).sub_(cpu.narrow(0, off + 4, n));
      gpu.narrow(0, off, n).sub_(gpu.narrow(0, off + 4, n));
      expect_same_f32(host<float>(gpu), host<float>(cpu), "overlapping sub_ " + what);
    }
}

}  // namespace
}  // namespace numr
