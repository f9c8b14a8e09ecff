#include "support/same_bits.h"

#include <gtest/gtest.h>

#include <cstring>
#include <type_traits>
#include <vector>

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
      for (size_t i = 0; i < wv.size(); ++i)
        if (std::memcmp(&gv[i], &wv[i], sizeof(T)) != 0) {
          ADD_FAILURE() << what << ": element " << i << " of " << wv.size() << " differs ("
                        << double(gv[i]) << " on " << where << ", " << double(wv[i])
                        << " on the CPU)";
          return;
        }
    }
  });
}

}  // namespace numr::test
