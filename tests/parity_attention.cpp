// Parity of scaled_dot_product_attention with the float64 reference: every float dtype,
// broadcast batch dims, Lq != Lk under the causal triangle, Bool and additive masks (with
// queries whose every key is masked), empty sequences, views and an explicit scale.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "support/harness.h"

namespace numr::test {
namespace {

struct Case {
  Shape q, k, v;
  bool causal = false;
  // 0: no mask; 1: Bool padding mask [Lk]; 2: Bool [Lq, Lk] with a fully masked query;
  // 3: additive [Lq, Lk] with -inf entries and a fully masked query.
  int mask = 0;
  std::optional<double> scale = std::nullopt;
  Layout layout = Layout::Contiguous;
};

Shape batch_of(const Case& c) {
  auto lead = [](const Shape& s) { return Shape(s.begin(), s.end() - 2); };
  return broadcast_shapes("test", broadcast_shapes("test", lead(c.q), lead(c.k)), lead(c.v));
}

Shape with_last2(Shape s, int64_t a, int64_t b) {
  s.push_back(a);
  s.push_back(b);
  return s;
}

Tensor make_mask(const Case& c, DType t, Device dev, uint64_t seed) {
  const int64_t lq = c.q.end()[-2], lk = c.k.end()[-2];
  if (c.mask == 1) {
    std::vector<bool> keep(size_t(lk), true);
    for (int64_t j = 0; j < lk; j += 3) keep[size_t(j)] = false;
    return Tensor::from_vector(keep, {lk}, dev);
  }
  const Tensor u = make_input({lq, lk}, DType::F64, Device::cpu(), {.lo = 0, .hi = 1}, seed);
  std::vector<double> uv = u.to_vector<double>();
  std::vector<bool> keep(uv.size());
  for (size_t i = 0; i < uv.size(); ++i) keep[i] = uv[i] > 0.3 && i / size_t(lk) != 1;
  const Tensor kb = Tensor::from_vector(keep, {lq, lk}, dev);
  if (c.mask == 2) return kb;
  const Tensor add = make_input({lq, lk}, t, dev, unit_spec(), seed + 1);
  return where_cond(kb, add, -std::numeric_limits<double>::infinity());
}

TEST(ParityAttention, ScaledDotProductAttention) {
  const std::vector<Case> cases = {
      {{2, 3, 5, 4}, {2, 3, 6, 4}, {2, 3, 6, 3}},
      {{7, 8}, {7, 8}, {7, 8}, true},
      {{2, 3, 4}, {2, 5, 4}, {2, 5, 6}, true},
      {{2, 5, 4}, {2, 3, 4}, {2, 3, 2}, true},
      {{2, 1, 4, 8}, {1, 3, 5, 8}, {1, 3, 5, 8}},
      {{3, 4, 5}, {3, 6, 5}, {3, 6, 5}, false, 1},
      {{3, 4, 5}, {3, 6, 5}, {3, 6, 5}, false, 2},
      {{3, 4, 5}, {3, 6, 5}, {3, 6, 5}, true, 3},
      {{4, 6}, {5, 6}, {5, 7}, false, 0, 0.7},
      {{2, 6, 6}, {2, 6, 6}, {2, 6, 6}, true, 0, std::nullopt, Layout::Transposed},
      {{9, 16}, {11, 16}, {11, 16}, false, 0, std::nullopt, Layout::Strided},
      {{64, 32}, {64, 32}, {64, 32}, true},
      {{3, 4}, {0, 4}, {0, 5}},
      {{0, 4}, {3, 4}, {3, 5}, true},
      {{3, 0}, {3, 0}, {3, 2}},
  };
  for_each_case(OpId::scaled_dot_product_attention, dtypes_of(OpId::scaled_dot_product_attention),
                [&](DType t, Device dev) -> std::string {
                  uint64_t seed = 7000;
                  for (size_t n = 0; n < cases.size(); ++n) {
                    const Case& c = cases[n];
                    const InputSpec spec = unit_spec(c.layout);
                    const Tensor q = make_input(c.q, t, dev, spec, ++seed);
                    const Tensor k = make_input(c.k, t, dev, spec, ++seed);
                    const Tensor v = make_input(c.v, t, dev, spec, ++seed);
                    const Tensor mask = c.mask ? make_mask(c, t, dev, ++seed) : Tensor();
                    const Tensor got =
                        scaled_dot_product_attention(q, k, v, mask, c.causal, c.scale);
                    const Shape batch = batch_of(c);
                    const int64_t lq = c.q.end()[-2], e = c.q.back(), lk = c.k.end()[-2];
                    auto full_ref = [&](const Tensor& x, int64_t a, int64_t b) {
                      return to_ref(x.broadcast_to(with_last2(batch, a, b)).contiguous());
                    };
                    const RefTensor rm = mask.defined() ? full_ref(mask, lq, lk) : RefTensor{};
                    const RefTensor want = reference::attention(
                        full_ref(q, lq, e), full_ref(k, lk, e), full_ref(v, lk, c.v.back()),
                        mask.defined() ? &rm : nullptr, c.mask == 1 || c.mask == 2, c.causal,
                        c.scale.value_or(1.0 / std::sqrt(double(std::max<int64_t>(e, 1)))));
                    if (got.shape() != want.shape)
                      return "case " + std::to_string(n) + ": shape " + shape_str(got.shape());
                    const std::string m = compare(got, want, accumulation_tolerance(t, e + lk));
                    if (!m.empty()) return "case " + std::to_string(n) + ": " + m;
                  }
                  return "";
                });
}

}  // namespace
}  // namespace numr::test
