// Reference matmul: the plain triple loop in double, batch dims broadcast as in NumPy.
#include <cstddef>

#include "numr/error.h"
#include "reference/reference.h"

namespace numr::reference {
namespace {

// Index of the batch item of an operand with batch shape `own` that broadcast batch
// coordinates `coord` (over `batch`) read.
int64_t source_item(const Shape& own, const Shape& batch, const std::vector<int64_t>& coord) {
  int64_t item = 0;
  const size_t skip = batch.size() - own.size();
  for (size_t d = 0; d < own.size(); ++d)
    item = item * own[d] + (own[d] == 1 ? 0 : coord[skip + d]);
  return item;
}

}  // namespace

RefTensor matmul(const RefTensor& a, const RefTensor& b) {
  if (a.shape.size() < 2 || b.shape.size() < 2)
    fail<InvalidArgument>("matmul", "reference needs operands with at least 2 dims");
  const int64_t m = a.shape[a.shape.size() - 2], k = a.shape.back();
  const int64_t n = b.shape.back();
  if (b.shape[b.shape.size() - 2] != k)
    fail<ShapeMismatch>("matmul", "reference: inner dims differ");
  const Shape a_batch(a.shape.begin(), a.shape.end() - 2);
  const Shape b_batch(b.shape.begin(), b.shape.end() - 2);
  const Shape batch = broadcast_shapes("matmul", a_batch, b_batch);

  RefTensor out;
  out.shape = batch;
  out.shape.push_back(m);
  out.shape.push_back(n);
  out.v.assign(size_t(shape_numel(out.shape)), 0.0);

  const int64_t n_batch = shape_numel(batch);
  std::vector<int64_t> coord(batch.size(), 0);
  for (int64_t item = 0; item < n_batch; ++item) {
    int64_t rest = item;
    for (size_t d = batch.size(); d-- > 0;) {
      coord[d] = rest % batch[d];
      rest /= batch[d];
    }
    const double* pa = a.v.data() + source_item(a_batch, batch, coord) * m * k;
    const double* pb = b.v.data() + source_item(b_batch, batch, coord) * k * n;
    double* pc = out.v.data() + item * m * n;
    gemm_rows(pa, pb, pc, m, k, n);
  }
  return out;
}

// Row by row, the k products added into the whole output row in turn: every element still
// sums its products in order p = 0..k-1 from zero (the same value as the dot-product loop),
// while b is read along its rows. The sanitized build leaves this loop, whose bounds are
// evident, uninstrumented: it is most of the float64 references' time there.
__attribute__((no_sanitize("address", "undefined"))) void gemm_rows(const double* a,
                                                                    const double* b, double* c,
                                                                    int64_t m, int64_t k,
                                                                    int64_t n) {
  for (int64_t i = 0; i < m; ++i) {
    double* row = c + i * n;
    for (int64_t j = 0; j < n; ++j) row[j] = 0.0;
    for (int64_t p = 0; p < k; ++p) {
      const double s = a[i * k + p];
      const double* bp = b + p * n;
      for (int64_t j = 0; j < n; ++j) row[j] += s * bp[j];
    }
  }
}

}  // namespace numr::reference
