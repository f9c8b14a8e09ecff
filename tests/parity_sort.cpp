// Parity of the Sort family with the float64 reference, every dtype, kernel and composition:
// small integer values (many ties, so stability shows in the indices), NaN, ±Inf and ±0
// sprinkled into floats, both directions, negative dims, rows of length 0 and 1, 0-d
// tensors and views. Values are selections, so they must match exactly, the sign of zero
// included.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "support/harness.h"

namespace numr::test {
namespace {

constexpr Tolerance kExact{0.0, 0.0, 0.0};

struct Case {
  Shape shape;
  int64_t dim = -1;
  Layout layout = Layout::Contiguous;
};

const std::vector<Case>& cases() {
  static const std::vector<Case> c = {
      {{}, 0},
      {{}, -1},
      {{1}, 0},
      {{7}, -1},
      {{0}, 0},
      {{3, 0, 2}, 1},
      {{3, 0, 2}, -1},
      {{4, 1}, -1},
      {{33, 17}, 0},
      {{33, 17}, -1},
      {{5, 7, 11}, 1},
      {{5, 7, 11}, -3},
      {{2, 1030}, -1},
      {{6, 9}, 0, Layout::Transposed},
      {{6, 9}, -1, Layout::Transposed},
      {{9, 16}, -1, Layout::Strided},
      {{5, 8}, -1, Layout::Flipped},
  };
  return c;
}

// Small integers (ties) with the special values mixed in for floats.
InputSpec tie_spec(DType t, Layout layout) {
  InputSpec s;
  s.lo = t == DType::U8 ? 0.0 : -4.0;
  s.hi = 4.0;
  s.integers = true;
  s.specials = true;
  s.layout = layout;
  return s;
}

int64_t wrapped(const Case& c) {
  const int64_t nd = std::max<int64_t>(int64_t(c.shape.size()), 1);
  return c.dim < 0 ? c.dim + nd : c.dim;
}

int64_t length(const Case& c) { return c.shape.empty() ? 1 : c.shape[size_t(wrapped(c))]; }

// "" when got equals want exactly, zeros with the same sign.
std::string exact(const Tensor& got, const RefTensor& want) {
  if (got.shape() != want.shape) return "shape " + shape_str(got.shape());
  std::string m = compare(got, want, kExact);
  if (!m.empty()) return m;
  const RefTensor g = to_ref(got);
  for (size_t i = 0; i < g.v.size(); ++i)
    if (g.v[i] == 0 && std::signbit(g.v[i]) != std::signbit(want.v[i]))
      return "element " + std::to_string(i) + ": the sign of zero differs";
  return "";
}

std::string label(size_t n, bool flag) {
  return "case " + std::to_string(n) + (flag ? " (descending/largest)" : "") + ": ";
}

TEST(ParitySort, Sort) {
  for_each_case(OpId::sort, dtypes_of(OpId::sort), [&](DType t, Device dev) -> std::string {
    for (size_t n = 0; n < cases().size(); ++n) {
      const Case& c = cases()[n];
      const Tensor x = make_input(c.shape, t, dev, tie_spec(t, c.layout), 100 + n);
      for (bool desc : {false, true}) {
        const SortResult got = sort(x, c.dim, desc);
        RefTensor v, i;
        reference::sort(to_ref(x), wrapped(c), length(c), desc, v, i);
        std::string m = exact(got.values, v);
        if (m.empty()) m = exact(got.indices, i);
        if (m.empty() && got.indices.dtype() != DType::I64) m = "indices not I64";
        if (!m.empty()) return label(n, desc) + m;
      }
    }
    return "";
  });
}

TEST(ParitySort, Argsort) {
  for_each_case(OpId::argsort, dtypes_of(OpId::argsort), [&](DType t, Device dev) -> std::string {
    for (size_t n = 0; n < cases().size(); ++n) {
      const Case& c = cases()[n];
      const Tensor x = make_input(c.shape, t, dev, tie_spec(t, c.layout), 200 + n);
      for (bool desc : {false, true}) {
        RefTensor v, i;
        reference::sort(to_ref(x), wrapped(c), length(c), desc, v, i);
        const std::string m = exact(argsort(x, c.dim, desc), i);
        if (!m.empty()) return label(n, desc) + m;
      }
    }
    return "";
  });
}

TEST(ParitySort, Topk) {
  for_each_case(OpId::topk, dtypes_of(OpId::topk), [&](DType t, Device dev) -> std::string {
    for (size_t n = 0; n < cases().size(); ++n) {
      const Case& c = cases()[n];
      const Tensor x = make_input(c.shape, t, dev, tie_spec(t, c.layout), 300 + n);
      const int64_t len = length(c);
      for (int64_t k : {int64_t(0), int64_t(1), len / 2, len}) {
        if (k > len) continue;
        for (bool largest : {true, false}) {
          const SortResult got = topk(x, k, c.dim, largest);
          RefTensor v, i;
          reference::sort(to_ref(x), wrapped(c), k, largest, v, i);
          std::string m = exact(got.values, v);
          if (m.empty()) m = exact(got.indices, i);
          if (!m.empty()) return label(n, largest) + "k " + std::to_string(k) + ": " + m;
        }
      }
    }
    return "";
  });
}

struct SearchCase {
  Shape seq, values;
  Layout layout = Layout::Contiguous;
};

// A sequence of `shape` sorted along its last dim (in sort's order) on the host.
Tensor sorted_sequence(const Shape& shape, DType t, Device dev, Layout layout, uint64_t seed) {
  const Tensor raw = make_input(shape, t, Device::cpu(), tie_spec(t, Layout::Contiguous), seed);
  const int64_t d = int64_t(shape.size()) - 1;
  RefTensor v, i;
  reference::sort(to_ref(raw), d, shape.back(), false, v, i);
  Tensor s = Tensor::from_vector(v.v, shape).cast(t);
  if (layout == Layout::Strided) {  // the same rows inside a wider tensor
    Shape wide = shape;
    wide.back() += 3;
    Tensor big = zeros(wide, t);
    big.narrow(d, 1, shape.back()).copy_(s);
    s = big.narrow(d, 1, shape.back());
  }
  return s.to(dev);
}

TEST(ParitySort, Searchsorted) {
  const std::vector<SearchCase> sc = {
      {{9}, {}},
      {{9}, {13}},
      {{12}, {3, 5}, Layout::Strided},
      {{1}, {6}},
      {{0}, {4}},
      {{9}, {0}},
      {{3, 9}, {3, 5}},
      {{2, 3, 6}, {2, 3, 4}, Layout::Strided},
      {{3, 0}, {3, 2}},
      {{4, 40}, {4, 33}},
  };
  for_each_case(OpId::searchsorted, dtypes_of(OpId::searchsorted),
                [&](DType t, Device dev) -> std::string {
                  for (size_t n = 0; n < sc.size(); ++n) {
                    const SearchCase& c = sc[n];
                    const Tensor seq = sorted_sequence(c.seq, t, dev, c.layout, 400 + n);
                    const Tensor v = make_input(c.values, t, dev, tie_spec(t, c.layout), 500 + n);
                    for (bool right : {false, true}) {
                      const RefTensor want = reference::searchsorted(to_ref(seq), to_ref(v), right);
                      const std::string m = exact(searchsorted(seq, v, right), want);
                      if (!m.empty()) return label(n, false) + (right ? "right: " : "") + m;
                    }
                  }
                  return "";
                });
}

const std::vector<Case>& unique_cases() {
  static const std::vector<Case> c = {
      {{}}, {{0}}, {{1}}, {{7}}, {{33, 17}}, {{5, 7, 11}}, {{6, 9}, -1, Layout::Transposed},
  };
  return c;
}

TEST(ParitySort, Unique) {
  for_each_case(OpId::unique, dtypes_of(OpId::unique), [&](DType t, Device dev) -> std::string {
    for (size_t n = 0; n < unique_cases().size(); ++n) {
      const Case& c = unique_cases()[n];
      const Tensor x = make_input(c.shape, t, dev, tie_spec(t, c.layout), 600 + n);
      RefTensor v, counts;
      reference::unique(to_ref(x), v, counts);
      const std::string m = exact(unique(x), v);
      if (!m.empty()) return label(n, false) + m;
    }
    return "";
  });
}

TEST(ParitySort, UniqueWithCounts) {
  for_each_case(OpId::unique_with_counts, dtypes_of(OpId::unique_with_counts),
                [&](DType t, Device dev) -> std::string {
                  for (size_t n = 0; n < unique_cases().size(); ++n) {
                    const Case& c = unique_cases()[n];
                    const Tensor x = make_input(c.shape, t, dev, tie_spec(t, c.layout), 700 + n);
                    RefTensor v, counts;
                    reference::unique(to_ref(x), v, counts);
                    const UniqueCounts got = unique_with_counts(x);
                    std::string m = exact(got.values, v);
                    if (m.empty()) m = exact(got.counts, counts);
                    if (!m.empty()) return label(n, false) + m;
                  }
                  return "";
                });
}

}  // namespace
}  // namespace numr::test
