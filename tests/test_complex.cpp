// Complex64/Complex128: the pair views, arithmetic against std::complex<double>, casts,
// I/O, errors, and gradients in PyTorch's convention (dL/dx + i dL/dy).
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <complex>
#include <filesystem>
#include <limits>
#include <random>
#include <sstream>

#include "core/backend.h"
#include "core/composition.h"
#include "io_test_util.h"
#include "numr/numr.h"
#include "support/gradcheck.h"
#include "support/harness.h"

namespace numr {
namespace {

using C = std::complex<double>;
using test::for_each_case;

using io_test::expect_error;

std::vector<C> random_values(size_t n, uint64_t seed, double min_abs = 0.0) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-3.0, 3.0);
  std::vector<C> v(n);
  for (C& c : v) {
    do c = C(u(rng), u(rng));
    while (std::abs(c) < min_abs);
  }
  return v;
}

// A complex tensor of dtype t (Complex64 values are the doubles rounded) on dev.
Tensor make(const std::vector<C>& v, const Shape& shape, DType t, Device dev) {
  return Tensor::from_vector(v, shape).cast(t).to(dev);
}

std::vector<C> values(const Tensor& z) {
  return z.to(Device::cpu()).cast(DType::Complex128).to_vector<C>();
}

// Rounds each part to the precision of t's parts, as the inputs were. (Written with named
// floats: GCC 12 at -O2 dropped the rounding of c = C(double(float(re)), ..) in place.)
std::vector<C> rounded(const std::vector<C>& v, DType t) {
  if (t != DType::Complex64) return v;
  std::vector<C> out;
  out.reserve(v.size());
  for (const C& c : v) {
    const float re = float(c.real()), im = float(c.imag());
    out.emplace_back(double(re), double(im));
  }
  return out;
}

// "" when |got - want| <= tol (1 + |want|) everywhere.
std::string compare(const std::string& what, const Tensor& got, const std::vector<C>& want,
                    const Shape& shape, double tol) {
  if (got.shape() != shape) return what + ": shape " + shape_str(got.shape());
  const std::vector<C> g = values(got);
  for (size_t i = 0; i < want.size(); ++i)
    if (!(std::abs(g[i] - want[i]) <= tol * (1.0 + std::abs(want[i])))) {
      std::ostringstream os;
      os << what << ": element " << i << " is " << g[i] << ", expected " << want[i];
      return os.str();
    }
  return "";
}

double tol_for(DType part) { return part == DType::F64 ? 1e-13 : 4e-6; }

template <class F>
std::vector<C> map2(const std::vector<C>& a, const std::vector<C>& b, F f) {
  std::vector<C> out(a.size());
  for (size_t i = 0; i < a.size(); ++i) out[i] = f(a[i], b[i]);
  return out;
}

TEST(Complex, DTypes) {
  EXPECT_EQ(dtype_size(DType::Complex64), 8u);
  EXPECT_EQ(dtype_size(DType::Complex128), 16u);
  EXPECT_EQ(dtype_name(DType::Complex64), "Complex64");
  EXPECT_TRUE(is_complex(DType::Complex128));
  EXPECT_FALSE(is_floating(DType::Complex64));
  EXPECT_EQ(complex_part_dtype(DType::Complex64), DType::F32);
  EXPECT_EQ(complex_dtype_for(DType::F64), DType::Complex128);
  const std::vector<std::complex<float>> v = {{1, 2}, {-3, 4.5f}};
  const Tensor z = Tensor::from_vector(v, {2});
  EXPECT_EQ(z.dtype(), DType::Complex64);
  EXPECT_EQ(z.to_vector<std::complex<float>>(), v);
  EXPECT_EQ(z.cast(DType::Complex128).to_vector<C>(), (std::vector<C>{{1, 2}, {-3, 4.5}}));
}

