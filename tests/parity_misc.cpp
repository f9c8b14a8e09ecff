// The shape and misc ops (roll, repeat_interleave, meshgrid, slice_assign, masked_fill,
// unfold, one_hot, einsum, dropout) for every dtype they take, with odd shapes and
// non-contiguous inputs, against index loops written here; einsum against NumPy's
// (tests/data/einsum_oracle.inc), dropout against Philox computed here.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "numr/numr.h"
#include "support/cuda_test.h"
#include "support/harness.h"

namespace numr {
namespace {

using test::Layout;
using test::RefTensor;
using Index = std::vector<int64_t>;

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

// These ops move values without arithmetic: results must match exactly.
std::string exact(const Tensor& got, const RefTensor& want) {
  return test::compare(got, want, {0.0, 0.0, 0.0});
}

Tensor input(const Shape& shape, DType t, Device dev, Layout layout, uint64_t seed,
             bool specials = false) {
  test::InputSpec spec;
  spec.layout = layout;
  spec.lo = -50;
  spec.hi = 50;
  spec.specials = specials && is_floating(t);
  return test::make_input(shape, t, dev, spec, seed);
}

int64_t wrap(int64_t v, int64_t n) { return ((v % n) + n) % n; }

// ---- roll ----
std::string check_roll(const Tensor& x, const std::vector<int64_t>& shifts,
                       const std::vector<int64_t>& dims) {
  const RefTensor xr = test::to_ref(x);
  const Tensor out = roll(x, shifts, dims);
  if (!out.is_contiguous() || out.storage() == x.storage()) return "not a new contiguous tensor";
  if (dims.empty()) {
    const int64_t n = x.numel();
    RefTensor want{x.shape(), std::vector<double>(size_t(n))};
    for (int64_t k = 0; k < n; ++k) want.v[size_t(k)] = xr.v[size_t(wrap(k - shifts[0], n))];
    return exact(out, want);
  }
  return exact(out, build(x.shape(), [&](const Index& idx) {
                 Index src = idx;
                 for (size_t i = 0; i < dims.size(); ++i) {
                   const size_t d = size_t(dims[i] < 0 ? dims[i] + x.dim() : dims[i]);
                   src[d] = wrap(src[d] - shifts[i], x.shape()[d]);
                 }
                 return at(xr, src);
               }));
}

TEST(ParityMisc, Roll) {
  test::for_each_case(OpId::roll, test::dtypes_of(OpId::roll), [](DType t, Device dev) {
    const Tensor m = input({3, 5}, t, dev, Layout::Transposed, 1);
    const Tensor v = input({7}, t, dev, Layout::Flipped, 2);
    const Tensor c = input({2, 3, 4}, t, dev, Layout::Strided, 3);
    const Tensor s = input({}, t, dev, Layout::Contiguous, 4);
    const Tensor e = input({0, 3}, t, dev, Layout::Contiguous, 5);
    const Tensor w = input({3, 1030}, t, dev, Layout::Contiguous, 6);
    using Case = std::tuple<Tensor, std::vector<int64_t>, std::vector<int64_t>>;
    for (const auto& [x, shifts, dims] : std::vector<Case>{{m, {2}, {1}},
                                                           {m, {-1, 7}, {0, 1}},
                                                           {m, {3}, {}},
                                                           {m, {0, 5}, {0, 1}},
                                                           {v, {-9}, {0}},
                                                           {v, {100}, {}},
                                                           {c, {1, -2, 3}, {-1, 0, 1}},
                                                           {c, {1, 1}, {2, 2}},
                                                           {s, {3}, {}},
                                                           {e, {1, 2}, {0, 1}},
                                                           {w, {-513}, {1}}}) {
      const std::string msg = check_roll(x, shifts, dims);
      if (!msg.empty())
        return "roll of " + shape_str(x.shape()) + " by " + shape_str(shifts) + " on " +
               shape_str(dims) + ": " + msg;
    }
    return std::string();
  });
}

// ---- repeat_interleave ----
std::string check_repeat_interleave(const Tensor& x, int64_t r, std::optional<int64_t> dim) {
  const Tensor out = repeat_interleave(x, r, dim);
  if (!out.is_contiguous() || out.storage() == x.storage()) return "not a new contiguous tensor";
  const RefTensor xr = test::to_ref(x);
  if (!dim) {
    RefTensor want{{x.numel() * r}, {}};
    for (double v : xr.v)
      for (int64_t k = 0; k < r; ++k) want.v.push_back(v);
    return exact(out, want);
  }
  const size_t d = size_t(*dim < 0 ? *dim + x.dim() : *dim);
  Shape shape = x.shape();
  shape[d] *= r;
  return exact(out, build(shape, [&](const Index& idx) {
                 Index src = idx;
                 src[d] /= r;
                 return at(xr, src);
               }));
}

TEST(ParityMisc, RepeatInterleave) {
  test::for_each_case(OpId::repeat_interleave, test::dtypes_of(OpId::repeat_interleave),
                      [](DType t, Device dev) {
                        const Tensor m = input({2, 3}, t, dev, Layout::Transposed, 1);
                        const Tensor v = input({4}, t, dev, Layout::Flipped, 2);
                        const Tensor s = input({}, t, dev, Layout::Contiguous, 3);
                        const Tensor c = input({3, 1, 5}, t, dev, Layout::Strided, 4);
                        using Case = std::tuple<Tensor, int64_t, std::optional<int64_t>>;
                        for (const auto& [x, r, dim] : std::vector<Case>{{m, 2, 1},
                                                                         {m, 3, -2},
                                                                         {m, 0, 0},
                                                                         {m, 2, std::nullopt},
                                                                         {v, 1, 0},
                                                                         {v, 5, std::nullopt},
                                                                         {s, 3, std::nullopt},
                                                                         {c, 4, 1},
                                                                         {c, 2, -1}}) {
                          const std::string msg = check_repeat_interleave(x, r, dim);
                          if (!msg.empty())
                            return "repeat_interleave of " + shape_str(x.shape()) + " by " +
                                   std::to_string(r) + ": " + msg;
                        }
                        return std::string();
                      });
}

// The form with a tensor of repeats: element i of dim repeated reps[i] times.
std::string check_repeat_tensor(const Tensor& x, const std::vector<int64_t>& reps,
                                std::optional<int64_t> dim, DType rt) {
  const Tensor r = Tensor::from_vector<int64_t>(reps, {int64_t(reps.size())}, x.device()).cast(rt);
  const Tensor out = repeat_interleave(x, reps.size() == 1 ? r.view({}) : r, dim);
  const RefTensor xr = test::to_ref(x);
  const Shape xs = dim ? x.shape() : Shape{x.numel()};
  const size_t d = dim ? size_t(*dim < 0 ? *dim + x.dim() : *dim) : 0;
  std::vector<int64_t> src;  // the source position of each output position along d
  for (int64_t i = 0; i < xs[d]; ++i)
    for (int64_t k = 0; k < reps[reps.size() == 1 ? 0 : size_t(i)]; ++k) src.push_back(i);
  Shape shape = xs;
  shape[d] = int64_t(src.size());
  const RefTensor flat{xs, xr.v};
  return exact(out, build(shape, [&](const Index& idx) {
                 Index at_src = idx;
                 at_src[d] = src[size_t(idx[d])];
                 return at(flat, at_src);
               }));
}

TEST(ParityMisc, RepeatInterleaveByTensor) {
  test::for_each_case(
      OpId::repeat_interleave, test::dtypes_of(OpId::repeat_interleave), [](DType t, Device dev) {
        const Tensor m = input({2, 3}, t, dev, Layout::Transposed, 1);
        const Tensor c = input({3, 1, 5}, t, dev, Layout::Strided, 4);
        using Case = std::tuple<Tensor, std::vector<int64_t>, std::optional<int64_t>, DType>;
        for (const auto& [x, reps, dim, rt] :
             std::vector<Case>{{m, {2, 0, 3}, 1, DType::I64},
                               {m, {1, 4}, -2, DType::I32},
                               {m, {3}, 0, DType::I64},
                               {m, {0, 1, 0, 2, 1, 3}, std::nullopt, DType::I64},
                               {c, {0, 0, 0, 0, 0}, -1, DType::I32},
                               {c, {2, 1, 3}, 0, DType::I64}}) {
          const std::string msg = check_repeat_tensor(x, reps, dim, rt);
          if (!msg.empty())
            return "repeat_interleave of " + shape_str(x.shape()) + " by a tensor: " + msg;
        }
        const Tensor idx = repeat_interleave(Tensor::from_vector<int64_t>({2, 0, 1}, {3}, dev));
        if (idx.to(Device::cpu()).to_vector<int64_t>() != std::vector<int64_t>{0, 0, 2})
          return std::string("repeat_interleave(repeats) is not [0, 0, 2]");
        return std::string();
      });
}

// ---- meshgrid ----
TEST(ParityMisc, Meshgrid) {
  test::for_each_case(OpId::meshgrid, test::dtypes_of(OpId::meshgrid), [](DType t, Device dev) {
    const std::vector<Tensor> xs = {
        input({3}, t, dev, Layout::Strided, 1), input({4}, t, dev, Layout::Flipped, 2),
        input({}, t, dev, Layout::Contiguous, 3), input({2}, t, dev, Layout::Contiguous, 4)};
    for (const auto& list : std::vector<std::vector<Tensor>>{
             xs, {xs[0]}, {xs[1], xs[0]}, {xs[0], input({0}, t, dev, Layout::Contiguous, 5)}}) {
      for (const char* indexing : {"ij", "xy"}) {
        const bool xy = std::string(indexing) == "xy";
        const size_t k = list.size();
        auto pos = [&](size_t i) { return xy && k >= 2 && i < 2 ? 1 - i : i; };
        Shape grid(k);
        for (size_t i = 0; i < k; ++i) grid[pos(i)] = list[i].numel();
        const std::vector<Tensor> out = meshgrid(list, indexing);
        if (out.size() != k) return std::string("wrong number of outputs");
        for (size_t i = 0; i < k; ++i) {
          const RefTensor xr = test::to_ref(list[i]);
          const std::string msg = exact(
              out[i], build(grid, [&](const Index& idx) { return xr.v[size_t(idx[pos(i)])]; }));
          if (!msg.empty())
            return "meshgrid " + std::string(indexing) + " of " + std::to_string(k) +
                   " tensors, output " + std::to_string(i) + ": " + msg;
        }
      }
    }
    return std::string();
  });
}

// ---- slice_assign ----
std::string check_slice_assign(const Tensor& x, const Tensor& src, int64_t dim, int64_t start) {
  const Tensor out = slice_assign(x, src, dim, start);
  if (!out.is_contiguous() || out.storage() == x.storage()) return "not a new contiguous tensor";
  const RefTensor xr = test::to_ref(x), sr = test::to_ref(src);
  const size_t d = size_t(dim < 0 ? dim + x.dim() : dim);
  const int64_t s = start < 0 ? start + x.shape()[d] : start;
  return exact(out, build(x.shape(), [&](const Index& idx) {
                 if (idx[d] < s || idx[d] >= s + src.shape()[d]) return at(xr, idx);
                 Index i = idx;
                 i[d] -= s;
                 return at(sr, i);
               }));
}

TEST(ParityMisc, SliceAssign) {
  test::for_each_case(
      OpId::slice_assign, test::dtypes_of(OpId::slice_assign), [](DType t, Device dev) {
        const Tensor x = input({4, 5}, t, dev, Layout::Transposed, 1);
        const Tensor v = input({9}, t, dev, Layout::Flipped, 2);
        using Case = std::tuple<Tensor, Tensor, int64_t, int64_t>;
        for (const auto& [a, src, dim, start] :
             std::vector<Case>{{x, input({4, 2}, t, dev, Layout::Flipped, 3), 1, 2},
                               {x, input({4, 2}, t, dev, Layout::Strided, 4), -1, -3},
                               {x, input({0, 5}, t, dev, Layout::Contiguous, 5), 0, 4},
                               {x, input({4, 5}, t, dev, Layout::Transposed, 6), 0, 0},
                               {x, input({1, 5}, t, dev, Layout::Contiguous, 7), 0, 3},
                               {v, input({3}, t, dev, Layout::Strided, 8), 0, 6},
                               {v, input({2}, t, dev, Layout::Contiguous, 9), 0, 0}}) {
          const std::string msg = check_slice_assign(a, src, dim, start);
          if (!msg.empty())
            return "slice_assign of " + shape_str(src.shape()) + " into " + shape_str(a.shape()) +
                   " at " + std::to_string(start) + " of dim " + std::to_string(dim) + ": " + msg;
        }
        return std::string();
      });
}

// ---- masked_fill ----
TEST(ParityMisc, MaskedFill) {
  test::for_each_case(
      OpId::masked_fill, test::dtypes_of(OpId::masked_fill), [](DType t, Device dev) {
        const Tensor x = input({3, 4}, t, dev, Layout::Transposed, 1, true);
        const Tensor big = input({5, 1030}, t, dev, Layout::Strided, 2, true);
        const double value = t == DType::Bool ? 1.0 : is_floating(t) ? -2.5 : 7.0;
        using Case = std::pair<Tensor, Tensor>;
        for (const auto& [a, mask] :
             std::vector<Case>{{x, input({3, 4}, DType::Bool, dev, Layout::Transposed, 3)},
                               {x, input({4}, DType::Bool, dev, Layout::Flipped, 4)},
                               {x, input({3, 1}, DType::Bool, dev, Layout::Contiguous, 5)},
                               {x, input({}, DType::Bool, dev, Layout::Contiguous, 6)},
                               {big, input({5, 1030}, DType::Bool, dev, Layout::Contiguous, 7)}}) {
          const RefTensor xr = test::to_ref(a), mr = test::to_ref(mask);
          const size_t lead = a.shape().size() - mask.shape().size();
          const RefTensor want = build(a.shape(), [&](const Index& idx) {
            Index mi;
            for (size_t d = lead; d < idx.size(); ++d)
              mi.push_back(mask.shape()[d - lead] == 1 ? 0 : idx[d]);
            return at(mr, mi) != 0.0 ? value : at(xr, idx);
          });
          const std::string msg = exact(masked_fill(a, mask, value), want);
          if (!msg.empty()) return "mask " + shape_str(mask.shape()) + ": " + msg;
        }
        if (is_floating(t)) {  // NaN is a value like any other
          const RefTensor xr = test::to_ref(x);
          const Tensor mask = input({3, 4}, DType::Bool, dev, Layout::Contiguous, 8);
          const RefTensor mr = test::to_ref(mask);
          const RefTensor want = build(x.shape(), [&](const Index& idx) {
            return at(mr, idx) != 0.0 ? std::nan("") : at(xr, idx);
          });
          const std::string msg = exact(masked_fill(x, mask, std::nan("")), want);
          if (!msg.empty()) return "NaN value: " + msg;
        }
        return std::string();
      });
}

// ---- unfold ----
std::string check_unfold(const Tensor& x, int64_t dim, int64_t size, int64_t step) {
  const Tensor out = unfold(x, dim, size, step);
  if (out.storage() != x.storage()) return "not a view";
  const size_t d = size_t(dim < 0 ? dim + x.dim() : dim);
  Shape shape = x.shape();
  shape[d] = (shape[d] - size) / step + 1;
  shape.push_back(size);
  const RefTensor xr = test::to_ref(x);
  return exact(out, build(shape, [&](const Index& idx) {
                 Index src(idx.begin(), idx.end() - 1);
                 src[d] = idx[d] * step + idx.back();
                 return at(xr, src);
               }));
}

TEST(ParityMisc, Unfold) {
  test::for_each_case(OpId::unfold, test::dtypes_of(OpId::unfold), [](DType t, Device dev) {
    const Tensor m = input({2, 7}, t, dev, Layout::Strided, 1);
    const Tensor v = input({9}, t, dev, Layout::Flipped, 2);
    const Tensor c = input({3, 4, 5}, t, dev, Layout::Transposed, 3);
    using Case = std::tuple<Tensor, int64_t, int64_t, int64_t>;
    for (const auto& [x, dim, size, step] : std::vector<Case>{{m, 1, 3, 2},
                                                              {m, -1, 7, 1},
                                                              {m, 1, 0, 3},
                                                              {m, 0, 1, 1},
                                                              {m, 1, 2, 100},
                                                              {v, 0, 4, 3},
                                                              {v, 0, 2, 1},
                                                              {c, 1, 2, 1},
                                                              {c, -3, 2, 1},
                                                              {c, 2, 3, 2}}) {
      const std::string msg = check_unfold(x, dim, size, step);
      if (!msg.empty())
        return "unfold of " + shape_str(x.shape()) + " dim " + std::to_string(dim) + " size " +
               std::to_string(size) + " step " + std::to_string(step) + ": " + msg;
    }
    // A 0-d tensor gives [size], size at most 1, as in PyTorch.
    const Tensor s = input({}, t, dev, Layout::Contiguous, 4);
    for (int64_t size : {0, 1}) {
      const std::string m0 =
          exact(unfold(s, -1, size, 2),
                build({size}, [&](const Index&) { return test::to_ref(s).v[0]; }));
      if (!m0.empty()) return "unfold of a 0-d tensor, size " + std::to_string(size) + ": " + m0;
    }
    // Windows of windows: the view of a view.
    const Tensor ww = unfold(unfold(v, 0, 4, 1), 0, 2, 2);
    const RefTensor vr = test::to_ref(v);
    const std::string msg = exact(ww, build({3, 4, 2}, [&](const Index& idx) {
                                    return vr.v[size_t(idx[0] * 2 + idx[2] + idx[1])];
                                  }));
    return msg.empty() ? msg : "unfold of unfold: " + msg;
  });
}

// ---- one_hot ----
TEST(ParityMisc, OneHot) {
  test::for_each_case(OpId::one_hot, test::dtypes_of(OpId::one_hot), [](DType t, Device dev) {
    test::InputSpec spec;
    spec.lo = 0;
    spec.hi = 4;
    using Case = std::pair<Tensor, int64_t>;
    const Tensor m = test::make_input({2, 3}, t, dev, spec, 1);
    spec.layout = Layout::Transposed;
    const Tensor tr = test::make_input({3, 5}, t, dev, spec, 2);
    for (const auto& [index, classes] :
         std::vector<Case>{{m, 5},
                           {m, -1},
                           {m, 9},
                           {tr, 6},
                           {test::make_input({}, t, dev, {.lo = 2, .hi = 2}, 3), 3},
                           {test::make_input({0, 2}, t, dev, {}, 4), 3},
                           {test::make_input({0}, t, dev, {}, 5), 0}}) {
      const RefTensor ir = test::to_ref(index);
      int64_t n = classes;
      if (n == -1)
        for (double v : ir.v) n = std::max(n, int64_t(v) + 1);
      Shape shape = index.shape();
      shape.push_back(n);
      const Tensor out = one_hot(index, classes);
      if (out.dtype() != DType::I64) return std::string("result is not I64");
      const std::string msg = exact(out, build(shape, [&](const Index& idx) {
                                      const Index src(idx.begin(), idx.end() - 1);
                                      return at(ir, src) == double(idx.back()) ? 1.0 : 0.0;
                                    }));
      if (!msg.empty())
        return "one_hot of " + shape_str(index.shape()) + ", " + std::to_string(classes) +
               " classes: " + msg;
    }
    return std::string();
  });
}

// ---- einsum, against NumPy ----
struct EinsumCase {
  const char* equation;
  std::vector<Shape> shapes;
  Shape out;
  int64_t terms;  // products summed into each output element
  std::vector<double> values;
};
const std::vector<EinsumCase>& einsum_cases() {
  static const std::vector<EinsumCase> cases = {
#include "data/einsum_oracle.inc"
  };
  return cases;
}

// Operand i as scripts/einsum_table.py makes it: element k = ((7k + 3i) mod 11 - 5) / 8.
Tensor einsum_operand(size_t i, const Shape& shape, DType t, Device dev) {
  const int64_t n = shape_numel(shape);
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t k = 0; k < n; ++k) v[size_t(k)] = double((k * 7 + int64_t(i) * 3) % 11 - 5) / 8.0;
  return Tensor::from_vector(v, shape).cast(t).to(dev);
}

// The same values laid out otherwise: the last two dims swapped in memory, or a 1-d
// tensor reversed in memory (a negative stride).
Tensor relaid(const Tensor& x) {
  if (x.dim() == 0) return x;
  if (x.dim() == 1) return x.flip({0}).contiguous().flip({0});
  return x.transpose(-1, -2).contiguous().transpose(-1, -2);
}

// Each intermediate result the composition rounds to a 16-bit format (a pre-sum, a
// product, a final sum) adds at most its unit roundoff times the sum of |terms| (< terms,
// as the operands are below 1), on top of the GEMM's own bound.
test::Tolerance einsum_tolerance(DType t, int64_t terms) {
  test::Tolerance tol = test::gemm_tolerance(t, terms);
  const double u = t == DType::F16 ? 0x1p-11 : t == DType::BF16 ? 0x1p-8 : 0.0;
  tol.atol += 3.0 * u * double(terms);
  return tol;
}

TEST(ParityMisc, EinsumAgainstNumPy) {
  test::for_each_case(OpId::einsum, test::dtypes_of(OpId::einsum), [](DType t, Device dev) {
    for (const EinsumCase& c : einsum_cases()) {
      std::vector<Tensor> ops, views;
      for (size_t i = 0; i < c.shapes.size(); ++i) {
        ops.push_back(einsum_operand(i, c.shapes[i], t, dev));
        views.push_back(relaid(ops.back()));
      }
      const RefTensor want{c.out, c.values};
      for (const auto& [operands, layout] :
           {std::pair{ops, "contiguous"}, std::pair{views, "relaid"}}) {
        const Tensor out = einsum(c.equation, operands);
        std::string msg = test::compare(out, want, einsum_tolerance(t, c.terms));
        if (msg.empty() && !out.is_contiguous()) msg = "result is not contiguous";
        for (const Tensor& x : operands)
          if (msg.empty() && out.storage() == x.storage())
            msg = "result shares an operand's memory";
        if (!msg.empty()) return std::string(c.equation) + " (" + layout + "): " + msg;
      }
    }
    return std::string();
  });
}

// A product whose full outer product (2^30 elements, 4 GiB) a broadcast-multiply would
// materialise: contracted through matmul, it needs only the operands and the result.
TEST(MiscOps, EinsumContractsWithoutTheOuterProduct) {
  const Tensor a = full({1, 1}, 0.5, DType::F32).broadcast_to({1024, 1024});
  const Tensor b = full({1, 1}, 2.0, DType::F32).broadcast_to({1024, 1024});
  const Tensor c = einsum("ij,jk->ik", {a, b});
  EXPECT_EQ(c.shape(), (Shape{1024, 1024}));
  EXPECT_EQ(c.to_vector<float>()[0], 1024.0f);
  const Tensor d =
      einsum("bij,bjk,bkl->bil", {ones({2, 64, 300}, DType::F64), ones({2, 300, 200}, DType::F64),
                                  ones({2, 200, 64}, DType::F64)});
  EXPECT_EQ(d.to_vector<double>()[0], 300.0 * 200.0);
}

// "..." dims left out of an explicit output are summed, as PyTorch does (NumPy rejects
// the equation, so the oracle file cannot hold it): the same as summing them first.
TEST(MiscOps, EinsumSumsEllipsisDimsMissingFromTheOutput) {
  const Tensor x = einsum_operand(0, {2, 3, 4}, DType::F64, Device::cpu());
  const Tensor y = einsum_operand(1, {4, 5}, DType::F64, Device::cpu());
  const Tensor got = einsum("...ij,jk->ik", {x, y});
  const Tensor want = einsum("ij,jk->ik", {sum(x, {0}), y});
  EXPECT_EQ(test::compare(got, test::to_ref(want), test::gemm_tolerance(DType::F64, 8)), "");
  const Tensor alone = einsum("i...->i", {x});
  EXPECT_EQ(test::compare(alone, test::to_ref(sum(x, {1, 2})), test::tolerance_for(DType::F64)),
            "");
}

// Each malformed equation is an InvalidArgument naming einsum and what is wrong.
TEST(MiscOps, EinsumErrorsSayWhy) {
  const Tensor m = zeros({2, 3});
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"ij,jk->ik", "2 operand terms, but 1 operands"},
      {"ijk", "has 2 dims but its subscripts name 3"},
      {"i2", "invalid character '2' in operand 0"},
      {"i.j", "'.' in operand 0 is not part of"},
      {"...i...", "more than one \"...\" in operand 0"},
      {"ij->i->j", "more than one \"->\""},
      {"ij->ik", "output subscript 'k' appears in no operand"},
      {"ij->jj", "output subscript 'j' repeats"},
      {"i-j", "'-' and '>' may only appear together"},
  };
  for (const auto& [eq, why] : cases) {
    try {
      einsum(eq, {m});
      ADD_FAILURE() << eq << " was accepted";
    } catch (const InvalidArgument& e) {
      const std::string what = e.what();
      EXPECT_EQ(what.rfind("[einsum] ", 0), 0u) << what;
      EXPECT_NE(what.find(why), std::string::npos) << eq << ": " << what;
    }
  }
}

