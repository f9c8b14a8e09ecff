// The single-precision math library (math/libm32/libm32.h), instantiated with a float "lane"
// type that offers only the operations the library may use (pow2i and ilogb_normal check
// their contracts), compared with the long double functions of <cmath> over dense sweeps of
// each domain, and on special values (C99 Annex F). erfinv's reference is Newton's method
// on erfl / erfcl in long double, from the float result.
#include <gtest/gtest.h>

#include <bit>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <limits>
#include <vector>

#include "math/libm32/libm32.h"
#include "support/libm_lane.h"

namespace {

namespace libm32 = numr::math::libm32;

// A float number type with exactly the allowed operations (tests/support/libm_lane.h).
using F = numr::test::Lane<float>;

// Error of got against ref in units of the last place of ref rounded to float (subnormal
// results: 2^-149). An overflowing reference counts as exact when got is the same infinity.
double ulp_error(float got, long double ref) {
  if (std::isnan(ref)) return std::isnan(got) ? 0.0 : 1e9;
  const float rf = static_cast<float>(ref);
  if (std::isinf(rf) || std::isinf(got)) return got == rf ? 0.0 : 1e9;
  if (std::isnan(got)) return 1e9;
  const long double a = std::fabs(ref);
  const int e = a < FLT_MIN ? -126 : std::ilogb(a);
  return static_cast<double>(std::fabs(got - ref) / std::ldexp(1.0L, e - 23));
}

long double erfinv_ref(long double x) {
  const long double a = std::fabs(x);
  if (!(a < 1)) return a == 1 ? std::copysign(HUGE_VALL, x) : std::nanl("");
  long double y = libm32::erfinv(static_cast<float>(a));
  const long double c = 2 / std::sqrt(std::acos(-1.0L));
  for (int i = 0; i < 5; ++i) {
    const long double f = a < 0.5L ? std::erf(y) - a : (1 - a) - std::erfc(y);
    y -= f / (c * std::exp(-y * y));
  }
  return x < 0 ? -y : y;
}

using Fn = std::function<F(F)>;
using Ref = std::function<long double(long double)>;

struct Range {
  float lo, hi;
  bool log_spaced;  // stride over the bit patterns (lo, hi > 0; -x is tried too)
};

struct Case {
  const char* name;
  Fn f;
  Ref ref;
  std::vector<Range> ranges;
  double bound;  // ulp
};

constexpr int kPoints = 60000;  // per range

struct Worst {
  double err = 0;
  float x = 0;
};

void probe(const Case& c, float x, Worst& w) {
  const double e = ulp_error(c.f(F(x)).v, c.ref(static_cast<long double>(x)));
  if (!(e <= w.err)) w = {e, x};
}

Worst sweep(const Case& c) {
  Worst w;
  for (const Range& r : c.ranges) {
    if (r.log_spaced) {
      const auto b0 = std::bit_cast<std::uint32_t>(r.lo), b1 = std::bit_cast<std::uint32_t>(r.hi);
      const std::uint32_t step = std::max<std::uint32_t>(1, (b1 - b0) / kPoints);
      for (std::uint32_t b = b0; b <= b1 && b >= b0; b += step) {
        probe(c, std::bit_cast<float>(b), w);
        probe(c, -std::bit_cast<float>(b), w);
      }
    } else {
      for (int i = 0; i <= kPoints; ++i) probe(c, r.lo + (r.hi - r.lo) * (float(i) / kPoints), w);
    }
  }
  return w;
}

#define NUMR_F(fn) [](F x) { return libm32::fn(x); }
#define NUMR_R(fn) [](long double x) { return std::fn(x); }

// The bounds are the measured maxima rounded up (see libm32.h).
std::vector<Case> cases() {
  const float tiny = 0x1p-149f, big = FLT_MAX;
  return {
      {"exp", NUMR_F(exp), NUMR_R(exp), {{-104, 89, false}, {tiny, 120, true}}, 1.5},
      {"exp2", NUMR_F(exp2), NUMR_R(exp2), {{-151, 129, false}, {tiny, 160, true}}, 1},
      {"expm1", NUMR_F(expm1), NUMR_R(expm1), {{-20, 89, false}, {tiny, 120, true}}, 1.5},
      {"log", NUMR_F(log), NUMR_R(log), {{0, 4, false}, {tiny, big, true}}, 1},
      {"log2", NUMR_F(log2), NUMR_R(log2), {{0, 4, false}, {tiny, big, true}}, 1},
      {"log1p", NUMR_F(log1p), NUMR_R(log1p), {{-1, 4, false}, {tiny, big, true}}, 1},
      {"sin",
       NUMR_F(sin),
       NUMR_R(sin),
       {{-10, 10, false}, {-0x1p17f, 0x1p17f, false}, {tiny, 0x1p17f, true}},
       1},
      {"cos",
       NUMR_F(cos),
       NUMR_R(cos),
       {{-10, 10, false}, {-0x1p17f, 0x1p17f, false}, {tiny, 0x1p17f, true}},
       1},
      {"tan",
       NUMR_F(tan),
       NUMR_R(tan),
       {{-10, 10, false}, {-0x1p17f, 0x1p17f, false}, {tiny, 0x1p17f, true}},
       1},
      {"sinh", NUMR_F(sinh), NUMR_R(sinh), {{-90, 90, false}, {tiny, 100, true}}, 2},
      {"cosh", NUMR_F(cosh), NUMR_R(cosh), {{-90, 90, false}, {tiny, 100, true}}, 2},
      {"tanh", NUMR_F(tanh), NUMR_R(tanh), {{-10, 10, false}, {tiny, 100, true}}, 1.5},
      {"erf", NUMR_F(erf), NUMR_R(erf), {{-6, 6, false}, {tiny, 100, true}}, 1.5},
      {"erfc", NUMR_F(erfc), NUMR_R(erfc), {{-3, 11, false}, {tiny, 100, true}}, 3.5},
      {"erfinv",
       NUMR_F(erfinv),
       erfinv_ref,
       {{-1, 1, false}, {0.999f, 1, false}, {tiny, 1, true}},
       3},
  };
}

TEST(F32Libm, Accuracy) {
  F::violations = 0;
  for (const Case& c : cases()) {
    const Worst w = sweep(c);
    std::printf("%-7s max %.3f ulp (x = %.9g)\n", c.name, w.err, double(w.x));
    EXPECT_LE(w.err, c.bound) << c.name << " at x = " << w.x;
  }
  EXPECT_EQ(F::violations, 0) << "pow2i or ilogb_normal called outside its contract";
}

// C99 Annex F values (and erfinv's: ±1 -> ±inf, |x| > 1 -> NaN), signed zeros included.
TEST(F32Libm, SpecialValues) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  struct Special {
    const char* name;
    Fn f;
    std::vector<std::pair<float, float>> io;
  };
  const std::vector<Special> specials = {
      {"exp",
       NUMR_F(exp),
       {{0.f, 1.f}, {-0.f, 1.f}, {inf, inf}, {-inf, 0.f}, {nan, nan}, {100.f, inf}, {-200.f, 0.f}}},
      {"exp2",
       NUMR_F(exp2),
       {{0.f, 1.f},
        {inf, inf},
        {-inf, 0.f},
        {nan, nan},
        {128.f, inf},
        {-149.f, 0x1p-149f},
        {-150.5f, 0.f}}},
      {"expm1",
       NUMR_F(expm1),
       {{0.f, 0.f}, {-0.f, -0.f}, {inf, inf}, {-inf, -1.f}, {nan, nan}, {0x1p-149f, 0x1p-149f}}},
      {"log",
       NUMR_F(log),
       {{1.f, 0.f}, {0.f, -inf}, {-0.f, -inf}, {-1.f, nan}, {inf, inf}, {-inf, nan}, {nan, nan}}},
      {"log2",
       NUMR_F(log2),
       {{1.f, 0.f},
        {0.f, -inf},
        {-0.f, -inf},
        {-1.f, nan},
        {inf, inf},
        {nan, nan},
        {0x1p-149f, -149.f},
        {0x1p127f, 127.f}}},
      {"log1p",
       NUMR_F(log1p),
       {{0.f, 0.f},
        {-0.f, -0.f},
        {-1.f, -inf},
        {-2.f, nan},
        {inf, inf},
        {nan, nan},
        {0x1p-149f, 0x1p-149f}}},
      {"sin",
       NUMR_F(sin),
       {{0.f, 0.f}, {-0.f, -0.f}, {inf, nan}, {-inf, nan}, {nan, nan}, {0x1p-149f, 0x1p-149f}}},
      {"cos", NUMR_F(cos), {{0.f, 1.f}, {-0.f, 1.f}, {inf, nan}, {-inf, nan}, {nan, nan}}},
      {"tan", NUMR_F(tan), {{0.f, 0.f}, {-0.f, -0.f}, {inf, nan}, {-inf, nan}, {nan, nan}}},
      {"sinh",
       NUMR_F(sinh),
       {{0.f, 0.f}, {-0.f, -0.f}, {inf, inf}, {-inf, -inf}, {nan, nan}, {90.f, inf}}},
      {"cosh",
       NUMR_F(cosh),
       {{0.f, 1.f}, {-0.f, 1.f}, {inf, inf}, {-inf, inf}, {nan, nan}, {-90.f, inf}}},
      {"tanh", NUMR_F(tanh), {{0.f, 0.f}, {-0.f, -0.f}, {inf, 1.f}, {-inf, -1.f}, {nan, nan}}},
      {"erf",
       NUMR_F(erf),
       {{0.f, 0.f}, {-0.f, -0.f}, {inf, 1.f}, {-inf, -1.f}, {nan, nan}, {0x1p-149f, 0x1p-149f}}},
      {"erfc",
       NUMR_F(erfc),
       {{0.f, 1.f}, {-0.f, 1.f}, {inf, 0.f}, {-inf, 2.f}, {nan, nan}, {11.f, 0.f}, {1e30f, 0.f}}},
      {"erfinv",
       NUMR_F(erfinv),
       {{0.f, 0.f},
        {-0.f, -0.f},
        {1.f, inf},
        {-1.f, -inf},
        {1.5f, nan},
        {-1.5f, nan},
        {inf, nan},
        {-inf, nan},
        {nan, nan}}},
  };
  F::violations = 0;
  for (const Special& s : specials)
    for (const auto& [in, want] : s.io)
      EXPECT_TRUE(numr::test::same_value(s.f(F(in)).v, want))
          << s.name << "(" << in << ") = " << s.f(F(in)).v << ", want " << want;
  EXPECT_EQ(F::violations, 0);
}

TEST(F32Libm, TrigHugeArgumentsStayInRange) {
  for (float x : {0x1p18f, 1e20f, -3e38f, FLT_MAX}) {
    EXPECT_LE(std::fabs(libm32::sin(F(x)).v), 1.0f) << x;
    EXPECT_LE(std::fabs(libm32::cos(F(x)).v), 1.0f) << x;
    EXPECT_TRUE(std::isfinite(libm32::tan(F(x)).v)) << x;
  }
}

TEST(F32Libm, BitTests) {
  const float inf = std::numeric_limits<float>::infinity();
  for (float x : {0.f, -0.f, 1.f, -2.5f, 0x1p-149f, FLT_MAX, inf, -inf,
                  std::numeric_limits<float>::quiet_NaN(), -std::numeric_limits<float>::quiet_NaN(),
                  std::numeric_limits<float>::signaling_NaN()}) {
    EXPECT_EQ(libm32::isnan_bits(x), std::isnan(x)) << x;
    EXPECT_EQ(libm32::isinf_bits(x), std::isinf(x)) << x;
    EXPECT_EQ(libm32::isfinite_bits(x), std::isfinite(x)) << x;
  }
}

}  // namespace
