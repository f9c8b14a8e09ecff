// Reference elementwise ops: broadcast, then the formula from src/math at double.
#include "math/formula.h"
#include "reference/reference.h"

namespace numr::reference {

RefTensor elementwise(OpId op, const std::vector<const RefTensor*>& ins, double s0, double s1,
                      bool has_lo, bool has_hi, int output) {
  Shape shape;
  for (const RefTensor* t : ins) shape = broadcast_shapes("reference", shape, t->shape);
  RefTensor out{shape, std::vector<double>(size_t(shape_numel(shape)))};
  const size_t nd = shape.size();
  // Broadcast strides of each input over the output shape.
  std::vector<Strides> st;
  for (const RefTensor* t : ins) {
    Strides s(nd, 0);
    const Strides c = contiguous_strides(t->shape);
    const size_t k = t->shape.size();
    for (size_t i = 0; i < k; ++i)
      if (t->shape[i] != 1) s[nd - k + i] = c[i];
    st.push_back(s);
  }
  std::vector<int64_t> idx(nd, 0);
  for (size_t flat = 0; flat < out.v.size(); ++flat) {
    double x[3] = {0, 0, 0};
    for (size_t k = 0; k < ins.size(); ++k) {
      int64_t off = 0;
      for (size_t d = 0; d < nd; ++d) off += idx[d] * st[k][d];
      x[k] = ins[k]->v[size_t(off)];
    }
    out.v[flat] = math::formula<double>(op, x, s0, s1, has_lo, has_hi, output);
    for (size_t d = nd; d-- > 0;) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}

}  // namespace numr::reference