// ---- dropout ----
// Element i of a draw at offset o is kept when its uniform from Philox is >= p.
RefTensor dropout_reference(const RefTensor& x, double p, uint64_t seed, uint64_t offset) {
  RefTensor r{x.shape, {}};
  for (size_t i = 0; i < x.v.size(); ++i) {
    const double u = philox_uniform(philox4x32(offset + i, seed).v[0]);
    r.v.push_back(x.v[i] * (u >= p ? 1.0 / (1.0 - p) : 0.0));
  }
  return r;
}

TEST(ParityMisc, Dropout) {
  test::for_each_case(OpId::dropout, test::dtypes_of(OpId::dropout), [](DType t, Device dev) {
    const Tensor x = input({3, 333}, t, dev, Layout::Transposed, 1, true);
    const Tensor s = input({}, t, dev, Layout::Contiguous, 2);
    for (const auto& [a, p] : std::vector<std::pair<Tensor, double>>{
             {x, 0.3}, {x, 0.5}, {x, 0.999}, {x, 1e-9}, {s, 0.25}}) {
      Generator gen(1234);
      gen.set_offset(77);
      const Tensor out = dropout(a, p, gen);
      const RefTensor want = dropout_reference(test::to_ref(a), p, 1234, 77);
      std::string msg = test::compare(out, want, test::tolerance_for(t));
      if (msg.empty() && gen.offset() != 77 + uint64_t(a.numel()))
        msg = "the generator did not advance by numel";
      if (!msg.empty()) return "p = " + std::to_string(p) + ": " + msg;
    }
    // p = 0 is the identity (no draw); p = 1 multiplies by 0 (NaN stays NaN).
    Generator gen(5);
    if (dropout(x, 0.0, gen).storage() != x.storage()) return std::string("p = 0 copied x");
    RefTensor zero = test::to_ref(x);
    for (double& v : zero.v) v *= 0.0;
    const std::string msg = test::compare(dropout(x, 1.0, gen), zero, test::tolerance_for(t));
    if (!msg.empty()) return "p = 1: " + msg;
    if (gen.offset() != 0) return std::string("p = 0 or 1 drew numbers");
    return std::string();
  });
}