TEST(Complex, PairViewsShareStorage) {
  const Tensor z = Tensor::from_vector(std::vector<C>{{1, 2}, {3, 4}, {5, 6}, {7, 8}}, {2, 2});
  const Tensor r = view_as_real(z);
  EXPECT_EQ(r.shape(), (Shape{2, 2, 2}));
  EXPECT_EQ(r.dtype(), DType::F64);
  EXPECT_EQ(r.storage(), z.storage());
  EXPECT_EQ(r.to_vector<double>(), (std::vector<double>{1, 2, 3, 4, 5, 6, 7, 8}));
  // A transposed complex view keeps its pairs together.
  const Tensor t = view_as_real(z.transpose(0, 1));
  EXPECT_EQ(t.to_vector<double>(), (std::vector<double>{1, 2, 5, 6, 3, 4, 7, 8}));
  EXPECT_EQ(real(z.transpose(0, 1)).to_vector<double>(), (std::vector<double>{1, 5, 3, 7}));
  EXPECT_EQ(imag(z).to_vector<double>(), (std::vector<double>{2, 4, 6, 8}));
  const Tensor back = view_as_complex(r);
  EXPECT_EQ(back.storage(), z.storage());
  EXPECT_EQ(values(back), values(z));
  // A 0-d complex tensor is one pair.
  EXPECT_EQ(view_as_real(z.flatten().narrow(0, 3, 1).squeeze()).to_vector<double>(),
            (std::vector<double>{7, 8}));
  // Writes through the real view show in the complex tensor.
  Tensor w = zeros({3}, DType::Complex64);
  view_as_real(w).narrow(0, 1, 1).fill_(2.5);
  EXPECT_EQ(w.to_vector<std::complex<float>>(),
            (std::vector<std::complex<float>>{{0, 0}, {2.5f, 2.5f}, {0, 0}}));
}

TEST(Complex, Prints) {
  const Tensor z = Tensor::from_vector(std::vector<std::complex<float>>{{1, -2}, {0.5f, 3}}, {2});
  EXPECT_EQ(z.to_string(), "tensor([1.0000-2.0000j, 0.5000+3.0000j], dtype=complex64, device=cpu)");
}

TEST(Complex, ViewErrors) {
  const Tensor x = zeros({3, 4});
  expect_error<ShapeMismatch>("view_as_complex", [&] { view_as_complex(x); });
  expect_error<InvalidArgument>("view_as_complex",
                                [&] { view_as_complex(zeros({2, 3}).transpose(0, 1)); });
  expect_error<InvalidArgument>("view_as_complex",
                                [&] { view_as_complex(zeros({7}).narrow(0, 1, 2)); });
  expect_error<InvalidArgument>("view_as_complex",
                                [&] { view_as_complex(zeros({3, 3}).narrow(1, 0, 2)); });
  expect_error<UnsupportedDType>("view_as_complex", [&] { view_as_complex(zeros({2}, DType::I32)); });
  expect_error<UnsupportedDType>("view_as_complex", [&] { view_as_complex(zeros({2}, DType::F16)); });
  expect_error<UnsupportedDType>("view_as_real", [&] { view_as_real(x); });
  expect_error<UnsupportedDType>("imag", [&] { imag(x); });
  expect_error<UnsupportedDType>("angle", [&] { angle(x); });
  // real and conj of a real tensor are the tensor, as in PyTorch.
  EXPECT_EQ(real(x).storage(), x.storage());
  EXPECT_EQ(conj(x).storage(), x.storage());
}

