// The conveniences for code written the way PyTorch users write it: with
// `using namespace numr;`, Vars and Tensors mixed, literals of any arithmetic type, shapes
// in any integer vector, method forms and the small helpers (stddev, *_like, tril, ...).
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <sstream>
#include <vector>

#include "numr/numr.h"
#include "support/gradcheck.h"

// As the README writes code: `std(x)` would be ambiguous here, stddev is not.
using namespace numr;

namespace {

std::vector<double> values(const Tensor& t) { return t.cast(DType::F64).to_vector<double>(); }
std::vector<double> values(const Var& v) { return values(v.tensor()); }

Tensor f64(std::vector<double> v, const Shape& shape) { return Tensor::from_vector(v, shape); }

void expect_near(const std::vector<double>& got, const std::vector<double>& want,
                 double tol = 1e-12) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << "index " << i;
}

TEST(ApiFriction, StddevUnderUsingNamespace) {
  const Tensor x = f64({1, 2, 3, 4}, {4});
  // Hand computed: mean 2.5, squared deviations 2.25 + 0.25 + 0.25 + 2.25 = 5.
  expect_near(values(stddev(x)), {std::sqrt(5.0 / 3.0)});
  expect_near(values(stddev(x, {}, 0)), {std::sqrt(5.0 / 4.0)});
  expect_near(values(x.stddev()), {std::sqrt(5.0 / 3.0)});
  const Tensor m = f64({1, 3, 2, 6}, {2, 2});
  const Tensor s = stddev(m, {1}, 1, true);
  EXPECT_EQ(s.shape(), (Shape{2, 1}));
  expect_near(values(s), {std::sqrt(2.0), std::sqrt(8.0)});
  expect_near(values(numr::std(x)), {std::sqrt(5.0 / 3.0)});  // the old name stays

  const Var v(x, true);
  const Var sv = stddev(v);
  expect_near(values(sv), {std::sqrt(5.0 / 3.0)});
  // d std / dx_i = (x_i - mean) / ((n - 1) std).
  const Tensor g = backward(sv)[v];
  const double sd = std::sqrt(5.0 / 3.0);
  expect_near(values(g), {-1.5 / (3 * sd), -0.5 / (3 * sd), 0.5 / (3 * sd), 1.5 / (3 * sd)});
}

TEST(ApiFriction, VarAndTensorMix) {
  const Tensor a = f64({1, 2, 4}, {3});
  const Tensor c = f64({3, -1, 2}, {3});
  const Var v(a, true);
  expect_near(values(v + c), {4, 1, 6});
  expect_near(values(c + v), {4, 1, 6});
  expect_near(values(v - c), {-2, 3, 2});
  expect_near(values(c - v), {2, -3, -2});
  expect_near(values(v * c), {3, -2, 8});
  expect_near(values(c * v), {3, -2, 8});
  expect_near(values(v / c), {1.0 / 3, -2, 2});
  expect_near(values(c / v), {3, -0.5, 0.5});
  // The tensor is a constant: gradients reach v only.
  const Gradients g = backward(sum(v * c + c / v - c));
  expect_near(values(g[v]), {3 - 3.0 / 1, -1 + 1.0 / 4, 2 - 2.0 / 16});
  // Broadcasting works as between Vars.
  const Var row = v.reshape({1, 3}) * f64({1, 10}, {2, 1});
  EXPECT_EQ(row.shape(), (Shape{2, 3}));
  expect_near(values(row), {1, 2, 4, 10, 20, 40});
  EXPECT_THROW(v + Tensor(), InvalidArgument);
  EXPECT_THROW(v * Tensor::from_vector<float>({1.f, 2.f, 3.f}, {3}), DTypeMismatch);
}