TEST(MiscOps, DropoutKeepsAboutOneMinusP) {
  const Tensor x = ones({200000}, DType::F32);
  for (double p : {0.1, 0.5, 0.8}) {
    Generator gen(42);
    const std::vector<float> out = dropout(x, p, gen).to_vector<float>();
    int64_t kept = 0;
    const float scale = float(1.0 / (1.0 - p));
    for (float v : out) {
      if (v != 0.0f) {
        ++kept;
        EXPECT_EQ(v, scale);
      }
    }
    // The kept count is Binomial(n, 1 - p): 5 standard deviations around its mean.
    const double n = double(out.size()), mean = n * (1.0 - p), sd = std::sqrt(n * p * (1.0 - p));
    EXPECT_NEAR(double(kept), mean, 5.0 * sd) << "p = " << p;
  }
}

TEST(MiscOps, DropoutIsDeterministicPerSeed) {
  const Tensor x = ones({1000}, DType::F32);
  Generator a(7), b(7), c(8);
  const std::vector<float> first = dropout(x, 0.5, a).to_vector<float>();
  EXPECT_EQ(first, dropout(x, 0.5, b).to_vector<float>());
  EXPECT_NE(first, dropout(x, 0.5, c).to_vector<float>());
  // The next draw of the same generator uses the next counters: a new mask.
  EXPECT_NE(first, dropout(x, 0.5, a).to_vector<float>());
  // The mask depends on the seed and offset, not on the dtype.
  Generator d(7);
  const std::vector<double> f64 = dropout(ones({1000}, DType::F64), 0.5, d).to_vector<double>();
  for (size_t i = 0; i < f64.size(); ++i) EXPECT_EQ(f64[i] != 0.0, first[i] != 0.0f) << i;
}

TEST(MiscOps, DropoutSameMaskOnCudaAsOnCpu) {
  REQUIRE_CUDA();
  const Device gpu = Device::cuda(0);
  for (DType t : test::float_dtypes()) {
    const Tensor x = input({5, 1001}, t, Device::cpu(), Layout::Contiguous, 3);
    Generator g_cpu(99), g_gpu(99);
    const Tensor on_cpu = dropout(x, 0.35, g_cpu);
    const Tensor on_gpu = dropout(x.to(gpu), 0.35, g_gpu).to(Device::cpu());
    EXPECT_EQ(test::compare(on_gpu, test::to_ref(on_cpu), {0.0, 0.0, 0.0}), "") << t;
    EXPECT_EQ(g_cpu.offset(), g_gpu.offset());
  }
}

}  // namespace
}  // namespace numr
