// Complex tensors: the pair views and the complex forms of the real ops (through them).
#include <cmath>
#include <limits>

#include "core/op_scope.h"
#include "ops/common.h"
#include "ops/complex_ops.h"

namespace numr {
namespace {

void check_complex(OpId op, const Tensor& z) {
  ops::check_defined(op_name(op), z);
  ops::check_dtype(op, z.dtype());
}

}  // namespace

Tensor view_as_real(const Tensor& z) {
  const OpScope scope("view_as_real");
  check_complex(OpId::view_as_real, z);
  Shape shape = z.shape();
  Strides strides = z.strides();
  for (int64_t& s : strides) s *= 2;
  shape.push_back(2);
  strides.push_back(1);
  return Tensor(z.storage(), std::move(shape), std::move(strides), z.offset() * 2,
                complex_part_dtype(z.dtype()));
}

Tensor view_as_complex(const Tensor& x) {
  const OpScope scope("view_as_complex");
  ops::check_defined("view_as_complex", x);
  ops::check_dtype(OpId::view_as_complex, x.dtype());
  if (x.dim() == 0 || x.shape().back() != 2)
    fail<ShapeMismatch>("view_as_complex", "the last dim must have size 2 (re, im), shape is ",
                        shape_str(x.shape()));
  if (x.strides().back() != 1)
    fail<InvalidArgument>("view_as_complex", "the last dim must have stride 1, it has ",
                          x.strides().back(), " (make it contiguous first)");
  if (x.offset() % 2 != 0)
    fail<InvalidArgument>("view_as_complex", "the storage offset ", x.offset(),
                          " is odd: the pairs would straddle elements");
  Shape shape(x.shape().begin(), x.shape().end() - 1);
  Strides strides(x.strides().begin(), x.strides().end() - 1);
  for (size_t d = 0; d < shape.size(); ++d) {
    if (strides[d] % 2 != 0 && shape[d] > 1)
      fail<InvalidArgument>("view_as_complex", "dim ", d, " has odd stride ", strides[d],
                            " (make it contiguous first)");
    strides[d] /= 2;
  }
  return Tensor(x.storage(), std::move(shape), std::move(strides), x.offset() / 2,
                complex_dtype_for(x.dtype()));
}

Tensor complex(const Tensor& re, const Tensor& im) {
  const OpScope scope("complex");
  ops::check_same("complex", {&re, &im});
  ops::check_dtype(OpId::complex, re.dtype());
  const Shape shape = broadcast_shapes("complex", re.shape(), im.shape());
  Tensor out = Tensor::empty(shape, complex_dtype_for(re.dtype()), re.device());
  if (out.numel() == 0) return out;
  ops::copy_values(broadcast_to(re, shape), real(out));
  ops::copy_values(broadcast_to(im, shape), imag(out));
  return out;
}

Tensor polar(const Tensor& abs, const Tensor& angle) {
  const OpScope scope("polar");
  ops::check_same("polar", {&abs, &angle});
  ops::check_dtype(OpId::polar, abs.dtype());
  return complex(abs * cos(angle), abs * sin(angle));
}

Tensor real(const Tensor& z) {
  const OpScope scope("real");
  ops::check_defined("real", z);
  if (!is_complex(z.dtype())) return z;  // as PyTorch
  return squeeze(narrow(view_as_real(z), -1, 0, 1), -1);
}

Tensor imag(const Tensor& z) {
  const OpScope scope("imag");
  check_complex(OpId::imag, z);
  return squeeze(narrow(view_as_real(z), -1, 1, 1), -1);
}

Tensor conj(const Tensor& z) {
  const OpScope scope("conj");
  ops::check_defined("conj", z);
  if (!is_complex(z.dtype())) return z;
  return complex(real(z), -imag(z));
}

Tensor angle(const Tensor& z) {
  const OpScope scope("angle");
  check_complex(OpId::angle, z);
  return atan2(imag(z), real(z));
}

namespace complex_ops {

std::vector<int64_t> pair_dims(std::string_view op, const std::vector<int64_t>& dims,
                               int64_t ndim) {
  return ops::reduce_dims(op, dims, ndim);  // wrapped against z's dims, never the pair dim
}

Tensor unary(OpId op, const Tensor& z) {
  switch (op) {
    case OpId::neg: return view_as_complex(-view_as_real(z));
    case OpId::exp: return exp_parts(z);
    case OpId::log: return log_parts(z);
    case OpId::abs: {
      // |z| with both parts scaled by the larger: no overflow of re^2 + im^2. An infinite
      // part makes |z| infinite even beside a NaN, as C's hypot.
      const Tensor re = real(z), im = imag(z);
      const Tensor s = maximum(numr::abs(re), numr::abs(im));
      const Tensor zero = zeros({}, re.dtype(), re.device());
      const Tensor safe = where_cond(eq(s, zero), ones({}, re.dtype(), re.device()), s);
      const Tensor a = re / safe, b = im / safe;
      const Tensor r = safe * sqrt(a * a + b * b);
      const Tensor inf =
          full({}, std::numeric_limits<double>::infinity(), re.dtype(), re.device());
      return where_cond(logical_or(isinf(re), isinf(im)), inf, r);
    }
    default: break;
  }
  fail<UnsupportedDType>(op_name(op), "no complex form");
}

Tensor binary(OpId op, const Tensor& a, const Tensor& b) {
  switch (op) {
    case OpId::add: return view_as_complex(view_as_real(a) + view_as_real(b));
    case OpId::sub: return view_as_complex(view_as_real(a) - view_as_real(b));
    case OpId::mul: return mul_parts(a, b);
    case OpId::div: return div_parts(a, b);
    default: break;
  }
  fail<UnsupportedDType>(op_name(op), "no complex form");
}

Tensor scalar(OpId op, const Tensor& z, double s) {
  switch (op) {
    case OpId::mul_scalar: return view_as_complex(view_as_real(z) * s);
    case OpId::div_scalar: return view_as_complex(view_as_real(z) / s);
    default: break;
  }
  fail<UnsupportedDType>(op_name(op), "no complex form");
}

Tensor reduce(OpId op, const Tensor& z, const std::vector<int64_t>& dims, bool keepdim) {
  if (z.dim() == 0) return clone(z);  // no dims to reduce (the pair dim is not one)
  const std::vector<int64_t> ds = pair_dims(op_name(op), dims, z.dim());
  switch (op) {
    case OpId::sum: return view_as_complex(sum(view_as_real(z), ds, keepdim));
    case OpId::mean: return view_as_complex(mean(view_as_real(z), ds, keepdim));
    default: break;
  }
  fail<UnsupportedDType>(op_name(op), "no complex form");
}

Tensor matmul(const Tensor& a, const Tensor& b) { return matmul_parts(a, b); }

}  // namespace complex_ops
}  // namespace numr
