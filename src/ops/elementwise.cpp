// Front ends of the elementwise families: unary, activations, predicates, binary,
// ternary, scalar, compare, logical, where_cond, clamp.
#include <cmath>

#include "numr/complex.h"
#include "numr/ops.h"
#include "ops/common.h"
#include "ops/complex_ops.h"
#include "ops/compose/compose.h"

namespace numr {
namespace {

Tensor launch(ElementwiseCall& call, std::initializer_list<const Tensor*> ins, const Shape& shape,
              DType out_dtype, Device dev) {
  Tensor out = Tensor::empty(shape, out_dtype, dev);
  if (out.numel() == 0) return out;
  int i = 0;
  for (const Tensor* t : ins) call.in[size_t(i++)] = ops::broadcast_ref(*t, shape);
  call.n_in = i;
  call.out = ref_of(out);
  backend_for(dev).elementwise(call);
  return out;
}

// A complex operand broadcast to shape, for the complex kernels (complex_elementwise_op),
// which take the (re, im) pairs whole: the ref of its pair view without the pair dim.
TensorRef complex_ref(const Tensor& z, const Shape& shape) {
  Shape pairs = shape;
  pairs.push_back(2);
  TensorRef r = ops::broadcast_ref(view_as_real(z), pairs);
  r.shape.pop_back();
  r.strides.pop_back();
  for (int64_t& st : r.strides) st /= 2;  // in pairs again (view_as_real doubled them)
  r.offset /= 2;
  r.dtype = z.dtype();
  return r;
}

// mul, div (complex out) or abs (real out) of complex operands in one pass.
Tensor launch_complex(OpId op, std::initializer_list<const Tensor*> ins, const Shape& shape,
                      DType out_dtype, Device dev) {
  Tensor out = Tensor::empty(shape, out_dtype, dev);
  if (out.numel() == 0) return out;
  ElementwiseCall call;
  call.op = op;
  int i = 0;
  for (const Tensor* t : ins) call.in[size_t(i++)] = complex_ref(*t, shape);
  call.n_in = i;
  call.out = is_complex(out_dtype) ? complex_ref(out, shape) : ref_of(out);
  backend_for(dev).elementwise(call);
  return out;
}

Tensor unary(OpId op, const Tensor& x, DType out_dtype, double scalar = 0.0) {
  const OpScope scope(op_name(op));
  ops::check_defined(op_name(op), x);
  ops::check_dtype(op, x.dtype());
  if (is_complex(x.dtype())) {
    if (complex_elementwise_op(op) && use_kernel(backend_for(x.device()), op, x.dtype())) {
      return launch_complex(op, {&x}, x.shape(), complex_part_dtype(x.dtype()), x.device());
    }
    return op_info(op).family == OpFamily::Scalar ? complex_ops::scalar(op, x, scalar)
                                                  : complex_ops::unary(op, x);
  }
  ElementwiseCall call;
  call.op = op;
  call.scalars[0] = scalar;
  return launch(call, {&x}, x.shape(), out_dtype, x.device());
}

Tensor nary(OpId op, std::initializer_list<const Tensor*> ins, bool to_bool) {
  const OpScope scope(op_name(op));
  ops::check_same(op_name(op), ins);
  const Tensor& first = **ins.begin();
  ops::check_dtype(op, first.dtype());
  Shape shape = first.shape();
  for (const Tensor* t : ins) shape = broadcast_shapes(op_name(op), shape, t->shape());
  if (is_complex(first.dtype())) {
    // mul and div as one pass over the (re, im) pairs where the backend has the kernel.
    if (complex_elementwise_op(op) && use_kernel(backend_for(first.device()), op, first.dtype())) {
      return launch_complex(op, ins, shape, first.dtype(), first.device());
    }
    return complex_ops::binary(op, first, **(ins.begin() + 1));
  }
  if (op_info(op).composed && !use_kernel(backend_for(first.device()), op, first.dtype()))
    return compose::elementwise(op, ins, shape);
  ElementwiseCall call;
  call.op = op;
  return launch(call, ins, shape, to_bool ? DType::Bool : first.dtype(), first.device());
}

// Sums t over the dims that broadcasting stretched to reach t's shape from `shape`.
Tensor reduce_to(const Tensor& t, const Shape& shape) {
  if (t.shape() == shape) return t;
  const int64_t lead = t.dim() - int64_t(shape.size());
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < t.dim(); ++d)
    if (d < lead || (shape[size_t(d - lead)] == 1 && t.shape()[size_t(d)] != 1)) dims.push_back(d);
  return reshape(sum(t, dims, true), shape);
}

// Both gradients of a fused gate in one pass over (grad_out, a, b).
std::pair<Tensor, Tensor> act_mul_bwd(OpId op, const Tensor& g, const Tensor& a,
                                      const Tensor& b) {
  const OpScope scope(op_name(op));
  ops::check_same(op_name(op), {&g, &a, &b});
  ops::check_dtype(op, a.dtype());
  Shape shape = broadcast_shapes(op_name(op), a.shape(), b.shape());
  shape = broadcast_shapes(op_name(op), shape, g.shape());
  // A gradient that must still be summed over broadcast dims stays in the compute type
  // (f32 for F16/BF16) until the sum is done, so it is rounded once.
  const DType wide = compute_dtype(a.dtype());
  if (!use_kernel(backend_for(a.device()), op, a.dtype())) {
    auto [da, db] = compose::act_mul_bwd(op, g, a, b, shape);
    return {reduce_to(da, a.shape()).cast(a.dtype()), reduce_to(db, b.shape()).cast(b.dtype())};
  }
  Tensor da = Tensor::empty(shape, a.shape() == shape ? a.dtype() : wide, a.device());
  Tensor db = Tensor::empty(shape, b.shape() == shape ? b.dtype() : wide, a.device());
  if (da.numel() != 0) {
    ElementwiseCall call;
    call.op = op;
    call.out = ref_of(da);
    call.out2 = ref_of(db);
    call.n_out = 2;
    call.in = {ops::broadcast_ref(g, shape), ops::broadcast_ref(a, shape),
               ops::broadcast_ref(b, shape)};
    call.n_in = 3;
    backend_for(a.device()).elementwise(call);
  }
  return {reduce_to(da, a.shape()).cast(a.dtype()), reduce_to(db, b.shape()).cast(b.dtype())};
}

Tensor scalar_op(OpId op, const Tensor& x, double s) {
  const OpScope scope(op_name(op));
  ops::check_defined(op_name(op), x);
  ops::check_dtype(op, x.dtype());
  ops::check_scalar_fits(op_name(op), s, x.dtype());
  if (op == OpId::polygamma && !(s >= 0 && s == std::floor(s)))
    fail<InvalidArgument>("polygamma", "n must be a non-negative integer, got ", s);
  return unary(op, x, x.dtype(), s);
}

}  // namespace

