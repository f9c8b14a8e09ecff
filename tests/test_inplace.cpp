// In-place methods (add_, copy_, fill_, masked_fill_, ...) and out= forms: values on
// contiguous tensors and on views, broadcasting, every dtype the underlying op takes,
// refusal of views with overlapping elements, aliasing between source and destination,
// errors that leave the destination untouched, and storage versions. Expected values are
// computed here on the host from index arithmetic.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "core/backend.h"
#include "numr/numr.h"
#include "support/harness.h"

namespace numr {
namespace {

using Values = std::vector<double>;

template <class E>
void expect_error(const std::function<void()>& f, const std::string& op,
                  const std::string& needle = "") {
  try {
    f();
    ADD_FAILURE() << "expected an error from " << op;
  } catch (const E& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("[" + op + "]", 0), 0u) << what;
    if (!needle.empty()) {
      EXPECT_NE(what.find(needle), std::string::npos) << what;
    }
  } catch (const std::exception& e) {
    ADD_FAILURE() << op << " threw the wrong error: " << e.what();
  }
}

// The devices of this machine (the CPU; a GPU where one is usable). These tests write every
// dtype, F64 and I64 included: a device without them (WebGPU) is skipped, said once.
std::vector<Device> devices() {
  std::vector<Device> out;
  for (const test::TestDevice& d : test::test_devices()) {
    if (!d.available) continue;
    bool all = true;
    for (DType t : kAllDTypes) all &= backend_for(d.device).supports_dtype(t);
    if (all) {
      out.push_back(d.device);
    } else {
      static bool said = false;
      if (!said)
        std::printf("in-place tests: skipped %s (not every dtype)\n", d.device.str().c_str());
      said = true;
    }
  }
  return out;
}

Tensor make(const Values& v, const Shape& shape, DType dtype = DType::F64,
            Device dev = Device::cpu()) {
  return Tensor::from_vector<double>(v, shape).cast(dtype).to(dev);
}

// start, start + 1, ... (n values).
Values count_from(double start, int64_t n) {
  Values v(static_cast<size_t>(n));
  for (size_t i = 0; i < v.size(); ++i) v[i] = start + double(i);
  return v;
}

Values host(const Tensor& t) { return t.to(Device::cpu()).cast(DType::F64).to_vector<double>(); }

std::string where(DType t, Device d) { return std::string(dtype_name(t)) + " on " + d.str(); }

// ---- arithmetic on contiguous tensors, every dtype ----

struct BinaryCase {
  const char* name;
  OpId op;
  Tensor& (Tensor::*method)(const Tensor&);
  Tensor& (*out_form)(const Tensor&, const Tensor&, Tensor&);
  double (*expect)(double, double);
};

const std::vector<BinaryCase>& binary_cases() {
  static const std::vector<BinaryCase> cases = {
      {"add_", OpId::add, &Tensor::add_, add, [](double a, double b) { return a + b; }},
      {"sub_", OpId::sub, &Tensor::sub_, sub, [](double a, double b) { return a - b; }},
      {"mul_", OpId::mul, &Tensor::mul_, mul, [](double a, double b) { return a * b; }},
      {"div_", OpId::div, &Tensor::div_, div, [](double a, double b) { return a / b; }},
  };
  return cases;
}

TEST(InPlace, BinaryOnEveryDtype) {
  // Values every dtype (U8, BF16 included) holds exactly, with exact results: self >=
  // other, products below 256, divisors powers of two.
  const Values a = count_from(10, 6), b = {1, 2, 4, 2, 1, 4};
  for (Device dev : devices())
    for (const BinaryCase& c : binary_cases())
      for (DType t : test::dtypes_of(c.op)) {
        Tensor self = make(a, {2, 3}, t, dev);
        const Tensor other = make(b, {2, 3}, t, dev);
        Tensor& r = (self.*c.method)(other);
        EXPECT_EQ(&r, &self);
        Values want(a.size());
        for (size_t i = 0; i < a.size(); ++i) want[i] = c.expect(a[i], b[i]);
        EXPECT_EQ(host(self), want) << c.name << " " << where(t, dev);
        EXPECT_EQ(host(other), b) << c.name << " changed other";
      }
}

TEST(InPlace, BinaryBroadcastsOther) {
  const Values a = count_from(1, 6);
  for (Device dev : devices()) {
    Tensor row = make(a, {2, 3}, DType::F32, dev);
    row.add_(make({10, 20, 30}, {3}, DType::F32, dev));
    EXPECT_EQ(host(row), (Values{11, 22, 33, 14, 25, 36}));
    Tensor col = make(a, {2, 3}, DType::F32, dev);
    col.mul_(make({2, -1}, {2, 1}, DType::F32, dev));
    EXPECT_EQ(host(col), (Values{2, 4, 6, -4, -5, -6}));
    Tensor scalar = make(a, {2, 3}, DType::I32, dev);
    scalar.sub_(make({1}, {}, DType::I32, dev));
    EXPECT_EQ(host(scalar), (Values{0, 1, 2, 3, 4, 5}));
  }
}

TEST(InPlace, BinaryErrorsLeaveSelfUnchanged) {
  const Values a = count_from(1, 3);
  Tensor self = make(a, {3}, DType::F32);
  const uint64_t v0 = self.storage()->version();
  // other would make self grow: refused, not broadcast.
  expect_error<ShapeMismatch>(
      [&] {
        self.add_(make(count_from(0, 6), {2, 3}, DType::F32));
      },
      "add_", "does not broadcast");
  expect_error<BroadcastError>([&] { self.sub_(make({1, 2}, {2}, DType::F32)); }, "sub_");
  expect_error<DTypeMismatch>([&] { self.mul_(make(a, {3}, DType::F64)); }, "mul_");
  Tensor ints = make(a, {3}, DType::I32);
  expect_error<UnsupportedDType>([&] { ints.div_(make(a, {3}, DType::I32)); }, "div_");
  expect_error<UnsupportedDType>([&] { ints.div_(2.0); }, "div_");
  expect_error<InvalidArgument>([&] { ints.add_(0.5); }, "add_", "not representable");
  Tensor bools = make({1, 0, 1}, {3}, DType::Bool);
  expect_error<UnsupportedDType>([&] { bools.add_(bools); }, "add_");
  expect_error<InvalidArgument>([&] { Tensor().add_(self); }, "add_", "undefined");
  expect_error<InvalidArgument>([&] { self.add_(Tensor()); }, "add_", "undefined");
  EXPECT_EQ(host(self), a);
  EXPECT_EQ(host(ints), a);
  EXPECT_EQ(self.storage()->version(), v0);
  EXPECT_EQ(ints.storage()->version(), 0u);
}

TEST(InPlace, ScalarFormsOnEveryDtype) {
  const Values a = count_from(8, 4);
  struct Case {
    const char* name;
    OpId op;
    Tensor& (Tensor::*method)(double);
    double s;
    double (*expect)(double, double);
  };
  const Case cases[] = {
      {"add_", OpId::add_scalar, &Tensor::add_, 3, [](double x, double s) { return x + s; }},
      {"sub_", OpId::sub_scalar, &Tensor::sub_, 5, [](double x, double s) { return x - s; }},
      {"mul_", OpId::mul_scalar, &Tensor::mul_, 2, [](double x, double s) { return x * s; }},
      {"div_", OpId::div_scalar, &Tensor::div_, 4, [](double x, double s) { return x / s; }},
  };
  for (Device dev : devices())
    for (const Case& c : cases)
      for (DType t : test::dtypes_of(c.op)) {
        Tensor self = make(a, {4}, t, dev);
        EXPECT_EQ(&(self.*c.method)(c.s), &self);
        Values want;
        for (double x : a) want.push_back(c.expect(x, c.s));
        EXPECT_EQ(host(self), want) << c.name << " " << where(t, dev);
      }
}

TEST(InPlace, NegAndClamp) {
  for (Device dev : devices()) {
    for (DType t : test::dtypes_of(OpId::neg)) {
      Tensor x = make({1, -2, 0, 5}, {2, 2}, t, dev);
      x.neg_();
      EXPECT_EQ(host(x), (Values{-1, 2, 0, -5})) << where(t, dev);
    }
    for (DType t : test::dtypes_of(OpId::clamp)) {
      Tensor x = make({0, 3, 7, 12}, {4}, t, dev);
      x.clamp_(2, 10);
      EXPECT_EQ(host(x), (Values{2, 3, 7, 10})) << where(t, dev);
      x.clamp_(std::nullopt, 5);
      EXPECT_EQ(host(x), (Values{2, 3, 5, 5})) << where(t, dev);
    }
  }
  Tensor u = make({1, 2}, {2}, DType::U8);
  expect_error<UnsupportedDType>([&] { u.neg_(); }, "neg_");
  Tensor f = make({1, 2}, {2}, DType::F32);
  expect_error<InvalidArgument>([&] { f.clamp_(3, 1); }, "clamp_");
  expect_error<InvalidArgument>([&] { f.clamp_(NAN, std::nullopt); }, "clamp_");
  EXPECT_EQ(host(f), (Values{1, 2}));
}

// ---- writes into views ----

TEST(InPlace, FillIntoNarrowWritesTheBase) {
  for (Device dev : devices()) {
    Tensor t = make(count_from(0, 12), {4, 3}, DType::F32, dev);
    t.narrow(0, 1, 2).fill_(5);
    EXPECT_EQ(host(t), (Values{0, 1, 2, 5, 5, 5, 5, 5, 5, 9, 10, 11}));
    t.narrow(1, 2, 1).zero_();
    EXPECT_EQ(host(t), (Values{0, 1, 0, 5, 5, 0, 5, 5, 0, 9, 10, 0}));
  }
}

TEST(InPlace, CopyIntoTransposeWritesTheBase) {
  for (Device dev : devices()) {
    Tensor t = make(Values(6, 0), {2, 3}, DType::F32, dev);
    const Tensor src = make(count_from(1, 6), {3, 2}, DType::F32, dev);
    t.transpose(0, 1).copy_(src);
    // t[i][j] = src[j][i]
    EXPECT_EQ(host(t), (Values{1, 3, 5, 2, 4, 6}));
  }
}

TEST(InPlace, ArithmeticOnStridedAndFlippedViews) {
  for (Device dev : devices()) {
    // Every other element of a [4, 6] tensor: shape [4, 3], strides [6, 2].
    Tensor t = make(count_from(0, 24), {4, 6}, DType::F64, dev);
    Tensor evens = t.view({4, 3, 2}).narrow(2, 0, 1).squeeze(2);
    ASSERT_EQ(evens.strides(), (Strides{6, 2}));
    evens.mul_(make({-1, 10, 100}, {3}, DType::F64, dev));
    Values want = count_from(0, 24);
    for (int64_t i = 0; i < 4; ++i)
      for (int64_t j = 0; j < 3; ++j) want[size_t(i * 6 + 2 * j)] *= Values{-1, 10, 100}[size_t(j)];
    EXPECT_EQ(host(t), want);

    // A flipped view: element i of the view is element n-1-i of the base.
    Tensor f = make(count_from(0, 5), {5}, DType::F64, dev);
    f.flip({0}).add_(make({100, 200, 300, 400, 500}, {5}, DType::F64, dev));
    EXPECT_EQ(host(f), (Values{500, 401, 302, 203, 104}));

    // A transposed view of a narrowed block, with a column broadcast.
    Tensor g = make(Values(12, 1), {3, 4}, DType::F32, dev);
    g.narrow(1, 1, 2).transpose(0, 1).sub_(make({1, 2, 3}, {3}, DType::F32, dev));
    EXPECT_EQ(host(g), (Values{1, 0, 0, 1, 1, -1, -1, 1, 1, -2, -2, 1}));
  }
}

TEST(InPlace, ZeroDimAndEmpty) {
  Tensor s = make({2}, {}, DType::F32);
  s.mul_(3.0).add_(1.0);
  EXPECT_EQ(s.item<float>(), 7.0f);
  Tensor e = Tensor::empty({0, 3}, DType::F32);
  e.fill_(1).add_(make({1, 2, 3}, {3}, DType::F32));
  EXPECT_EQ(e.numel(), 0);
}

// ---- copy_, fill_, masked_fill_ ----

TEST(InPlace, CopyConvertsDtypeAndBroadcasts) {
  for (Device dev : devices()) {
    Tensor ints = make(Values(6, 0), {2, 3}, DType::I32, dev);
    ints.copy_(make({1.75, -2.5, 3}, {3}, DType::F32, dev));  // truncation toward zero
    EXPECT_EQ(host(ints), (Values{1, -2, 3, 1, -2, 3}));
    for (DType t : kAllDTypes) {
      Tensor dst = make(Values(3, 0), {3}, t, dev);
      dst.copy_(make({1, 0, 2}, {3}, DType::I64, dev));
      EXPECT_EQ(host(dst), (t == DType::Bool ? Values{1, 0, 1} : Values{1, 0, 2})) << where(t, dev);
    }
  }
  Tensor dst = make(Values(3, 0), {3}, DType::F32);
  expect_error<ShapeMismatch>([&] { dst.copy_(make(count_from(0, 6), {2, 3})); }, "copy_");
  expect_error<BroadcastError>([&] { dst.copy_(make({1, 2}, {2})); }, "copy_");
  expect_error<InvalidArgument>([&] { dst.copy_(Tensor()); }, "copy_");
  EXPECT_EQ(host(dst), (Values{0, 0, 0}));
}

TEST(InPlace, CopyAcrossDevices) {
  for (Device dev : devices()) {
    if (dev.is_cpu()) continue;
    Tensor on_gpu = make(Values(4, 0), {2, 2}, DType::F32, dev);
    on_gpu.transpose(0, 1).copy_(make({1, 2, 3, 4}, {2, 2}, DType::F64));
    EXPECT_EQ(host(on_gpu), (Values{1, 3, 2, 4}));
    Tensor on_cpu = make(Values(4, 0), {4}, DType::F32);
    on_cpu.copy_(on_gpu.flatten());
    EXPECT_EQ(host(on_cpu), (Values{1, 3, 2, 4}));
  }
}

TEST(InPlace, FillEveryDtype) {
  for (Device dev : devices())
    for (DType t : kAllDTypes) {
      Tensor x = make(Values(4, 0), {2, 2}, t, dev);
      x.transpose(0, 1).narrow(0, 1, 1).fill_(1);  // column 1
      EXPECT_EQ(host(x), (Values{0, 1, 0, 1})) << where(t, dev);
      x.zero_();
      EXPECT_EQ(host(x), (Values{0, 0, 0, 0})) << where(t, dev);
    }
  Tensor i8 = make({1, 2}, {2}, DType::U8);
  expect_error<InvalidArgument>([&] { i8.fill_(-1); }, "fill_");
  expect_error<InvalidArgument>([&] { i8.fill_(256); }, "fill_");
  Tensor b = make({1, 0}, {2}, DType::Bool);
  expect_error<InvalidArgument>([&] { b.fill_(2); }, "fill_");
  EXPECT_EQ(host(i8), (Values{1, 2}));
  EXPECT_EQ(host(b), (Values{1, 0}));
  Tensor h = make({1, 2}, {2}, DType::F16);
  h.fill_(INFINITY);
  EXPECT_EQ(host(h), (Values{INFINITY, INFINITY}));
}

TEST(InPlace, MaskedFill) {
  for (Device dev : devices())
    for (DType t : test::dtypes_of(OpId::where_cond)) {
      // 2, 3, ... (all true for Bool).
      Tensor x = make(count_from(2, 6), {2, 3}, t, dev);
      const Values before = host(x);
      const Tensor mask = make({1, 0, 1}, {3}, DType::Bool, dev);
      x.masked_fill_(mask, 0);
      EXPECT_EQ(host(x), (Values{0, before[1], 0, 0, before[4], 0})) << where(t, dev);
      // Through a transposed view [3, 2]: its column 1 is the second row of y.
      Tensor y = make(Values(6, 0), {2, 3}, t, dev);
      y.transpose(0, 1).masked_fill_(make({0, 1}, {2}, DType::Bool, dev), 1);
      EXPECT_EQ(host(y), (Values{0, 0, 0, 1, 1, 1})) << where(t, dev);
    }
  Tensor x = make(count_from(1, 3), {3}, DType::I32);
  expect_error<DTypeMismatch>(
      [&] {
        x.masked_fill_(make({1, 0, 1}, {3}, DType::U8), 0);
      },
      "masked_fill_");
  expect_error<ShapeMismatch>(
      [&] {
        x.masked_fill_(make(Values(6, 1), {2, 3}, DType::Bool), 0);
      },
      "masked_fill_");
  expect_error<InvalidArgument>(
      [&] {
        x.masked_fill_(make({1, 0, 1}, {3}, DType::Bool), 0.5);
      },
      "masked_fill_");
  EXPECT_EQ(host(x), (Values{1, 2, 3}));
  EXPECT_EQ(x.storage()->version(), 0u);
}

// ---- views with overlapping elements ----

TEST(InPlace, RefusesViewsWithOverlappingElements) {
  Tensor base = make(count_from(0, 3), {3}, DType::F32);
  Tensor expanded = base.broadcast_to({2, 3});  // stride 0 on dim 0
  const Tensor other = make(Values(6, 1), {2, 3}, DType::F32);
  const Tensor mask = make(Values(6, 1), {2, 3}, DType::Bool);
  const std::vector<std::pair<std::string, std::function<void(Tensor&)>>> writes = {
      {"add_", [&](Tensor& t) { t.add_(other); }},
      {"sub_", [&](Tensor& t) { t.sub_(other); }},
      {"mul_", [&](Tensor& t) { t.mul_(other); }},
      {"div_", [&](Tensor& t) { t.div_(other); }},
      {"add_", [&](Tensor& t) { t.add_(1.0); }},
      {"neg_", [&](Tensor& t) { t.neg_(); }},
      {"clamp_", [&](Tensor& t) { t.clamp_(0, 1); }},
      {"copy_", [&](Tensor& t) { t.copy_(other); }},
      {"fill_", [&](Tensor& t) { t.fill_(7); }},
      {"zero_", [&](Tensor& t) { t.zero_(); }},
      {"masked_fill_", [&](Tensor& t) { t.masked_fill_(mask, 7); }},
  };
  for (const auto& [op, write] : writes)
    expect_error<InvalidArgument>([&] { write(expanded); }, op, "overlapping elements");
  // Strides too small for the extents inside them (elements 0 1 / 1 2).
  Tensor sliding(base.storage(), {2, 2}, {1, 1}, 0, DType::F32);
  expect_error<InvalidArgument>([&] { sliding.fill_(9); }, "fill_", "overlapping elements");
  EXPECT_EQ(host(base), (Values{0, 1, 2}));
  EXPECT_EQ(base.storage()->version(), 0u);
  // A broadcast dim of extent 1 writes each element once: allowed.
  Tensor one = base.narrow(0, 0, 1).broadcast_to({1, 1});
  one.fill_(4);
  EXPECT_EQ(host(base), (Values{4, 1, 2}));
}

// ---- aliasing between source and destination ----

TEST(InPlace, OverlappingCopyIsAMemmove) {
  for (Device dev : devices()) {
    Tensor t = make(count_from(0, 4), {4}, DType::F32, dev);
    t.narrow(0, 1, 3).copy_(t.narrow(0, 0, 3));
    EXPECT_EQ(host(t), (Values{0, 0, 1, 2}));
    Tensor u = make(count_from(0, 4), {4}, DType::F32, dev);
    u.narrow(0, 0, 3).copy_(u.narrow(0, 1, 3));
    EXPECT_EQ(host(u), (Values{1, 2, 3, 3}));
    // Rows of a matrix, shifted down by one.
    Tensor m = make(count_from(0, 8), {4, 2}, DType::F64, dev);
    m.narrow(0, 1, 3).copy_(m.narrow(0, 0, 3));
    EXPECT_EQ(host(m), (Values{0, 1, 0, 1, 2, 3, 4, 5}));
    // A transpose in place: every element read before any is written.
    Tensor sq = make(count_from(0, 9), {3, 3}, DType::F32, dev);
    sq.copy_(sq.transpose(0, 1));
    EXPECT_EQ(host(sq), (Values{0, 3, 6, 1, 4, 7, 2, 5, 8}));
    // Reversal in place.
    Tensor r = make(count_from(0, 5), {5}, DType::I32, dev);
    r.copy_(r.flip({0}));
    EXPECT_EQ(host(r), (Values{4, 3, 2, 1, 0}));
  }
}

TEST(InPlace, ArithmeticWithAnAliasedOperand) {
  for (Device dev : devices()) {
    Tensor x = make(count_from(1, 4), {4}, DType::F32, dev);
    x.add_(x.flip({0}));  // the original reversed, not the partly updated one
    EXPECT_EQ(host(x), (Values{5, 5, 5, 5}));
    Tensor y = make(count_from(1, 4), {4}, DType::F32, dev);
    y.mul_(y);
    EXPECT_EQ(host(y), (Values{1, 4, 9, 16}));
    Tensor z = make(count_from(1, 6), {6}, DType::I64, dev);
    z.narrow(0, 1, 5).sub_(z.narrow(0, 0, 5));
    EXPECT_EQ(host(z), (Values{1, 1, 1, 1, 1, 1}));
    Tensor m = make({1, 0, 1, 0}, {4}, DType::Bool, dev);
    m.masked_fill_(m, 0);
    EXPECT_EQ(host(m), (Values{0, 0, 0, 0}));
  }
}

// ---- versions ----

TEST(InPlace, EveryWriteBumpsTheStorageVersion) {
  Tensor t = make(count_from(1, 6), {2, 3}, DType::F32);
  const Tensor view = t.narrow(0, 1, 1);
  EXPECT_EQ(t.storage()->version(), 0u);
  t.add_(1.0);
  EXPECT_EQ(t.storage()->version(), 1u);
  Tensor(view).fill_(0);  // through a view: the shared storage's version
  EXPECT_EQ(t.storage()->version(), 2u);
  t.mul_(t).copy_(view).masked_fill_(make({1, 0, 0}, {3}, DType::Bool), 3).zero_();
  EXPECT_EQ(t.storage()->version(), 6u);
  // Reading bumps nothing; a new tensor starts at 0.
  const Tensor sum_t = t + t;
  EXPECT_EQ(t.storage()->version(), 6u);
  EXPECT_EQ(sum_t.storage()->version(), 0u);
}

// ---- out= forms ----

TEST(OutForms, WriteIntoAPreallocatedTensor) {
  const Values a = count_from(10, 6), b = {1, 2, 4, 2, 1, 4};
  for (Device dev : devices())
    for (const BinaryCase& c : binary_cases())
      for (DType t : test::dtypes_of(c.op)) {
        const Tensor x = make(a, {2, 3}, t, dev), y = make(b, {2, 3}, t, dev);
        Tensor out = Tensor::empty({2, 3}, t, dev);
        EXPECT_EQ(&c.out_form(x, y, out), &out);
        Values want(a.size());
        for (size_t i = 0; i < a.size(); ++i) want[i] = c.expect(a[i], b[i]);
        EXPECT_EQ(host(out), want) << c.name << " " << where(t, dev);
        EXPECT_EQ(out.storage()->version(), 1u);
      }
}

TEST(OutForms, BroadcastViewsAndAliases) {
  for (Device dev : devices()) {
    // Broadcast inputs, into a narrowed (non-contiguous) view of a bigger tensor.
    Tensor big = make(Values(12, -1), {3, 4}, DType::F32, dev);
    Tensor cols = big.narrow(1, 1, 2);
    add(make({1, 2, 3}, {3, 1}, DType::F32, dev), make({10, 20}, {2}, DType::F32, dev), cols);
    EXPECT_EQ(host(big), (Values{-1, 11, 21, -1, -1, 12, 22, -1, -1, 13, 23, -1}));
    // out is one of the inputs.
    Tensor x = make(count_from(1, 4), {4}, DType::F64, dev);
    mul(x, x.flip({0}), x);
    EXPECT_EQ(host(x), (Values{4, 6, 6, 4}));
    // out contiguous but overlapping an input's bytes (shifted by one).
    Tensor s = make(count_from(0, 5), {5}, DType::F64, dev);
    Tensor head = s.narrow(0, 0, 4);
    sub(s.narrow(0, 1, 4), head, head);
    EXPECT_EQ(host(s), (Values{1, 1, 1, 1, 4}));
  }
}

TEST(OutForms, Matmul) {
  for (Device dev : devices())
    for (DType t : test::dtypes_of(OpId::matmul)) {
      const Tensor a = make({1, 2, 3, 4, 5, 6}, {2, 3}, t, dev);
      const Tensor b = make({1, 0, 2, 1, 0, 1}, {3, 2}, t, dev);
      // [1 2 3; 4 5 6] @ [1 0; 2 1; 0 1] = [5 5; 14 11]
      Tensor out = Tensor::empty({2, 2}, t, dev);
      EXPECT_EQ(&matmul(a, b, out), &out);
      EXPECT_EQ(host(out), (Values{5, 5, 14, 11})) << where(t, dev);
      Tensor outt = Tensor::empty({2, 2}, t, dev);
      Tensor view = outt.transpose(0, 1);
      matmul(a, b, view);
      EXPECT_EQ(host(outt), (Values{5, 14, 5, 11})) << where(t, dev);
      // A [2, 1] out whose extent-1 dim has an odd stride (the transpose of a [1, 2]).
      Tensor row = make({9, 9}, {1, 2}, t, dev);
      Tensor col = row.transpose(0, 1);
      matmul(a, make({1, 1, 1}, {3, 1}, t, dev), col);
      EXPECT_EQ(host(row), (Values{6, 15})) << where(t, dev);
      // Square a times itself, into a: a is read completely first.
      Tensor sq = make({1, 2, 3, 4}, {2, 2}, t, dev);
      matmul(sq, sq, sq);
      EXPECT_EQ(host(sq), (Values{7, 10, 15, 22})) << where(t, dev);
      // An empty inner dim gives zeros.
      Tensor z = make({9, 9, 9, 9}, {2, 2}, t, dev);
      matmul(Tensor::empty({2, 0}, t, dev), Tensor::empty({0, 2}, t, dev), z);
      EXPECT_EQ(host(z), (Values{0, 0, 0, 0})) << where(t, dev);
    }
}

TEST(OutForms, ErrorsWriteNothing) {
  const Tensor a = make(count_from(1, 6), {2, 3}, DType::F32);
  const Tensor b = make(count_from(1, 3), {3}, DType::F32);
  const Values untouched(6, 42);
  auto check = [&](Tensor& out) {
    EXPECT_EQ(host(out), untouched);
    EXPECT_EQ(out.storage()->version(), 0u);
  };
  Tensor wrong_shape = make(Values(6, 42), {3, 2}, DType::F32);
  expect_error<ShapeMismatch>([&] { add(a, b, wrong_shape); }, "add", "out has shape [3, 2]");
  check(wrong_shape);
  Tensor flat = make(Values(6, 42), {6}, DType::F32);
  expect_error<ShapeMismatch>([&] { sub(a, b, flat); }, "sub");
  check(flat);
  Tensor wrong_dtype = make(Values(6, 42), {2, 3}, DType::F64);
  expect_error<DTypeMismatch>([&] { mul(a, b, wrong_dtype); }, "mul", "out is F64");
  check(wrong_dtype);
  Tensor ints = make(Values(6, 42), {2, 3}, DType::I32);
  expect_error<UnsupportedDType>([&] { div(ints, ints, ints); }, "div");
  check(ints);
  Tensor fine = make(Values(6, 42), {2, 3}, DType::F32);
  expect_error<DTypeMismatch>([&] { add(a, make({1}, {1}, DType::F64), fine); }, "add");
  expect_error<BroadcastError>([&] { add(a, make({1, 2}, {2}, DType::F32), fine); }, "add");
  Tensor undefined;
  expect_error<InvalidArgument>([&] { add(a, b, undefined); }, "add", "undefined");
  check(fine);
  Tensor row = make(Values(3, 42), {3}, DType::F32);
  Tensor expanded = row.broadcast_to({2, 3});
  expect_error<InvalidArgument>([&] { add(a, b, expanded); }, "add", "overlapping elements");
  EXPECT_EQ(host(row), Values(3, 42));
  Tensor mm = make(Values(6, 42), {2, 3}, DType::F32);
  expect_error<ShapeMismatch>(
      [&] {
        matmul(a, make(count_from(0, 6), {3, 2}, DType::F32), mm);
      },
      "matmul");
  expect_error<ShapeMismatch>([&] { matmul(a, a, mm); }, "matmul", "inner dims");
  check(mm);
  for (Device dev : devices()) {
    if (dev.is_cpu()) continue;
    Tensor elsewhere = make(Values(6, 42), {2, 3}, DType::F32, dev);
    expect_error<DeviceMismatch>([&] { add(a, b, elsewhere); }, "add", "out is on");
    check(elsewhere);
  }
}

}  // namespace
}  // namespace numr
