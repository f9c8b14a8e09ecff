// F16 and BF16: every bit pattern decodes as an independent decoder says and encodes
// back to itself; rounding from float and from double is to nearest, ties to even, with
// overflow to Inf, subnormals, and no double rounding; the library's casts agree.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "core/backend.h"
#include "numr/numr.h"

namespace numr {
namespace {

// A small binary float format: `mant` stored mantissa bits, `exp_bits` exponent bits.
struct Format {
  int mant, exp_bits;
  int bias() const { return (1 << (exp_bits - 1)) - 1; }
  uint16_t exp_mask() const { return uint16_t(((1u << exp_bits) - 1) << mant); }
  uint16_t man_mask() const { return uint16_t((1u << mant) - 1); }
  uint16_t sign_bit() const { return uint16_t(1u << (mant + exp_bits)); }
  uint16_t max_finite() const { return uint16_t(exp_mask() - 1); }  // largest finite magnitude
};
constexpr Format kF16{10, 5}, kBF16{7, 8};

// Decodes bits by the IEEE definition, in double arithmetic (exact for both formats).
double decode(uint16_t bits, Format f) {
  const bool neg = bits & f.sign_bit();
  const int e = (bits & f.exp_mask()) >> f.mant;
  const int m = bits & f.man_mask();
  double v;
  if (e == (1 << f.exp_bits) - 1)
    v = m ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  else if (e == 0)
    v = std::ldexp(double(m), 1 - f.bias() - f.mant);
  else
    v = std::ldexp(double(m + (1 << f.mant)), e - f.bias() - f.mant);
  return neg ? -v : v;
}

bool is_nan_bits(uint16_t bits, Format f) {
  return (bits & f.exp_mask()) == f.exp_mask() && (bits & f.man_mask()) != 0;
}

uint16_t to_bits(double x, Format f) { return f.mant == 10 ? f16(x).bits : bf16(x).bits; }
uint16_t to_bits_f(float x, Format f) { return f.mant == 10 ? f16(x).bits : bf16(x).bits; }
float from_bits(uint16_t b, Format f) {
  return f.mant == 10 ? float(f16::from_bits(b)) : float(bf16::from_bits(b));
}

// For each pair of neighbouring non-negative finite values (a, b) -- plus (max, the
// would-be next value, which must round to Inf) -- the midpoint, a value just below it
// and one just above it, with the bits each must round to.
struct RoundCase {
  double x;
  uint16_t want;
};
template <class Real>
std::vector<RoundCase> rounding_cases(Format f) {
  std::vector<RoundCase> out;
  for (uint32_t a = 0; a <= f.max_finite(); ++a) {
    const uint16_t b = uint16_t(a + 1);  // the next value up; max + 1 is Inf's pattern
    const double va = decode(uint16_t(a), f);
    const double vb = b == f.exp_mask() ? std::ldexp(1.0, f.bias() + 1) : decode(b, f);
    const Real mid = Real((va + vb) / 2);  // exact in float and double
    const uint16_t even = (a & 1) ? b : uint16_t(a);
    const Real below = std::nextafter(mid, Real(0)), above = std::nextafter(mid, Real(INFINITY));
    for (int s = 0; s < 2; ++s) {
      const uint16_t sb = s ? f.sign_bit() : 0;
      const double sg = s ? -1.0 : 1.0;
      out.push_back({sg * double(mid), uint16_t(sb | even)});
      out.push_back({sg * double(below), uint16_t(sb | a)});
      out.push_back({sg * double(above), uint16_t(sb | b)});
    }
  }
  return out;
}

template <class T>
std::vector<T> read_all(const Tensor& t) {
  const Tensor c = t.contiguous();
  std::vector<T> out(size_t(c.numel()));
  if (!out.empty())
    c.storage()->backend().copy_to_host(out.data(), c.storage()->handle(),
                                        size_t(c.offset()) * sizeof(T), out.size() * sizeof(T));
  return out;
}

void exhaustive_decode(Format f, DType dt) {
  std::vector<uint16_t> all(65536);
  for (uint32_t i = 0; i < 65536; ++i) all[i] = uint16_t(i);
  for (uint32_t i = 0; i < 65536; ++i) {
    const uint16_t h = uint16_t(i);
    const double want = decode(h, f);
    const float got = from_bits(h, f);
    if (std::isnan(want)) {
      ASSERT_TRUE(std::isnan(got)) << std::hex << h;
      ASSERT_TRUE(is_nan_bits(to_bits_f(got, f), f)) << std::hex << h;
      ASSERT_TRUE(is_nan_bits(to_bits(double(got), f), f)) << std::hex << h;
    } else {
      ASSERT_EQ(double(got), want) << std::hex << h;
      ASSERT_EQ(std::signbit(got), bool(h & f.sign_bit())) << std::hex << h;
      ASSERT_EQ(to_bits_f(got, f), h) << std::hex << h;
      ASSERT_EQ(to_bits(double(got), f), h) << std::hex << h;
    }
  }
  // The same through the library's casts, which use their own (vectorised) conversions.
  const Tensor t = Tensor::from_host(all.data(), all.size(), dt, {65536}, Device::cpu());
  for (DType wide : {DType::F32, DType::F64}) {
    const std::vector<double> vals = read_all<double>(t.cast(wide).cast(DType::F64));
    const std::vector<uint16_t> back = read_all<uint16_t>(t.cast(wide).cast(dt));
    for (uint32_t i = 0; i < 65536; ++i) {
      const double want = decode(uint16_t(i), f);
      if (std::isnan(want)) {
        ASSERT_TRUE(std::isnan(vals[i])) << dt << " via " << wide << " " << std::hex << i;
        ASSERT_TRUE(is_nan_bits(back[i], f)) << dt << " via " << wide << " " << std::hex << i;
      } else {
        ASSERT_EQ(vals[i], want) << dt << " via " << wide << " " << std::hex << i;
        ASSERT_EQ(std::signbit(vals[i]), bool(i & f.sign_bit())) << std::hex << i;
        ASSERT_EQ(back[i], uint16_t(i)) << dt << " via " << wide << " " << std::hex << i;
      }
    }
  }
}

TEST(Half, F16EveryBitPattern) { exhaustive_decode(kF16, DType::F16); }
TEST(Half, BF16EveryBitPattern) { exhaustive_decode(kBF16, DType::BF16); }

// Rounding of midpoints and their neighbours, by the scalar types and by the library's
// cast from F32 (or F64) tensors.
template <class Real>
void check_rounding(Format f, DType dt) {
  const std::vector<RoundCase> cases = rounding_cases<Real>(f);
  std::vector<Real> xs;
  for (const RoundCase& c : cases) {
    const uint16_t got = std::is_same_v<Real, float> ? to_bits_f(float(c.x), f) : to_bits(c.x, f);
    ASSERT_EQ(got, c.want) << dt << " from " << c.x;
    xs.push_back(Real(c.x));
  }
  const Tensor src = Tensor::from_vector<Real>(xs, {int64_t(xs.size())});
  const std::vector<uint16_t> got = read_all<uint16_t>(src.cast(dt));
  for (size_t i = 0; i < cases.size(); ++i)
    ASSERT_EQ(got[i], cases[i].want)
        << "cast " << dtype_of_v<Real> << " -> " << dt << " of " << cases[i].x;
}

TEST(Half, F16RoundingFromFloat) { check_rounding<float>(kF16, DType::F16); }
TEST(Half, BF16RoundingFromFloat) { check_rounding<float>(kBF16, DType::BF16); }
TEST(Half, F16RoundingFromDouble) { check_rounding<double>(kF16, DType::F16); }
TEST(Half, BF16RoundingFromDouble) { check_rounding<double>(kBF16, DType::BF16); }

TEST(Half, SpecialValues) {
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(f16(65504.0).bits, 0x7BFF);
  EXPECT_EQ(f16(65519.99).bits, 0x7BFF);
  EXPECT_EQ(f16(65520.0).bits, 0x7C00);  // the tie above max goes to Inf (max is odd)
  EXPECT_EQ(f16(1e10).bits, 0x7C00);
  EXPECT_EQ(f16(-1e10).bits, 0xFC00);
  EXPECT_EQ(f16(inf).bits, 0x7C00);
  EXPECT_EQ(f16(-inf).bits, 0xFC00);
  EXPECT_EQ(f16(-0.0).bits, 0x8000);
  EXPECT_EQ(f16(std::ldexp(1.0, -24)).bits, 0x0001);  // smallest subnormal
  EXPECT_EQ(f16(std::ldexp(1.0, -25)).bits, 0x0000);  // half of it: tie to even (zero)
  EXPECT_EQ(f16(std::ldexp(1.5, -25)).bits, 0x0001);
  EXPECT_EQ(f16(std::ldexp(3.0, -25)).bits, 0x0002);     // 1.5 units: tie to even (2)
  EXPECT_EQ(f16(-std::ldexp(1.0, -26)).bits, 0x8000);    // underflow keeps the sign
  EXPECT_EQ(f16(std::ldexp(1023.5, -24)).bits, 0x0400);  // rounds up into the normals
  EXPECT_EQ(bf16(3.3895313892515355e38).bits, 0x7F7F);
  EXPECT_EQ(bf16(1e39).bits, 0x7F80);
  EXPECT_EQ(bf16(double(std::numeric_limits<float>::denorm_min())).bits, 0x0000);
  EXPECT_EQ(bf16(std::ldexp(1.0, -133)).bits, 0x0001);  // smallest bf16 subnormal
  EXPECT_TRUE(std::isnan(float(f16(std::nan("")))));
  EXPECT_TRUE(std::isnan(float(bf16(std::nanf("")))));
}

// A double just above a midpoint: through float it lands on the midpoint and then ties to
// even (down); rounded directly it goes up.
TEST(Half, NoDoubleRoundingFromDouble) {
  const double x16 = 1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40);
  EXPECT_EQ(f16(float(x16)).bits, 0x3C00);
  EXPECT_EQ(f16(x16).bits, 0x3C01);
  const double xb = 1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -40);
  EXPECT_EQ(bf16(float(xb)).bits, 0x3F80);
  EXPECT_EQ(bf16(xb).bits, 0x3F81);
  // The library's F64 -> F16/BF16 casts round directly too.
  const Tensor t = Tensor::from_vector<double>({x16, -x16, xb, -xb}, {4});
  const std::vector<uint16_t> h = read_all<uint16_t>(t.cast(DType::F16));
  const std::vector<uint16_t> b = read_all<uint16_t>(t.cast(DType::BF16));
  EXPECT_EQ(h[0], 0x3C01);
  EXPECT_EQ(h[1], 0xBC01);
  EXPECT_EQ(b[2], 0x3F81);
  EXPECT_EQ(b[3], 0xBF81);
}

