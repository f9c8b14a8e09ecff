// Parity of the indexing family with the float64 reference, every dtype each op accepts:
// repeated indexes, indexes smaller than x off the indexed dim, broadcast (stride 0) and
// I32 indexes, negative dims, views, empty indexes; gather, scatter and scatter_reduce
// through their kernels and their compositions.
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "core/composition.h"
#include "support/harness.h"

namespace numr::test {
namespace {

// I64 indexes uniform in [0, n) (repeats likely).
Tensor make_index(const Shape& shape, int64_t n, Device dev, uint64_t seed, DType t = DType::I64) {
  InputSpec spec;
  spec.lo = 0;
  spec.hi = double(n - 1);
  spec.integers = true;
  return make_input(shape, t, dev, spec, seed);
}

// Values that keep products and sums of integers small (the reference does not wrap).
InputSpec values_spec(DType t, Layout layout = Layout::Contiguous) {
  InputSpec s;
  s.layout = layout;
  if (t == DType::U8) s.lo = 0;
  return s;
}

std::string describe(const std::string& what, const std::string& m) {
  return m.empty() ? "" : what + ": " + m;
}

struct GatherCase {
  Shape x;
  int64_t dim;
  Shape index;
  Layout layout = Layout::Contiguous;
};

const std::vector<GatherCase>& gather_cases() {
  static const std::vector<GatherCase> cases = {
      {{7}, 0, {12}},
      {{5, 7}, 0, {9, 7}},
      {{5, 7}, 1, {5, 3}},
      {{5, 7}, -1, {2, 11}},  // smaller than x off dim, repeats
      {{4, 6, 5}, 1, {4, 9, 5}, Layout::Transposed},
      {{4, 6, 5}, -3, {3, 2, 4}, Layout::Flipped},
      {{3, 33, 17}, 2, {3, 33, 40}, Layout::Strided},
      {{4, 6, 5}, 1, {4, 0, 5}},  // empty index
      {{2, 3, 4, 5}, 2, {2, 3, 6, 5}},
  };
  return cases;
}

TEST(ParityIndexing, Gather) {
  for_each_case(OpId::gather, dtypes_of(OpId::gather), [](DType t, Device dev) -> std::string {
    uint64_t seed = 10;
    for (const GatherCase& c : gather_cases()) {
      const int64_t d = c.dim < 0 ? c.dim + int64_t(c.x.size()) : c.dim;
      const Tensor x = make_input(c.x, t, dev, values_spec(t, c.layout), ++seed);
      for (DType it : {DType::I64, DType::I32}) {
        const Tensor idx = make_index(c.index, c.x[size_t(d)], dev, ++seed, it);
        const Tensor got = gather(x, c.dim, idx);
        const std::string m =
            compare(got, reference::gather(to_ref(x), d, to_ref(idx)), tolerance_for(t));
        if (!m.empty()) return describe("x " + shape_str(c.x) + " dim " + std::to_string(c.dim), m);
      }
    }
    // A broadcast index (stride 0 along dim 0 and 2).
    const Tensor x = make_input({4, 6, 5}, t, dev, values_spec(t), 99);
    const Tensor idx = make_index({1, 3, 1}, 6, dev, 98).broadcast_to({4, 3, 5});
    return describe(
        "broadcast index",
        compare(gather(x, 1, idx), reference::gather(to_ref(x), 1, to_ref(idx)), tolerance_for(t)));
  });
}

// scatter and scatter_reduce: (x, dim, index, src) with src at least index's size.
struct ScatterCase {
  Shape x;
  int64_t dim;
  Shape index, src;
  Layout layout = Layout::Contiguous;
};

const std::vector<ScatterCase>& scatter_cases() {
  static const std::vector<ScatterCase> cases = {
      {{7}, 0, {12}, {12}},
      {{5, 7}, 0, {9, 7}, {9, 7}},
      {{5, 7}, 1, {5, 3}, {6, 4}},
      {{5, 7}, -1, {2, 11}, {3, 11}},  // a box of x: leading dims do not merge
      {{4, 6, 5}, 1, {4, 9, 5}, {4, 9, 5}, Layout::Transposed},
      {{4, 6, 5}, -3, {3, 2, 4}, {3, 2, 4}, Layout::Flipped},
      {{3, 9, 70}, 1, {3, 30, 70}, {3, 30, 70}, Layout::Strided},
      {{4, 6, 5}, 1, {4, 0, 5}, {4, 2, 5}},
      {{2, 3, 4, 5}, 2, {2, 2, 6, 5}, {2, 3, 6, 5}},
  };
  return cases;
}

std::string run_scatter(DType t, Device dev, std::optional<ScatterReduce> reduce, bool include_self,
                        bool specials) {
  uint64_t seed = 200 + uint64_t(reduce ? int(*reduce) : 9) * 50;
  for (const ScatterCase& c : scatter_cases()) {
    const int64_t d = c.dim < 0 ? c.dim + int64_t(c.x.size()) : c.dim;
    InputSpec xs = values_spec(t, c.layout);
    xs.specials = specials;
    const Tensor x = make_input(c.x, t, dev, xs, ++seed);
    InputSpec ss = values_spec(t);
    ss.specials = specials;
    if (reduce == ScatterReduce::Prod) ss.lo = t == DType::U8 ? 0 : -2, ss.hi = 2;
    const Tensor src = make_input(c.src, t, dev, ss, ++seed);
    const Tensor idx = make_index(c.index, c.x[size_t(d)], dev, ++seed);
    const Tensor got = reduce ? scatter_reduce(x, c.dim, idx, src, *reduce, include_self)
                              : scatter(x, c.dim, idx, src);
    const bool integer = !is_floating(t);
    const RefTensor ref =
        reference::scatter(to_ref(x), d, to_ref(idx), to_ref(src), reduce, include_self, integer);
    const int64_t m = c.index[size_t(d)] + 1;
    const std::string msg = compare(got, ref, accumulation_tolerance(t, m));
    if (!msg.empty())
      return describe("x " + shape_str(c.x) + " dim " + std::to_string(c.dim) +
                          (include_self ? "" : " without self") + (specials ? " specials" : ""),
                      msg);
  }
  return "";
}

TEST(ParityIndexing, Scatter) {
  for_each_case(OpId::scatter, dtypes_of(OpId::scatter),
                [](DType t, Device dev) { return run_scatter(t, dev, std::nullopt, true, false); });
}

TEST(ParityIndexing, ScatterReduce) {
  for_each_case(
      OpId::scatter_reduce, dtypes_of(OpId::scatter_reduce),
      [](DType t, Device dev) -> std::string {
        for (ScatterReduce r : {ScatterReduce::Sum, ScatterReduce::Prod, ScatterReduce::Mean,
                                ScatterReduce::Amax, ScatterReduce::Amin})
          for (bool self : {true, false}) {
            const std::string m = run_scatter(t, dev, r, self, false);
            if (!m.empty()) return "reduce " + std::to_string(int(r)) + ", " + m;
          }
        // NaN and infinities through Amax and Amin (NaN-sticky) and Sum.
        if (is_floating(t))
          for (ScatterReduce r : {ScatterReduce::Amax, ScatterReduce::Amin, ScatterReduce::Sum}) {
            const std::string m = run_scatter(t, dev, r, true, true);
            if (!m.empty()) return "reduce " + std::to_string(int(r)) + ", " + m;
          }
        return "";
      });
}

TEST(ParityIndexing, IndexSelect) {
  for_each_case(
      OpId::index_select, dtypes_of(OpId::index_select), [](DType t, Device dev) -> std::string {
        uint64_t seed = 400;
        for (const auto& [shape, dim, k] :
             std::vector<std::tuple<Shape, int64_t, int64_t>>{{{7}, 0, 12},
                                                              {{5, 7}, 0, 9},
                                                              {{5, 7}, -1, 3},
                                                              {{4, 6, 5}, 1, 0},
                                                              {{3, 33, 17}, 2, 40}}) {
          const int64_t d = dim < 0 ? dim + int64_t(shape.size()) : dim;
          for (Layout l : {Layout::Contiguous, Layout::Flipped}) {
            const Tensor x = make_input(shape, t, dev, values_spec(t, l), ++seed);
            const Tensor idx = make_index({k}, shape[size_t(d)], dev, ++seed);
            const std::string m =
                compare(index_select(x, dim, idx),
                        reference::index_select(to_ref(x), d, to_ref(idx)), tolerance_for(t));
            if (!m.empty()) return describe("x " + shape_str(shape), m);
          }
        }
        return "";
      });
}

TEST(ParityIndexing, Take) {
  for_each_case(OpId::take, dtypes_of(OpId::take), [](DType t, Device dev) -> std::string {
    uint64_t seed = 500;
    for (const auto& [xs, is] : std::vector<std::pair<Shape, Shape>>{
             {{}, {3}}, {{7}, {2, 5}}, {{5, 7}, {11}}, {{4, 6, 5}, {3, 0}}, {{3, 4}, {}}}) {
      const Tensor x = make_input(
          xs, t, dev, values_spec(t, xs.size() >= 2 ? Layout::Transposed : Layout::Contiguous),
          ++seed);
      const Tensor idx = make_index(is, shape_numel(xs), dev, ++seed);
      const std::string m =
          compare(take(x, idx), reference::take(to_ref(x), to_ref(idx)), tolerance_for(t));
      if (!m.empty()) return describe("x " + shape_str(xs), m);
    }
    return "";
  });
}

TEST(ParityIndexing, EmbeddingLookup) {
  for_each_case(
      OpId::embedding_lookup, dtypes_of(OpId::embedding_lookup),
      [](DType t, Device dev) -> std::string {
        uint64_t seed = 600;
        for (const auto& [w, is] : std::vector<std::pair<Shape, Shape>>{{{10, 4}, {7}},
                                                                        {{33, 17}, {3, 5}},
                                                                        {{5, 64}, {2, 3, 4}},
                                                                        {{6, 3}, {0}},
                                                                        {{6, 3}, {}}}) {
          const Tensor weight = make_input(w, t, dev, values_spec(t), ++seed);
          const Tensor idx = make_index(is, w[0], dev, ++seed);
          const std::string m =
              compare(embedding_lookup(weight, idx),
                      reference::embedding_lookup(to_ref(weight), to_ref(idx)), tolerance_for(t));
          if (!m.empty()) return describe("weight " + shape_str(w), m);
        }
        return "";
      });
}

TEST(ParityIndexing, GatherNd) {
  for_each_case(
      OpId::gather_nd, dtypes_of(OpId::gather_nd), [](DType t, Device dev) -> std::string {
        uint64_t seed = 700;
        for (const auto& [xs, lead, k] : std::vector<std::tuple<Shape, Shape, int64_t>>{
                 {{5, 7}, {4}, 2}, {{5, 7}, {3}, 1}, {{4, 6, 5}, {2, 3}, 2}, {{4, 6, 5}, {0}, 3}}) {
          const Tensor x = make_input(xs, t, dev, values_spec(t), ++seed);
          std::vector<Tensor> comps;
          for (int64_t j = 0; j < k; ++j) {
            Shape s = lead;
            s.push_back(1);
            comps.push_back(make_index(s, xs[size_t(j)], dev, ++seed));
          }
          const Tensor idx = cat(comps, -1);
          const std::string m = compare(
              gather_nd(x, idx), reference::gather_nd(to_ref(x), to_ref(idx)), tolerance_for(t));
          if (!m.empty()) return describe("x " + shape_str(xs) + " k " + std::to_string(k), m);
        }
        return "";
      });
}

TEST(ParityIndexing, IndexPut) {
  for_each_case(
      OpId::index_put, dtypes_of(OpId::index_put), [](DType t, Device dev) -> std::string {
        uint64_t seed = 800;
        struct Case {
          Shape x;
          std::vector<Shape> indices;
          Shape values;
        };
        for (const Case& c : std::vector<Case>{{{5, 7}, {{6}}, {6, 7}},
                                               {{5, 7}, {{6}, {6}}, {6}},
                                               {{5, 7}, {{3, 1}, {1, 4}}, {}},  // broadcast indices
                                               {{4, 6, 5}, {{2, 3}}, {5}},      // broadcast values
                                               {{4, 6, 5}, {{0}}, {0, 6, 5}}}) {
          const Tensor x = make_input(c.x, t, dev, values_spec(t), ++seed);
          const Tensor v = make_input(c.values, t, dev, values_spec(t), ++seed);
          std::vector<Tensor> idx;
          std::vector<RefTensor> ridx;
          for (size_t j = 0; j < c.indices.size(); ++j) {
            idx.push_back(make_index(c.indices[j], c.x[j], dev, ++seed));
            ridx.push_back(to_ref(idx.back()));
          }
          for (bool acc : {false, true}) {
            if (acc && t == DType::Bool) continue;
            const std::string m = compare(index_put(x, idx, v, acc),
                                          reference::index_put(to_ref(x), ridx, to_ref(v), acc),
                                          accumulation_tolerance(t, 8));
            // Without accumulate a repeated position keeps the last value; the reference writes
            // in the same order.
            if (!m.empty()) return describe("x " + shape_str(c.x) + (acc ? " accumulate" : ""), m);
          }
        }
        return "";
      });
}

TEST(ParityIndexing, Put) {
  for_each_case(OpId::put, dtypes_of(OpId::put), [](DType t, Device dev) -> std::string {
    uint64_t seed = 900;
    for (const auto& [xs, is] : std::vector<std::pair<Shape, Shape>>{
             {{7}, {12}}, {{5, 7}, {3, 4}}, {{4, 6, 5}, {0}}, {{}, {2}}}) {
      const Tensor x = make_input(xs, t, dev, values_spec(t), ++seed);
      const Tensor idx = make_index(is, shape_numel(xs), dev, ++seed);
      const Tensor v = make_input(is, t, dev, values_spec(t), ++seed);
      for (bool acc : {false, true}) {
        if (acc && t == DType::Bool) continue;
        const std::string m =
            compare(put(x, idx, v, acc), reference::put(to_ref(x), to_ref(idx), to_ref(v), acc),
                    accumulation_tolerance(t, 12));
        if (!m.empty()) return describe("x " + shape_str(xs) + (acc ? " accumulate" : ""), m);
      }
    }
    return "";
  });
}

TEST(ParityIndexing, MaskedSelect) {
  for_each_case(
      OpId::masked_select, dtypes_of(OpId::masked_select), [](DType t, Device dev) -> std::string {
        uint64_t seed = 1000;
        for (const auto& [xs, ms] : std::vector<std::pair<Shape, Shape>>{{{7}, {7}},
                                                                         {{5, 7}, {5, 7}},
                                                                         {{5, 7}, {7}},
                                                                         {{5, 1}, {5, 7}},
                                                                         {{}, {}},
                                                                         {{3, 0}, {3, 0}},
                                                                         {{33, 17}, {33, 17}}}) {
          const Tensor x = make_input(xs, t, dev, values_spec(t, Layout::Flipped), ++seed);
          const Tensor mask = make_input(ms, DType::Bool, dev, InputSpec{}, ++seed);
          const std::string m =
              compare(masked_select(x, mask), reference::masked_select(to_ref(x), to_ref(mask)),
                      tolerance_for(t));
          if (!m.empty()) return describe("x " + shape_str(xs), m);
        }
        return "";
      });
}

TEST(ParityIndexing, Nonzero) {
  for_each_case(OpId::nonzero, dtypes_of(OpId::nonzero), [](DType t, Device dev) -> std::string {
    uint64_t seed = 1100;
    for (const Shape& s : std::vector<Shape>{{}, {7}, {5, 7}, {4, 6, 5}, {3, 0}, {2, 1030}}) {
      InputSpec spec;  // about a third zeros
      spec.lo = t == DType::U8 ? 0 : -1;
      spec.hi = 1;
      spec.integers = true;
      const Tensor x = make_input(s, t, dev, spec, ++seed);
      const Tensor got = nonzero(x);
      if (got.dtype() != DType::I64) return "dtype " + std::string(dtype_name(got.dtype()));
      const std::string m = compare(got, reference::nonzero(to_ref(x)), tolerance_for(DType::I64));
      if (!m.empty()) return describe("x " + shape_str(s), m);
    }
    return "";
  });
}

TEST(ParityIndexing, Bincount) {
  for_each_case(OpId::bincount, dtypes_of(OpId::bincount), [](DType t, Device dev) -> std::string {
    uint64_t seed = 1200;
    for (const auto& [n, hi, minlength] : std::vector<std::tuple<int64_t, int64_t, int64_t>>{
             {20, 5, 0}, {20, 5, 10}, {0, 1, 3}, {0, 1, 0}, {300, 40, 2}}) {
      for (DType xt : {DType::I64, DType::I32, DType::U8}) {
        const Tensor x = make_index({n}, hi, dev, ++seed, xt);
        const Tensor w = make_input({n}, t, dev, values_spec(t), ++seed);
        const RefTensor rw = to_ref(w);
        std::string m =
            compare(bincount(x, w, minlength), reference::bincount(to_ref(x), &rw, minlength),
                    accumulation_tolerance(t, n));
        if (m.empty() && t == DType::I64)  // counts, without weights
          m = compare(bincount(x, std::nullopt, minlength),
                      reference::bincount(to_ref(x), nullptr, minlength), tolerance_for(t));
        if (!m.empty()) return describe("n " + std::to_string(n), m);
      }
    }
    return "";
  });
}

// Assign keeps the last value of a repeated index, on both paths, and scatter_reduce's
// result is the same bit for bit on every run (many columns over several threads).
TEST(ParityIndexing, ScatterLastWinsAndDeterminism) {
  const Tensor x = zeros({3}, DType::F32);
  const Tensor idx = Tensor::from_vector<int64_t>({1, 1, 2, 1}, {4});
  const Tensor src = Tensor::from_vector<float>({10, 20, 30, 40}, {4});
  for (bool force : {false, true}) {
    const ForceComposition fc(force, {OpId::scatter});
    EXPECT_EQ(scatter(x, 0, idx, src).to_vector<float>(), std::vector<float>({0, 40, 30}));
  }
  const Tensor big = make_input({64, 300}, DType::F32, Device::cpu(), InputSpec{}, 5);
  const Tensor bidx = make_index({4000, 300}, 64, Device::cpu(), 6);
  const Tensor bsrc = make_input({4000, 300}, DType::F32, Device::cpu(), InputSpec{}, 7);
  const std::vector<float> first =
      scatter_reduce(big, 0, bidx, bsrc, ScatterReduce::Sum).to_vector<float>();
  for (int run = 0; run < 3; ++run)
    EXPECT_EQ(scatter_reduce(big, 0, bidx, bsrc, ScatterReduce::Sum).to_vector<float>(), first);
}

}  // namespace
}  // namespace numr::test
