// The device math library (math/device_libm.h) instantiated with double and compared with
// the long double functions of <cmath> on random points in many ranges, on special values
// against the double std:: functions (C99 Annex F), and instantiated once more with a "lane"
// type that offers only the operations the library may use.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "math/device_libm.h"
#include "support/libm_lane.h"

namespace {

namespace libm = numr::math::libm;

// A double number type with exactly the allowed operations (tests/support/libm_lane.h).
using Lane = numr::test::Lane<double>;

using Fn1 = std::function<double(double)>;
using Lane1 = std::function<Lane(Lane)>;
using Ref1 = std::function<long double(long double)>;

// Error of got against ref in units of the last place of ref rounded to double.
double ulp_error(double got, long double ref) {
  const double rd = static_cast<double>(ref);
  if (std::isnan(rd)) return std::isnan(got) ? 0 : INFINITY;
  if (std::isinf(rd)) return got == rd ? 0 : INFINITY;
  if (std::isnan(got) || std::isinf(got)) return INFINITY;
  const int e = rd == 0 ? -1074 : std::max(std::ilogb(rd), -1022) - 52;
  return static_cast<double>(std::fabs(static_cast<long double>(got) - ref) / std::ldexp(1.0L, e));
}

struct Worst {
  double err = 0, x = 0, y = 0;
  long n = 0;
};

class Sampler {
 public:
  explicit Sampler(std::uint64_t seed) : rng_(seed) {}
  double uni(double a, double b) { return std::uniform_real_distribution<double>(a, b)(rng_); }
  // |x| log-uniform in [lo, hi], optionally with a random sign.
  double logu(double lo, double hi, bool sign = false) {
    const double v = std::exp2(uni(std::log2(lo), std::log2(hi)));
    return sign && (rng_() & 1) ? -v : v;
  }
  long integer(long lo, long hi) { return std::uniform_int_distribution<long>(lo, hi)(rng_); }
  // A double within `ulps` ulps of x.
  double near(double x, long ulps) {
    long k = integer(-ulps, ulps);
    for (; k > 0; --k) x = std::nextafter(x, INFINITY);
    for (; k < 0; ++k) x = std::nextafter(x, -INFINITY);
    return x;
  }

