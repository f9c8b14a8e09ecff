#include "ops/overlap.h"

#include <algorithm>
#include <cstdlib>
#include <utility>
#include <vector>

#include "numr/error.h"

namespace numr::ops {
namespace {

// [first, last] element offsets that t touches (t has at least one element).
std::pair<int64_t, int64_t> element_span(const Tensor& t) {
  int64_t lo = t.offset(), hi = t.offset();
  for (size_t d = 0; d < t.shape().size(); ++d) {
    const int64_t reach = (t.shape()[d] - 1) * t.strides()[d];
    (reach < 0 ? lo : hi) += reach;
  }
  return {lo, hi};
}

}  // namespace

bool has_internal_overlap(const Tensor& t) {
  if (t.numel() <= 1) return false;
  // Dims of extent > 1 by |stride|: each stride must step past everything the smaller
  // dims reach, or two indexes can meet.
  std::vector<std::pair<int64_t, int64_t>> dims;  // (|stride|, extent)
  for (size_t d = 0; d < t.shape().size(); ++d)
    if (t.shape()[d] > 1) dims.push_back({std::llabs(t.strides()[d]), t.shape()[d]});
  std::sort(dims.begin(), dims.end());
  int64_t reach = 0;  // the largest offset the dims so far reach
  for (const auto& [stride, extent] : dims) {
    if (stride <= reach) return true;
    reach += stride * (extent - 1);
  }
  return false;
}

void check_writable(std::string_view op, const Tensor& t, std::string_view what) {
  if (has_internal_overlap(t))
    fail<InvalidArgument>(op, "cannot write into ", what, ", a view with overlapping elements",
                          " (shape ", shape_str(t.shape()), ", strides ", shape_str(t.strides()),
                          "); write into a contiguous copy instead");
}

bool may_overlap(const Tensor& a, const Tensor& b) {
  if (a.storage() != b.storage() || a.numel() == 0 || b.numel() == 0) return false;
  const auto [alo, ahi] = element_span(a);
  const auto [blo, bhi] = element_span(b);
  // Byte ranges [lo * size, (hi + 1) * size): the dtypes (and sizes) may differ.
  const int64_t as = int64_t(dtype_size(a.dtype())), bs = int64_t(dtype_size(b.dtype()));
  return alo * as < (bhi + 1) * bs && blo * bs < (ahi + 1) * as;
}

}  // namespace numr::ops
