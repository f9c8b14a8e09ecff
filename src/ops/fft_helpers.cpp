// The real-valued helpers of numr::fft, written from arange, cat, a scalar product and roll.
#include <string_view>

#include "numr/fft.h"
#include "numr/ops.h"
#include "numr/shape.h"
#include "ops/common.h"

namespace numr::fft {

namespace {

void check_freq_args(std::string_view op, int64_t n, DType dtype) {
  ops::check_dtype_valid(op, dtype);
  if (n < 0) throw InvalidArgument(detail::message(op, "n must be >= 0, got ", n));
  if (!is_floating(dtype))
    throw UnsupportedDType(detail::message(op, "needs a floating dtype, got ", dtype_name(dtype)));
}

// Roll by size / 2 (fftshift) or -(size / 2) (ifftshift) along each of dims.
Tensor shift(std::string_view op, const Tensor& x, const std::vector<int64_t>& dims, int sign) {
  ops::check_defined(op, x);
  std::vector<int64_t> d, shifts;
  if (dims.empty())
    for (int64_t i = 0; i < x.dim(); ++i) d.push_back(i);
  else
    for (int64_t i : dims) d.push_back(wrap_dim(op, i, x.dim()));
  if (d.empty()) return clone(x);
  for (int64_t i : d) shifts.push_back(sign * (x.size(i) / 2));
  return roll(x, shifts, d);
}

}  // namespace

Tensor fftfreq(int64_t n, double d, DType dtype, Device device) {
  const OpScope scope("fftfreq");
  check_freq_args("fftfreq", n, dtype);
  // Integers are exact in every floating dtype up to n; one scaling rounds each value once.
  const Tensor k = cat({arange(0, double((n + 1) / 2), 1, dtype, device),
                        arange(double(-(n / 2)), 0, 1, dtype, device)},
                       0);
  return k * (1.0 / (double(n) * d));
}

Tensor rfftfreq(int64_t n, double d, DType dtype, Device device) {
  const OpScope scope("rfftfreq");
  check_freq_args("rfftfreq", n, dtype);
  return arange(0, double(n / 2 + 1), 1, dtype, device) * (1.0 / (double(n) * d));
}

Tensor fftshift(const Tensor& x, const std::vector<int64_t>& dims) {
  const OpScope scope("fftshift");
  return shift("fftshift", x, dims, 1);
}

Tensor ifftshift(const Tensor& x, const std::vector<int64_t>& dims) {
  const OpScope scope("ifftshift");
  return shift("ifftshift", x, dims, -1);
}

}  // namespace numr::fft