 private:
  std::mt19937_64 rng_;
};

constexpr int kN = 100000;  // points per range

struct Range {
  const char* name;
  std::function<double(Sampler&)> gen;
};

Worst check1(const char* fname, const Fn1& f, const Ref1& ref, const std::vector<Range>& ranges,
             double bound) {
  Worst all;
  Sampler s(std::hash<std::string>{}(fname));
  for (const auto& r : ranges) {
    Worst w;
    for (int i = 0; i < kN; ++i) {
      const double x = r.gen(s);
      const double e = ulp_error(f(x), ref(x));
      if (!(e <= w.err)) w = {e, x, 0, 0};
    }
    std::printf("  %-6s %-22s max %.3f ulp (x = %.17g)\n", fname, r.name, w.err, w.x);
    EXPECT_LE(w.err, bound) << fname << " on " << r.name << " at x = " << w.x;
    if (!(w.err <= all.err)) all = {w.err, w.x, 0, all.n};
    all.n += kN;
  }
  return all;
}

constexpr double kPi = 3.141592653589793;
constexpr double kMax = DBL_MAX, kMinNormal = DBL_MIN, kTrue0 = 4.9406564584124654e-324;

// Points within a few hundred ulps of k pi/2, k up to kmax (zeros and poles of sin/cos/tan).
Range near_half_pi(const char* name, long kmax) {
  return {name, [kmax](Sampler& s) {
            const long k = s.integer(-kmax, kmax);
            const double x = static_cast<double>(static_cast<long double>(k) *
                                                 1.57079632679489661923132169163975144L);
            return s.near(x, 300);
          }};
}

std::vector<double> special_values() {
  return {0.0,           -0.0,
          INFINITY,      -INFINITY,
          NAN,           1.0,
          -1.0,          0.5,
          -0.5,          2.0,
          -2.0,          3.0,
          -3.0,          10.0,
          0.1,           kTrue0,
          -kTrue0,       kMinNormal,
          -kMinNormal,   kMax,
          -kMax,         1e-300,
          -1e-300,       1e300,
          -1e300,        709.782712893384,
          709.79,        -745.1332191019411,
          -745.14,       710.475860073944,
          -710.476,      1024.0,
          -1074.0,       -1075.0,
          kPi,           -kPi,
          kPi / 2,       1.0 - 0x1p-53,
          1.0 + 0x1p-52, 0x1p-30,
          -0x1p-30,      22.0,
          19.1,          0x1p28,
          0x1p52,        0x1p53,
          1e16,          1e22};
}

bool same_special(double got, double want) {
  if (std::isnan(want)) return std::isnan(got);
  if (want == 0) return got == 0 && std::signbit(got) == std::signbit(want);
  if (std::isinf(want)) return got == want;
  return ulp_error(got, want) <= 4;
}

struct Unary {
  const char* name;
  Fn1 f;
  Lane1 lane;
  Fn1 std_double;
  Ref1 ref;
  std::vector<Range> ranges;
  double bound;
};

#define NUMR_UNARY(fn) \
#fn, [](double x) { return libm::fn(x); },                    \
      [](Lane x) { return libm::fn(x); },                    \
      [](double x) { return std::fn(x); }, [](long double x) { return std::fn(x); }

std::vector<Unary> unaries() {
  const Range tiny{"tiny", [](Sampler& s) { return s.logu(1e-300, 1e-8, true); }};
  const Range subnormal{"subnormal", [](Sampler& s) { return s.logu(kTrue0, kMinNormal, true); }};
  const Range unit{"[-1,1]", [](Sampler& s) { return s.uni(-1, 1); }};
  const Range wide_pos{"(0,max] log", [](Sampler& s) { return s.logu(kTrue0, kMax); }};
  const Range wide{"±[1e-300,1e300] log", [](Sampler& s) { return s.logu(1e-300, 1e300, true); }};
  const Range around1{"1+[-0.3,0.42]", [](Sampler& s) { return 1 + s.uni(-0.3, 0.42); }};
  const Range trig_small{"[-pi,pi]", [](Sampler& s) { return s.uni(-kPi, kPi); }};
  const Range trig_mid{"[-1e3,1e3]", [](Sampler& s) { return s.uni(-1e3, 1e3); }};
  const Range trig_big{"[-1e6,1e6]", [](Sampler& s) { return s.uni(-1e6, 1e6); }};
  const Range trig_huge{"±[1e6,2^52] log", [](Sampler& s) { return s.logu(1e6, 0x1p52, true); }};
  const std::vector<Range> trig = {tiny,
                                   trig_small,
                                   trig_mid,
                                   trig_big,
                                   trig_huge,
                                   near_half_pi("near k pi/2, k<=8", 8),
                                   near_half_pi("near k pi/2, |x|<=1e6", 636620),
                                   near_half_pi("near k pi/2, |x|<=1e12", 636619772367),
                                   near_half_pi("near k pi/2, |x|<=4e15", 2500000000000000)};
  std::vector<Unary> u = {
      {NUMR_UNARY(exp),
       {tiny,
        unit,
        {"[-745.2,709.8]", [](Sampler& s) { return s.uni(-745.2, 709.8); }},
        {"[700,709.78]", [](Sampler& s) { return s.uni(700, 709.78); }},
        {"[-745.13,-708] subnormal", [](Sampler& s) { return s.uni(-745.13, -708); }}},
       1.5},
      {NUMR_UNARY(exp2),
       {tiny,
        unit,
        {"[-1075,1024]", [](Sampler& s) { return s.uni(-1075, 1024); }},
        {"[1000,1023.99]", [](Sampler& s) { return s.uni(1000, 1023.99); }},
        {"[-1074.9,-1020] subnormal", [](Sampler& s) { return s.uni(-1074.9, -1020); }}},
       1.5},
      {NUMR_UNARY(expm1),
       {tiny,
        unit,
        subnormal,
        {"[-40,40]", [](Sampler& s) { return s.uni(-40, 40); }},
        {"[-800,709.78]", [](Sampler& s) { return s.uni(-800, 709.78); }}},
       1.5},
      {NUMR_UNARY(log), {wide_pos, around1, subnormal}, 1.5},
      {NUMR_UNARY(log2), {wide_pos, around1, subnormal}, 1.5},
      {NUMR_UNARY(log10), {wide_pos, around1, subnormal}, 1.5},
      {NUMR_UNARY(log1p),
       {tiny,
        unit,
        subnormal,
        {"(0,max] log", [](Sampler& s) { return s.logu(1e-20, kMax); }},
        {"-1+[1e-300,0.5] log", [](Sampler& s) { return -1 + s.logu(1e-300, 0.5); }}},
       1.5},
      {NUMR_UNARY(sin), trig, 1.5},
      {NUMR_UNARY(cos), trig, 1.5},
      {NUMR_UNARY(tan), trig, 1.5},
      {NUMR_UNARY(asin),
       {tiny,
        unit,
        {"1-[1e-17,0.5] log", [](Sampler& s) { return 1 - s.logu(1e-17, 0.5); }},
        {"-1+[1e-17,0.5] log", [](Sampler& s) { return -1 + s.logu(1e-17, 0.5); }}},
       1.5},
      {NUMR_UNARY(acos),
       {tiny,
        unit,
        {"1-[1e-17,0.5] log", [](Sampler& s) { return 1 - s.logu(1e-17, 0.5); }},
        {"-1+[1e-17,0.5] log", [](Sampler& s) { return -1 + s.logu(1e-17, 0.5); }}},
       1.5},
      {NUMR_UNARY(atan),
       {tiny, unit, wide, {"[-10,10]", [](Sampler& s) { return s.uni(-10, 10); }}},
       1.5},
      {NUMR_UNARY(sinh),
       {tiny,
        unit,
        {"[-25,25]", [](Sampler& s) { return s.uni(-25, 25); }},
        {"[-710.47,710.47]", [](Sampler& s) { return s.uni(-710.47, 710.47); }}},
       2.5},
      {NUMR_UNARY(cosh),
       {tiny,
        unit,
        {"[-25,25]", [](Sampler& s) { return s.uni(-25, 25); }},
        {"[-710.47,710.47]", [](Sampler& s) { return s.uni(-710.47, 710.47); }}},
       2.5},
      {NUMR_UNARY(tanh),
       {tiny, unit, {"[-25,25]", [](Sampler& s) { return s.uni(-25, 25); }}},
       2.5},
      {NUMR_UNARY(asinh),
       {tiny, unit, wide, {"[-5,5]", [](Sampler& s) { return s.uni(-5, 5); }}},
       2.5},
      {NUMR_UNARY(acosh),
       {{"1+[1e-17,1] log", [](Sampler& s) { return 1 + s.logu(1e-17, 1); }},
        {"[1,5]", [](Sampler& s) { return s.uni(1, 5); }},
        {"[1,max] log", [](Sampler& s) { return s.logu(1, kMax); }}},
       1.5},
      {NUMR_UNARY(atanh),
       {tiny,
        unit,
        {"1-[1e-17,0.5] log", [](Sampler& s) { return 1 - s.logu(1e-17, 0.5); }},
        {"-1+[1e-17,0.5] log", [](Sampler& s) { return -1 + s.logu(1e-17, 0.5); }}},
       2.5},
      {NUMR_UNARY(cbrt), {wide, subnormal, unit, {"(0,max] log", wide_pos.gen}}, 1.5},
  };
  return u;
}
#undef NUMR_UNARY

// pow: random points; y = t / log(x) puts results near the overflow and underflow edges.
struct PowCase {
  const char* name;
  std::function<std::pair<double, double>(Sampler&)> gen;
};

std::vector<PowCase> pow_cases() {
  return {
      {"x [1e-3,1e3], y [-50,50]",
       [](Sampler& s) {
         return std::pair{s.logu(1e-3, 1e3), s.uni(-50, 50)};
       }},
      {"x [0.5,2], y [-1000,1000]",
       [](Sampler& s) {
         return std::pair{s.uni(0.5, 2), s.uni(-1000, 1000)};
       }},
      {"x (0,max] log, y [-2,2]",
       [](Sampler& s) {
         return std::pair{s.logu(kTrue0, kMax), s.uni(-2, 2)};
       }},
      {"results near over/underflow",
       [](Sampler& s) {
         const double x = s.logu(1e-10, 1e10);
         const double t = s.uni(0, 1) < 0.5 ? s.uni(690, 709.78) : s.uni(-745.1, -700);
         return std::pair{x, t / std::log(x)};
       }},
      {"x near 1, |y| huge",
       [](Sampler& s) {
         const double d = s.logu(1e-16, 1e-3, true);
         return std::pair{1 + d, s.uni(-1, 1) * 600 / std::fabs(d)};
       }},
      {"negative x, integral y",
       [](Sampler& s) {
         return std::pair{-s.logu(1e-3, 1e3), static_cast<double>(s.integer(-100, 100))};
       }},
      {"negative x, y half-integer (NaN)",
       [](Sampler& s) {
         return std::pair{-s.logu(1e-3, 1e3), static_cast<double>(s.integer(-100, 100)) + 0.5};
       }},
      {"x integral, y integral",
       [](Sampler& s) {
         return std::pair{static_cast<double>(s.integer(-20, 20)),
                          static_cast<double>(s.integer(-30, 30))};
       }},
      {"x subnormal, y [-0.3,0.3]",
       [](Sampler& s) {
         return std::pair{s.logu(kTrue0, kMinNormal), s.uni(-0.3, 0.3)};
       }},
  };
}

std::vector<std::pair<double, double>> atan2_inputs(Sampler& s, int which) {
  std::vector<std::pair<double, double>> v;
  for (int i = 0; i < kN; ++i) {
    switch (which) {
      case 0: v.push_back({s.uni(-1, 1), s.uni(-1, 1)}); break;
      case 1: v.push_back({s.logu(1e-300, 1e300, true), s.logu(1e-300, 1e300, true)}); break;
      case 2: v.push_back({s.logu(1e-3, 1e3, true), s.logu(1e-3, 1e3, true)}); break;
      default: {
        const double a = s.logu(0.5, 2, true);
        v.push_back({a * s.uni(0.999, 1.001), (s.uni(0, 1) < 0.5 ? -1 : 1) * a});
      }
    }
  }
  return v;
}

}  // namespace

