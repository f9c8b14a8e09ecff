// matmul with 1-D operands, as in NumPy: [K] @ [K] -> [], [.., M, K] @ [K] -> [.., M],
// [K] @ [.., K, N] -> [.., N]. Values against a float64 loop written here, for every float
// dtype and device; gradients first and second order; errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <utility>

#include "numr/autograd.h"
#include "support/gradcheck.h"
#include "support/harness.h"

namespace numr {
namespace {

using test::Layout;
using test::RefTensor;

// Index of the element at multi-index idx (aligned to the right of `full`) in a row-major
// tensor of `shape`, where dims of extent 1 broadcast.
size_t flat_index(const Shape& shape, const Shape& full, const std::vector<int64_t>& idx) {
  const size_t lead = full.size() - shape.size();
  size_t at = 0;
  for (size_t d = 0; d < shape.size(); ++d)
    at = at * size_t(shape[d]) + (shape[d] == 1 ? 0 : size_t(idx[lead + d]));
  return at;
}

// The product in float64 by the definition: the vector's dim is taken as the row (a) or
// column (b) of a matrix, and that dim is left out of the result.
RefTensor matmul_1d_reference(const RefTensor& a, const RefTensor& b) {
  const bool a_vec = a.shape.size() == 1, b_vec = b.shape.size() == 1;
  const Shape as = a_vec ? Shape{1, a.shape[0]} : a.shape;
  const Shape bs = b_vec ? Shape{b.shape[0], 1} : b.shape;
  const int64_t m = as[as.size() - 2], k = as.back(), n = bs.back();
  Shape batch(std::max(as.size(), bs.size()) - 2, 1);
  for (size_t i = 0; i < batch.size(); ++i) {
    const size_t from_end = batch.size() - i;  // counting batch dims from the right
    const int64_t ea = as.size() - 2 >= from_end ? as[as.size() - 2 - from_end] : 1;
    const int64_t eb = bs.size() - 2 >= from_end ? bs[bs.size() - 2 - from_end] : 1;
    batch[i] = ea == 1 ? eb : ea;
  }
  RefTensor out;
  out.shape = batch;
  if (!a_vec) out.shape.push_back(m);
  if (!b_vec) out.shape.push_back(n);
  Shape full = batch;
  full.push_back(0);
  full.push_back(0);
  std::vector<int64_t> idx(full.size(), 0);
  const int64_t items = shape_numel(batch);
  for (int64_t item = 0; item < items; ++item) {
    int64_t rest = item;
    for (size_t d = batch.size(); d-- > 0;) {
      idx[d] = rest % batch[d];
      rest /= batch[d];
    }
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double acc = 0.0;
        for (int64_t p = 0; p < k; ++p) {
          idx[full.size() - 2] = i;
          idx[full.size() - 1] = p;
          const double x = a.v[flat_index(as, full, idx)];
          idx[full.size() - 2] = p;
          idx[full.size() - 1] = j;
          acc += x * b.v[flat_index(bs, full, idx)];
        }
        out.v.push_back(acc);
      }
  }
  return out;
}

struct Case {
  Shape a, b;
  Layout la = Layout::Contiguous, lb = Layout::Contiguous;
};

const std::vector<Case>& cases() {
  static const std::vector<Case> c = {
      {{7}, {7}},
      {{5, 7}, {7}},
      {{7}, {7, 3}},
      {{2, 5, 7}, {7}},
      {{7}, {2, 7, 3}},
      {{3, 1, 5, 7}, {7}},
      {{7}, {3, 1, 7, 2}},
      {{1}, {1}},
      {{1}, {1, 4}},
      {{40}, {40, 33}},
      {{33, 40}, {40}},
      {{7}, {7}, Layout::Flipped, Layout::Flipped},
      {{5, 7}, {7}, Layout::Transposed, Layout::Flipped},
      {{7}, {2, 7, 3}, Layout::Flipped, Layout::Transposed},
      {{2, 5, 7}, {7}, Layout::Strided},
      {{0}, {0}},        // an empty sum: 0
      {{4, 0}, {0}},     // [4] of zeros
      {{0}, {2, 0, 3}},  // [2, 3] of zeros
      {{0, 7}, {7}},     // empty result
  };
  return c;
}

std::string describe(const Case& c) {
  return shape_str(c.a) + " (layout " + std::to_string(int(c.la)) + ") @ " + shape_str(c.b) +
         " (layout " + std::to_string(int(c.lb)) + ")";
}

TEST(Matmul1d, ValuesForEveryDtypeAndDevice) {
  test::for_each_case(OpId::matmul, test::float_dtypes(), [](DType t, Device dev) {
    uint64_t seed = 500;
    for (const Case& c : cases()) {
      const Tensor a = test::make_input(c.a, t, dev, test::unit_spec(c.la), seed++);
      const Tensor b = test::make_input(c.b, t, dev, test::unit_spec(c.lb), seed++);
      const RefTensor want = matmul_1d_reference(test::to_ref(a), test::to_ref(b));
      const Tensor got = matmul(a, b);
      if (got.shape() != want.shape)
        return describe(c) + ": shape " + shape_str(got.shape()) + ", expected " +
               shape_str(want.shape);
      if (got.dtype() != t) return describe(c) + ": dtype changed";
      const test::Tolerance tol = test::accumulation_tolerance(t, std::max<int64_t>(1, c.a.back()));
      const std::string msg = test::compare(got, want, tol);
      if (!msg.empty()) return describe(c) + ": " + msg;
    }
    return std::string();
  });
}

TEST(Matmul1d, SameAsExplicitPromotion) {
  // The 1-D forms give exactly what the 2-D product of the promoted operands gives.
  const Tensor v = test::make_input({7}, DType::F32, Device::cpu(), test::unit_spec(), 1);
  const Tensor m = test::make_input({2, 5, 7}, DType::F32, Device::cpu(), test::unit_spec(), 2);
  const Tensor n = test::make_input({2, 7, 3}, DType::F32, Device::cpu(), test::unit_spec(), 3);
  EXPECT_EQ(matmul(m, v).to_vector<float>(), matmul(m, v.reshape({7, 1})).to_vector<float>());
  EXPECT_EQ(matmul(v, n).to_vector<float>(), matmul(v.reshape({1, 7}), n).to_vector<float>());
  EXPECT_EQ(matmul(v, v).to_vector<float>(),
            matmul(v.reshape({1, 7}), v.reshape({7, 1})).to_vector<float>());
}

template <class E, class F>
void expect_matmul_error(F&& f, const std::string& shapes) {
  try {
    f();
    ADD_FAILURE() << "no exception for " << shapes;
  } catch (const E& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("[matmul]", 0), 0u) << what;
    EXPECT_NE(what.find(shapes), std::string::npos) << what;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "wrong exception type for " << shapes << ": " << e.what();
  }
}

