#include "numr/shape.h"

#include <algorithm>
#include <sstream>

#include "numr/error.h"

namespace numr {

int64_t shape_numel(const Shape& shape) {
  constexpr std::string_view op = "shape_numel";
  int64_t n = 1;
  bool overflow = false;
  for (int64_t s : shape) {
    if (s < 0) fail<InvalidArgument>(op, "negative extent in shape ", shape_str(shape));
    overflow |= __builtin_mul_overflow(n, s, &n);
  }
  // A zero extent anywhere makes the count 0, whatever overflowed before it.
  if (overflow) {
    for (int64_t s : shape)
      if (s == 0) return 0;
    fail<InvalidArgument>(op, "the extents of shape ", shape_str(shape),
                          " multiply to more than an int64_t holds");
  }
  return n;
}

int64_t checked_numel(std::string_view op, const Shape& shape) {
  for (int64_t s : shape)
    if (s < 0) fail<InvalidArgument>(op, "negative extent in shape ", shape_str(shape));
  // The nonzero extents too: a contiguous tensor's strides are their products.
  int64_t n = 1;
  bool empty = false;
  for (int64_t s : shape) {
    empty = empty || s == 0;
    if (__builtin_mul_overflow(n, std::max<int64_t>(s, 1), &n) || n > kMaxNumel)
      fail<InvalidArgument>(op, "shape ", shape_str(shape),
                            " is too large: its nonzero extents multiply to more than 2^60");
  }
  return empty ? 0 : n;
}

Strides contiguous_strides(const Shape& shape) {
  Strides st(shape.size());
  int64_t acc = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    st[i] = acc;
    acc *= std::max<int64_t>(shape[i], 1);
  }
  return st;
}

Shape broadcast_shapes(std::string_view op, const Shape& a, const Shape& b) {
  for (const Shape* s : {&a, &b})
    for (int64_t e : *s)
      if (e < 0) fail<InvalidArgument>(op, "negative extent in shape ", shape_str(*s));
  const size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (size_t i = 0; i < n; ++i) {
    const int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    const int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (da != db && da != 1 && db != 1)
      fail<BroadcastError>(op, "shapes ", shape_str(a), " and ", shape_str(b),
                           " cannot be broadcast");
    out[i] = da == 1 ? db : da;
  }
  checked_numel(op, out);
  return out;
}

int64_t wrap_dim(std::string_view op, int64_t dim, int64_t ndim) {
  const int64_t lo = -std::max<int64_t>(ndim, 1), hi = std::max<int64_t>(ndim, 1) - 1;
  if (dim < lo || dim > hi || ndim == 0)
    fail<InvalidDimension>(op, "dim ", dim, " out of range for a tensor of ", ndim, " dims");
  return dim < 0 ? dim + ndim : dim;
}

std::string shape_str(const Shape& shape) {
  std::ostringstream os;
  os << '[';
  for (size_t i = 0; i < shape.size(); ++i) os << (i ? ", " : "") << shape[i];
  os << ']';
  return os.str();
}

}  // namespace numr