TEST(DeviceLibm, UnaryAccuracy) {
  for (const auto& u : unaries()) {
    const Worst w = check1(u.name, u.f, u.ref, u.ranges, u.bound);
    std::printf("%-6s max %.3f ulp over %ld points (x = %.17g)\n", u.name, w.err, w.n, w.x);
  }
}

TEST(DeviceLibm, Atan2Accuracy) {
  Sampler s(7);
  const char* names[] = {"[-1,1]^2", "±[1e-300,1e300]^2 log", "±[1e-3,1e3]^2 log",
                         "near the diagonals"};
  double all = 0;
  for (int which = 0; which < 4; ++which) {
    Worst w;
    for (const auto& [y, x] : atan2_inputs(s, which)) {
      const double e = ulp_error(
          libm::atan2(y, x), std::atan2(static_cast<long double>(y), static_cast<long double>(x)));
      if (!(e <= w.err)) w = {e, x, y, 0};
    }
    std::printf("  atan2  %-22s max %.3f ulp (y = %.17g, x = %.17g)\n", names[which], w.err, w.y,
                w.x);
    EXPECT_LE(w.err, 1.5) << names[which];
    all = std::max(all, w.err);
  }
  std::printf("atan2  max %.3f ulp over %d points\n", all, 4 * kN);
}