TEST(ApiFriction, ScalarOnTheLeftAndIntegerLiterals) {
  const Tensor t = f64({1, 2, 4}, {3});
  expect_near(values(1.0 / t), {1, 0.5, 0.25});
  expect_near(values(2 / t), {2, 1, 0.5});
  expect_near(values(t + 1), {2, 3, 5});
  expect_near(values(1 - t), {0, -1, -3});
  expect_near(values(t * 2), {2, 4, 8});
  expect_near(values(2 * t), {2, 4, 8});
  expect_near(values(t / 2), {0.5, 1, 2});
  expect_near(values(t - 1), {0, 1, 3});
  const int64_t n = 3;
  expect_near(values(t * n), {3, 6, 12});

  const Tensor i = Tensor::from_vector<int64_t>({1, 2, 3}, {3});
  EXPECT_EQ((i + 1).to_vector<int64_t>(), (std::vector<int64_t>{2, 3, 4}));
  EXPECT_EQ((10 - i).to_vector<int64_t>(), (std::vector<int64_t>{9, 8, 7}));
  EXPECT_EQ((i * 2).to_vector<int64_t>(), (std::vector<int64_t>{2, 4, 6}));
  EXPECT_THROW(1.0 / i, UnsupportedDType);  // div is for floating dtypes
  EXPECT_THROW(0.5 / i, InvalidArgument);   // the scalar must fit the dtype first

  const Var v(t, true);
  expect_near(values(v + 1), {2, 3, 5});
  expect_near(values(1 - v), {0, -1, -3});
  expect_near(values(v * 2), {2, 4, 8});
  expect_near(values(v / 2), {0.5, 1, 2});
  expect_near(values(2 / v), {2, 1, 0.5});
  const Gradients g = backward(sum(1.0 / v));
  expect_near(values(g[v]), {-1, -0.25, -1.0 / 16});
}

TEST(ApiFriction, VarMethods) {
  const Tensor t = f64({1, 2, 3, 4, 5, 6}, {2, 3});
  const Var v(t, true);
  EXPECT_EQ(v.reshape({3, 2}).shape(), (Shape{3, 2}));
  EXPECT_EQ(v.view({6}).shape(), (Shape{6}));
  EXPECT_EQ(v.transpose(0, 1).shape(), (Shape{3, 2}));
  expect_near(values(v.transpose(0, 1)), {1, 4, 2, 5, 3, 6});
  expect_near(values(v.permute({1, 0})), {1, 4, 2, 5, 3, 6});
  expect_near(values(v.sum()), {21});
  expect_near(values(v.sum({1}, true)), {6, 15});
  EXPECT_EQ(v.sum({1}, true).shape(), (Shape{2, 1}));
  expect_near(values(v.mean({0})), {2.5, 3.5, 4.5});
  EXPECT_DOUBLE_EQ(v.sum().item<double>(), 21.0);
  EXPECT_DOUBLE_EQ(v.mean().item_double(), 3.5);
  EXPECT_THROW(v.item<double>(), InvalidArgument);  // 6 elements
  EXPECT_THROW(v.sum().item<float>(), DTypeMismatch);
  // Gradients flow through the method forms.
  const Gradients g = backward(v.transpose(0, 1).reshape({6}).mean());
  expect_near(values(g[v]), std::vector<double>(6, 1.0 / 6));
  std::ostringstream os;
  os << v;
  EXPECT_EQ(os.str(), v.to_string());
  EXPECT_NE(os.str().find("requires_grad=true"), std::string::npos);
}

TEST(ApiFriction, TensorMethods) {
  const Tensor t = f64({1, -2, 3, 4, 0.5, -6}, {2, 3});
  expect_near(values(t.sum()), {0.5});
  expect_near(values(t.sum({1})), {2, -1.5});
  EXPECT_EQ(t.sum({1}, true).shape(), (Shape{2, 1}));
  expect_near(values(t.mean({0})), {2.5, -0.75, -1.5});
  expect_near(values(t.max({1})), {3, 4});
  expect_near(values(t.min()), {-6});
  expect_near(values(t.prod({0})), {4, -1, -18});
  EXPECT_EQ(t.argmax().item<int64_t>(), 3);
  EXPECT_EQ(t.argmin(1).to_vector<int64_t>(), (std::vector<int64_t>{1, 2}));
  // Rows {1, -2, 3}: mean 2/3, squared deviations 1/9 + 64/9 + 49/9 = 114/9.
  expect_near(values(t.var({1}).narrow(0, 0, 1)), {114.0 / 9 / 2});
  expect_near(values(t.stddev({1}, 0).narrow(0, 0, 1)), {std::sqrt(114.0 / 9 / 3)});
  expect_near(values(t.abs()), {1, 2, 3, 4, 0.5, 6});
  expect_near(values(t.abs().sqrt()),
              {1, std::sqrt(2.0), std::sqrt(3.0), 2, std::sqrt(0.5), std::sqrt(6.0)});
  expect_near(values(t.exp().log()), values(t), 1e-14);
  expect_near(values(t.matmul(t.transpose(0, 1))), {14, -15, -15, 52.25});
  const std::vector<double> s = values(t.softmax(1));
  const double z = std::exp(1.0) + std::exp(-2.0) + std::exp(3.0);
  EXPECT_NEAR(s[0], std::exp(1.0) / z, 1e-15);
  EXPECT_NEAR(s[2], std::exp(3.0) / z, 1e-15);
}