#define NUMR_UNARY(name, dtypes, grad) \
  Tensor name(const Tensor& x) { return unary(OpId::name, x, x.dtype()); }
#define NUMR_UNARY_PRED(name, dtypes, grad) \
  Tensor name(const Tensor& x) { return unary(OpId::name, x, DType::Bool); }
#define NUMR_BINARY(name, dtypes, grad) \
  Tensor name(const Tensor& a, const Tensor& b) { return nary(OpId::name, {&a, &b}, false); }
#define NUMR_COMPARE(name, dtypes, grad) \
  Tensor name(const Tensor& a, const Tensor& b) { return nary(OpId::name, {&a, &b}, true); }
#define NUMR_LOGICAL(name, dtypes, grad) \
  Tensor name(const Tensor& a, const Tensor& b) { return nary(OpId::name, {&a, &b}, true); }
#define NUMR_TERNARY(name, dtypes, grad)                           \
  Tensor name(const Tensor& a, const Tensor& b, const Tensor& c) { \
    return nary(OpId::name, {&a, &b, &c}, false);                  \
  }
#define NUMR_SCALAR(name, dtypes, grad) \
  Tensor name(const Tensor& x, double s) { return scalar_op(OpId::name, x, s); }
#include "numr/op_table.def"

Tensor polygamma(int64_t n, const Tensor& x) { return polygamma(x, double(n)); }

