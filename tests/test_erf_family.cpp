// erf, erfc and erfinv in double precision: the device library's (math/libm/erf.h, which
// CUDA runs for F64) against long double references over dense sweeps and on special
// values, and the float64 reference's (math/scalar_double.h and math/elementwise.h, what
// the parity tests compare every backend with) against a table computed by mpmath
// (tests/data/erf_oracle.inc, from scripts/erf_table.py).
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <vector>

#include "math/device_libm.h"
#include "math/elementwise.h"

namespace {

namespace libm = numr::math::libm;

// Error of got against ref in units of the last place of ref rounded to double (subnormal
// results: 2^-1074).
double ulp_error(double got, long double ref) {
  if (std::isnan(ref)) return std::isnan(got) ? 0.0 : 1e9;
  const double rd = static_cast<double>(ref);
  if (std::isinf(rd) || std::isinf(got)) return got == rd ? 0.0 : 1e9;
  if (std::isnan(got)) return 1e9;
  const long double a = std::fabs(ref);
  const int e = a < DBL_MIN ? -1022 : std::ilogb(a);
  return static_cast<double>(std::fabs(got - ref) / std::ldexp(1.0L, e - 52));
}

// Newton's method on erfl (erfcl near 1) in long double, from the double result.
long double erfinv_ref(long double x) {
  const long double a = std::fabs(x);
  if (!(a < 1)) return a == 1 ? std::copysign(HUGE_VALL, x) : std::nanl("");
  long double y = libm::erfinv(static_cast<double>(a));
  const long double c = 2 / std::sqrt(std::acos(-1.0L));
  for (int i = 0; i < 3; ++i) {
    const long double f = a < 0.5L ? std::erf(y) - a : (1 - a) - std::erfc(y);
    y -= f / (c * std::exp(-y * y));
  }
  return x < 0 ? -y : y;
}

struct Case {
  const char* name;
  std::function<double(double)> f;
  std::function<long double(long double)> ref;
  std::vector<std::pair<double, double>> linear;  // ranges swept evenly
  double bound;                                   // ulp: the measured maximum rounded up
};

constexpr int kPoints = 100000;

TEST(ErfFamily, DeviceLibmAccuracy) {
  const std::vector<Case> cases = {
      {"erf",
       [](double x) { return libm::erf(x); },
       [](long double x) { return std::erf(x); },
       {{-6, 6}, {-1e-3, 1e-3}, {0.9, 1.1}},
       1.5},
      {"erfc",
       [](double x) { return libm::erfc(x); },
       [](long double x) { return std::erfc(x); },
       {{-6, 27.5}, {0.9, 1.1}, {-1e-3, 1e-3}},
       3.5},
      {"erfinv",
       [](double x) { return libm::erfinv(x); },
       erfinv_ref,
       {{-1, 1}, {-1e-3, 1e-3}, {0.999, 1}, {1 - 1e-9, 1}},
       3.5},
  };
  for (const Case& c : cases) {
    double worst = 0, at = 0;
    const auto probe = [&](double x) {
      const double e = ulp_error(c.f(x), c.ref(x));
      if (!(e <= worst)) worst = e, at = x;
    };
    for (const auto& [lo, hi] : c.linear)
      for (int i = 0; i <= kPoints; ++i) probe(lo + (hi - lo) * (double(i) / kPoints));
    // Every binade from the subnormals up, a few points each, both signs.
    for (int e = -1074; e < 5; ++e)
      for (double m : {1.0, 1.1, 1.37, 1.5, 1.77, 1.999}) {
        probe(std::ldexp(m, e));
        probe(-std::ldexp(m, e));
      }
    for (int k = 1; k <= 53; ++k) probe(1 - std::ldexp(1.0, -k));  // erfinv near 1
    std::printf("%-7s max %.3f ulp (x = %.17g)\n", c.name, worst, at);
    EXPECT_LE(worst, c.bound) << c.name << " at x = " << at;
  }
}

TEST(ErfFamily, DeviceLibmSpecialValues) {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const auto same = [](double got, double want) {
    return std::isnan(want) ? std::isnan(got)
                            : got == want && std::signbit(got) == std::signbit(want);
  };
  struct Io {
    const char* name;
    double (*f)(double);
    double in, want;
  };
  const auto erf = [](double x) { return libm::erf(x); };
  const auto erfc = [](double x) { return libm::erfc(x); };
  const auto erfinv = [](double x) { return libm::erfinv(x); };
  const std::vector<Io> io = {
      {"erf", erf, 0.0, 0.0},
      {"erf", erf, -0.0, -0.0},
      {"erf", erf, inf, 1.0},
      {"erf", erf, -inf, -1.0},
      {"erf", erf, nan, nan},
      {"erf", erf, 0x1p-1074, 0x1p-1074},
      {"erfc", erfc, 0.0, 1.0},
      {"erfc", erfc, -0.0, 1.0},
      {"erfc", erfc, inf, 0.0},
      {"erfc", erfc, -inf, 2.0},
      {"erfc", erfc, nan, nan},
      {"erfc", erfc, 28.0, 0.0},
      {"erfinv", erfinv, 0.0, 0.0},
      {"erfinv", erfinv, -0.0, -0.0},
      {"erfinv", erfinv, 1.0, inf},
      {"erfinv", erfinv, -1.0, -inf},
      {"erfinv", erfinv, 1.0000000000000002, nan},
      {"erfinv", erfinv, -2.0, nan},
      {"erfinv", erfinv, inf, nan},
      {"erfinv", erfinv, -inf, nan},
      {"erfinv", erfinv, nan, nan},
  };
  for (const Io& c : io)
    EXPECT_TRUE(same(c.f(c.in), c.want))
        << c.name << "(" << c.in << ") = " << c.f(c.in) << ", want " << c.want;
}

struct OracleRow {
  const char* fn;
  double x;
  long double value;
};
const OracleRow kOracle[] = {
#include "data/erf_oracle.inc"
};

// The float64 reference and the device library against mpmath.
TEST(ErfFamily, MatchesMpmathTable) {
  int n = 0;
  for (const OracleRow& r : kOracle) {
    double ref = 0, dev = 0;
    if (std::strcmp(r.fn, "erf") == 0) {
      ref = numr::math::erf(r.x);
      dev = libm::erf(r.x);
    } else if (std::strcmp(r.fn, "erfc") == 0) {
      ref = numr::math::erfc(r.x);
      dev = libm::erfc(r.x);
    } else {
      ref = numr::math::erfinv(r.x);
      dev = libm::erfinv(r.x);
    }
    EXPECT_LE(ulp_error(ref, r.value), 3.5) << "reference " << r.fn << "(" << r.x << ") = " << ref;
    EXPECT_LE(ulp_error(dev, r.value), 3.5) << "libm " << r.fn << "(" << r.x << ") = " << dev;
    ++n;
  }
  EXPECT_GT(n, 80);
}

}  // namespace