TEST(ApiFriction, FromVectorDeducesTheType) {
  const Tensor a = Tensor::from_vector({1.f, 2.f}, {2});
  EXPECT_EQ(a.dtype(), DType::F32);
  EXPECT_EQ(a.to_vector<float>(), (std::vector<float>{1.f, 2.f}));
  EXPECT_EQ(Tensor::from_vector({1.0, 2.0, 3.0}, {3}).dtype(), DType::F64);
  EXPECT_EQ(Tensor::from_vector({int64_t(4), int64_t(5)}, {2}).dtype(), DType::I64);
  const Tensor b = Tensor::from_vector({true, false, true}, {3});
  EXPECT_EQ(b.dtype(), DType::Bool);
  EXPECT_EQ(b.to_vector<bool>(), (std::vector<bool>{true, false, true}));
  // The explicit form still works, and brace lists of ints convert to the named type.
  EXPECT_EQ(Tensor::from_vector<float>({1, 2}, {2}).to_vector<float>(),
            (std::vector<float>{1.f, 2.f}));
  EXPECT_THROW(Tensor::from_vector({1.f, 2.f}, {3}), ShapeMismatch);
}

static_assert(ShapeLike<std::vector<long long>> && ShapeLike<std::array<unsigned, 3>>);
static_assert(!ShapeLike<Shape> && !ShapeLike<std::string> && !ShapeLike<std::vector<bool>>);

TEST(ApiFriction, ShapesFromAnyIntegerRange) {
  const std::vector<long long> ll{2, 3};
  const std::vector<int> i32{3, 2};
  const std::array<size_t, 2> sz{6, 1};
  Generator gen(1);
  EXPECT_EQ(zeros(ll).shape(), (Shape{2, 3}));
  EXPECT_EQ(ones(ll, DType::I64).to_vector<int64_t>(), std::vector<int64_t>(6, 1));
  EXPECT_EQ(full(i32, 2.5).to_vector<float>(), std::vector<float>(6, 2.5f));
  EXPECT_EQ(Tensor::empty(sz, DType::F64).shape(), (Shape{6, 1}));
  EXPECT_EQ(randn(ll, DType::F32, Device::cpu(), gen).shape(), (Shape{2, 3}));
  EXPECT_EQ(rand(i32, DType::F32, Device::cpu(), gen).shape(), (Shape{3, 2}));
  const Tensor t = Tensor::from_vector(std::vector<float>{1, 2, 3, 4, 5, 6}, ll);
  EXPECT_EQ(t.shape(), (Shape{2, 3}));
  EXPECT_EQ(t.reshape(i32).shape(), (Shape{3, 2}));
  EXPECT_EQ(t.view(sz).shape(), (Shape{6, 1}));
  EXPECT_EQ(reshape(t, i32).shape(), (Shape{3, 2}));
  EXPECT_EQ(view(t, sz).shape(), (Shape{6, 1}));
  EXPECT_EQ(t.reshape(std::vector<long long>{-1}).shape(), (Shape{6}));
  EXPECT_EQ(broadcast_to(t, std::vector<long long>{4, 2, 3}).shape(), (Shape{4, 2, 3}));
  EXPECT_EQ(t.broadcast_to(std::vector<int>{4, 2, 3}).shape(), (Shape{4, 2, 3}));
  const Var v(t.cast(DType::F64), true);
  EXPECT_EQ(v.reshape(i32).shape(), (Shape{3, 2}));
  EXPECT_EQ(reshape(v, ll).shape(), (Shape{2, 3}));
  EXPECT_EQ(view(v, sz).shape(), (Shape{6, 1}));
  // Errors keep the op's name; an unsigned extent beyond int64_t is refused.
  EXPECT_THROW(zeros(std::vector<long long>{-2}), InvalidArgument);
  EXPECT_THROW(zeros(std::vector<uint64_t>{uint64_t(1) << 63}), InvalidArgument);
  try {
    (void)zeros(std::vector<uint64_t>{uint64_t(1) << 63});
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(std::string(e.what()).rfind("[zeros]", 0), 0u) << e.what();
  }
}

