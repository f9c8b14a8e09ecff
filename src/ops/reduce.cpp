// Front ends of the Reduce family: sum mean max min prod any all argmax argmin var std
// logsumexp. The input is viewed (no copy) with kept dims first and reduced dims last;
// the backend reduces the trailing dims into a contiguous output.
#include <limits>
#include <optional>
#include <vector>

#include "numr/ops.h"
#include "ops/common.h"
#include "ops/complex_ops.h"
#include "ops/compose/compose.h"

namespace numr {
namespace {

// Dims of a 0-d tensor: PyTorch accepts 0 and -1 as "the" dim of a scalar.
std::vector<int64_t> scalar_dims(std::string_view op, const std::vector<int64_t>& dims) {
  for (int64_t d : dims)
    if (d != 0 && d != -1)
      fail<InvalidDimension>(op, "dim ", d, " out of range for a tensor of 0 dims");
  if (dims.size() > 1) fail<InvalidDimension>(op, "dim ", dims[1], " appears more than once");
  return {};
}

// The value of an empty reduction, when it has one.
std::optional<double> empty_value(OpId op) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  switch (op) {
    case OpId::sum: return 0.0;
    case OpId::prod: return 1.0;
    case OpId::any: return 0.0;
    case OpId::all: return 1.0;
    case OpId::logsumexp: return -std::numeric_limits<double>::infinity();
    case OpId::mean:
    case OpId::var:
    case OpId::std: return nan;
    default: return std::nullopt;
  }
}

DType output_dtype(OpId op, DType in) {
  if (op == OpId::any || op == OpId::all) return DType::Bool;
  if (op == OpId::argmax || op == OpId::argmin) return DType::I64;
  return in;
}

Tensor reduce_op(OpId op, const Tensor& x, const std::vector<int64_t>& dims_in, bool keepdim,
                 int64_t correction = 1) {
  const OpScope scope(op_name(op));
  const std::string_view name = op_name(op);
  ops::check_defined(name, x);
  ops::check_dtype(op, x.dtype());
  const int64_t nd = x.dim();
  const std::vector<int64_t> dims =
      nd == 0 ? scalar_dims(name, dims_in) : ops::reduce_dims(name, dims_in, nd);
  if (is_complex(x.dtype())) return complex_ops::reduce(op, x, dims, keepdim);

  std::vector<bool> reduced(size_t(nd), false);
  for (int64_t d : dims) reduced[size_t(d)] = true;
  std::vector<int64_t> perm;
  Shape out_shape, keep_shape;
  int64_t count = 1;
  for (int64_t d = 0; d < nd; ++d) {
    const int64_t extent = x.shape()[size_t(d)];
    if (reduced[size_t(d)]) {
      count *= extent;
      out_shape.push_back(1);
    } else {
      perm.push_back(d);
      keep_shape.push_back(extent);
      out_shape.push_back(extent);
    }
  }
  for (int64_t d : dims) perm.push_back(d);

  const std::optional<double> identity = empty_value(op);
  if (count == 0 && !identity) fail<InvalidArgument>(name, "cannot reduce an empty dim");
  if (count > 0 && op_info(op).composed && !use_kernel(backend_for(x.device()), op, x.dtype()))
    return compose::reduce(op, x, dims, keepdim, correction, count);

  Tensor out = Tensor::empty(keep_shape, output_dtype(op, x.dtype()), x.device());
  if (out.numel() > 0) {
    Backend& backend = backend_for(x.device());
    if (count == 0) {
      backend.fill(FillCall{ref_of(out), *identity});
    } else {
      const Tensor xp = permute(x, perm);
      ReduceCall call;
      call.op = op;
      call.in = ref_of(xp);
      call.n_keep = int(keep_shape.size());
      call.out = ref_of(out);
      call.correction = correction;
      backend.reduce(call);
    }
  }
  return keepdim ? out.view(out_shape) : out;
}

// The divisor is count - correction; a negative correction has no use, and INT64_MIN would
// overflow it.
void check_correction(std::string_view op, int64_t correction) {
  if (correction < 0) fail<InvalidArgument>(op, "correction must be >= 0, got ", correction);
}

Tensor arg_op(OpId op, const Tensor& x, std::optional<int64_t> dim, bool keepdim) {
  const OpScope scope(op_name(op));
  ops::check_defined(op_name(op), x);
  if (dim) return reduce_op(op, x, {*dim}, keepdim);
  return reduce_op(op, x, {}, keepdim);
}

}  // namespace

Tensor sum(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) {
  return reduce_op(OpId::sum, x, dims, keepdim);
}
Tensor mean(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) {
  return reduce_op(OpId::mean, x, dims, keepdim);
}
Tensor max(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) {
  return reduce_op(OpId::max, x, dims, keepdim);
}
Tensor min(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) {
  return reduce_op(OpId::min, x, dims, keepdim);
}
Tensor prod(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) {
  return reduce_op(OpId::prod, x, dims, keepdim);
}
Tensor any(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) {
  return reduce_op(OpId::any, x, dims, keepdim);
}
Tensor all(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) {
  return reduce_op(OpId::all, x, dims, keepdim);
}
Tensor argmax(const Tensor& x, std::optional<int64_t> dim, bool keepdim) {
  return arg_op(OpId::argmax, x, dim, keepdim);
}
Tensor argmin(const Tensor& x, std::optional<int64_t> dim, bool keepdim) {
  return arg_op(OpId::argmin, x, dim, keepdim);
}
Tensor var(const Tensor& x, const std::vector<int64_t>& dims, int64_t correction, bool keepdim) {
  check_correction("var", correction);
  return reduce_op(OpId::var, x, dims, keepdim, correction);
}
Tensor std(const Tensor& x, const std::vector<int64_t>& dims, int64_t correction, bool keepdim) {
  check_correction("std", correction);
  return reduce_op(OpId::std, x, dims, keepdim, correction);
}
Tensor logsumexp(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) {
  return reduce_op(OpId::logsumexp, x, dims, keepdim);
}

}  // namespace numr
