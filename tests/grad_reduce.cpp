// Gradient checks of the reduction, scan and softmax families, first and second order.
// Ops that are linear or piecewise linear are squared after the op, so the gradient that
// reaches their rule has history and the second-order check exercises the rule itself.
#include <gtest/gtest.h>

#include <sstream>

#include "numr/autograd.h"
#include "support/gradcheck.h"
#include "support/harness.h"

namespace numr {
namespace {

using test::check_gradients;
using test::Layout;

Tensor input(const Shape& shape, uint64_t seed, double lo = -2.0, double hi = 2.0,
             Layout layout = Layout::Contiguous) {
  return test::make_input(shape, DType::F64, Device::cpu(), {.lo = lo, .hi = hi, .layout = layout},
                          seed);
}

Var sq(const Var& v) { return v * v; }

std::string dims_str(const std::vector<int64_t>& dims) {
  std::ostringstream os;
  os << '{';
  for (size_t i = 0; i < dims.size(); ++i) os << (i ? "," : "") << dims[i];
  os << '}';
  return os.str();
}

struct ReduceCase {
  Shape shape;
  std::vector<int64_t> dims;
  bool keepdim;
  Layout layout = Layout::Contiguous;
};

const std::vector<ReduceCase>& reduce_cases() {
  static const std::vector<ReduceCase> cases = {
      {{7}, {}, false},
      {{7}, {0}, true},
      {{3, 5}, {1}, true},
      {{3, 5}, {-2}, false},
      {{3, 5}, {0}, false, Layout::Transposed},
      {{2, 3, 4}, {0, 2}, true},
      {{2, 3, 4}, {-1}, false},
      {{2, 3, 4}, {}, true, Layout::Transposed},
  };
  return cases;
}

std::string describe(const ReduceCase& c) {
  std::ostringstream os;
  os << shape_str(c.shape) << " dims " << dims_str(c.dims) << (c.keepdim ? " keepdim" : "")
     << (c.layout == Layout::Transposed ? " transposed" : "");
  return os.str();
}

using ReduceFn = Var (*)(const Var&, const std::vector<int64_t>&, bool);

// Checks op (squared when `square`) over every reduce case, values in [lo, hi].
void check_reduction(OpId op, ReduceFn fn, bool square, double lo = -2.0, double hi = 2.0) {
  uint64_t seed = 1;
  for (const ReduceCase& c : reduce_cases()) {
    const auto f = [&](const std::vector<Var>& v) {
      const Var y = fn(v[0], c.dims, c.keepdim);
      return square ? sq(y) : y;
    };
    check_gradients(op, describe(c), f, {input(c.shape, seed++, lo, hi, c.layout)});
  }
}

TEST(GradReduce, Sum) {
  check_reduction(
      OpId::sum, [](const Var& x, const std::vector<int64_t>& d, bool k) { return sum(x, d, k); },
      true);
}

TEST(GradReduce, Mean) {
  check_reduction(
      OpId::mean, [](const Var& x, const std::vector<int64_t>& d, bool k) { return mean(x, d, k); },
      true);
}

TEST(GradReduce, MaxMin) {
  // Random values are distinct, so the op is smooth where it is checked.
  check_reduction(
      OpId::max, [](const Var& x, const std::vector<int64_t>& d, bool k) { return max(x, d, k); },
      true);
  check_reduction(
      OpId::min, [](const Var& x, const std::vector<int64_t>& d, bool k) { return min(x, d, k); },
      true);
}

TEST(GradReduce, MaxMinSplitTiesEvenly) {
  Var x(Tensor::from_vector<double>({1, 3, 3, 2, -1, -1}, {2, 3}), true);
  const Gradients g = backward(sum(max(x, {}, false)));
  EXPECT_EQ(g[x].to_vector<double>(), (std::vector<double>{0, 0.5, 0.5, 0, 0, 0}));
  const Gradients h = backward(sum(min(x, {1}, false)));
  EXPECT_EQ(h[x].to_vector<double>(), (std::vector<double>{1, 0, 0, 0, 0.5, 0.5}));
}

TEST(GradReduce, Prod) {
  // Away from zero for the second order; the first order is right with zeros too (below).
  check_reduction(
      OpId::prod, [](const Var& x, const std::vector<int64_t>& d, bool k) { return prod(x, d, k); },
      false, 0.5, 1.5);
  check_gradients(OpId::prod, "negative values",
                  [](const std::vector<Var>& v) { return prod(v[0], {1}, false); },
                  {input({3, 4}, 9, -1.5, -0.5)});
}

TEST(GradReduce, ZeroDimInputs) {
  const Tensor x = input({}, 60, 0.5, 1.5);
  check_gradients(OpId::prod, "0-d", [](const std::vector<Var>& v) { return prod(v[0]); }, {x});
  check_gradients(OpId::max, "0-d keepdim",
                  [](const std::vector<Var>& v) { return sq(max(v[0], {}, true)); }, {x});
  check_gradients(OpId::logsumexp, "0-d", [](const std::vector<Var>& v) { return logsumexp(v[0]); },
                  {x});
}

TEST(GradReduce, ProdWithZeros) {
  const auto f = [](const std::vector<Var>& v) { return prod(v[0], {-1}, false); };
  // Rows with no zero, one zero and two zeros.
  const Tensor x =
      Tensor::from_vector<double>({0.5, 2.0, -1.5, 0.7, 0.0, 1.3, 0.0, 0.9, 0.0}, {3, 3});
  EXPECT_EQ(test::gradcheck(f, {x}), "");
  Var v(x, true);
  const std::vector<double> got = backward(sum(prod(v, {-1}, false)))[v].to_vector<double>();
  const std::vector<double> want = {-3.0, -0.75, 1.0, 0.0, 0.91, 0.0, 0.0, 0.0, 0.0};
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-12) << i;
}

TEST(GradReduce, VarStd) {
  for (int64_t correction : {0, 1}) {
    uint64_t seed = 40;
    for (const ReduceCase& c : reduce_cases()) {
      const std::string what = describe(c) + " correction " + std::to_string(correction);
      const Tensor x = input(c.shape, seed++, -2.0, 2.0, c.layout);
      check_gradients(
          OpId::var, what,
          [&](const std::vector<Var>& v) { return var(v[0], c.dims, correction, c.keepdim); }, {x});
      check_gradients(
          OpId::std, what,
          [&](const std::vector<Var>& v) { return std(v[0], c.dims, correction, c.keepdim); }, {x});
    }
  }
}

TEST(GradReduce, Logsumexp) {
  check_reduction(
      OpId::logsumexp,
      [](const Var& x, const std::vector<int64_t>& d, bool k) { return logsumexp(x, d, k); },
      false);
}

TEST(GradReduce, NonDifferentiableOpsHaveNoHistory) {
  const Tensor t = input({3, 5}, 3);
  Var x(t, true);
  const Var outs[] = {any(x, {1}, false), all(x, {}, true), argmax(x, 0, false),
                      argmin(x, std::nullopt, false)};
  for (const Var& o : outs) {
    EXPECT_FALSE(o.requires_grad());
    EXPECT_TRUE(o.is_leaf());
  }
  EXPECT_EQ(outs[2].tensor().to_vector<int64_t>(), argmax(t, 0, false).to_vector<int64_t>());
  EXPECT_EQ(outs[3].tensor().to_vector<int64_t>(), argmin(t).to_vector<int64_t>());
}

// ---- along one dim ----
struct AxisCase {
  Shape shape;
  int64_t dim;
  Layout layout = Layout::Contiguous;
};

const std::vector<AxisCase>& axis_cases() {
  static const std::vector<AxisCase> cases = {
      {{7}, 0},
      {{3, 5}, 1},
      {{3, 5}, -2, Layout::Transposed},
      {{2, 3, 4}, 1},
      {{2, 3, 4}, -1, Layout::Transposed},
  };
  return cases;
}

using AxisFn = Var (*)(const Var&, int64_t);

void check_axis(OpId op, AxisFn fn, bool square, double lo = -2.0, double hi = 2.0) {
  uint64_t seed = 100;
  for (const AxisCase& c : axis_cases()) {
    const std::string what = shape_str(c.shape) + " dim " + std::to_string(c.dim) +
                             (c.layout == Layout::Transposed ? " transposed" : "");
    const auto f = [&](const std::vector<Var>& v) {
      const Var y = fn(v[0], c.dim);
      return square ? sq(y) : y;
    };
    check_gradients(op, what, f, {input(c.shape, seed++, lo, hi, c.layout)});
  }
}

TEST(GradScan, Cumsum) {
  check_axis(
      OpId::cumsum, [](const Var& x, int64_t d) { return cumsum(x, d); }, true);
}

TEST(GradScan, Cumprod) {
  // Inputs with zeros are in grad_cumprod_zeros.cpp.
  check_axis(
      OpId::cumprod, [](const Var& x, int64_t d) { return cumprod(x, d); }, false, 0.5, 1.5);
  check_gradients(OpId::cumprod, "mixed signs",
                  [](const std::vector<Var>& v) { return cumprod(v[0], 0); },
                  {Tensor::from_vector<double>({0.8, -1.2, 1.1, -0.6, 1.4}, {5})});
}

TEST(GradSoftmax, Softmax) {
  check_axis(
      OpId::softmax, [](const Var& x, int64_t d) { return softmax(x, d); }, false);
}

TEST(GradSoftmax, LogSoftmax) {
  check_axis(
      OpId::log_softmax, [](const Var& x, int64_t d) { return log_softmax(x, d); }, false);
}

}  // namespace
}  // namespace numr
