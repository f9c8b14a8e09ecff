// Views (no copy: same storage, new shape/strides/offset) and copies: values, layout,
// errors, 0-d and empty tensors, and host transfer errors.
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

// 0, 1, 2, ... as F32 in a contiguous tensor of `shape`.
Tensor iota(const Shape& shape) {
  std::vector<float> v(size_t(shape_numel(shape)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = float(i);
  return Tensor::from_vector<float>(v, shape);
}

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
  for_each_index(shape, [&](const Index& idx) { r.v.push_back(f(idx)); });
  return r;
}

TEST(View, SharesStorage) {
  const Tensor x = iota({2, 3, 4});
  EXPECT_EQ(x.strides(), (Strides{12, 4, 1}));
  const Tensor t = x.transpose(0, 2);
  EXPECT_EQ(t.storage(), x.storage());
  EXPECT_EQ(t.shape(), (Shape{4, 3, 2}));
  EXPECT_EQ(t.strides(), (Strides{1, 4, 12}));
  EXPECT_FALSE(t.is_contiguous());
  const Tensor n = x.narrow(1, 1, 2);
  EXPECT_EQ(n.storage(), x.storage());
  EXPECT_EQ(n.offset(), 4);
  EXPECT_EQ(n.to_vector<float>(),
            (std::vector<float>{4, 5, 6, 7, 8, 9, 10, 11, 16, 17, 18, 19, 20, 21, 22, 23}));
  const Tensor f = x.flip({2});
  EXPECT_EQ(f.storage(), x.storage());
  EXPECT_EQ(f.offset(), 3);
  EXPECT_EQ(f.strides(), (Strides{12, 4, -1}));
  EXPECT_EQ(f.narrow(0, 0, 1).narrow(1, 0, 1).to_vector<float>(), (std::vector<float>{3, 2, 1, 0}));
  const Tensor b = iota({3}).broadcast_to({2, 3});
  EXPECT_EQ(b.strides(), (Strides{0, 1}));
  EXPECT_EQ(b.to_vector<float>(), (std::vector<float>{0, 1, 2, 0, 1, 2}));
  // A copy made from a view owns new storage, and the view's source is unchanged.
  const Tensor c = t.clone();
  EXPECT_NE(c.storage(), x.storage());
  EXPECT_TRUE(c.is_contiguous());
  EXPECT_EQ(x.to_vector<float>(), iota({2, 3, 4}).to_vector<float>());
  EXPECT_EQ(contiguous(x).storage(), x.storage());  // already contiguous: no copy
  EXPECT_NE(contiguous(t).storage(), x.storage());
}

TEST(View, ReshapeAndView) {
  const Tensor x = iota({2, 3, 4});
  const Tensor r = x.reshape({-1, 4});
  EXPECT_EQ(r.shape(), (Shape{6, 4}));
  EXPECT_EQ(r.storage(), x.storage());
  EXPECT_EQ(x.view({4, -1}).shape(), (Shape{4, 6}));
  EXPECT_EQ(x.view({-1}).shape(), (Shape{24}));
  EXPECT_EQ(x.reshape({2, 1, 12, 1}).strides()[2], 1);
  expect_error<InvalidArgument>([&] { x.reshape({-1, -1}); }, "reshape");
  expect_error<InvalidArgument>([&] { x.view({-2, 12}); }, "view");
  expect_error<ShapeMismatch>([&] { x.reshape({5, -1}); }, "reshape");
  expect_error<ShapeMismatch>([&] { x.view({5, 5}); }, "view");
  // A transposed tensor cannot be flattened without a copy: view refuses, reshape copies.
  const Tensor t = x.transpose(1, 2);
  expect_error<NotContiguous>([&] { t.view({24}); }, "view");
  const Tensor rc = t.reshape({24});
  EXPECT_NE(rc.storage(), x.storage());
  std::vector<float> want;
  for (int a = 0; a < 2; ++a)
    for (int c = 0; c < 4; ++c)
      for (int b = 0; b < 3; ++b) want.push_back(float(a * 12 + b * 4 + c));
  EXPECT_EQ(rc.to_vector<float>(), want);
  // Splitting a dim of a transposed tensor is still a view.
  const Tensor s = t.view({2, 2, 2, 3});
  EXPECT_EQ(s.storage(), x.storage());
  EXPECT_EQ(s.reshape({2, 4, 3}).to_vector<float>(), t.to_vector<float>());
  // Rows of a narrowed tensor are contiguous within themselves.
  const Tensor n = iota({6, 4}).narrow(0, 2, 3);
  EXPECT_EQ(n.view({12}).to_vector<float>(),
            (std::vector<float>{8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19}));
  const Tensor cols = iota({6, 4}).narrow(1, 1, 2);
  expect_error<NotContiguous>([&] { cols.view({12}); }, "view");
  EXPECT_EQ(cols.reshape({12}).to_vector<float>(),
            (std::vector<float>{1, 2, 5, 6, 9, 10, 13, 14, 17, 18, 21, 22}));
}

TEST(View, PermuteTransposeErrors) {
  const Tensor x = iota({2, 3, 4});
  const Tensor p = x.permute({2, 0, 1});
  EXPECT_EQ(p.shape(), (Shape{4, 2, 3}));
  EXPECT_EQ(p.strides(), (Strides{1, 12, 4}));
  EXPECT_EQ(x.permute({-1, 0, 1}).strides(), p.strides());
  expect_error<InvalidArgument>([&] { x.permute({0, 1}); }, "permute");
  expect_error<InvalidArgument>([&] { x.permute({0, 1, 1}); }, "permute");
  expect_error<InvalidDimension>([&] { x.permute({0, 1, 3}); }, "permute");
  expect_error<InvalidDimension>([&] { x.transpose(0, 3); }, "transpose");
  expect_error<InvalidDimension>([&] { x.transpose(-4, 0); }, "transpose");
  EXPECT_EQ(x.transpose(-1, -3).shape(), (Shape{4, 3, 2}));
}

TEST(View, NarrowBroadcastSqueezeFlattenFlip) {
  const Tensor x = iota({2, 3, 4});
  EXPECT_EQ(x.narrow(-1, -2, 2).to_vector<float>(),
            (std::vector<float>{2, 3, 6, 7, 10, 11, 14, 15, 18, 19, 22, 23}));
  EXPECT_EQ(x.narrow(1, 3, 0).numel(), 0);
  expect_error<IndexOutOfBounds>([&] { x.narrow(1, 2, 2); }, "narrow");
  expect_error<IndexOutOfBounds>([&] { x.narrow(1, 4, 0); }, "narrow");
  expect_error<IndexOutOfBounds>([&] { x.narrow(1, -4, 1); }, "narrow");
  expect_error<IndexOutOfBounds>([&] { x.narrow(1, 0, -1); }, "narrow");
  expect_error<InvalidDimension>([&] { x.narrow(3, 0, 1); }, "narrow");

  const Tensor v = iota({3, 1});
  EXPECT_EQ(v.broadcast_to({2, 3, 4}).to_vector<float>().size(), 24u);
  EXPECT_EQ(v.broadcast_to({3, 2}).to_vector<float>(), (std::vector<float>{0, 0, 1, 1, 2, 2}));
  expect_error<BroadcastError>([&] { v.broadcast_to({2, 4}); }, "broadcast_to");
  expect_error<BroadcastError>([&] { v.broadcast_to({3}); }, "broadcast_to");
  expect_error<InvalidArgument>([&] { v.broadcast_to({-1, 3, 1}); }, "broadcast_to");

  const Tensor u = iota({1, 3, 1, 2});
  EXPECT_EQ(u.squeeze().shape(), (Shape{3, 2}));
  EXPECT_EQ(u.squeeze(2).shape(), (Shape{1, 3, 2}));
  EXPECT_EQ(u.squeeze(1).shape(), u.shape());  // not size 1: unchanged
  EXPECT_EQ(u.squeeze(-4).shape(), (Shape{3, 1, 2}));
  expect_error<InvalidDimension>([&] { u.squeeze(4); }, "squeeze");
  EXPECT_EQ(x.unsqueeze(0).shape(), (Shape{1, 2, 3, 4}));
  EXPECT_EQ(x.unsqueeze(3).shape(), (Shape{2, 3, 4, 1}));
  EXPECT_EQ(x.unsqueeze(-1).shape(), (Shape{2, 3, 4, 1}));
  EXPECT_EQ(x.unsqueeze(1).to_vector<float>(), x.to_vector<float>());
  expect_error<InvalidDimension>([&] { x.unsqueeze(4); }, "unsqueeze");
  expect_error<InvalidDimension>([&] { x.unsqueeze(-5); }, "unsqueeze");

  EXPECT_EQ(x.flatten().shape(), (Shape{24}));
  EXPECT_EQ(x.flatten(1).shape(), (Shape{2, 12}));
  EXPECT_EQ(x.flatten(0, 1).shape(), (Shape{6, 4}));
  EXPECT_EQ(x.flatten(1, 1).shape(), x.shape());
  EXPECT_EQ(x.flatten().storage(), x.storage());
  expect_error<InvalidDimension>([&] { x.flatten(2, 1); }, "flatten");
  expect_error<InvalidDimension>([&] { x.flatten(0, 3); }, "flatten");
  const Tensor tf = x.transpose(0, 1).flatten();  // needs a copy
  EXPECT_NE(tf.storage(), x.storage());
  EXPECT_EQ(tf.to_vector<float>()[4], 12.0f);

  EXPECT_EQ(iota({2, 3}).flip({0, 1}).to_vector<float>(), (std::vector<float>{5, 4, 3, 2, 1, 0}));
  EXPECT_EQ(iota({2, 3}).flip({-2}).to_vector<float>(), (std::vector<float>{3, 4, 5, 0, 1, 2}));
  EXPECT_EQ(iota({2, 3}).flip({}).to_vector<float>(), iota({2, 3}).to_vector<float>());
  expect_error<InvalidArgument>([&] { x.flip({0, 0}); }, "flip");
  expect_error<InvalidDimension>([&] { x.flip({3}); }, "flip");
}

TEST(View, ZeroDimAndEmpty) {
  const Tensor s = Tensor::from_vector<float>({3.5f}, {});
  EXPECT_EQ(s.dim(), 0);
  EXPECT_EQ(s.numel(), 1);
  EXPECT_EQ(s.item<float>(), 3.5f);
  EXPECT_EQ(s.item_double(), 3.5);
  EXPECT_EQ(s.reshape({1, 1}).shape(), (Shape{1, 1}));
  EXPECT_EQ(s.view({-1}).shape(), (Shape{1}));
  EXPECT_EQ(s.unsqueeze(0).shape(), (Shape{1}));
  EXPECT_EQ(s.unsqueeze(-1).shape(), (Shape{1}));
  EXPECT_EQ(s.flatten().shape(), (Shape{1}));
  EXPECT_EQ(s.squeeze().shape(), (Shape{}));
  EXPECT_EQ(s.permute({}).shape(), (Shape{}));
  EXPECT_EQ(s.flip({}).item<float>(), 3.5f);
  EXPECT_EQ(s.broadcast_to({2, 2}).to_vector<float>(),
            (std::vector<float>{3.5f, 3.5f, 3.5f, 3.5f}));
  EXPECT_EQ(iota({1, 1}).squeeze().dim(), 0);
  EXPECT_EQ(s.clone().item<float>(), 3.5f);
  expect_error<InvalidDimension>([&] { s.narrow(0, 0, 1); }, "narrow");

  const Tensor e = iota({3, 0, 2});
  EXPECT_EQ(e.numel(), 0);
  EXPECT_TRUE(e.to_vector<float>().empty());
  EXPECT_EQ(e.reshape({0, 5}).shape(), (Shape{0, 5}));
  EXPECT_EQ(e.reshape({-1, 2}).shape(), (Shape{0, 2}));
  expect_error<ShapeMismatch>([&] { e.reshape({-1, 0}); }, "reshape");
  EXPECT_EQ(e.transpose(0, 2).shape(), (Shape{2, 0, 3}));
  EXPECT_TRUE(e.transpose(0, 2).contiguous().to_vector<float>().empty());
  EXPECT_EQ(e.flip({1}).shape(), e.shape());
  EXPECT_EQ(e.flatten().shape(), (Shape{0}));
  EXPECT_EQ(e.broadcast_to({4, 3, 0, 2}).numel(), 0);
  EXPECT_EQ(e.cast(DType::I32).shape(), e.shape());
  EXPECT_EQ(iota({4}).narrow(0, 4, 0).numel(), 0);
}

TEST(View, HostTransferErrors) {
  expect_error<ShapeMismatch>([] { Tensor::from_vector<float>({1, 2, 3}, {2, 2}); }, "from_vector");
  expect_error<InvalidArgument>([] { Tensor::from_vector<float>({}, {-1}); }, "from_vector");
  const Tensor x = iota({2, 2});
  expect_error<DTypeMismatch>([&] { x.to_vector<double>(); }, "to_vector");
  expect_error<DTypeMismatch>([&] { x.to_vector<int32_t>(); }, "to_vector");
  expect_error<DTypeMismatch>([&] { iota({1}).item<double>(); }, "item");
  expect_error<InvalidArgument>([&] { x.item<float>(); }, "item");
  expect_error<InvalidArgument>([] { Tensor().to_vector<float>(); }, "to_vector");
  EXPECT_EQ(Tensor::from_vector<int64_t>({7}, {}).item<int64_t>(), 7);
  // Bool through std::vector<bool>, which packs bits.
  const Tensor b = Tensor::from_vector(std::vector<bool>{true, false, true, true}, {2, 2});
  EXPECT_EQ(b.dtype(), DType::Bool);
  EXPECT_EQ(b.transpose(0, 1).to_vector<bool>(), (std::vector<bool>{true, true, false, true}));
  EXPECT_TRUE(b.narrow(0, 1, 1).narrow(1, 1, 1).item<bool>());
  EXPECT_FALSE(b.narrow(0, 0, 1).narrow(1, 1, 1).item<bool>());
  expect_error<DTypeMismatch>([&] { x.to_vector<bool>(); }, "to_vector");
  EXPECT_EQ(Tensor::from_vector<double>({1, 2, 3, 4}, {2, 2}).transpose(0, 1).to_vector<double>(),
            (std::vector<double>{1, 3, 2, 4}));
}

TEST(View, UndefinedTensors) {
  const Tensor u;
  EXPECT_FALSE(u.defined());
  expect_error<InvalidArgument>([&] { reshape(u, {1}); }, "reshape");
  expect_error<InvalidArgument>([&] { transpose(u, 0, 1); }, "transpose");
  expect_error<InvalidArgument>([&] { flip(u, {0}); }, "flip");
  expect_error<InvalidArgument>([&] { clone(u); }, "clone");
  expect_error<InvalidArgument>([&] { contiguous(u); }, "contiguous");
}

// ---- every view and copy op for every dtype, on non-contiguous inputs ----

struct ViewCase {
  OpId op;
  std::function<Tensor(const Tensor&)> apply;
  // Expected output shape and, for each output index, the input index it reads.
  Shape shape;
  std::function<Index(const Index&)> source;
  bool is_view;  // shares the input's storage
};

// Input shape [5, 7, 3].
std::vector<ViewCase> view_cases() {
  return {
      {OpId::reshape,
       [](const Tensor& x) {
         return reshape(x, {5, 21});
       },
       {5, 21},
       [](const Index& i) {
         return Index{i[0], i[1] / 3, i[1] % 3};
       },
       false},
      {OpId::view,
       [](const Tensor& x) {
         return view(x, {5, 7, 3, 1});
       },
       {5, 7, 3, 1},
       [](const Index& i) {
         return Index{i[0], i[1], i[2]};
       },
       true},
      {OpId::transpose,
       [](const Tensor& x) { return transpose(x, 0, 2); },
       {3, 7, 5},
       [](const Index& i) {
         return Index{i[2], i[1], i[0]};
       },
       true},
      {OpId::permute,
       [](const Tensor& x) {
         return permute(x, {1, 2, 0});
       },
       {7, 3, 5},
       [](const Index& i) {
         return Index{i[2], i[0], i[1]};
       },
       true},
      {OpId::narrow,
       [](const Tensor& x) { return narrow(x, 1, 2, 4); },
       {5, 4, 3},
       [](const Index& i) {
         return Index{i[0], i[1] + 2, i[2]};
       },
       true},
      {OpId::broadcast_to,
       [](const Tensor& x) {
         return broadcast_to(narrow(x, 1, 0, 1), {2, 5, 4, 3});
       },
       {2, 5, 4, 3},
       [](const Index& i) {
         return Index{i[1], 0, i[3]};
       },
       true},
      {OpId::squeeze,
       [](const Tensor& x) { return squeeze(narrow(x, 1, 6, 1)); },
       {5, 3},
       [](const Index& i) {
         return Index{i[0], 6, i[1]};
       },
       true},
      {OpId::unsqueeze,
       [](const Tensor& x) { return unsqueeze(x, 1); },
       {5, 1, 7, 3},
       [](const Index& i) {
         return Index{i[0], i[2], i[3]};
       },
       true},
      {OpId::flatten,
       [](const Tensor& x) { return flatten(x, 1); },
       {5, 21},
       [](const Index& i) {
         return Index{i[0], i[1] / 3, i[1] % 3};
       },
       false},
      {OpId::flip,
       [](const Tensor& x) {
         return flip(x, {0, 2});
       },
       {5, 7, 3},
       [](const Index& i) {
         return Index{4 - i[0], i[1], 2 - i[2]};
       },
       true},
      {OpId::contiguous,
       [](const Tensor& x) { return contiguous(x); },
       {5, 7, 3},
       [](const Index& i) { return i; },
       false},
      {OpId::clone,
       [](const Tensor& x) { return clone(x); },
       {5, 7, 3},
       [](const Index& i) { return i; },
       false},
      {OpId::to_device,
       [](const Tensor& x) { return to_device(x, x.device()); },
       {5, 7, 3},
       [](const Index& i) { return i; },
       true},
  };
}

TEST(ParityView, EveryViewAndCopyOp) {
  for (const ViewCase& vc : view_cases()) {
    test::for_each_case(vc.op, test::dtypes_of(vc.op), [&](DType t, Device dev) {
      for (Layout layout :
           {Layout::Contiguous, Layout::Transposed, Layout::Strided, Layout::Flipped}) {
        test::InputSpec spec;
        spec.layout = layout;
        spec.lo = -100;
        spec.hi = 100;
        const Tensor x = test::make_input({5, 7, 3}, t, dev, spec, 11);
        // view needs a layout it can express; the others take any input.
        if (vc.op == OpId::view && layout == Layout::Transposed) {
          try {
            view(x, {5, 21});
            return std::string("view of a transposed tensor did not throw");
          } catch (const NotContiguous&) {
          }
        }
        const RefTensor xr = test::to_ref(x);
        const Tensor y = vc.apply(x);
        if (y.dtype() != t) return std::string("dtype changed");
        const RefTensor want =
            build(vc.shape, [&](const Index& i) { return at(xr, vc.source(i)); });
        std::string msg = test::compare(y, want, {0.0, 0.0, 0.0});
        if (msg.empty() && vc.is_view && y.storage() != x.storage()) msg = "copied";
        if (msg.empty() && (vc.op == OpId::clone || vc.op == OpId::contiguous) &&
            !y.is_contiguous())
          msg = "not contiguous";
        if (msg.empty() && vc.op == OpId::clone && y.storage() == x.storage()) msg = "clone shares";
        if (msg.empty() && test::compare(x, xr, {0.0, 0.0, 0.0}) != "") msg = "input changed";
        if (!msg.empty()) return "layout " + std::to_string(int(layout)) + ": " + msg;
      }
      return std::string();
    });
  }
}

// Copies whose source walks its innermost dim with a stride while another dim is
// contiguous in it go through blocks of 16 x 16 (kernels/copy.cpp); these views are large
// enough for it (4096 elements and more), with edges that are not whole blocks, every
// element size, the contiguous dim apart from the last, an offset, and a reversed last dim.
TEST(ParityView, TransposingCopies) {
  struct Case {
    std::string name;
    Shape in;
    std::function<Tensor(const Tensor&)> apply;
    Shape out;
    std::function<Index(const Index&)> source;
  };
  const std::vector<Case> cases = {
      {"transpose",
       {37, 150},
       [](const Tensor& x) { return transpose(x, 0, 1); },
       {150, 37},
       [](const Index& i) {
         return Index{i[1], i[0]};
       }},
      {"permute",
       {9, 40, 33},
       [](const Tensor& x) {
         return permute(x, {2, 0, 1});
       },
       {33, 9, 40},
       [](const Index& i) {
         return Index{i[1], i[2], i[0]};
       }},
      {"batched transpose",  // a third dim outside the two (CUDA: the grid's z)
       {4, 70, 90},
       [](const Tensor& x) { return transpose(x, 1, 2); },
       {4, 90, 70},
       [](const Index& i) {
         return Index{i[0], i[2], i[1]};
       }},
      {"reversed dims",  // the source's contiguous dim first, the third one between
       {40, 9, 33},
       [](const Tensor& x) {
         return permute(x, {2, 1, 0});
       },
       {33, 9, 40},
       [](const Index& i) {
         return Index{i[2], i[1], i[0]};
       }},
      {"narrowed transpose",
       {70, 90},
       [](const Tensor& x) { return transpose(narrow(x, 1, 5, 80), 0, 1); },
       {80, 70},
       [](const Index& i) {
         return Index{i[1], i[0] + 5};
       }},
      {"flipped transpose",
       {64, 100},
       [](const Tensor& x) { return flip(transpose(x, 0, 1), {1}); },
       {100, 64},
       [](const Index& i) {
         return Index{63 - i[1], i[0]};
       }},
  };
  for (const Case& c : cases) {
    test::for_each_case(
        OpId::contiguous, test::dtypes_of(OpId::contiguous), [&](DType t, Device dev) {
          test::InputSpec spec;
          spec.lo = -100;
          spec.hi = 100;
          const Tensor x = test::make_input(c.in, t, dev, spec, 12);
          const RefTensor xr = test::to_ref(x);
          const Tensor y = contiguous(c.apply(x));
          const RefTensor want = build(c.out, [&](const Index& i) { return at(xr, c.source(i)); });
          std::string msg = test::compare(y, want, {0.0, 0.0, 0.0});
          if (msg.empty() && !y.is_contiguous()) msg = "not contiguous";
          return msg.empty() ? msg : c.name + ": " + msg;
        });
  }
}

// A transposed 2-D matrix's reference: element (i, j) of the result is x[j, i].
RefTensor transposed_ref(const RefTensor& x) {
  const int64_t r = x.shape[0], c = x.shape[1];
  RefTensor t{{c, r}, std::vector<double>(x.v.size())};
  for (int64_t i = 0; i < r; ++i)
    for (int64_t j = 0; j < c; ++j) t.v[size_t(j * r + i)] = x.v[size_t(i * c + j)];
  return t;
}

// Results of 8 MiB and more are written with non-temporal stores, in whole tiles where the
// rows are whole cache lines apart (every 2-, 4- and 8-byte dtype), element by element in
// the partial blocks at the end of the 1030 rows.
TEST(ParityView, LargeTransposingCopies) {
  test::for_each_case(
      OpId::contiguous, test::dtypes_of(OpId::contiguous), [&](DType t, Device dev) {
        const int64_t es = int64_t(dtype_size(t));
        if (es == 1) return std::string();  // no register transposes, no streaming
        const Shape in = {(int64_t(8) << 20) / es / 1024, 1030};
        test::InputSpec spec;
        spec.lo = -100;
        spec.hi = 100;
        const Tensor x = test::make_input(in, t, dev, spec, 13);
        const Tensor y = contiguous(transpose(x, 0, 1));
        std::string msg = test::compare(y, transposed_ref(test::to_ref(x)), {0.0, 0.0, 0.0});
        return msg.empty() && !y.is_contiguous() ? "not contiguous" : msg;
      });
}

// A cast of a large transposed view goes through a transposing copy in the source dtype;
// integer values in [-100, 100] are exact in every dtype cast to here.
TEST(ParityView, TransposingCasts) {
  const std::vector<DType> targets = {DType::F64,  DType::F32, DType::F16,
                                      DType::BF16, DType::I64, DType::I32};
  test::for_each_case(OpId::cast, test::dtypes_of(OpId::cast), [&](DType t, Device dev) {
    test::InputSpec spec;
    spec.lo = -100;
    spec.hi = 100;
    spec.integers = true;
    const Tensor x = test::make_input({300, 261}, t, dev, spec, 14);
    const RefTensor want = transposed_ref(test::to_ref(x));
    for (DType to : targets) {
      if (to == t) continue;
      const Tensor y = cast(transpose(x, 0, 1), to);
      if (std::string msg = test::compare(y, want, {0.0, 0.0, 0.0}); !msg.empty())
        return "to " + std::string(dtype_name(to)) + ": " + msg;
    }
    return std::string();
  });
}

// A cast of a transposed view, between every pair of dtypes, equals the cast of its
// contiguous copy exactly, with values that round, saturate (U8, the integers from floats),
// and are NaN, infinite or signed zeros: on CUDA the first goes through the transposing
// cast kernel, the second through the elementwise copy; on the CPU, for [300, 26x], through
// the transposing copy and a conversion along rows. A batched transpose covers the grid's
// third dim; the shapes with even sizes and strides let CUDA move pairs of elements where
// one side is 2 bytes and the other 2 or 4. On the CPU, [300, 261] is cast in pieces 256
// and 44 columns wide (kernels/transposed_pieces.h), [100, 16384] from a 4- or 8-byte dtype
// in pieces of 1310 or 655 result rows, the last one shorter.
TEST(ParityView, TransposingCastsRoundLikeContiguousCasts) {
  test::for_each_case(OpId::cast, test::dtypes_of(OpId::cast), [&](DType t, Device dev) {
    test::InputSpec spec;
    spec.lo = -400;
    spec.hi = 400;
    spec.specials = true;
    for (const Shape& shape : {Shape{300, 261}, Shape{300, 262}, Shape{3, 70, 45}, Shape{4, 70, 46},
                               Shape{100, 16384}}) {
      const Tensor x = test::make_input(shape, t, dev, spec, 15);
      const int64_t last = int64_t(shape.size()) - 1;
      const Tensor xt = transpose(x, 0, last);
      for (DType to : kAllDTypes) {
        if (to == t) continue;
        const Tensor y = cast(xt, to), want = cast(contiguous(xt), to);
        if (std::string msg = test::compare(y, test::to_ref(want), {0.0, 0.0, 0.0}); !msg.empty())
          return "to " + std::string(dtype_name(to)) + ", shape " + std::to_string(shape[0]) +
                 "...: " + msg;
      }
    }
    return std::string();
  });
}

}  // namespace
}  // namespace numr