TEST(Complex, Errors) {
  const Tensor z = zeros({3}, DType::Complex64);
  expect_error<UnsupportedDType>("save_safetensors", [&] {
    save_safetensors(::testing::TempDir() + "/numr_complex.safetensors", {{"z", z}});
  });
  expect_error<DTypeMismatch>("add", [&] { add(z, zeros({3})); });
  expect_error<DTypeMismatch>("mul", [&] { mul(z, zeros({3}, DType::Complex128)); });
  expect_error<UnsupportedDType>("sqrt", [&] { sqrt(z); });
  expect_error<UnsupportedDType>("maximum", [&] { maximum(z, z); });
  expect_error<UnsupportedDType>("lt", [&] { lt(z, z); });
  expect_error<UnsupportedDType>("softmax", [&] { softmax(z, -1); });
  expect_error<UnsupportedDType>("cast", [&] { z.cast(DType::F32); });
  expect_error<UnsupportedDType>("complex", [&] { complex(zeros({2}, DType::F16), zeros({2}, DType::F16)); });
  expect_error<DTypeMismatch>("complex", [&] { complex(zeros({2}), zeros({2}, DType::F64)); });
  expect_error<BroadcastError>("complex", [&] { complex(zeros({2}), zeros({3})); });
  expect_error<ShapeMismatch>("matmul", [&] { matmul(zeros({2, 3}, DType::Complex64), z.reshape({1, 3})); });
  expect_error<UnsupportedDType>("item_double", [&] { z.sum().item_double(); });
  // A complex loss has no gradient of its own.
  const Var v(ones({2}, DType::Complex128), true);
  expect_error<InvalidArgument>("backward", [&] { backward(sum(v * v)); });
}

TEST(Complex, FactoriesCastsAndCopies) {
  EXPECT_EQ(values(ones({2}, DType::Complex64)), (std::vector<C>{{1, 0}, {1, 0}}));
  EXPECT_EQ(values(full({1}, -2.5, DType::Complex128)), (std::vector<C>{{-2.5, 0}}));
  EXPECT_EQ(values(zeros({2}, DType::Complex128)), (std::vector<C>{{0, 0}, {0, 0}}));
  const Tensor x = Tensor::from_vector(std::vector<float>{1.5f, -2, 3}, {3});
  EXPECT_EQ(values(x.cast(DType::Complex64)), (std::vector<C>{{1.5, 0}, {-2, 0}, {3, 0}}));
  EXPECT_EQ(values(x.cast(DType::Complex128)), (std::vector<C>{{1.5, 0}, {-2, 0}, {3, 0}}));
  const Tensor i = Tensor::from_vector(std::vector<int32_t>{7, -1}, {2});
  EXPECT_EQ(values(i.cast(DType::Complex64)), (std::vector<C>{{7, 0}, {-1, 0}}));
  const Tensor z = Tensor::from_vector(std::vector<C>{{0.1, 0.2}, {1e300, -1e-300}}, {2});
  const std::vector<C> narrowed = values(z.cast(DType::Complex64));
  EXPECT_EQ(narrowed[0], C(double(0.1f), double(0.2f)));
  EXPECT_TRUE(std::isinf(narrowed[1].real()));
  // Copies of views, cat and stack keep the pairs together.
  const Tensor m = Tensor::from_vector(random_values(6, 1), {2, 3});
  const std::vector<C> mv = values(m);
  const std::vector<C> mt = {mv[0], mv[3], mv[1], mv[4], mv[2], mv[5]};
  EXPECT_EQ(values(m.transpose(0, 1).contiguous()), mt);
  EXPECT_EQ(values(m.transpose(0, 1).clone()), mt);
  EXPECT_EQ(values(m.flip({1})), (std::vector<C>{mv[2], mv[1], mv[0], mv[5], mv[4], mv[3]}));
  const Tensor c = cat({m, m.narrow(0, 1, 1)}, 0);
  EXPECT_EQ(c.shape(), (Shape{3, 3}));
  EXPECT_EQ(values(c.narrow(0, 2, 1)), (std::vector<C>{mv[3], mv[4], mv[5]}));
  const Tensor s = stack({m.narrow(0, 0, 1).squeeze(0), m.narrow(0, 1, 1).squeeze(0)}, 1);
  EXPECT_EQ(values(s), (std::vector<C>{mv[0], mv[3], mv[1], mv[4], mv[2], mv[5]}));
  // pad fills with value + 0i.
  EXPECT_EQ(values(pad(m.narrow(0, 0, 1), {1, 0}, 2.0)),
            (std::vector<C>{{2, 0}, mv[0], mv[1], mv[2]}));
  // A broadcast view copies.
  EXPECT_EQ(values(m.narrow(0, 0, 1).broadcast_to({2, 3}).contiguous()),
            (std::vector<C>{mv[0], mv[1], mv[2], mv[0], mv[1], mv[2]}));
}