TEST(ApiFriction, LikeFactories) {
  const Tensor x = Tensor::from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3}).transpose(0, 1);
  EXPECT_EQ(zeros_like(x).shape(), (Shape{3, 2}));
  EXPECT_EQ(zeros_like(x).to_vector<float>(), std::vector<float>(6, 0.f));
  EXPECT_EQ(ones_like(x).to_vector<float>(), std::vector<float>(6, 1.f));
  EXPECT_EQ(full_like(x, 7.0).to_vector<float>(), std::vector<float>(6, 7.f));
  EXPECT_EQ(empty_like(x).shape(), (Shape{3, 2}));
  EXPECT_EQ(empty_like(x).dtype(), DType::F32);
  EXPECT_EQ(zeros_like(x, DType::I64).to_vector<int64_t>(), std::vector<int64_t>(6, 0));
  EXPECT_EQ(ones_like(x, DType::Bool).dtype(), DType::Bool);
  EXPECT_EQ(full_like(x, 3.0, DType::I32).to_vector<int32_t>(), std::vector<int32_t>(6, 3));
  EXPECT_EQ(empty_like(x, DType::F64).dtype(), DType::F64);
  EXPECT_THROW(full_like(x, 0.5, DType::I32), InvalidArgument);
  EXPECT_THROW(zeros_like(Tensor()), InvalidArgument);
}

TEST(ApiFriction, WhereCondWithScalars) {
  const Tensor x = f64({-1, 2, -3, 4}, {4});
  const Tensor pos = gt(x, zeros_like(x));
  expect_near(values(where_cond(pos, x, 0.0)), {0, 2, 0, 4});
  expect_near(values(where_cond(pos, 1.0, x)), {-1, 1, -3, 1});
  expect_near(values(where_cond(pos, x, 0)), {0, 2, 0, 4});  // an int literal
  const Tensor i = Tensor::from_vector<int32_t>({5, 6, 7, 8}, {4});
  EXPECT_EQ(where_cond(pos, i, -1).to_vector<int32_t>(), (std::vector<int32_t>{-1, 6, -1, 8}));
  EXPECT_THROW(where_cond(pos, i, 0.5), InvalidArgument);
  EXPECT_THROW(where_cond(x, x, 0.0), DTypeMismatch);  // cond must be Bool

  const Var v(x, true);
  expect_near(values(where_cond(pos, v, 0.0)), {0, 2, 0, 4});
  expect_near(values(where_cond(Var(pos), 1.0, v)), {-1, 1, -3, 1});
  expect_near(values(where_cond(Var(pos), v, -1.0)), {-1, 2, -1, 4});
  expect_near(values(where_cond(pos, 2.0, v)), {-1, 2, -3, 2});
  expect_near(values(where_cond(pos, v, v * 2)), {-2, 2, -6, 4});
  const Gradients g = backward(sum(where_cond(pos, v * 3, 0.0)));
  expect_near(values(g[v]), {0, 3, 0, 3});
  EXPECT_EQ(
      test::gradcheck([&](const std::vector<Var>& in) { return where_cond(pos, 1.0, in[0]); }, {x}),
      "");
}

