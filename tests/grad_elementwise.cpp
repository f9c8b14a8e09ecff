// First- and second-order gradient checks of every differentiable elementwise op, in
// float64 against central differences, driven by the op table.
#include <gtest/gtest.h>

#include <random>

#include "support/gradcheck.h"

namespace numr::test {
namespace {

// Values inside the op's smooth domain, away from kinks (0 for abs/relu, integers for
// floor and friends, ties for maximum/minimum).
Tensor smooth_input(OpId op, const Shape& shape, uint64_t seed) {
  double lo = -2.0, hi = 2.0;
  switch (op) {
    case OpId::sqrt: case OpId::rsqrt: case OpId::log: case OpId::log2: case OpId::log10:
    case OpId::pow: case OpId::pow_scalar: lo = 0.3; hi = 3.0; break;
    case OpId::log1p: lo = -0.5; hi = 2.0; break;
    case OpId::acosh: lo = 1.2; hi = 3.0; break;
    case OpId::asin: case OpId::acos: case OpId::atanh:
    case OpId::erfinv: lo = -0.8; hi = 0.8; break;
    case OpId::tan: lo = -1.2; hi = 1.2; break;
    case OpId::recip: case OpId::cbrt: lo = 0.4; hi = 2.0; break;
    case OpId::logit: lo = 0.1; hi = 0.9; break;
    case OpId::lgamma: case OpId::digamma: case OpId::gamma: case OpId::polygamma:
    case OpId::beta: case OpId::xlogy: lo = 0.3; hi = 3.0; break;
    case OpId::bessel_y0: case OpId::bessel_y1: case OpId::bessel_k0:
    case OpId::bessel_k1: lo = 0.3; hi = 3.0; break;
    case OpId::ellipk: case OpId::ellipe: lo = -1.5; hi = 0.8; break;
    default: break;
  }
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<double> v(static_cast<size_t>(shape_numel(shape)));
  for (auto& x : v) {
    x = u(rng);
    // Keep away from kinks at 0 and at integers (step functions, abs, relu, sign).
    if (std::fabs(x - std::round(x)) < 0.05) x += 0.1;
  }
  return Tensor::from_vector(v, shape);
}

bool in(OpFamily f, std::initializer_list<OpFamily> fs) {
  for (OpFamily g : fs)
    if (f == g) return true;
  return false;
}

Var call(OpId op, const std::vector<Var>& x) {
  switch (op) {
#define NUMR_UNARY(name, d, g) \
  case OpId::name: return name(x[0]);
#define NUMR_BINARY(name, d, g) \
  case OpId::name: return name(x[0], x[1]);
#define NUMR_TERNARY(name, d, g) \
  case OpId::name: return name(x[0], x[1], x[2]);
#define NUMR_SCALAR(name, d, g) \
  case OpId::name: return name(x[0], OpId::name == OpId::polygamma ? 2.0 : 1.7);
#define NUMR_ACTIVATION(name, d, g) \
  case OpId::name: return name(x[0]);
#define NUMR_ACTIVATION_P(name, p, v, d, g) \
  case OpId::name: return name(x[0], 1.3);
#include "numr/op_table.def"
    default: throw std::logic_error("not an elementwise op");
  }
}

int arity(OpFamily f) { return f == OpFamily::Binary ? 2 : f == OpFamily::Ternary ? 3 : 1; }

TEST(GradElementwise, EveryDifferentiableElementwiseOp) {
  for (const OpInfo& info : all_ops()) {
    if (!info.differentiable) continue;
    if (!in(info.family, {OpFamily::Unary, OpFamily::Activation, OpFamily::Binary,
                          OpFamily::Ternary, OpFamily::Scalar}))
      continue;
    const int n = arity(info.family);
    const VarFn f = [op = info.id](const std::vector<Var>& x) { return call(op, x); };
    // Same shapes, then broadcasting ({3, 4} with {4} and {3, 1}).
    std::vector<Tensor> same, bcast;
    const Shape bshapes[3] = {{3, 4}, {4}, {3, 1}};
    for (int k = 0; k < n; ++k) {
      same.push_back(smooth_input(info.id, {7}, 10 + uint64_t(k)));
      bcast.push_back(smooth_input(info.id, bshapes[k], 20 + uint64_t(k)));
    }
    check_gradients(info.id, "shape [7]", f, same);
    if (n > 1) check_gradients(info.id, "broadcast", f, bcast);
    // A transposed (non-contiguous) first input.
    std::vector<Tensor> strided = bcast;
    strided[0] = smooth_input(info.id, {4, 3}, 30).transpose(0, 1);
    check_gradients(info.id, "transposed input", f, strided);
  }
}

TEST(GradElementwise, WhereCondAndClamp) {
  const Tensor cond = Tensor::from_vector<uint8_t>({1, 0, 0, 1}, {4}).cast(DType::Bool);
  check_gradients(
      OpId::where_cond, "broadcast values",
      [cond](const std::vector<Var>& x) {
        return where_cond(Var(cond.to(x[0].device())), x[0], x[1]);
      },
      {smooth_input(OpId::add, {3, 4}, 1), smooth_input(OpId::add, {4}, 2)});
  check_gradients(
      OpId::clamp, "both bounds",
      [](const std::vector<Var>& x) { return clamp(x[0], -0.5, 0.7); },
      {smooth_input(OpId::add, {3, 5}, 3)});
  check_gradients(
      OpId::clamp, "lower bound only",
      [](const std::vector<Var>& x) { return clamp(x[0], 0.25, std::nullopt); },
      {smooth_input(OpId::add, {9}, 4)});
}

TEST(GradElementwise, OperatorsMatchNamedOps) {
  Var a(smooth_input(OpId::add, {5}, 5), true), b(smooth_input(OpId::add, {5}, 6), true);
  const Gradients g1 = backward(sum((a + b) * (a - b) / (b * 2.0 + 5.0) - (-a) * 3.0));
  const Gradients g2 =
      backward(sum(sub(div(mul(add(a, b), sub(a, b)), add_scalar(mul_scalar(b, 2.0), 5.0)),
                       mul_scalar(neg(a), 3.0))));
  EXPECT_EQ(g1[a].to_vector<double>(), g2[a].to_vector<double>());
  EXPECT_EQ(g1[b].to_vector<double>(), g2[b].to_vector<double>());
}

}  // namespace
}  // namespace numr::test
