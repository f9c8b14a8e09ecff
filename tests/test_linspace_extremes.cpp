// linspace at the edges of double: ends far apart (end - start overflows), infinite ends,
// NaN. The first and last elements are exactly start and end; finite ends never give NaN.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "core/backend.h"
#include "numr/numr.h"

namespace numr {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

std::vector<double> lin(double start, double end, int64_t n, DType t = DType::F64) {
  return linspace(start, end, n, t).cast(DType::F64).to_vector<double>();
}

// Finite, from start to end in order, with the ends exact.
void expect_ordered(double start, double end, int64_t n) {
  SCOPED_TRACE(testing::Message() << "linspace(" << start << ", " << end << ", " << n << ")");
  const std::vector<double> v = lin(start, end, n);
  ASSERT_EQ(v.size(), size_t(n));
  EXPECT_EQ(v.front(), start);
  EXPECT_EQ(v.back(), end);
  for (int64_t i = 0; i < n; ++i) {
    ASSERT_TRUE(std::isfinite(v[size_t(i)])) << "element " << i << " is " << v[size_t(i)];
    if (i > 0) {
      if (end > start)
        ASSERT_GE(v[size_t(i)], v[size_t(i - 1)]) << i;
      else
        ASSERT_LE(v[size_t(i)], v[size_t(i - 1)]) << i;
    }
  }
}

TEST(LinspaceExtremes, EndsWhoseDifferenceOverflows) {
  EXPECT_EQ(lin(-1e308, 1e308, 3), (std::vector<double>{-1e308, 0.0, 1e308}));
  EXPECT_EQ(lin(-DBL_MAX, DBL_MAX, 3), (std::vector<double>{-DBL_MAX, 0.0, DBL_MAX}));
  EXPECT_EQ(lin(-DBL_MAX, DBL_MAX, 2), (std::vector<double>{-DBL_MAX, DBL_MAX}));
  // Odd counts put an element at the middle, where the largest multiple of the step is
  // formed (about DBL_MAX); every count up to a few thousand, and some larger.
  for (int64_t n = 2; n < 2000; ++n) {
    expect_ordered(-DBL_MAX, DBL_MAX, n);
    expect_ordered(DBL_MAX, -DBL_MAX, n);
    if (HasFatalFailure()) return;
  }
  for (int64_t n : {4097, 65537, 1000001}) {
    expect_ordered(-DBL_MAX, DBL_MAX, n);
    expect_ordered(-1e308, 0x1p1000, n);
  }
  // Symmetric about 0 (the two halves use the same multiples of the step).
  const std::vector<double> v = lin(-DBL_MAX, DBL_MAX, 100);
  for (size_t i = 0; i < v.size(); ++i) EXPECT_EQ(v[i], -v[v.size() - 1 - i]) << i;
}

TEST(LinspaceExtremes, NarrowerDTypesRoundTheFiniteValues) {
  // Values beyond F32's range round to infinity when stored, as any conversion does; the
  // middle is still exactly 0 and nothing is NaN.
  const std::vector<double> f = lin(-1e308, 1e308, 3, DType::F32);
  EXPECT_EQ(f, (std::vector<double>{-kInf, 0.0, kInf}));
}

TEST(LinspaceExtremes, InfiniteEnds) {
  // Inner values are the limit of start + t (end - start) for 0 < t < 1.
  EXPECT_EQ(lin(0, kInf, 3), (std::vector<double>{0.0, kInf, kInf}));
  EXPECT_EQ(lin(-kInf, 5, 4), (std::vector<double>{-kInf, -kInf, -kInf, 5.0}));
  EXPECT_EQ(lin(kInf, kInf, 3), (std::vector<double>{kInf, kInf, kInf}));
  EXPECT_EQ(lin(2, -kInf, 2), (std::vector<double>{2.0, -kInf}));
  EXPECT_EQ(lin(-kInf, kInf, 2), (std::vector<double>{-kInf, kInf}));  // no inner values
  EXPECT_EQ(lin(kInf, 0, 1), (std::vector<double>{kInf}));
  EXPECT_EQ(lin(0, kInf, 3, DType::F16), (std::vector<double>{0.0, kInf, kInf}));
  EXPECT_EQ(lin(1, kInf, 0).size(), 0u);
}

TEST(LinspaceExtremes, UndefinedValuesAreRefused) {
  for (auto f : {+[] { linspace(-kInf, kInf, 3); }, +[] { linspace(kInf, -kInf, 5); },
                 +[] { linspace(NAN, 1, 3); }, +[] { linspace(0, NAN, 1); }}) {
    try {
      f();
      ADD_FAILURE() << "expected InvalidArgument";
    } catch (const InvalidArgument& e) {
      EXPECT_EQ(std::string(e.what()).rfind("[linspace] ", 0), 0u) << e.what();
    }
  }
}

TEST(LinspaceExtremes, OrdinaryRangesAreUnchanged) {
  // The symmetric formula with step (end - start) / (n - 1), computed here independently.
  for (auto [s, e, n] : {std::tuple{0.0, 1.0, int64_t(5)}, std::tuple{-3.5, 7.25, int64_t(12)},
                         std::tuple{1e300, -1e300, int64_t(9)}}) {
    const double step = (e - s) / double(n - 1);
    const std::vector<double> v = lin(s, e, n);
    for (int64_t i = 0; i < n; ++i) {
      volatile double k = double(i < n / 2 ? i : n - 1 - i) * step;  // rounded, not fused
      EXPECT_EQ(v[size_t(i)], i < n / 2 ? s + k : e - k) << i;
    }
  }
}

TEST(LinspaceExtremes, EveryDeviceGivesTheCpuValues) {
  // Each backend computes the same rounded products and sums from the same fields.
  const std::vector<Device> devices = available_devices();
  if (devices.size() == 1) GTEST_SKIP() << "no device besides the CPU";
  for (const Device dev : devices) {
    for (const DType t : {DType::F64, DType::F32, DType::BF16}) {
      if (!backend_for(dev).supports_dtype(t)) continue;  // refused by name, tested apart
      for (auto [s, e, n] :
           {std::tuple{-DBL_MAX, DBL_MAX, int64_t(7)}, std::tuple{-1e308, 1e308, int64_t(3)},
            std::tuple{DBL_MAX, -DBL_MAX, int64_t(65537)}, std::tuple{0.0, kInf, int64_t(5)},
            std::tuple{-kInf, 2.0, int64_t(4)}, std::tuple{-0.5, 3.25, int64_t(1001)}}) {
        const std::vector<double> want = lin(s, e, n, t);
        const std::vector<double> got =
            linspace(s, e, n, t, dev).to(Device::cpu()).cast(DType::F64).to_vector<double>();
        EXPECT_EQ(got, want) << dev.str() << " " << t << " linspace(" << s << ", " << e << ", " << n
                             << ")";
      }
    }
  }
}

}  // namespace
}  // namespace numr
