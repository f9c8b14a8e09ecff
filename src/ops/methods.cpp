// Tensor's method forms of common ops: each calls the free function of ops.h.
#include "numr/ops.h"

namespace numr {

Tensor Tensor::sum(const std::vector<int64_t>& d, bool k) const { return numr::sum(*this, d, k); }
Tensor Tensor::mean(const std::vector<int64_t>& d, bool k) const { return numr::mean(*this, d, k); }
Tensor Tensor::max(const std::vector<int64_t>& d, bool k) const { return numr::max(*this, d, k); }
Tensor Tensor::min(const std::vector<int64_t>& d, bool k) const { return numr::min(*this, d, k); }
Tensor Tensor::prod(const std::vector<int64_t>& d, bool k) const { return numr::prod(*this, d, k); }
Tensor Tensor::argmax(std::optional<int64_t> d, bool k) const { return numr::argmax(*this, d, k); }
Tensor Tensor::argmin(std::optional<int64_t> d, bool k) const { return numr::argmin(*this, d, k); }
Tensor Tensor::var(const std::vector<int64_t>& d, int64_t c, bool k) const {
  return numr::var(*this, d, c, k);
}
Tensor Tensor::stddev(const std::vector<int64_t>& d, int64_t c, bool k) const {
  return numr::std(*this, d, c, k);
}
Tensor Tensor::abs() const { return numr::abs(*this); }
Tensor Tensor::exp() const { return numr::exp(*this); }
Tensor Tensor::log() const { return numr::log(*this); }
Tensor Tensor::sqrt() const { return numr::sqrt(*this); }
Tensor Tensor::matmul(const Tensor& other) const { return numr::matmul(*this, other); }
Tensor Tensor::softmax(int64_t dim) const { return numr::softmax(*this, dim); }

}  // namespace numr
