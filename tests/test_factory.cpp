// Creation functions: zeros ones full arange linspace eye for several dtypes, and rand
// randn randint against the random-number specification (see the CPU factory kernel):
// element i of a draw is philox4x32(offset + i, seed) mapped to the distribution.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "math/random_normal.h"
#include "numr/numr.h"
#include "support/harness.h"

namespace numr {
namespace {

using test::RefTensor;

std::string exact(const Tensor& got, const Shape& shape, const std::vector<double>& want) {
  if (!got.is_contiguous()) return "result is not contiguous";
  return test::compare(got, RefTensor{shape, want}, {0.0, 0.0, 0.0});
}

template <class E>
void expect_error(const std::function<void()>& f, const std::string& op) {
  try {
    f();
    ADD_FAILURE() << "expected an error from " << op;
  } catch (const E& e) {
    EXPECT_EQ(std::string(e.what()).rfind("[" + op + "]", 0), 0u) << e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << op << " threw the wrong error: " << e.what();
  }
}

const std::vector<Shape>& fill_shapes() {
  static const std::vector<Shape> shapes = {{}, {0}, {7}, {33, 17}, {3, 0, 2}, {65537}};
  return shapes;
}

std::string check_filled(const std::function<Tensor(const Shape&)>& make, double value, DType t) {
  for (const Shape& s : fill_shapes()) {
    const Tensor x = make(s);
    if (x.dtype() != t) return "wrong dtype";
    const std::string msg = exact(x, s, std::vector<double>(size_t(shape_numel(s)), value));
    if (!msg.empty()) return shape_str(s) + ": " + msg;
  }
  return "";
}

TEST(ParityFactory, ZerosOnesFull) {
  test::for_each_case(OpId::zeros, test::dtypes_of(OpId::zeros), [](DType t, Device dev) {
    return check_filled([&](const Shape& s) { return zeros(s, t, dev); }, 0.0, t);
  });
  test::for_each_case(OpId::ones, test::dtypes_of(OpId::ones), [](DType t, Device dev) {
    return check_filled([&](const Shape& s) { return ones(s, t, dev); }, 1.0, t);
  });
  test::for_each_case(OpId::full, test::dtypes_of(OpId::full), [](DType t, Device dev) {
    const double v = t == DType::Bool ? 1.0 : is_floating(t) ? -2.5 : 7.0;
    std::string msg = check_filled([&](const Shape& s) { return full(s, v, t, dev); }, v, t);
    if (msg.empty() && is_floating(t)) {
      msg = check_filled([&](const Shape& s) { return full(s, INFINITY, t, dev); }, INFINITY, t);
      if (msg.empty()) msg = exact(full({3}, NAN, t, dev), {3}, {NAN, NAN, NAN});
      // 0.1 is rounded once, to the nearest value of the dtype.
      if (msg.empty()) msg = exact(full({2}, 0.1, t, dev), {2}, {0.1, 0.1});
    }
    return msg;
  });
}

TEST(Factory, FullErrors) {
  expect_error<InvalidArgument>([] { full({2}, 0.5, DType::I32); }, "full");
  expect_error<InvalidArgument>([] { full({2}, 256, DType::U8); }, "full");
  expect_error<InvalidArgument>([] { full({2}, -1, DType::U8); }, "full");
  expect_error<InvalidArgument>([] { full({2}, 2, DType::Bool); }, "full");
  expect_error<InvalidArgument>([] { full({2}, NAN, DType::I64); }, "full");
  expect_error<InvalidArgument>([] { zeros({2, -1}); }, "zeros");
  expect_error<InvalidArgument>([] { ones({-3}); }, "ones");
  // 2^63 itself is one past INT64_MAX (which a double cannot hold).
  expect_error<InvalidArgument>([] { full({1}, 0x1p63, DType::I64); }, "full");
  EXPECT_EQ(full({1}, -0x1p63, DType::I64).item<int64_t>(), INT64_MIN);
  expect_error<InvalidArgument>([] { full({1}, 0x1p31, DType::I32); }, "full");
}

TEST(Factory, ShapesBeyondTheElementLimit) {
  // Element counts that overflow int64_t, or exceed 2^60, are errors, not wrapped counts.
  const int64_t big = (int64_t(1) << 62) + 1;
  expect_error<InvalidArgument>([&] { zeros({big, 4}); }, "zeros");
  expect_error<InvalidArgument>([&] { zeros({3, int64_t(1) << 62}); }, "zeros");
  expect_error<InvalidArgument>([&] { full({int64_t(1) << 31, int64_t(1) << 30}, 1.0); }, "full");
  expect_error<InvalidArgument>([] { eye(int64_t(1) << 32); }, "eye");
  expect_error<InvalidArgument>(
      [] {
        Tensor::empty({int64_t(1) << 40, int64_t(1) << 40}, DType::U8);
      },
      "empty");
  Generator g(1);
  expect_error<InvalidArgument>([&] { rand({big, 4}, DType::F32, Device::cpu(), g); }, "rand");
  EXPECT_EQ(g.offset(), 0u);
  // With a zero extent, the others still bound the strides.
  expect_error<InvalidArgument>([] { zeros({0, int64_t(1) << 62, int64_t(1) << 62}); }, "zeros");
  const Tensor e = zeros({0, int64_t(1) << 30, int64_t(1) << 30});
  EXPECT_EQ(e.numel(), 0);
  EXPECT_EQ(e.strides(), (Strides{int64_t(1) << 60, int64_t(1) << 30, 1}));
  expect_error<InvalidArgument>([&] { e.reshape({0, int64_t(1) << 62, -1}); }, "reshape");
  expect_error<InvalidArgument>(
      [] {
        zeros({2}).broadcast_to({0, int64_t(1) << 62, int64_t(1) << 62, 2});
      },
      "broadcast_to");
}

// The specified sequences round each product before the add (no fused multiply-add).
double mul_rounded(double a, double b) {
  volatile double p = a * b;
  return p;
}

std::vector<double> arange_values(double start, double end, double step) {
  std::vector<double> v;
  const double n = std::ceil((end - start) / step);
  for (int64_t i = 0; i < int64_t(n); ++i) v.push_back(start + mul_rounded(double(i), step));
  return v;
}

TEST(ParityFactory, Arange) {
  test::for_each_case(OpId::arange, test::dtypes_of(OpId::arange), [](DType t, Device dev) {
    struct Case {
      double start, end, step;
    };
    std::vector<Case> cases = {{0, 10, 1}, {2, 9, 3},   {3, 3, 1},
                               {5, 0, 1},  {0, 7.5, 2}, {0, 256, 1}};
    if (t != DType::U8) cases.push_back({-50000, 50001, 1});  // several threads' worth
    if (is_signed(t))
      cases.insert(cases.end(), {{-3, 8, 2}, {5, 0, -1}, {10, -11, -3}, {0, 5, -1}});
    if (is_floating(t)) cases.insert(cases.end(), {{0, 1, 0.1}, {-1, 1, 0.25}, {1.5, -2, -0.5}});
    for (const Case& c : cases) {
      const std::vector<double> want = arange_values(c.start, c.end, c.step);
      const std::string msg =
          exact(arange(c.start, c.end, c.step, t, dev), {int64_t(want.size())}, want);
      if (!msg.empty())
        return "arange(" + std::to_string(c.start) + ", " + std::to_string(c.end) + ", " +
               std::to_string(c.step) + "): " + msg;
    }
    return std::string();
  });
}

TEST(Factory, ArangeDetails) {
  // Exactly ceil((end - start) / step) elements.
  EXPECT_EQ(arange(0, 1, 0.3, DType::F64).numel(), 4);
  EXPECT_EQ(arange(0, 0.9, 0.3, DType::F64).numel(), 3);
  EXPECT_EQ(arange(0, 10, 3, DType::I64).to_vector<int64_t>(), (std::vector<int64_t>{0, 3, 6, 9}));
  EXPECT_EQ(arange(0, 5, -1, DType::F32).numel(), 0);
  EXPECT_EQ(arange(0, 5).dtype(), DType::F32);
  expect_error<InvalidArgument>([] { arange(0, 5, 0); }, "arange");
  // Integers beyond 2^53 are not all doubles: not computed in double.
  expect_error<InvalidArgument>([] { arange(0x1p53, 0x1p53 + 4, 1, DType::I64); }, "arange");
  EXPECT_EQ(arange(0x1p53 - 2, 0x1p53, 1, DType::I64).to_vector<int64_t>(),
            (std::vector<int64_t>{(int64_t(1) << 53) - 2, (int64_t(1) << 53) - 1}));
  EXPECT_EQ(arange(-0x1p53, -0x1p53 + 4, 3, DType::I64).to_vector<int64_t>(),
            (std::vector<int64_t>{-(int64_t(1) << 53), -(int64_t(1) << 53) + 3}));
  expect_error<InvalidArgument>([] { arange(0, 0x1p31 + 1, 1, DType::I32); }, "arange");
  expect_error<InvalidArgument>([] { arange(0.5, 5, 1, DType::I32); }, "arange");
  expect_error<InvalidArgument>([] { arange(0, 5, 1.5, DType::I64); }, "arange");
  expect_error<InvalidArgument>([] { arange(0, 300, 1, DType::U8); }, "arange");
  expect_error<InvalidArgument>([] { arange(-1, 3, 1, DType::U8); }, "arange");
  expect_error<InvalidArgument>([] { arange(0, INFINITY, 1); }, "arange");
  expect_error<InvalidArgument>([] { arange(0, NAN, 1); }, "arange");
  expect_error<UnsupportedDType>([] { arange(0, 2, 1, DType::Bool); }, "arange");
}

// The symmetric formula of SequenceCall: from start for the first half, from end after.
std::vector<double> linspace_values(double start, double end, int64_t n) {
  std::vector<double> v;
  if (n == 1) return {start};
  const double step = (end - start) / double(n - 1);
  for (int64_t i = 0; i < n; ++i)
    v.push_back(i < n / 2 ? start + mul_rounded(double(i), step)
                          : end - mul_rounded(double(n - 1 - i), step));
  return v;
}

TEST(ParityFactory, Linspace) {
  test::for_each_case(OpId::linspace, test::dtypes_of(OpId::linspace), [](DType t, Device dev) {
    struct Case {
      double start, end;
      int64_t n;
    };
    for (const Case& c : std::vector<Case>{{0, 1, 5},
                                           {-1, 1, 101},
                                           {3, -7, 2},
                                           {2, 9, 1},
                                           {0, 1, 0},
                                           {0.1, 0.7, 7},
                                           {-5, 5, 100000}}) {
      const std::vector<double> want = linspace_values(c.start, c.end, c.n);
      const std::string msg = exact(linspace(c.start, c.end, c.n, t, dev), {c.n}, want);
      if (!msg.empty())
        return "linspace(" + std::to_string(c.start) + ", " + std::to_string(c.end) + ", " +
               std::to_string(c.n) + "): " + msg;
    }
    return std::string();
  });
}

TEST(Factory, LinspaceDetails) {
  const std::vector<double> v = linspace(-1, 1, 101, DType::F64).to_vector<double>();
  EXPECT_EQ(v.front(), -1.0);
  EXPECT_EQ(v.back(), 1.0);
  EXPECT_EQ(v[50], 0.0);
  for (size_t i = 0; i < v.size(); ++i) EXPECT_EQ(v[i], -v[v.size() - 1 - i]);  // symmetric
  const std::vector<float> w = linspace(0.1, 0.7, 7, DType::F32).to_vector<float>();
  EXPECT_EQ(w.back(), 0.7f);
  EXPECT_EQ(linspace(4, 8, 1, DType::F64).to_vector<double>(), std::vector<double>{4.0});
  expect_error<InvalidArgument>([] { linspace(0, 1, -1); }, "linspace");
  expect_error<UnsupportedDType>([] { linspace(0, 1, 3, DType::I32); }, "linspace");
}

TEST(ParityFactory, Eye) {
  test::for_each_case(OpId::eye, test::dtypes_of(OpId::eye), [](DType t, Device dev) {
    for (const auto& [n, m] : std::vector<std::pair<int64_t, int64_t>>{
             {1, 1}, {3, 3}, {4, 7}, {7, 4}, {0, 3}, {3, 0}, {0, 0}, {129, 65}}) {
      std::vector<double> want;
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < m; ++j) want.push_back(i == j ? 1.0 : 0.0);
      const std::string msg = exact(eye(n, m, t, dev), {n, m}, want);
      if (!msg.empty()) return "eye(" + std::to_string(n) + ", " + std::to_string(m) + "): " + msg;
    }
    const std::string msg = exact(eye(2, std::nullopt, t, dev), {2, 2}, {1, 0, 0, 1});
    return msg.empty() ? msg : "eye(2): " + msg;
  });
}

TEST(Factory, EyeErrors) {
  expect_error<InvalidArgument>([] { eye(-1); }, "eye");
  expect_error<InvalidArgument>([] { eye(2, -2); }, "eye");
}

// ---- random ----

// The specification, computed here from philox4x32 directly.
double spec_uniform(uint64_t seed, uint64_t counter) {
  return philox_uniform(philox4x32(counter, seed).v[0]);
}
double spec_normal(uint64_t seed, uint64_t counter) {
  const Philox4 r = philox4x32(counter, seed);
  const double u1 = (double(r.v[0] >> 8) + 1.0) / 16777216.0;
  const double u2 = double(r.v[1] >> 8) / 16777216.0;
  return math::box_muller(u1, u2);
}
int64_t spec_integer(uint64_t seed, uint64_t counter, int64_t low, int64_t high) {
  const Philox4 r = philox4x32(counter, seed);
  const uint64_t bits = uint64_t(r.v[0]) | uint64_t(r.v[1]) << 32;
  return int64_t(uint64_t(low) + bits % (uint64_t(high) - uint64_t(low)));
}

// Mean and standard deviation of a tensor's values.
void moments(const Tensor& x, double& mean, double& sd) {
  const std::vector<double> v = test::to_ref(x).v;
  double s = 0, s2 = 0;
  for (double e : v) s += e;
  mean = s / double(v.size());
  for (double e : v) s2 += (e - mean) * (e - mean);
  sd = std::sqrt(s2 / double(v.size() - 1));
}

std::string check_draws(DType t, const std::function<Tensor(const Shape&, Generator&)>& draw) {
  const Shape shape = {33, 17};
  Generator g1(1234), g2(1234), g3(99);
  const Tensor a = draw(shape, g1), b = draw(shape, g2), c = draw(shape, g3);
  if (a.dtype() != t || a.shape() != shape || !a.is_contiguous()) return "wrong dtype or shape";
  if (g1.offset() != 33 * 17) return "generator did not advance by numel";
  const RefTensor ra = test::to_ref(a);
  if (test::compare(b, ra, {0, 0, 0}) != "") return "same seed gave different values";
  if (test::compare(c, ra, {0, 0, 0}) == "") return "different seeds gave equal values";
  // The next draw continues at the new offset: different values, and a generator moved
  // to that offset reproduces them.
  const Tensor d = draw(shape, g1);
  if (test::compare(d, ra, {0, 0, 0}) == "") return "the second draw repeated the first";
  Generator g4(1234);
  g4.set_offset(33 * 17);
  if (test::compare(draw(shape, g4), test::to_ref(d), {0, 0, 0}) != "")
    return "set_offset did not reproduce the second draw";
  // The results do not depend on the thread count.
  const int threads = num_threads();
  set_num_threads(1);
  Generator g5(77), g6(77);
  const Tensor one = draw({70001}, g5);
  set_num_threads(threads);
  const Tensor many = draw({70001}, g6);
  if (test::compare(many, test::to_ref(one), {0, 0, 0}) != "")
    return "results depend on the thread count";
  // Empty draws are fine and advance nothing.
  Generator g7(5);
  if (draw({0, 3}, g7).numel() != 0 || g7.offset() != 0) return "empty draw";
  return "";
}

TEST(ParityFactory, Rand) {
  test::for_each_case(OpId::rand, test::dtypes_of(OpId::rand), [](DType t, Device dev) {
    auto draw = [&](const Shape& s, Generator& g) { return rand(s, t, dev, g); };
    std::string msg = check_draws(t, draw);
    if (!msg.empty()) return msg;
    Generator g(2024);
    g.set_offset(1000);
    const Tensor x = rand({1 << 20}, t, dev, g);
    const std::vector<double> v = test::to_ref(x).v;
    for (size_t i = 0; i < v.size(); ++i) {
      if (!(v[i] >= 0.0 && v[i] < 1.0)) return "value " + std::to_string(v[i]) + " outside [0, 1)";
      // F64/F32 hold the 24-bit value exactly; F16/BF16 round it toward zero.
      const double u = spec_uniform(2024, 1000 + i);
      bool ok = v[i] == u;
      if (!ok && u > 0.0 && (t == DType::F16 || t == DType::BF16)) {
        const int e = std::ilogb(u);
        const double ulp =
            t == DType::F16 ? std::ldexp(1.0, std::max(e, -14) - 10) : std::ldexp(1.0, e - 7);
        ok = v[i] <= u && u - v[i] < ulp;
      }
      if (!ok)
        return "element " + std::to_string(i) + " is " + std::to_string(v[i]) + ", spec " +
               std::to_string(u);
    }
    double mean, sd;
    moments(x, mean, sd);
    // Uniform: mean 1/2, sd 1/sqrt(12); 1<<20 samples put 6 sigma near 0.0017.
    if (std::fabs(mean - 0.5) > 0.003 || std::fabs(sd - 0.288675) > 0.003)
      return "mean " + std::to_string(mean) + ", sd " + std::to_string(sd);
    return std::string();
  });
}

TEST(ParityFactory, Randn) {
  test::for_each_case(OpId::randn, test::dtypes_of(OpId::randn), [](DType t, Device dev) {
    auto draw = [&](const Shape& s, Generator& g) { return randn(s, t, dev, g); };
    std::string msg = check_draws(t, draw);
    if (!msg.empty()) return msg;
    Generator g(31337);
    const Tensor x = randn({1 << 20}, t, dev, g);
    const std::vector<double> v = test::to_ref(x).v;
    // The first values follow the specification, rounded once to the dtype.
    const test::Tolerance tol = t == DType::F64 ? test::Tolerance{0, 0, 0} : test::tolerance_for(t);
    std::vector<double> want;
    for (uint64_t i = 0; i < 4096; ++i) want.push_back(spec_normal(31337, i));
    msg = test::compare(narrow(x, 0, 0, 4096), RefTensor{{4096}, want}, tol);
    if (!msg.empty()) return "against the specification: " + msg;
    for (double e : v)
      if (!std::isfinite(e)) return std::string("non-finite normal value");
    double mean, sd;
    moments(x, mean, sd);
    // N(0, 1): the sample mean has sd 1/1024; the sample sd about 1/1448.
    if (std::fabs(mean) > 0.006 || std::fabs(sd - 1.0) > 0.006)
      return "mean " + std::to_string(mean) + ", sd " + std::to_string(sd);
    return std::string();
  });
}

TEST(ParityFactory, Randint) {
  test::for_each_case(OpId::randint, test::dtypes_of(OpId::randint), [](DType t, Device dev) {
    const int64_t low = is_signed(t) ? -7 : 3, high = is_signed(t) ? 12 : 250;
    auto draw = [&](const Shape& s, Generator& g) { return randint(low, high, s, t, dev, g); };
    std::string msg = check_draws(t, draw);
    if (!msg.empty()) return msg;
    Generator g(8);
    g.set_offset(uint64_t(1) << 40);  // counters above 32 bits
    const Tensor x = randint(low, high, {1 << 20}, t, dev, g);
    const std::vector<double> v = test::to_ref(x).v;
    std::vector<int64_t> counts(size_t(high - low), 0);
    for (size_t i = 0; i < v.size(); ++i) {
      if (!(v[i] >= double(low) && v[i] < double(high)) || v[i] != std::floor(v[i]))
        return "value " + std::to_string(v[i]) + " outside [low, high)";
      if (i < 4096 && v[i] != double(spec_integer(8, (uint64_t(1) << 40) + i, low, high)))
        return "element " + std::to_string(i) + " differs from the specification";
      ++counts[size_t(int64_t(v[i]) - low)];
    }
    // Every value is hit about equally often (within 6 sigma).
    const double expect = double(v.size()) / double(counts.size());
    for (int64_t c : counts)
      if (std::fabs(double(c) - expect) > 6 * std::sqrt(expect))
        return std::string("skewed counts");
    return std::string();
  });
}

TEST(Factory, RandomSpecValues) {
  // The first few values of each kind, exactly, in the dtypes that hold them exactly.
  Generator g(42);
  const std::vector<double> u = rand({8}, DType::F64, Device::cpu(), g).to_vector<double>();
  const std::vector<float> uf = rand({8}, DType::F32, Device::cpu(), g).to_vector<float>();
  const std::vector<double> n = randn({8}, DType::F64, Device::cpu(), g).to_vector<double>();
  const std::vector<int64_t> k =
      randint(-5, 1000000007, {8}, DType::I64, Device::cpu(), g).to_vector<int64_t>();
  const std::vector<int64_t> big =
      randint(INT64_MIN, INT64_MAX, {8}, DType::I64, Device::cpu(), g).to_vector<int64_t>();
  for (uint64_t i = 0; i < 8; ++i) {
    EXPECT_EQ(u[i], spec_uniform(42, i));
    EXPECT_EQ(uf[i], float(spec_uniform(42, 8 + i)));
    EXPECT_EQ(n[i], spec_normal(42, 16 + i));
    EXPECT_EQ(k[i], spec_integer(42, 24 + i, -5, 1000000007));
    EXPECT_EQ(big[i], spec_integer(42, 32 + i, INT64_MIN, INT64_MAX));
  }
  EXPECT_EQ(g.offset(), 40u);
}

TEST(Factory, RandomErrors) {
  Generator g(1);
  const Device cpu = Device::cpu();
  expect_error<UnsupportedDType>([&] { rand({2}, DType::I32, cpu, g); }, "rand");
  expect_error<UnsupportedDType>([&] { randn({2}, DType::Bool, cpu, g); }, "randn");
  expect_error<UnsupportedDType>([&] { randint(0, 2, {2}, DType::Bool, cpu, g); }, "randint");
  expect_error<InvalidArgument>([&] { randint(3, 3, {2}, DType::I32, cpu, g); }, "randint");
  expect_error<InvalidArgument>([&] { randint(5, 1, {2}, DType::I32, cpu, g); }, "randint");
  expect_error<InvalidArgument>([&] { randint(0, 257, {2}, DType::U8, cpu, g); }, "randint");
  expect_error<InvalidArgument>([&] { randint(-1, 5, {2}, DType::U8, cpu, g); }, "randint");
  expect_error<InvalidArgument>([&] { rand({-1}, DType::F32, cpu, g); }, "rand");
  // Floating dtypes take ranges of integers they all hold exactly: a draw rounded to high,
  // or to infinity, would break [low, high).
  expect_error<InvalidArgument>([&] { randint(256, 260, {2}, DType::BF16, cpu, g); }, "randint");
  expect_error<InvalidArgument>([&] { randint(0, 100000, {2}, DType::F16, cpu, g); }, "randint");
  expect_error<InvalidArgument>([&] { randint(-2049, 0, {2}, DType::F16, cpu, g); }, "randint");
  expect_error<InvalidArgument>([&] { randint(0, (1 << 24) + 2, {2}, DType::F32, cpu, g); },
                                "randint");
  EXPECT_EQ(g.offset(), 0u);  // failed calls draw nothing
  for (const Tensor& t : {randint(-256, 257, {4096}, DType::BF16, cpu, g),
                          randint(-2048, 2049, {4096}, DType::F16, cpu, g)})
    for (float v : t.cast(DType::F32).to_vector<float>()) {
      ASSERT_GE(v, t.dtype() == DType::BF16 ? -256.f : -2048.f);
      ASSERT_LE(v, t.dtype() == DType::BF16 ? 256.f : 2048.f);
      ASSERT_EQ(v, std::floor(v));
    }
  // The full U8 range is allowed.
  EXPECT_NO_THROW(randint(0, 256, {4}, DType::U8, cpu, g));
}

}  // namespace
}  // namespace numr
