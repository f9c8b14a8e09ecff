// Conveniences composed from the op set: stddev, s / x, the *_like factories, where_cond
// with a scalar branch, tril and triu.
#include <algorithm>

#include "numr/complex.h"
#include "numr/ops.h"
#include "ops/common.h"
#include "ops/triangle.h"

namespace numr {
namespace {

// A 0-d tensor holding s in x's dtype and device, broadcast by the op that takes it.
Tensor scalar_for(std::string_view op, double s, const Tensor& x) {
  ops::check_defined(op, x);
  ops::check_scalar_fits(op, s, x.dtype());
  return full(Shape{}, s, x.dtype(), x.device());
}

}  // namespace

Tensor ops::triangle_mask(std::string_view op, const Tensor& x, int64_t diagonal, bool lower) {
  ops::check_defined(op, x);
  if (x.dim() < 2) fail<InvalidArgument>(op, "needs at least 2 dims, got ", shape_str(x.shape()));
  const int64_t rows = x.size(-2), cols = x.size(-1);
  // |diagonal| beyond the matrix keeps all or nothing; clamping keeps the sums exact. I32
  // where the indices fit, the cheaper type where I64 is emulated (WebGPU's word pairs).
  const int64_t limit = rows + cols;
  const int64_t d = std::max(-limit, std::min(limit, diagonal));
  const Device dev = x.device();
  const DType it = 2 * limit < (int64_t(1) << 31) ? DType::I32 : DType::I64;
  const Tensor row = arange(0, double(rows), 1, it, dev).reshape({rows, 1});
  const Tensor col = arange(0, double(cols), 1, it, dev).reshape({1, cols});
  const Tensor shifted = add_scalar(row, double(d));  // row + diagonal
  return lower ? le(col, shifted) : ge(col, shifted);
}

Tensor stddev(const Tensor& x, const std::vector<int64_t>& dims, int64_t correction, bool keepdim) {
  return numr::std(x, dims, correction, keepdim);
}

Tensor operator/(double s, const Tensor& x) { return div(scalar_for("div", s, x), x); }

Tensor empty_like(const Tensor& x, std::optional<DType> dtype) {
  ops::check_defined("empty_like", x);
  return Tensor::empty(x.shape(), dtype.value_or(x.dtype()), x.device());
}
Tensor zeros_like(const Tensor& x, std::optional<DType> dtype) {
  ops::check_defined("zeros_like", x);
  return zeros(x.shape(), dtype.value_or(x.dtype()), x.device());
}
Tensor ones_like(const Tensor& x, std::optional<DType> dtype) {
  ops::check_defined("ones_like", x);
  return ones(x.shape(), dtype.value_or(x.dtype()), x.device());
}
Tensor full_like(const Tensor& x, double value, std::optional<DType> dtype) {
  ops::check_defined("full_like", x);
  return full(x.shape(), value, dtype.value_or(x.dtype()), x.device());
}

Tensor where_cond(const Tensor& cond, const Tensor& x, double y) {
  return where_cond(cond, x, scalar_for("where_cond", y, x));
}
Tensor where_cond(const Tensor& cond, double x, const Tensor& y) {
  return where_cond(cond, scalar_for("where_cond", x, y), y);
}

namespace {

// x where the mask holds, else 0; a complex x is masked through its real pairs.
Tensor masked_triangle(const Tensor& mask, const Tensor& x) {
  if (!is_complex(x.dtype())) return where_cond(mask, x, 0.0);
  return view_as_complex(where_cond(mask.unsqueeze(-1), view_as_real(x), 0.0).contiguous());
}

}  // namespace

Tensor tril(const Tensor& x, int64_t diagonal) {
  return masked_triangle(ops::triangle_mask("tril", x, diagonal, true), x);
}
Tensor triu(const Tensor& x, int64_t diagonal) {
  return masked_triangle(ops::triangle_mask("triu", x, diagonal, false), x);
}

}  // namespace numr
