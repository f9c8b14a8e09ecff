#include "support/same_bits.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <type_traits>
#include <vector>

#include "core/backend.h"

namespace numr::test {

void expect_same_bits(const Tensor& got, const Tensor& want, const std::string& what) {
  ASSERT_EQ(got.shape(), want.shape()) << what;
  ASSERT_EQ(got.dtype(), want.dtype()) << what;
  const std::string where = got.device().str();
  const Tensor g0 = got.to(Device::cpu()).contiguous(), w0 = want.to(Device::cpu()).contiguous();
  const bool b = want.dtype() == DType::Bool;
  const Tensor g = b ? g0.cast(DType::U8) : g0, w = b ? w0.cast(DType::U8) : w0;
  visit_dtype(w.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, bool>) {
      const std::vector<T> gv = g.template to_vector<T>(), wv = w.template to_vector<T>();
      for (size_t i = 0; i < wv.size(); ++i) {
        // A NaN's sign and payload are unspecified (docs/semantics.md): any NaN matches.
        if constexpr (!std::is_integral_v<T>)
          if (std::isnan(double(gv[i])) && std::isnan(double(wv[i]))) continue;
        if (std::memcmp(&gv[i], &wv[i], sizeof(T)) != 0) {
          ADD_FAILURE() << what << ": element " << i << " of " << wv.size() << " differs ("
                        << double(gv[i]) << " on " << where << ", " << double(wv[i])
                        << " on the CPU)";
          return;
        }
      }
    }
  });
}

void expect_same_bits(const SortResult& got, const SortResult& want, const std::string& what) {
  expect_same_bits(got.values, want.values, what + " values");
  expect_same_bits(got.indices, want.indices, what + " indices");
}

void expect_sorts_match(const Tensor& x, Device dev, const std::vector<int64_t>& ks,
                        const std::string& what, bool with_argsort) {
  ASSERT_TRUE(backend_for(dev).supports(OpId::sort, x.dtype())) << what;
  const Tensor xg = x.to(dev);
  for (bool desc : {false, true}) {
    const std::string w = what + (desc ? " descending" : " ascending");
    const SortResult got = sort(xg, -1, desc), want = sort(x, -1, desc);
    expect_same_bits(got, want, w);
    if (with_argsort) expect_same_bits(argsort(xg, -1, desc), want.indices, w + " argsort");
    for (int64_t k : ks) {
      const std::string wk =
          what + " topk k=" + std::to_string(k) + (desc ? " largest" : " smallest");
      const SortResult tg = topk(xg, k, -1, desc), tw = topk(x, k, -1, desc);
      expect_same_bits(tg, tw, wk);
    }
  }
}

}  // namespace numr::test
