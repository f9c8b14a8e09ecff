// Shape ops (cat, stack, split, chunk, repeat, pad) for every dtype, with odd shapes and
// non-contiguous inputs, against plain index loops written here.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "numr/numr.h"
#include "support/harness.h"

namespace numr {
namespace {

using test::Layout;
using test::RefTensor;
using Index = std::vector<int64_t>;

// Calls f(idx) for every multi-index of shape, in row-major order.
void for_each_index(const Shape& shape, const std::function<void(const Index&)>& f) {
  const int64_t n = shape_numel(shape);
  Index idx(shape.size(), 0);
  for (int64_t k = 0; k < n; ++k) {
    f(idx);
    for (size_t d = shape.size(); d-- > 0;) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
}

double at(const RefTensor& r, const Index& idx) {
  int64_t flat = 0;
  for (size_t d = 0; d < idx.size(); ++d) flat = flat * r.shape[d] + idx[d];
  return r.v[size_t(flat)];
}

RefTensor build(const Shape& shape, const std::function<double(const Index&)>& f) {
  RefTensor r{shape, {}};
  r.v.reserve(size_t(shape_numel(shape)));
  for_each_index(shape, [&](const Index& idx) { r.v.push_back(f(idx)); });
  return r;
}

// Shape ops move values without arithmetic: results must match exactly.
std::string exact(const Tensor& got, const RefTensor& want) {
  std::string msg = test::compare(got, want, {0.0, 0.0, 0.0});
  if (msg.empty() && !got.is_contiguous()) msg = "result is not contiguous";
  return msg;
}

Tensor input(const Shape& shape, DType t, Device dev, Layout layout, uint64_t seed) {
  test::InputSpec spec;
  spec.layout = layout;
  spec.lo = -50;
  spec.hi = 50;
  return test::make_input(shape, t, dev, spec, seed);
}

std::string check_cat(const std::vector<Tensor>& xs, int64_t dim) {
  const Tensor out = cat(xs, dim);
  const int64_t d = dim < 0 ? dim + xs[0].dim() : dim;
  std::vector<RefTensor> refs;
  std::vector<int64_t> starts;
  Shape shape = xs[0].shape();
  shape[size_t(d)] = 0;
  for (const Tensor& x : xs) {
    refs.push_back(test::to_ref(x));
    starts.push_back(shape[size_t(d)]);
    shape[size_t(d)] += x.shape()[size_t(d)];
  }
  const RefTensor want = build(shape, [&](const Index& idx) {
    size_t k = 0;
    while (k + 1 < xs.size() && idx[size_t(d)] >= starts[k + 1]) ++k;
    Index src = idx;
    src[size_t(d)] -= starts[k];
    return at(refs[k], src);
  });
  return exact(out, want);
}

TEST(ParityShape, Cat) {
  test::for_each_case(OpId::cat, test::dtypes_of(OpId::cat), [](DType t, Device dev) {
    const std::vector<std::pair<std::vector<Tensor>, int64_t>> cases = {
        {{input({3, 5, 4}, t, dev, Layout::Contiguous, 1),
          input({3, 2, 4}, t, dev, Layout::Transposed, 2),
          input({3, 0, 4}, t, dev, Layout::Contiguous, 3),
          input({3, 7, 4}, t, dev, Layout::Flipped, 4)},
         1},
        {{input({7}, t, dev, Layout::Strided, 5), input({1}, t, dev, Layout::Contiguous, 6),
          input({33}, t, dev, Layout::Flipped, 7)},
         0},
        {{input({2, 3}, t, dev, Layout::Transposed, 8), input({2, 5}, t, dev, Layout::Strided, 9)},
         -1},
        {{input({5, 3}, t, dev, Layout::Strided, 10), input({1, 3}, t, dev, Layout::Contiguous, 11),
          input({6, 3}, t, dev, Layout::Transposed, 12)},
         0},
        {{input({4, 1030}, t, dev, Layout::Contiguous, 13)}, 1},
        {{input({0, 3}, t, dev, Layout::Contiguous, 14),
          input({0, 3}, t, dev, Layout::Contiguous, 15)},
         0},
    };
    for (const auto& [xs, dim] : cases) {
      const std::string msg = check_cat(xs, dim);
      if (!msg.empty()) return "cat dim " + std::to_string(dim) + ": " + msg;
    }
    return std::string();
  });
}

TEST(ParityShape, Stack) {
  test::for_each_case(OpId::stack, test::dtypes_of(OpId::stack), [](DType t, Device dev) {
    const std::vector<Tensor> xs = {input({5, 3}, t, dev, Layout::Contiguous, 1),
                                    input({5, 3}, t, dev, Layout::Transposed, 2),
                                    input({5, 3}, t, dev, Layout::Strided, 3)};
    std::vector<RefTensor> refs;
    for (const Tensor& x : xs) refs.push_back(test::to_ref(x));
    for (int64_t dim : {0, 1, 2, -1, -3}) {
      const int64_t d = dim < 0 ? dim + 3 : dim;
      Shape shape = {5, 3};
      shape.insert(shape.begin() + d, 3);
      const RefTensor want = build(shape, [&](const Index& idx) {
        Index src = idx;
        src.erase(src.begin() + d);
        return at(refs[size_t(idx[size_t(d)])], src);
      });
      const std::string msg = exact(stack(xs, dim), want);
      if (!msg.empty()) return "stack dim " + std::to_string(dim) + ": " + msg;
    }
    // 0-d tensors stack into a vector.
    const Tensor a = input({}, t, dev, Layout::Contiguous, 4),
                 b = input({}, t, dev, Layout::Contiguous, 5);
    const RefTensor want{{2}, {test::to_ref(a).v[0], test::to_ref(b).v[0]}};
    return exact(stack({a, b}, 0), want);
  });
}

// Pieces along d must be views of x with the given sizes and x's values.
std::string check_pieces(const Tensor& x, const std::vector<Tensor>& pieces, int64_t d,
                         const std::vector<int64_t>& sizes) {
  if (pieces.size() != sizes.size())
    return std::to_string(pieces.size()) + " pieces, expected " + std::to_string(sizes.size());
  const RefTensor xr = test::to_ref(x);
  int64_t start = 0;
  for (size_t k = 0; k < pieces.size(); ++k) {
    Shape shape = x.shape();
    shape[size_t(d)] = sizes[k];
    if (pieces[k].storage() != x.storage()) return "piece " + std::to_string(k) + " is not a view";
    const RefTensor want = build(shape, [&](const Index& idx) {
      Index src = idx;
      src[size_t(d)] += start;
      return at(xr, src);
    });
    const std::string msg = test::compare(pieces[k], want, {0.0, 0.0, 0.0});
    if (!msg.empty()) return "piece " + std::to_string(k) + ": " + msg;
    start += sizes[k];
  }
  return "";
}

TEST(ParityShape, Split) {
  test::for_each_case(OpId::split, test::dtypes_of(OpId::split), [](DType t, Device dev) {
    const Tensor x = input({7, 5}, t, dev, Layout::Strided, 1);
    const Tensor y = input({3, 0}, t, dev, Layout::Contiguous, 2);
    const Tensor z = input({4, 9}, t, dev, Layout::Transposed, 3);
    for (const auto& [msg, what] : std::vector<std::pair<std::string, const char*>>{
             {check_pieces(x, split(x, 3, 0), 0, {3, 3, 1}), "[7,5] by 3 on 0"},
             {check_pieces(x, split(x, 2, -1), 1, {2, 2, 1}), "[7,5] by 2 on -1"},
             {check_pieces(x, split(x, 7, 0), 0, {7}), "[7,5] by 7 on 0"},
             {check_pieces(x, split(x, 100, 1), 1, {5}), "[7,5] by 100 on 1"},
             {check_pieces(y, split(y, 2, 1), 1, {0}), "[3,0] by 2 on 1"},
             {check_pieces(z, split(z, 4, 1), 1, {4, 4, 1}), "transposed [4,9] by 4 on 1"},
         })
      if (!msg.empty()) return std::string(what) + ": " + msg;
    return std::string();
  });
}

TEST(ParityShape, Chunk) {
  test::for_each_case(OpId::chunk, test::dtypes_of(OpId::chunk), [](DType t, Device dev) {
    const Tensor x = input({7, 5}, t, dev, Layout::Flipped, 1);
    const Tensor y = input({0, 3}, t, dev, Layout::Contiguous, 2);
    const Tensor v = input({6}, t, dev, Layout::Strided, 3);
    for (const auto& [msg, what] : std::vector<std::pair<std::string, const char*>>{
             {check_pieces(x, chunk(x, 3, 0), 0, {3, 3, 1}), "[7,5] in 3 on 0"},
             {check_pieces(x, chunk(x, 4, 1), 1, {2, 2, 1}), "[7,5] in 4 on 1 (3 pieces)"},
             {check_pieces(x, chunk(x, 7, 0), 0, {1, 1, 1, 1, 1, 1, 1}), "[7,5] in 7 on 0"},
             {check_pieces(x, chunk(x, 9, 0), 0, {1, 1, 1, 1, 1, 1, 1}), "[7,5] in 9 on 0"},
             {check_pieces(x, chunk(x, 1, -1), 1, {5}), "[7,5] in 1 on -1"},
             {check_pieces(y, chunk(y, 4, 0), 0, {0}), "[0,3] in 4 on 0"},
             {check_pieces(v, chunk(v, 4, 0), 0, {2, 2, 2}), "[6] in 4 on 0"},
         })
      if (!msg.empty()) return std::string(what) + ": " + msg;
    return std::string();
  });
}

// torch.Tensor.repeat: out[i...] = x[i % shape] with leading new dims.
std::string check_repeat(const Tensor& x, const std::vector<int64_t>& reps) {
  const RefTensor xr = test::to_ref(x);
  const size_t lead = reps.size() - size_t(x.dim());
  Shape shape;
  for (size_t i = 0; i < reps.size(); ++i)
    shape.push_back(reps[i] * (i < lead ? 1 : x.shape()[i - lead]));
  const RefTensor want = build(shape, [&](const Index& idx) {
    Index src;
    for (size_t i = lead; i < idx.size(); ++i) src.push_back(idx[i] % x.shape()[i - lead]);
    return at(xr, src);
  });
  return exact(repeat(x, reps), want);
}

TEST(ParityShape, Repeat) {
  test::for_each_case(OpId::repeat, test::dtypes_of(OpId::repeat), [](DType t, Device dev) {
    const Tensor m = input({2, 3}, t, dev, Layout::Transposed, 1);
    const Tensor v = input({4}, t, dev, Layout::Flipped, 2);
    const Tensor s = input({}, t, dev, Layout::Contiguous, 3);
    const Tensor c = input({3, 1, 5}, t, dev, Layout::Strided, 4);
    for (const auto& [x, reps] :
         std::vector<std::pair<Tensor, std::vector<int64_t>>>{{m, {2, 1, 3}},
                                                              {m, {1, 1}},
                                                              {m, {2, 0}},
                                                              {m, {3, 2}},
                                                              {v, {3, 2}},
                                                              {v, {5}},
                                                              {s, {3}},
                                                              {s, {}},
                                                              {s, {2, 2}},
                                                              {c, {2, 3, 4, 1}},
                                                              {c, {1, 1, 7, 1}}}) {
      const std::string msg = check_repeat(x, reps);
      if (!msg.empty())
        return "repeat of " + shape_str(x.shape()) + " by " + shape_str(reps) + ": " + msg;
    }
    return std::string();
  });
}

std::string check_pad(const Tensor& x, const std::vector<int64_t>& pads, double value) {
  const RefTensor xr = test::to_ref(x);
  Shape shape = x.shape();
  std::vector<int64_t> before(shape.size(), 0);
  for (size_t k = 0; k < pads.size() / 2; ++k) {
    const size_t d = shape.size() - 1 - k;
    before[d] = pads[2 * k];
    shape[d] += pads[2 * k] + pads[2 * k + 1];
  }
  const RefTensor want = build(shape, [&](const Index& idx) {
    Index src = idx;
    for (size_t d = 0; d < idx.size(); ++d) {
      src[d] -= before[d];
      if (src[d] < 0 || src[d] >= x.shape()[d]) return value;
    }
    return at(xr, src);
  });
  return exact(pad(x, pads, value), want);
}

TEST(ParityShape, Pad) {
  test::for_each_case(OpId::pad, test::dtypes_of(OpId::pad), [](DType t, Device dev) {
    const Tensor m = input({3, 4}, t, dev, Layout::Strided, 1);
    const Tensor c = input({2, 3, 5}, t, dev, Layout::Flipped, 2);
    const Tensor e = input({0, 3}, t, dev, Layout::Contiguous, 3);
    const Tensor w = input({3, 1030}, t, dev, Layout::Transposed, 4);
    const double fill = is_floating(t) ? -2.5 : 1.0;
    for (const auto& [x, pads, value] :
         std::vector<std::tuple<Tensor, std::vector<int64_t>, double>>{
             {m, {1, 2, 0, 3}, 1.0},
             {m, {0, 0}, 0.0},
             {m, {}, 0.0},
             {c, {2, 1}, 0.0},
             {c, {1, 1, 1, 1, 1, 1}, fill},
             {e, {1, 1, 1, 1}, 1.0},
             {w, {3, 0, 1, 2}, fill}}) {
      const std::string msg = check_pad(x, pads, value);
      if (!msg.empty())
        return "pad of " + shape_str(x.shape()) + " by " + shape_str(pads) + ": " + msg;
    }
    return std::string();
  });
}

// Calls f, which must throw E with a message starting "[op]".
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

TEST(ParityShape, Errors) {
  const Tensor a = zeros({2, 3}), b = zeros({2, 4}), i = zeros({2, 3}, DType::I32);
  const Tensor s = zeros({});
  expect_error<InvalidArgument>([] { cat(std::vector<Tensor>{}, 0); }, "cat");
  expect_error<InvalidArgument>([&] { cat({a, Tensor()}, 0); }, "cat");
  expect_error<DTypeMismatch>([&] { cat({a, i}, 0); }, "cat");
  expect_error<ShapeMismatch>([&] { cat({a, b}, 0); }, "cat");
  expect_error<ShapeMismatch>([&] { cat({a, zeros({2, 3, 1})}, 0); }, "cat");
  expect_error<InvalidDimension>([&] { cat({a, b}, 2); }, "cat");
  expect_error<InvalidDimension>([&] { cat({a, b}, -3); }, "cat");
  expect_error<InvalidDimension>([&] { cat({s, s}, 0); }, "cat");
  EXPECT_EQ(cat({a, b}, 1).shape(), (Shape{2, 7}));
  EXPECT_EQ(cat({a, b}, -1).shape(), (Shape{2, 7}));

  expect_error<InvalidArgument>([] { stack(std::vector<Tensor>{}, 0); }, "stack");
  expect_error<DTypeMismatch>([&] { stack({a, i}, 0); }, "stack");
  expect_error<ShapeMismatch>([&] { stack({a, b}, 0); }, "stack");
  expect_error<InvalidDimension>([&] { stack({a, a}, 3); }, "stack");
  expect_error<InvalidDimension>([&] { stack({a, a}, -4); }, "stack");

  expect_error<InvalidArgument>([&] { split(a, 0, 0); }, "split");
  expect_error<InvalidArgument>([&] { split(a, -1, 0); }, "split");
  expect_error<InvalidDimension>([&] { split(a, 1, 2); }, "split");
  expect_error<InvalidDimension>([&] { split(s, 1, 0); }, "split");
  expect_error<InvalidArgument>([&] { split(Tensor(), 1, 0); }, "split");
  expect_error<InvalidArgument>([&] { chunk(a, 0, 0); }, "chunk");
  expect_error<InvalidArgument>([&] { chunk(a, -2, 0); }, "chunk");
  expect_error<InvalidDimension>([&] { chunk(a, 2, -3); }, "chunk");

  expect_error<InvalidArgument>([&] { repeat(a, {2}); }, "repeat");
  expect_error<InvalidArgument>([&] { repeat(a, {2, -1}); }, "repeat");
  expect_error<InvalidArgument>([&] { repeat(Tensor(), {2}); }, "repeat");

  expect_error<InvalidArgument>([&] { pad(a, {1}); }, "pad");
  expect_error<InvalidArgument>([&] { pad(a, {1, 1, 1, 1, 1, 1}); }, "pad");
  expect_error<InvalidArgument>([&] { pad(a, {-1, 1}); }, "pad");
  expect_error<InvalidArgument>([&] { pad(a, {0, 0, 0, -2}); }, "pad");
  expect_error<InvalidArgument>([&] { pad(i, {1, 1}, 0.5); }, "pad");
  expect_error<InvalidArgument>([&] { pad(zeros({2}, DType::Bool), {1, 1}, 2.0); }, "pad");
  expect_error<InvalidArgument>([&] { pad(zeros({2}, DType::U8), {1, 1}, -1.0); }, "pad");
}

// Inputs are never modified, and outputs never alias inputs.
TEST(ParityShape, OutputsAreFresh) {
  const Tensor a = arange(0, 6, 1, DType::F32).reshape({2, 3});
  const std::vector<float> before = a.to_vector<float>();
  for (const Tensor& out : {cat({a}, 0), stack({a}, 0), repeat(a, {1, 1}), pad(a, {})})
    EXPECT_NE(out.storage(), a.storage());
  EXPECT_EQ(a.to_vector<float>(), before);
}

}  // namespace
}  // namespace numr