TEST(DeviceLibm, PowAccuracy) {
  Sampler s(11);
  double all = 0;
  for (const auto& c : pow_cases()) {
    Worst w;
    for (int i = 0; i < kN; ++i) {
      const auto [x, y] = c.gen(s);
      const double e = ulp_error(
          libm::pow(x, y), std::pow(static_cast<long double>(x), static_cast<long double>(y)));
      if (!(e <= w.err)) w = {e, x, y, 0};
    }
    std::printf("  pow    %-32s max %.3f ulp (x = %.17g, y = %.17g)\n", c.name, w.err, w.x, w.y);
    EXPECT_LE(w.err, 2) << c.name << " x = " << w.x << " y = " << w.y;
    all = std::max(all, w.err);
  }
  std::printf("pow    max %.3f ulp over %zu points\n", all, pow_cases().size() * kN);
}

TEST(DeviceLibm, UnarySpecialValues) {
  for (const auto& u : unaries()) {
    for (const double x : special_values()) {
      const double got = u.f(x), want = u.std_double(x);
      const std::string name = u.name;
      if ((name == "sin" || name == "cos" || name == "tan") && std::isfinite(x) &&
          std::fabs(x) > 0x1p52) {  // past the documented limit: in range only
        EXPECT_TRUE(name == "tan" ? std::isfinite(got) : std::fabs(got) <= 1) << name << x;
        continue;
      }
      EXPECT_TRUE(same_special(got, want))
          << u.name << "(" << x << ") = " << got << ", std:: gives " << want;
    }
  }
}

