#include "core/dim_merge.h"

namespace numr {

MergedDims merge_dims(const Shape& shape, std::span<const Strides* const> strides) {
  MergedDims m;
  const size_t n_ops = strides.size();
  m.strides.resize(n_ops);
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    bool merge = !m.extents.empty();
    for (size_t k = 0; k < n_ops && merge; ++k)
      merge = m.strides[k].back() == (*strides[k])[d] * shape[d];
    if (merge) {
      m.extents.back() *= shape[d];
      for (size_t k = 0; k < n_ops; ++k) m.strides[k].back() = (*strides[k])[d];
    } else {
      m.extents.push_back(shape[d]);
      for (size_t k = 0; k < n_ops; ++k) m.strides[k].push_back((*strides[k])[d]);
    }
  }
  return m;
}

}  // namespace numr
