// Creation: zeros, ones, full, arange, linspace, eye, rand, randn, randint.
#include <algorithm>
#include <cmath>

#include "numr/complex.h"
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
  ops::fill_values(out, value);
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

// The step of linspace's symmetric sequence (out[i] = start + i step in the lower half,
// end - (n-1-i) step in the upper): finite, and no multiple of it the kernels form overflows.
double linspace_step(double start, double end, int64_t steps) {
  // With one or two elements every value is an end, computed with a zero multiple.
  if (steps <= 2) return 0.0;
  const double n1 = double(steps - 1);
  double step = (end - start) / n1;
  if (std::isfinite(step)) return step;
  // end - start overflowed (far apart, opposite signs); end / n1 - start / n1 does not, as
  // n1 >= 2. The largest multiple formed, k step, is then about half the range and can
  // round past the largest double: shorten the step by an ulp until it does not.
  step = end / n1 - start / n1;
  const double k = double(steps - 1 - steps / 2);
  while (!std::isfinite(k * step)) step = std::nextafter(step, 0.0);
  return step;
}

}  // namespace

Tensor zeros(const Shape& shape, DType dtype, Device device) {
  const OpScope scope("zeros");
  return filled(OpId::zeros, shape, 0.0, dtype, device);
}

Tensor ones(const Shape& shape, DType dtype, Device device) {
  const OpScope scope("ones");
  return filled(OpId::ones, shape, 1.0, dtype, device);
}

Tensor full(const Shape& shape, double value, DType dtype, Device device) {
  const OpScope scope("full");
  return filled(OpId::full, shape, value, dtype, device);
}

Tensor arange(double start, double end, double step, DType dtype, Device device) {
  const OpScope scope("arange");
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
  const OpScope scope("linspace");
  ops::check_dtype(OpId::linspace, dtype);
  if (steps < 0) fail<InvalidArgument>("linspace", "steps must be >= 0, got ", steps);
  if (std::isnan(start) || std::isnan(end))
    fail<InvalidArgument>("linspace", "start and end must not be NaN, got ", start, ", ", end);
  // Between -inf and inf no value is defined (the limit of start + t (end - start) is not).
  if (steps > 2 && std::isinf(start) && std::isinf(end) && start != end)
    fail<InvalidArgument>("linspace", "no values lie between ", start, " and ", end);
  checked_numel("linspace", {steps});
  Tensor out = Tensor::empty({steps}, dtype, device);
  if (steps == 0) return out;
  Backend& be = backend_for(device);
  if (std::isinf(start) || std::isinf(end)) {
    // The inner values are the limit of start + t (end - start), 0 < t < 1: the infinite
    // end. The ends themselves are exactly start and end.
    be.fill(FillCall{ref_of(out), std::isinf(end) ? end : start});
    TensorRef first = ref_of(out);
    first.shape = {1};
    be.fill(FillCall{first, start});
    if (steps > 1) {
      TensorRef last = first;
      last.offset += steps - 1;
      be.fill(FillCall{last, end});
    }
    return out;
  }
  be.sequence(SequenceCall{ref_of(out), start, linspace_step(start, end, steps), end, steps > 1});
  return out;
}

Tensor eye(int64_t n, std::optional<int64_t> m, DType dtype, Device device) {
  const OpScope scope("eye");
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
  const OpScope scope("rand");
  ops::check_dtype(OpId::rand, dtype);
  return random_tensor(OpId::rand, shape, dtype, device, gen, RandomKind::Uniform, 0, 1);
}

Tensor randn(const Shape& shape, DType dtype, Device device, Generator& gen) {
  const OpScope scope("randn");
  ops::check_dtype(OpId::randn, dtype);
  return random_tensor(OpId::randn, shape, dtype, device, gen, RandomKind::Normal, 0, 1);
}

Tensor randint(int64_t low, int64_t high, const Shape& shape, DType dtype, Device device,
               Generator& gen) {
  const OpScope scope("randint");
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
