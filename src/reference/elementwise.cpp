// Reference elementwise ops: broadcast, then the formula from src/math at double.
#include <stdexcept>

#include "math/elementwise.h"
#include "reference/reference.h"

namespace numr::reference {
namespace {

double apply(OpId op, const double* x, double s0, double s1, bool has_lo, bool has_hi,
             int output) {
  switch (op) {
#define NUMR_ACT_MUL(name, d, g) \
  case OpId::name: return math::name(x[0], x[1]);
#define NUMR_ACT_BWD(name, d, g) NUMR_ACT_MUL(name, d, g)
#define NUMR_ACT_MUL_BWD(name, d, g) \
  case OpId::name: return output == 0 ? math::name##_a(x[0], x[1], x[2]) : math::name##_b(x[0], x[1], x[2]);
#define NUMR_UNARY(name, d, g) \
  case OpId::name: return math::name(x[0]);
#define NUMR_UNARY_PRED(name, d, g) NUMR_UNARY(name, d, g)
#define NUMR_BINARY(name, d, g) \
  case OpId::name: return math::name(x[0], x[1]);
#define NUMR_COMPARE(name, d, g) NUMR_BINARY(name, d, g)
#define NUMR_LOGICAL(name, d, g) NUMR_BINARY(name, d, g)
#define NUMR_TERNARY(name, d, g) \
  case OpId::name: return math::name(x[0], x[1], x[2]);
#define NUMR_SCALAR(name, d, g) \
  case OpId::name: return math::name(x[0], s0);
#include "numr/op_table.def"
    case OpId::relu: return math::relu(x[0]);
    case OpId::sigmoid: return math::sigmoid(x[0]);
    case OpId::silu: return math::silu(x[0]);
    case OpId::gelu: return math::gelu(x[0]);
    case OpId::softplus: return math::softplus(x[0]);
    case OpId::leaky_relu: return math::leaky_relu(x[0], s0);
    case OpId::elu: return math::elu(x[0], s0);
    case OpId::where_cond: return math::where_cond(x[0], x[1], x[2]);
    case OpId::clamp: return math::clamp(x[0], s0, s1, has_lo, has_hi);
    default: throw std::invalid_argument("reference::elementwise: not an elementwise op");
  }
}

}  // namespace

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
    out.v[flat] = apply(op, x, s0, s1, has_lo, has_hi, output);
    for (size_t d = nd; d-- > 0;) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}

}  // namespace numr::reference
