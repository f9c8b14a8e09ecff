// The out= forms: an op's result written into a preallocated tensor. When out is
// contiguous and shares no memory with an input, the backend writes straight into it (its
// contract for outputs); otherwise the result goes to a temporary first and is copied in,
// so out may be any view, including one of an input.
#include "numr/ops.h"
#include "ops/common.h"
#include "ops/matmul.h"
#include "ops/overlap.h"

namespace numr {
namespace {

// out is defined, has exactly the result's shape, dtype and device, and no overlapping
// elements. Nothing has been written when this throws.
void check_out(std::string_view op, const Tensor& out, const Shape& shape, DType dtype,
               Device device) {
  if (!out.defined()) fail<InvalidArgument>(op, "out is an undefined tensor");
  if (out.device() != device)
    fail<DeviceMismatch>(op, "out is on ", out.device(), ", the result on ", device);
  if (out.dtype() != dtype)
    fail<DTypeMismatch>(op, "out is ", out.dtype(), ", the result ", dtype,
                        " (numr never converts into out)");
  if (out.shape() != shape)
    fail<ShapeMismatch>(op, "out has shape ", shape_str(out.shape()), ", the result ",
                        shape_str(shape));
  ops::check_writable(op, out, "out");
}

// Whether the backend may write into out directly.
bool writes_directly(const Tensor& out, std::initializer_list<const Tensor*> ins) {
  if (!out.is_contiguous()) return false;
  for (const Tensor* t : ins)
    if (ops::may_overlap(*t, out)) return false;
  return true;
}

// Runs write(target) on out itself or on a temporary copied into out afterwards.
template <class Write>
Tensor& write_out(Tensor& out, std::initializer_list<const Tensor*> ins, Write&& write) {
  out.storage()->bump_version();
  if (out.numel() == 0) return out;
  if (writes_directly(out, ins)) {
    // The same elements with row-major strides (a dim of extent 1 may carry any stride).
    write(Tensor(out.storage(), out.shape(), contiguous_strides(out.shape()), out.offset(),
                 out.dtype()));
    return out;
  }
  const Tensor tmp = Tensor::empty(out.shape(), out.dtype(), out.device());
  write(tmp);
  backend_for(out.device()).copy(CopyCall{ref_of(tmp), ref_of(out)});
  return out;
}

Tensor& binary_out(OpId op, const Tensor& a, const Tensor& b, Tensor& out) {
  const std::string_view name = op_name(op);
  ops::check_same(name, {&a, &b});
  ops::check_dtype(op, a.dtype());
  const Shape shape = broadcast_shapes(name, a.shape(), b.shape());
  check_out(name, out, shape, a.dtype(), a.device());
  return write_out(out, {&a, &b}, [&](const Tensor& target) {
    ElementwiseCall call;
    call.op = op;
    call.in[0] = ops::broadcast_ref(a, shape);
    call.in[1] = ops::broadcast_ref(b, shape);
    call.n_in = 2;
    call.out = ref_of(target);
    backend_for(target.device()).elementwise(call);
  });
}

}  // namespace

Tensor& add(const Tensor& a, const Tensor& b, Tensor& out) {
  return binary_out(OpId::add, a, b, out);
}
Tensor& sub(const Tensor& a, const Tensor& b, Tensor& out) {
  return binary_out(OpId::sub, a, b, out);
}
Tensor& mul(const Tensor& a, const Tensor& b, Tensor& out) {
  return binary_out(OpId::mul, a, b, out);
}
Tensor& div(const Tensor& a, const Tensor& b, Tensor& out) {
  return binary_out(OpId::div, a, b, out);
}

Tensor& matmul(const Tensor& a, const Tensor& b, Tensor& out) {
  const Shape shape = ops::matmul_shape(a, b);
  check_out("matmul", out, shape, a.dtype(), a.device());
  return write_out(out, {&a, &b}, [&](const Tensor& target) { ops::matmul_into(a, b, target); });
}

}  // namespace numr