TEST(DeviceLibm, BinarySpecialValues) {
  const std::vector<double> xs = {0.0,
                                  -0.0,
                                  INFINITY,
                                  -INFINITY,
                                  NAN,
                                  1.0,
                                  -1.0,
                                  0.5,
                                  -0.5,
                                  2.0,
                                  -2.0,
                                  3.0,
                                  -3.0,
                                  1.5,
                                  -1.5,
                                  kTrue0,
                                  -kTrue0,
                                  kMax,
                                  -kMax,
                                  1e-300,
                                  -1e300,
                                  0x1p53,
                                  -0x1p53,
                                  9007199254740991.0,
                                  -9007199254740991.0,
                                  1e300,
                                  -1e-300};
  for (const double x : xs) {
    for (const double y : xs) {
      const double p = libm::pow(x, y), pw = std::pow(x, y);
      EXPECT_TRUE(same_special(p, pw))
          << "pow(" << x << ", " << y << ") = " << p << ", std:: gives " << pw;
      const double a = libm::atan2(y, x), aw = std::atan2(y, x);
      EXPECT_TRUE(same_special(a, aw))
          << "atan2(" << y << ", " << x << ") = " << a << ", std:: gives " << aw;
    }
  }
}

// Beyond the documented limit sin, cos and tan lose accuracy but stay in range.
TEST(DeviceLibm, TrigHugeArgumentsStaySane) {
  Sampler s(3);
  for (int i = 0; i < 20000; ++i) {
    const double x = s.logu(0x1p52, kMax, true);
    const double sn = libm::sin(x), cs = libm::cos(x), tn = libm::tan(x);
    ASSERT_TRUE(std::fabs(sn) <= 1 && std::fabs(cs) <= 1 && std::isfinite(tn)) << x;
    ASSERT_NEAR(sn * sn + cs * cs, 1.0, 1e-15) << x;
  }
}

// The lane instantiation compiles only with the allowed operations, never calls pow2i or
// ilogb_normal outside their contract, and gives bit-identical results to double.
TEST(DeviceLibm, LaneTypeUsesOnlyAllowedOperations) {
  Sampler s(5);
  std::vector<double> xs = special_values();
  for (int i = 0; i < 3000; ++i) {
    xs.push_back(s.logu(kTrue0, kMax, true));
    xs.push_back(s.uni(-2, 2));
    xs.push_back(s.uni(-800, 800));
  }
  using numr::test::same_value;
  Lane::violations = 0;
  for (const auto& u : unaries()) {
    for (const double x : xs) {
      const double d = u.f(x), l = u.lane(Lane(x)).v;
      ASSERT_TRUE(same_value(l, d)) << u.name << "(" << x << "): double " << d << ", lane " << l;
    }
  }
  for (std::size_t i = 0; i + 1 < xs.size(); i += 7) {
    const double x = xs[i], y = xs[i + 1];
    ASSERT_TRUE(same_value(libm::pow(Lane(x), Lane(y)).v, libm::pow(x, y))) << x << " " << y;
    ASSERT_TRUE(same_value(libm::atan2(Lane(y), Lane(x)).v, libm::atan2(y, x))) << x << " " << y;
  }
  EXPECT_EQ(Lane::violations, 0);
}