// The elementwise ops, reductions and matmul against std::complex<double>, with
// broadcasting and views, on every test device; recorded as complex()'s coverage.
TEST(ParityComplex, ArithmeticMatchesStdComplex) {
  for_each_case(OpId::complex, {DType::F32, DType::F64}, [](DType part, Device dev) -> std::string {
    const DType t = complex_dtype_for(part);
    const double tol = tol_for(part);
    // a: [3, 4] as a transposed view; b: [4], broadcast; d: denominators away from 0.
    const std::vector<C> av = rounded(random_values(12, 11), t);
    const std::vector<C> bv = rounded(random_values(4, 12), t);
    const std::vector<C> dv = rounded(random_values(12, 13, 0.5), t);
    const Tensor a = make(av, {4, 3}, t, dev).transpose(0, 1);
    std::vector<C> at(12), bb(12);  // a's values in [3, 4] order; b broadcast
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 4; ++j) {
        at[size_t(i * 4 + j)] = av[size_t(j * 3 + i)];
        bb[size_t(i * 4 + j)] = bv[size_t(j)];
      }
    const Tensor b = make(bv, {4}, t, dev);
    const Tensor d = make(dv, {3, 4}, t, dev);
    const Shape s{3, 4};
    std::string e;
    auto check = [&](const std::string& what, const Tensor& got, const std::vector<C>& want,
                     const Shape& shape, double k = 1.0) {
      if (e.empty()) e = compare(what, got, want, shape, k * tol);
    };
    check("add", a + b, map2(at, bb, std::plus<C>()), s);
    check("sub", b - a, map2(bb, at, [](C x, C y) { return x - y; }), s);
    check("mul", a * b, map2(at, bb, std::multiplies<C>()), s);
    check("div", a / d, map2(at, dv, std::divides<C>()), s, 4);
    check("neg", -a, map2(at, at, [](C x, C) { return -x; }), s);
    check("exp", exp(a), map2(at, at, [](C x, C) { return std::exp(x); }), s, 4);
    check("log", log(d), map2(dv, dv, [](C x, C) { return std::log(x); }), s, 4);
    check("abs", abs(a).cast(t), map2(at, at, [](C x, C) { return C(std::abs(x)); }), s);
    check("angle", angle(a).cast(t), map2(at, at, [](C x, C) { return C(std::arg(x)); }), s);
    check("conj", conj(a), map2(at, at, [](C x, C) { return std::conj(x); }), s);
    check("real", real(a).cast(t), map2(at, at, [](C x, C) { return C(x.real()); }), s);
    check("imag", imag(a).cast(t), map2(at, at, [](C x, C) { return C(x.imag()); }), s);
    check("mul_scalar", a * 2.5, map2(at, at, [](C x, C) { return x * 2.5; }), s);
    check("div_scalar", a / 4.0, map2(at, at, [](C x, C) { return x / 4.0; }), s);
    check("complex", complex(real(a), imag(b)),
          map2(at, bb, [](C x, C y) { return C(x.real(), y.imag()); }), s);
    check("polar", polar(abs(a), angle(a)), at, s, 4);
    // Reductions over each dim and over all.
    std::vector<C> rows(3), cols(4), all(1);
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 4; ++j) {
        rows[size_t(i)] += at[size_t(i * 4 + j)];
        cols[size_t(j)] += at[size_t(i * 4 + j)];
        all[0] += at[size_t(i * 4 + j)];
      }
    check("sum dim 1", sum(a, {1}), rows, {3}, 4);
    check("sum dim 0 keepdim", sum(a, {0}, true), cols, {1, 4}, 4);
    check("sum", sum(a), all, {}, 8);
    check("mean", mean(a, {-1}), map2(rows, rows, [](C x, C) { return x / 4.0; }), {3}, 4);
    // matmul [3, 4] @ [4, 2], batched [2, 3, 4] @ [4], and 1-D @ 1-D.
    const std::vector<C> mv = rounded(random_values(8, 14), t);
    const Tensor m = make(mv, {4, 2}, t, dev);
    std::vector<C> prod(6), mvp(3);
    C dot = 0;
    for (int i = 0; i < 3; ++i)
      for (int k = 0; k < 4; ++k) {
        for (int j = 0; j < 2; ++j)
          prod[size_t(i * 2 + j)] += at[size_t(i * 4 + k)] * mv[size_t(k * 2 + j)];
        mvp[size_t(i)] += at[size_t(i * 4 + k)] * bv[size_t(k)];
      }
    for (int k = 0; k < 4; ++k) dot += bv[size_t(k)] * bv[size_t(k)];
    check("matmul", matmul(a, m), prod, {3, 2}, 8);
    std::vector<C> twice = mvp;
    twice.insert(twice.end(), mvp.begin(), mvp.end());
    check("batched matmul", matmul(stack({a, a}, 0), b), twice, {2, 3}, 8);
    check("dot", matmul(b, b), {dot}, {}, 8);
    return e;
  });
}

