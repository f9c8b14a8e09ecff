// Copies: contiguous, clone, cast, to_device.
#include <new>
#include <vector>

#include "numr/ops.h"
#include "ops/common.h"

namespace numr {
namespace {

// A new contiguous tensor on `dev` with x's values converted to `dtype`.
Tensor copy_into_new(std::string_view op, const Tensor& x, DType dtype, Device dev) {
  ops::check_defined(op, x);
  if (is_complex(x.dtype()) && !is_complex(dtype))
    fail<UnsupportedDType>(op, "casting ", x.dtype(), " to ", dtype,
                           " would drop the imaginary parts (take real() first)");
  Tensor out = Tensor::empty(x.shape(), dtype, dev);
  if (out.numel() == 0) return out;
  if (dev == x.device()) {
    ops::copy_values(x, out);
    return out;
  }
  // Across devices: make it contiguous on the source, move bytes through the host, then
  // convert on the destination.
  const Tensor src = contiguous(x);
  std::vector<unsigned char> host;
  try {
    host.resize(size_t(src.numel()) * dtype_size(src.dtype()));
  } catch (const std::bad_alloc&) {
    fail<OutOfMemory>(op, "cannot stage ", src.numel(), " values of ", src.dtype(),
                      " in host memory on the way to ", dev);
  }
  Backend& from = backend_for(src.device());
  from.copy_to_host(host.data(), src.storage()->handle(),
                    size_t(src.offset()) * dtype_size(src.dtype()), host.size());
  const Tensor moved = Tensor::from_host(host.data(), size_t(src.numel()), src.dtype(),
                                         src.shape(), dev);
  return moved.dtype() == dtype ? moved : cast(moved, dtype);
}

}  // namespace

Tensor contiguous(const Tensor& x) {
  const OpScope scope("contiguous");
  ops::check_defined("contiguous", x);
  return x.is_contiguous() ? x : copy_into_new("contiguous", x, x.dtype(), x.device());
}

Tensor clone(const Tensor& x) {
  const OpScope scope("clone");
  ops::check_defined("clone", x);
  return copy_into_new("clone", x, x.dtype(), x.device());
}

Tensor cast(const Tensor& x, DType dtype) {
  const OpScope scope("cast");
  ops::check_defined("cast", x);
  ops::check_dtype_valid("cast", dtype);
  if (x.dtype() == dtype) return x;
  return copy_into_new("cast", x, dtype, x.device());
}

Tensor to_device(const Tensor& x, Device device) {
  const OpScope scope("to_device");
  ops::check_defined("to_device", x);
  if (x.device() == device) return x;
  return copy_into_new("to_device", x, x.dtype(), device);
}

}  // namespace numr