// Many floats (all exponents, subnormals of both formats, specials) through
// F32 -> F16/BF16 -> F32 casts on contiguous, strided and flipped tensors.
TEST(Half, CastRoundTripMatchesScalarTypes) {
  std::mt19937 rng(7);
  std::vector<float> xs;
  const float specials[] = {0.0f,
                            -0.0f,
                            INFINITY,
                            -INFINITY,
                            NAN,
                            -NAN,
                            65504.0f,
                            65520.0f,
                            65519.0f,
                            1e-8f,
                            5.9604645e-8f,
                            2.98e-8f,
                            6.1035156e-5f,
                            std::numeric_limits<float>::denorm_min(),
                            std::numeric_limits<float>::min(),
                            std::numeric_limits<float>::max(),
                            -std::numeric_limits<float>::max(),
                            3.3961776e38f,
                            1.0f,
                            -1.0f};
  for (float s : specials) xs.push_back(s);
  while (xs.size() < 100003) {  // odd length: vector bodies and scalar tails both run
    const uint32_t u = rng();
    float v;
    std::memcpy(&v, &u, 4);
    xs.push_back(v);
  }
  const int64_t n = int64_t(xs.size());
  // Strided: column 1 of [n, 3]; flipped: reversed order.
  std::vector<float> wide(size_t(3 * n), 42.0f), rev(xs.rbegin(), xs.rend());
  for (int64_t i = 0; i < n; ++i) wide[size_t(3 * i + 1)] = xs[size_t(i)];
  const Tensor layouts[] = {
      Tensor::from_vector<float>(xs, {n}),
      Tensor::from_vector<float>(wide, {n, 3}).narrow(1, 1, 1).squeeze(1),
      Tensor::from_vector<float>(rev, {n}).flip({0}),
  };
  for (const Tensor& src : layouts) {
    for (DType dt : {DType::F16, DType::BF16}) {
      const Format f = dt == DType::F16 ? kF16 : kBF16;
      const Tensor h = src.cast(dt);
      const std::vector<uint16_t> bits = read_all<uint16_t>(h);
      const std::vector<float> back = h.cast(DType::F32).to_vector<float>();
      for (int64_t i = 0; i < n; ++i) {
        const float x = xs[size_t(i)];
        const uint16_t want = to_bits_f(x, f);
        if (std::isnan(x)) {
          ASSERT_TRUE(is_nan_bits(bits[size_t(i)], f)) << dt << " " << i;
          ASSERT_TRUE(std::isnan(back[size_t(i)]));
        } else {
          ASSERT_EQ(bits[size_t(i)], want) << dt << " of " << x << " (element " << i << ")";
          const float wv = from_bits(want, f);
          ASSERT_EQ(std::memcmp(&back[size_t(i)], &wv, 4), 0) << dt << " of " << x;
        }
      }
    }
  }
}

}  // namespace
}  // namespace numr