// Values where the textbook formulas overflow or lose the result.
TEST(Complex, ScaledDivisionAndAbs) {
  for (const DType t : kComplexDTypes) {
    const double big = t == DType::Complex128 ? 1e300 : 1e30;
    const Tensor a = Tensor::from_vector(std::vector<C>{{big, big}, {3 * big, 4 * big}}, {2}).cast(t);
    const std::vector<C> q = values(a / a);
    EXPECT_NEAR(q[0].real(), 1.0, 1e-6) << t;
    EXPECT_NEAR(q[0].imag(), 0.0, 1e-6) << t;
    const std::vector<double> r = abs(a).cast(DType::F64).to_vector<double>();
    EXPECT_NEAR(r[1] / (5 * big), 1.0, 1e-6) << t;
    const double inf = std::numeric_limits<double>::infinity(), nan = std::nan("");
    const Tensor odd = Tensor::from_vector(std::vector<C>{{inf, nan}, {nan, -inf}, {0, 0}, {nan, 1}}, {4}).cast(t);
    const std::vector<double> o = abs(odd).cast(DType::F64).to_vector<double>();
    EXPECT_EQ(o[0], inf);
    EXPECT_EQ(o[1], inf);
    EXPECT_EQ(o[2], 0.0);
    EXPECT_TRUE(std::isnan(o[3]));
  }
}