TEST(ApiFriction, TrilTriu) {
  const Tensor m = f64({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, {3, 4});
  expect_near(values(tril(m)), {1, 0, 0, 0, 5, 6, 0, 0, 9, 10, 11, 0});
  expect_near(values(tril(m, 1)), {1, 2, 0, 0, 5, 6, 7, 0, 9, 10, 11, 12});
  expect_near(values(tril(m, -1)), {0, 0, 0, 0, 5, 0, 0, 0, 9, 10, 0, 0});
  expect_near(values(triu(m)), {1, 2, 3, 4, 0, 6, 7, 8, 0, 0, 11, 12});
  expect_near(values(triu(m, 2)), {0, 0, 3, 4, 0, 0, 0, 8, 0, 0, 0, 0});
  expect_near(values(triu(m, -1)), {1, 2, 3, 4, 5, 6, 7, 8, 0, 10, 11, 12});
  expect_near(values(tril(m, 100)), values(m));
  expect_near(values(triu(m, 100)), std::vector<double>(12, 0.0));
  expect_near(values(tril(m, INT64_MIN)), std::vector<double>(12, 0.0));
  // Batches and views: the last two dims of a transposed batch.
  const Tensor b = stack({m.narrow(1, 0, 3), m.narrow(1, 1, 3)}, 0).transpose(1, 2);
  const Tensor want0 = f64({1, 0, 0, 2, 6, 0, 3, 7, 11}, {3, 3});
  expect_near(values(tril(b).narrow(0, 0, 1)), values(want0));
  // Integers, -inf above the diagonal (a mask, not a product: no NaN).
  const Tensor i = Tensor::from_vector<int64_t>({1, 2, 3, 4}, {2, 2});
  EXPECT_EQ(triu(i).to_vector<int64_t>(), (std::vector<int64_t>{1, 2, 0, 4}));
  const Tensor inf = full({2, 2}, -INFINITY, DType::F32);
  EXPECT_EQ(tril(inf).to_vector<float>(), (std::vector<float>{-INFINITY, 0, -INFINITY, -INFINITY}));
  EXPECT_THROW(tril(f64({1, 2}, {2})), InvalidArgument);
  try {
    (void)triu(f64({1, 2}, {2}));
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(std::string(e.what()).rfind("[triu]", 0), 0u) << e.what();
  }

  const Var v(m, true);
  expect_near(values(tril(v, 1)), values(tril(m, 1)));
  const Gradients g = backward(sum(triu(v) * 2.0));
  expect_near(values(g[v]), {2, 2, 2, 2, 0, 2, 2, 2, 0, 0, 2, 2});
  EXPECT_EQ(
      test::gradcheck([](const std::vector<Var>& in) { return tril(in[0] * in[0], -1); }, {m}), "");
  EXPECT_EQ(
      test::gradgradcheck([](const std::vector<Var>& in) { return triu(in[0] * in[0], 1); }, {m}),
      "");
}

// The README's tour, as written there (std::cout replaced by a stream to check).
TEST(ApiFriction, ReadmeTour) {
  std::ostringstream out;
  Device dev = Device::cpu();
  Tensor a = Tensor::from_vector({0.f, 1.f, -1.f}, {3}, dev);
  Tensor b = full({3}, 2.0, DType::F32, dev);
  Tensor c = silu_mul(a, b);
  out << 1.0 / (c + 1) << '\n';
  Tensor s = stddev(a, {0});
  Tensor m = a.reshape({1, 3}).mean({1});

  Generator gen(42);
  Tensor x = randn({256, 512}, DType::BF16, dev, gen);
  Tensor w = randn({512, 1024}, DType::BF16, dev, gen);
  Tensor bias = zeros({1024}, DType::BF16, dev);
  Tensor y = matmul_bias_activation(x, w, bias, Activation::Gelu);

  Var xv(x.cast(DType::F32), true), wv(w.cast(DType::F32), true), bv(bias.cast(DType::F32), true);
  Var loss = sum(matmul_bias_activation(xv, wv, bv, Activation::Silu));
  Gradients g = backward(loss);
  VarGradients gg = backward(loss, {.create_graph = true});
  AdamW opt({wv, bv}, {.lr = 1e-3});
  opt.step(g);

  Var h = matmul(xv, wv) + bias.cast(DType::F32);
  Tensor labels = randint(0, 1024, {256}, DType::I64, dev, gen);
  Var ce = cross_entropy(h, labels);
  out << ce << '\n';
  Gradients gce = backward(ce);

  const std::string text = out.str();
  EXPECT_EQ(text.substr(0, text.find('\n')),
            "tensor([1.0000, 0.4062, 2.1640], dtype=f32, device=cpu)");
  EXPECT_NE(text.find(", dtype=f32, device=cpu, grad_fn=mean)"), std::string::npos) << text;
  EXPECT_NEAR(s.item<float>(), 1.0, 1e-6);
  EXPECT_NEAR(m.item<float>(), 0.0, 1e-7);
  EXPECT_EQ(y.shape(), (Shape{256, 1024}));
  EXPECT_TRUE(gg.contains(wv));
  EXPECT_EQ(gce[wv].shape(), (Shape{512, 1024}));
  EXPECT_TRUE(std::isfinite(ce.item<float>()));
}

}  // namespace