#define NUMR_ACT_MUL(name, dtypes, grad) \
  Tensor name(const Tensor& a, const Tensor& b) { return nary(OpId::name, {&a, &b}, false); }
#define NUMR_ACT_BWD(name, dtypes, grad)                   \
  Tensor name(const Tensor& grad_out, const Tensor& x) {   \
    return nary(OpId::name, {&grad_out, &x}, false);       \
  }
#define NUMR_ACT_MUL_BWD(name, dtypes, grad)                                                 \
  std::pair<Tensor, Tensor> name(const Tensor& grad_out, const Tensor& a, const Tensor& b) { \
    return act_mul_bwd(OpId::name, grad_out, a, b);                                         \
  }
#include "numr/op_table.def"

#define NUMR_ACTIVATION(name, dtypes, grad) \
  Tensor name(const Tensor& x) { return unary(OpId::name, x, x.dtype()); }
#define NUMR_ACTIVATION_P(name, param, default_value, dtypes, grad)         \
  Tensor name(const Tensor& x, double param) {                             \
    if (!std::isfinite(param)) fail<InvalidArgument>(#name, #param " must be finite"); \
    return unary(OpId::name, x, x.dtype(), param);                         \
  }
#include "numr/op_table.def"

Tensor where_cond(const Tensor& cond, const Tensor& x, const Tensor& y) {
  const OpScope scope("where_cond");
  ops::check_defined("where_cond", cond);
  ops::check_same("where_cond", {&x, &y});
  if (cond.dtype() != DType::Bool)
    fail<DTypeMismatch>("where_cond", "cond must be Bool, got ", cond.dtype());
  if (cond.device() != x.device())
    fail<DeviceMismatch>("where_cond", "cond on ", cond.device(), ", values on ", x.device());
  ops::check_dtype(OpId::where_cond, x.dtype());
  Shape shape = broadcast_shapes("where_cond", cond.shape(), x.shape());
  shape = broadcast_shapes("where_cond", shape, y.shape());
  ElementwiseCall call;
  call.op = OpId::where_cond;
  return launch(call, {&cond, &x, &y}, shape, x.dtype(), x.device());
}

Tensor clamp(const Tensor& x, std::optional<double> lo, std::optional<double> hi) {
  const OpScope scope("clamp");
  ops::check_defined("clamp", x);
  ops::check_dtype(OpId::clamp, x.dtype());
  if (lo && hi && *lo > *hi) fail<InvalidArgument>("clamp", "lo ", *lo, " > hi ", *hi);
  if ((lo && std::isnan(*lo)) || (hi && std::isnan(*hi)))
    fail<InvalidArgument>("clamp", "bounds must not be NaN");
  if (lo) ops::check_scalar_fits("clamp", *lo, x.dtype());
  if (hi) ops::check_scalar_fits("clamp", *hi, x.dtype());
  ElementwiseCall call;
  call.op = OpId::clamp;
  call.scalars = {lo.value_or(0.0), hi.value_or(0.0)};
  call.has_lo = lo.has_value();
  call.has_hi = hi.has_value();
  return launch(call, {&x}, x.shape(), x.dtype(), x.device());
}

Tensor operator+(const Tensor& a, const Tensor& b) { return add(a, b); }
Tensor operator-(const Tensor& a, const Tensor& b) { return sub(a, b); }
Tensor operator*(const Tensor& a, const Tensor& b) { return mul(a, b); }
Tensor operator/(const Tensor& a, const Tensor& b) { return div(a, b); }
Tensor operator-(const Tensor& x) { return neg(x); }
Tensor operator+(const Tensor& a, double s) { return add_scalar(a, s); }
Tensor operator-(const Tensor& a, double s) { return sub_scalar(a, s); }
Tensor operator*(const Tensor& a, double s) { return mul_scalar(a, s); }
Tensor operator/(const Tensor& a, double s) { return div_scalar(a, s); }
Tensor operator+(double s, const Tensor& a) { return add_scalar(a, s); }
Tensor operator-(double s, const Tensor& a) { return rsub_scalar(a, s); }
Tensor operator*(double s, const Tensor& a) { return mul_scalar(a, s); }

}  // namespace numr