// The one-pass kernels of complex mul, div and abs (where a backend has them) give the
// bits of the compositions of real ops they replace, special values and views included
// (NaN counts as equal to NaN: the order of a commutative operation's operands may move a
// NaN's sign).
TEST(Complex, KernelsMatchComposition) {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::nan("");
  std::vector<C> special = {{0, 0},        {-0.0, 0},       {inf, 1},   {1, -inf},
                            {nan, 2},      {3, nan},        {inf, nan}, {1e-40, 3e-39},
                            {1e38, -3e38}, {1e300, 1e-300}, {-2, 5},    {0.5, -0.25}};
  const std::vector<C> rnd = random_values(116, 31);
  special.insert(special.end(), rnd.begin(), rnd.end());
  const size_t n = special.size();  // 128; b pairs each value with another one
  std::vector<C> other(n);
  for (size_t i = 0; i < n; ++i) other[i] = special[(i * 7 + 3) % n];
  // The values of x (both parts of complex ones) as doubles, in row-major order.
  auto flat = [](const Tensor& x) {
    const Tensor r = is_complex(x.dtype()) ? view_as_real(x.contiguous()) : x;
    return r.to(Device::cpu()).cast(DType::F64).reshape({-1}).to_vector<double>();
  };
  auto same = [&](const Tensor& x, const Tensor& y) {
    const std::vector<double> a = flat(x), b = flat(y);
    if (a.size() != b.size()) return std::string("sizes differ");
    for (size_t i = 0; i < a.size(); ++i)
      if (!(std::isnan(a[i]) && std::isnan(b[i])) &&
          std::bit_cast<uint64_t>(a[i]) != std::bit_cast<uint64_t>(b[i]))
        return "value " + std::to_string(i) + ": " + std::to_string(a[i]) + " vs " +
               std::to_string(b[i]);
    return std::string();
  };
  for (const test::TestDevice& td : test::test_devices()) {
    if (!td.available) continue;
    for (const DType t : kComplexDTypes) {
      if (!backend_for(td.device).supports_dtype(t)) continue;
      SCOPED_TRACE(td.device.str() + " " + std::string(dtype_name(t)));
      const Tensor a = make(special, {8, 16}, t, td.device);
      const Tensor b = make(other, {8, 16}, t, td.device);
      // Contiguous, a transposed view, a broadcast row.
      const Tensor at = a.transpose(0, 1), bt = b.transpose(0, 1), row = b.narrow(0, 2, 1);
      const std::vector<std::pair<std::string, std::function<Tensor()>>> cases = {
          {"mul", [&] { return a * b; }},
          {"mul transposed", [&] { return at * bt; }},
          {"mul broadcast", [&] { return a * row; }},
          {"div", [&] { return a / b; }},
          {"div transposed", [&] { return at / bt; }},
          {"div broadcast", [&] { return row / a; }},
          {"abs", [&] { return abs(a); }},
          {"abs transposed", [&] { return abs(at); }},
      };
      for (const auto& [what, f] : cases) {
        const OpId op = what.starts_with("mul") ? OpId::mul
                        : what.starts_with("div") ? OpId::div
                                                  : OpId::abs;
        const uint64_t kernel_runs = path_counts(op).kernel;
        const Tensor kernel = f();
        // The CPU always has the kernels: there the first result must come from them.
        if (td.device.is_cpu()) {
          EXPECT_EQ(path_counts(op).kernel, kernel_runs + 1) << what;
        }
        Tensor composed;
        {
          const ForceComposition force({OpId::mul, OpId::div, OpId::abs});
          composed = f();
        }
        EXPECT_EQ(same(kernel, composed), "") << what;
      }
    }
  }
}

TEST(ParityComplex, PairViewsAndPolar) {
  for_each_case(OpId::view_as_complex, {DType::F32, DType::F64},
                [](DType part, Device dev) -> std::string {
                  const std::vector<C> v = rounded(random_values(6, 21), complex_dtype_for(part));
                  const Tensor z = make(v, {3, 2}, complex_dtype_for(part), dev);
                  const Tensor round_trip = view_as_complex(view_as_real(z).contiguous());
                  return compare("view_as_complex", round_trip, v, {3, 2}, 0.0);
                });
  for_each_case(OpId::polar, {DType::F32, DType::F64}, [](DType part, Device dev) -> std::string {
    const Tensor r = Tensor::from_vector(std::vector<double>{2, 0.5, 0, 3}, {4}).cast(part).to(dev);
    const Tensor th =
        Tensor::from_vector(std::vector<double>{0.25, -2, 1, 3.1}, {4}).cast(part).to(dev);
    std::vector<C> want;
    for (auto [m, a] : {std::pair{2.0, 0.25}, {0.5, -2.0}, {0.0, 1.0}, {3.0, 3.1}})
      want.push_back(std::polar(m, double(part == DType::F32 ? float(a) : a)));
    return compare("polar", polar(r, th), want, {4}, tol_for(part));
  });
}