Tensor t(const Shape& s) { return Tensor::empty(s, DType::F32); }

TEST(Matmul1d, Errors) {
  expect_matmul_error<InvalidArgument>([] { matmul(t({}), t({3})); }, "[] @ [3]");
  expect_matmul_error<InvalidArgument>([] { matmul(t({3}), t({})); }, "[3] @ []");
  expect_matmul_error<InvalidArgument>([] { matmul(t({}), t({})); }, "[] @ []");
  expect_matmul_error<InvalidArgument>([] { matmul(t({2, 3}), t({})); }, "[2, 3] @ []");
  expect_matmul_error<ShapeMismatch>([] { matmul(t({7}), t({5})); }, "[7] @ [5]");
  expect_matmul_error<ShapeMismatch>([] { matmul(t({5, 7}), t({6})); }, "[5, 7] @ [6]");
  expect_matmul_error<ShapeMismatch>([] { matmul(t({6}), t({7, 3})); }, "[6] @ [7, 3]");
  expect_matmul_error<ShapeMismatch>([] { matmul(t({2, 5, 7}), t({6})); }, "[2, 5, 7] @ [6]");
  expect_matmul_error<ShapeMismatch>([] { matmul(t({6}), t({2, 7, 3})); }, "[6] @ [2, 7, 3]");
  // The Var form reports the same.
  expect_matmul_error<ShapeMismatch>([] { matmul(Var(t({7}), true), Var(t({5}), true)); },
                                     "[7] @ [5]");
  expect_matmul_error<InvalidArgument>([] { matmul(Var(t({}), true), Var(t({3}), true)); },
                                       "[] @ [3]");
}

Tensor input(const Shape& shape, uint64_t seed, Layout layout = Layout::Contiguous) {
  return test::make_input(shape, DType::F64, Device::cpu(),
                          {.lo = -2.0, .hi = 2.0, .layout = layout}, seed);
}

const test::VarFn kMatmul = [](const std::vector<Var>& v) { return matmul(v[0], v[1]); };

TEST(Matmul1d, Gradients) {
  uint64_t seed = 700;
  for (const Case& c : cases()) {
    if (c.a.back() == 0 || shape_numel(c.a) == 0) continue;  // nothing to differentiate
    test::check_gradients(OpId::matmul, describe(c), kMatmul,
                          {input(c.a, seed, c.la), input(c.b, seed + 1, c.lb)});
    seed += 2;
  }
}

TEST(Matmul1d, GradientsThroughASquare) {
  // Squared, so the gradient reaching the rule has history and the second-order check
  // differentiates the rule's promoted g.
  const auto squared = [](const std::vector<Var>& v) {
    const Var y = matmul(v[0], v[1]);
    return y * y;
  };
  const std::vector<std::pair<Shape, Shape>> shapes = {
      {{7}, {7}}, {{5, 7}, {7}}, {{7}, {7, 3}}, {{2, 5, 7}, {7}}, {{7}, {2, 7, 3}}};
  uint64_t seed = 800;
  for (const auto& [sa, sb] : shapes) {
    test::check_gradients(OpId::matmul, shape_str(sa) + " @ " + shape_str(sb) + " squared", squared,
                          {input(sa, seed), input(sb, seed + 1)});
    seed += 2;
  }
}

TEST(Matmul1d, GradientOfOneOperand) {
  // Only the vector requires grad; the matrix is a constant.
  const Tensor m = input({2, 5, 7}, 900);
  Var v(input({7}, 901), true);
  const Tensor g = backward(sum(matmul(Var(m), v)))[v];
  ASSERT_EQ(g.shape(), (Shape{7}));
  // d/dv_k of sum_{b,i} sum_k m[b,i,k] v_k is the sum of m over b and i.
  const std::vector<double> mv = m.to_vector<double>();
  const std::vector<double> got = g.to_vector<double>();
  for (size_t k = 0; k < 7; ++k) {
    double want = 0.0;
    for (size_t r = 0; r < 10; ++r) want += mv[r * 7 + k];
    EXPECT_NEAR(got[k], want, 1e-12) << k;
  }
}

}  // namespace
}  // namespace numr
