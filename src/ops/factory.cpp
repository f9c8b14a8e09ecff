// Creation: zeros, ones, full, arange, linspace, eye, rand, randn, randint.
#include <algorithm>
#include <cmath>

#include "numr/ops.h"
#include "ops/common.h"

namespace numr {
namespace {

Tensor filled(OpId op, const Shape& shape, double value, DType dtype, Device device) {
  const std::string_view name = op_name(op);
  ops::check_dtype(op, dtype);
  checked_numel(name, shape);
  // Integer and Bool outputs take only values they can hold exactly (no silent truncation).
  ops::check_scalar_fits(name, value, dtype);
  Tensor out = Tensor::empty(shape, dtype, device);
  if (out.numel() > 0) backend_for(device).fill(FillCall{ref_of(out), value});
  return out;
}

Tensor random_tensor(OpId op, const Shape& shape, DType dtype, Device device, Generator& gen,
                     RandomKind kind, int64_t low, int64_t high) {
  checked_numel(op_name(op), shape);
  Tensor out = Tensor::empty(shape, dtype, device);
  // The generator advances even for an empty draw by its (zero) size, like any other draw.
  const uint64_t off = gen.advance(uint64_t(out.numel()));
  if (out.numel() > 0)
    backend_for(device).random(RandomCall{ref_of(out), kind, gen.seed(), off, low, high});
  return out;
}

}  // namespace

Tensor zeros(const Shape& shape, DType dtype, Device device) {
  return filled(OpId::zeros, shape, 0.0, dtype, device);
}

Tensor ones(const Shape& shape, DType dtype, Device device) {
  return filled(OpId::ones, shape, 1.0, dtype, device);
}

Tensor full(const Shape& shape, double value, DType dtype, Device device) {
  return filled(OpId::full, shape, value, dtype, device);
}

Tensor arange(double start, double end, double step, DType dtype, Device device) {
  ops::check_dtype(OpId::arange, dtype);
  if (!std::isfinite(start) || !std::isfinite(end) || !std::isfinite(step))
    fail<InvalidArgument>("arange", "start, end and step must be finite, got ", start, ", ", end,
                          ", ", step);
  if (step == 0.0) fail<InvalidArgument>("arange", "step must be nonzero");
  if (!is_floating(dtype) && (start != std::trunc(start) || step != std::trunc(step)))
    fail<InvalidArgument>("arange", "start ", start, " and step ", step, " must be integers for ",
                          dtype);
  const double count_d = std::ceil((end - start) / step);
  if (count_d > 9.0e15)
    fail<InvalidArgument>("arange", "range [", start, ", ", end, ") in steps of ", step,
                          " has too many elements");
  // A step pointing away from end gives an empty range, as in NumPy.
  const int64_t count = count_d > 0 ? int64_t(count_d) : 0;
  if (count > 0 && !is_floating(dtype)) {
    const double last = start + double(count - 1) * step;
    if (!ops::holds_integer(start, dtype) || !ops::holds_integer(last, dtype))
      fail<InvalidArgument>("arange", "values from ", start, " to ", last, " do not fit in ",
                            dtype);
    // The values are computed in double, exact up to 2^53.
    if (std::fabs(start) > 0x1p53 || std::fabs(last) > 0x1p53)
      fail<InvalidArgument>("arange", "values from ", start, " to ", last,
                            " go beyond 2^53, where double arguments are not exact integers");
  }
  Tensor out = Tensor::empty({count}, dtype, device);
  if (count > 0) backend_for(device).sequence(SequenceCall{ref_of(out), start, step, end, false});
  return out;
}

Tensor linspace(double start, double end, int64_t steps, DType dtype, Device device) {
  ops::check_dtype(OpId::linspace, dtype);
  if (steps < 0) fail<InvalidArgument>("linspace", "steps must be >= 0, got ", steps);
  checked_numel("linspace", {steps});
  Tensor out = Tensor::empty({steps}, dtype, device);
  if (steps == 0) return out;
  // Filled from both ends, so the first element is exactly start and the last exactly end.
  const double step = steps == 1 ? 0.0 : (end - start) / double(steps - 1);
  backend_for(device).sequence(SequenceCall{ref_of(out), start, step, end, steps > 1});
  return out;
}

Tensor eye(int64_t n, std::optional<int64_t> m, DType dtype, Device device) {
  ops::check_dtype(OpId::eye, dtype);
  const int64_t cols = m.value_or(n);
  if (n < 0 || cols < 0) fail<InvalidArgument>("eye", "sizes must be >= 0, got ", n, " x ", cols);
  checked_numel("eye", {n, cols});
  Tensor out = Tensor::empty({n, cols}, dtype, device);
  if (out.numel() == 0) return out;
  Backend& be = backend_for(device);
  be.fill(FillCall{ref_of(out), 0.0});
  TensorRef diag = ref_of(out);
  diag.shape = {std::min(n, cols)};
  diag.strides = {cols + 1};
  be.fill(FillCall{diag, 1.0});
  return out;
}

Tensor rand(const Shape& shape, DType dtype, Device device, Generator& gen) {
  ops::check_dtype(OpId::rand, dtype);
  return random_tensor(OpId::rand, shape, dtype, device, gen, RandomKind::Uniform, 0, 1);
}

Tensor randn(const Shape& shape, DType dtype, Device device, Generator& gen) {
  ops::check_dtype(OpId::randn, dtype);
  return random_tensor(OpId::randn, shape, dtype, device, gen, RandomKind::Normal, 0, 1);
}

Tensor randint(int64_t low, int64_t high, const Shape& shape, DType dtype, Device device,
               Generator& gen) {
  ops::check_dtype(OpId::randint, dtype);
  if (low >= high) fail<InvalidArgument>("randint", "empty range [", low, ", ", high, ")");
  // high is exclusive: the largest drawn value is high - 1.
  if (is_floating(dtype)) {
    // Every integer of the range must be a value of the dtype, or a draw rounded to it
    // could come out as high, or as infinity.
    const double exact = dtype == DType::F64   ? 0x1p53
                         : dtype == DType::F32 ? 0x1p24
                         : dtype == DType::F16 ? 0x1p11
                                               : 0x1p8;
    if (std::fabs(double(low)) > exact || std::fabs(double(high - 1)) > exact)
      fail<InvalidArgument>("randint", "range [", low, ", ", high, ") has integers that ", dtype,
                            " cannot hold exactly (it holds every integer in [-", exact, ", ",
                            exact, "])");
  } else if (dtype != DType::I64 && !(ops::holds_integer(double(low), dtype) &&
                                      ops::holds_integer(double(high - 1), dtype))) {
    fail<InvalidArgument>("randint", "range [", low, ", ", high, ") does not fit in ", dtype);
  }
  return random_tensor(OpId::randint, shape, dtype, device, gen, RandomKind::Integer, low, high);
}

}  // namespace numr