TEST(Complex, NpyRoundTripAndNumpyFiles) {
  const std::string dir = ::testing::TempDir();
  for (const DType t : kComplexDTypes) {
    const Tensor z = make(random_values(6, 31), {2, 3}, t, Device::cpu());
    const std::string path = dir + "/numr_complex_" + std::string(dtype_name(t)) + ".npy";
    save_npy(path, z);
    const Tensor back = load_npy(path);
    EXPECT_EQ(back.dtype(), t);
    EXPECT_EQ(values(back), values(z));
    DLManagedTensor* m = to_dlpack(z.transpose(0, 1));
    EXPECT_EQ(m->dl_tensor.dtype.code, kDLComplex);
    EXPECT_EQ(m->dl_tensor.dtype.bits, dtype_size(t) * 8);
    const Tensor imported = from_dlpack(m);
    EXPECT_EQ(imported.dtype(), t);
    EXPECT_EQ(values(imported), values(z.transpose(0, 1)));
  }
}

// NumPy reads numr's complex files and numr reads NumPy's (big-endian included).
TEST(Complex, NumpyOracle) {
  const auto python = io_test::python_with_numpy();
  if (!python) GTEST_SKIP() << "no python3 with numpy (Debian: python3-numpy)";
  const std::string dir = ::testing::TempDir() + "/numr_complex_np";
  std::filesystem::create_directories(dir);
  std::vector<C> v;
  for (int k = 0; k < 6; ++k) v.push_back(C(k * 0.5 - 1, 2.0 * k + 0.25));
  save_npy(dir + "/c8.npy", Tensor::from_vector(v, {2, 3}).cast(DType::Complex64));
  save_npy(dir + "/c16.npy", Tensor::from_vector(v, {3, 2}).transpose(0, 1));
  const std::string script = R"(
import os, sys
import numpy as np
d = sys.argv[1]
k = np.arange(6)
v = (k * 0.5 - 1) + 1j * (2.0 * k + 0.25)
a = np.load(os.path.join(d, "c8.npy"))
b = np.load(os.path.join(d, "c16.npy"))
assert a.dtype == np.complex64 and (a == v.reshape(2, 3).astype(np.complex64)).all()
assert b.dtype == np.complex128 and (b == v.reshape(3, 2).T).all()
np.save(os.path.join(d, "np_c16.npy"), (v * (1 - 2j)).reshape(3, 2))
np.save(os.path.join(d, "np_c8_be.npy"), (v * 1j).astype(">c8"))
print("ok")
)";
  ASSERT_EQ(io_test::run_python(*python, script, dir), "ok\n");
  const Tensor w = load_npy(dir + "/np_c16.npy");
  EXPECT_EQ(w.shape(), (Shape{3, 2}));
  std::vector<C> want;
  for (const C& c : v) want.push_back(c * C(1, -2));
  EXPECT_EQ(values(w), want);
  const Tensor be = load_npy(dir + "/np_c8_be.npy");
  EXPECT_EQ(be.dtype(), DType::Complex64);
  std::vector<C> want_be;
  for (const C& c : v) want_be.push_back(C(double(float(-c.imag())), double(float(c.real()))));
  EXPECT_EQ(values(be), want_be);
}

// The gradient of a real loss L(z) is dL/dx + i dL/dy, as in PyTorch.
TEST(GradComplex, PyTorchConvention) {
  const Var z(Tensor::from_vector(std::vector<C>{{3, 4}}, {1}), true);
  auto grad_of = [&](const Var& loss) { return values(backward(loss)[z])[0]; };
  const C g_abs = grad_of(sum(abs(z)));  // z / |z|
  EXPECT_NEAR(g_abs.real(), 0.6, 1e-15);
  EXPECT_NEAR(g_abs.imag(), 0.8, 1e-15);
  const C g_sq = grad_of(sum(real(z * z)));  // x^2 - y^2: (2x, -2y)
  EXPECT_NEAR(g_sq.real(), 6, 1e-14);
  EXPECT_NEAR(g_sq.imag(), -8, 1e-14);
  const C g_exp = grad_of(sum(real(exp(z))));  // conj(exp(z)) for a holomorphic function
  EXPECT_NEAR(std::abs(g_exp - std::conj(std::exp(C(3, 4)))), 0.0, 1e-12);
  const C g_zero = grad_of(sum(abs(z * 0.0)));  // sgn(0) = 0
  EXPECT_EQ(g_zero, C(0, 0));
  // A real input cast to complex gets the real part of the gradient.
  const Var x(Tensor::from_vector(std::vector<double>{2}, {1}), true);
  const Var xc = cast(x, DType::Complex128);
  const Var loss = sum(imag(xc * z) + real(xc));
  EXPECT_NEAR(backward(loss)[x].to_vector<double>()[0], 5.0, 1e-14);
}

// Gradient checks, first and second order, through real inputs: each complex input is
// view_as_complex of an F64 [.., 2] tensor.
Var zc(const Var& x) { return view_as_complex(x); }

TEST(GradComplex, Checks) {
  const Tensor x = test::grad_input({3, 2}, 41), y = test::grad_input({3, 2}, 42);
  const Tensor away = test::grad_input({3, 2}, 43) + 4.0;  // denominators and logs away from 0
  const Tensor p = test::grad_input({3}, 44), q = test::grad_input({3}, 45);
  const Tensor m = test::grad_input({2, 3, 4, 2}, 46), n = test::grad_input({4, 2, 2}, 47);
  using test::check_gradients;
  check_gradients(OpId::view_as_complex, "mul of views",
                  [](const std::vector<Var>& v) { return view_as_real(zc(v[0]) * zc(v[1])); },
                  {x, y});
  check_gradients(OpId::view_as_real, "of complex()",
                  [](const std::vector<Var>& v) { return view_as_real(complex(v[0], v[1])); },
                  {p, q});
  check_gradients(OpId::complex, "broadcast",
                  [](const std::vector<Var>& v) {
                    return view_as_real(complex(v[0], narrow(v[1], 0, 0, 1)) * complex(v[1], v[0]));
                  },
                  {p, q});
  check_gradients(OpId::real, "of a product",
                  [](const std::vector<Var>& v) { return real(zc(v[0]) * zc(v[1])); }, {x, y});
  check_gradients(OpId::imag, "of a product",
                  [](const std::vector<Var>& v) { return imag(zc(v[0]) * zc(v[1])); }, {x, y});
  check_gradients(OpId::conj, "times itself",
                  [](const std::vector<Var>& v) { return view_as_real(conj(zc(v[0])) * zc(v[1])); },
                  {x, y});
  check_gradients(OpId::angle, "away from the cut",
                  [](const std::vector<Var>& v) { return angle(zc(v[0])); }, {away});
  check_gradients(OpId::polar, "",
                  [](const std::vector<Var>& v) { return view_as_real(polar(v[0], v[1])); }, {p, q});
  check_gradients(OpId::abs, "complex",
                  [](const std::vector<Var>& v) { return abs(zc(v[0])); }, {away});
  check_gradients(OpId::div, "complex",
                  [](const std::vector<Var>& v) { return view_as_real(zc(v[0]) / zc(v[1])); },
                  {x, away});
  check_gradients(OpId::exp, "complex",
                  [](const std::vector<Var>& v) { return view_as_real(exp(zc(v[0]))); }, {x});
  check_gradients(OpId::log, "complex",
                  [](const std::vector<Var>& v) { return view_as_real(log(zc(v[0]))); }, {away});
  check_gradients(OpId::sum, "complex",
                  [](const std::vector<Var>& v) { return view_as_real(sum(zc(v[0]) * zc(v[0]), {0})); },
                  {x});
  check_gradients(OpId::matmul, "complex, batched and broadcast",
                  [](const std::vector<Var>& v) { return view_as_real(matmul(zc(v[0]), zc(v[1]))); },
                  {m, n});
}

}  // namespace
}  // namespace numr
