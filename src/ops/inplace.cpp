// The in-place Tensor methods. Each computes its result with the ordinary front end (into
// a new tensor, so every input is read before anything is written) and then copies it into
// self with the backend's strided copy, which takes any view as its destination. No
// backend needs a kernel of its own for them.
#include <cmath>

#include "numr/ops.h"
#include "ops/common.h"
#include "ops/overlap.h"

namespace numr {
namespace {

// self is defined and has no two indexes naming one element.
void check_self(std::string_view op, const Tensor& self) {
  ops::check_defined(op, self);
  ops::check_writable(op, self);
}

void check_accepts(std::string_view op, OpId id, DType t) {
  if (!op_accepts(id, t)) fail<UnsupportedDType>(op, "unsupported dtype ", t);
}

// other has self's dtype and device and broadcasts to self's shape (self never grows).
void check_other(std::string_view op, const Tensor& self, const Tensor& other) {
  ops::check_same(op, {&self, &other});
  if (broadcast_shapes(op, self.shape(), other.shape()) != self.shape())
    fail<ShapeMismatch>(op, "other of shape ", shape_str(other.shape()),
                        " does not broadcast to self's shape ", shape_str(self.shape()));
}

// src broadcasts to self's shape.
void check_broadcasts(std::string_view op, const Tensor& self, const Tensor& src,
                      std::string_view what) {
  if (broadcast_shapes(op, self.shape(), src.shape()) != self.shape())
    fail<ShapeMismatch>(op, what, " of shape ", shape_str(src.shape()),
                        " does not broadcast to self's shape ", shape_str(self.shape()));
}

// Copies value (on self's device, broadcasting to self's shape, sharing no memory with
// self) into self. Called once every check has passed.
void write_into(Tensor& self, const Tensor& value) {
  self.storage()->bump_version();
  if (self.numel() == 0) return;
  backend_for(self.device()).copy(CopyCall{ops::broadcast_ref(value, self.shape()), ref_of(self)});
}

using BinaryFn = Tensor (*)(const Tensor&, const Tensor&);
using ScalarFn = Tensor (*)(const Tensor&, double);

Tensor& binary_(std::string_view op, OpId id, BinaryFn fn, Tensor& self, const Tensor& other) {
  check_self(op, self);
  check_other(op, self, other);
  check_accepts(op, id, self.dtype());
  write_into(self, fn(self, other));
  return self;
}

Tensor& scalar_(std::string_view op, OpId id, ScalarFn fn, Tensor& self, double s) {
  check_self(op, self);
  check_accepts(op, id, self.dtype());
  ops::check_scalar_fits(op, s, self.dtype());
  write_into(self, fn(self, s));
  return self;
}

Tensor& fill_impl(std::string_view op, Tensor& self, double value) {
  check_self(op, self);
  check_accepts(op, OpId::full, self.dtype());
  // As for full: integer and Bool tensors take only values they hold exactly.
  ops::check_scalar_fits(op, value, self.dtype());
  self.storage()->bump_version();
  if (self.numel() > 0) backend_for(self.device()).fill(FillCall{ref_of(self), value});
  return self;
}

}  // namespace

Tensor& Tensor::add_(const Tensor& other) {
  return binary_("add_", OpId::add, numr::add, *this, other);
}
Tensor& Tensor::sub_(const Tensor& other) {
  return binary_("sub_", OpId::sub, numr::sub, *this, other);
}
Tensor& Tensor::mul_(const Tensor& other) {
  return binary_("mul_", OpId::mul, numr::mul, *this, other);
}
Tensor& Tensor::div_(const Tensor& other) {
  return binary_("div_", OpId::div, numr::div, *this, other);
}
Tensor& Tensor::add_(double s) {
  return scalar_("add_", OpId::add_scalar, numr::add_scalar, *this, s);
}
Tensor& Tensor::sub_(double s) {
  return scalar_("sub_", OpId::sub_scalar, numr::sub_scalar, *this, s);
}
Tensor& Tensor::mul_(double s) {
  return scalar_("mul_", OpId::mul_scalar, numr::mul_scalar, *this, s);
}
Tensor& Tensor::div_(double s) {
  return scalar_("div_", OpId::div_scalar, numr::div_scalar, *this, s);
}

Tensor& Tensor::neg_() {
  check_self("neg_", *this);
  check_accepts("neg_", OpId::neg, dtype());
  write_into(*this, numr::neg(*this));
  return *this;
}

Tensor& Tensor::clamp_(std::optional<double> lo, std::optional<double> hi) {
  check_self("clamp_", *this);
  check_accepts("clamp_", OpId::clamp, dtype());
  if (lo && hi && *lo > *hi) fail<InvalidArgument>("clamp_", "lo ", *lo, " > hi ", *hi);
  if ((lo && std::isnan(*lo)) || (hi && std::isnan(*hi)))
    fail<InvalidArgument>("clamp_", "bounds must not be NaN");
  if (lo) ops::check_scalar_fits("clamp_", *lo, dtype());
  if (hi) ops::check_scalar_fits("clamp_", *hi, dtype());
  write_into(*this, numr::clamp(*this, lo, hi));
  return *this;
}

Tensor& Tensor::copy_(const Tensor& src) {
  check_self("copy_", *this);
  ops::check_defined("copy_", src);
  check_broadcasts("copy_", *this, src, "src");
  // Moved to this device first (a new tensor), or read into a temporary when it shares
  // memory with self, so that the copy reads what src held before the call.
  Tensor from = src;
  if (src.device() != device())
    from = to_device(src, device());
  else if (ops::may_overlap(src, *this))
    from = numr::clone(src);
  write_into(*this, from);  // the backend copy converts the dtype
  return *this;
}

Tensor& Tensor::fill_(double value) { return fill_impl("fill_", *this, value); }
Tensor& Tensor::zero_() { return fill_impl("zero_", *this, 0.0); }

Tensor& Tensor::masked_fill_(const Tensor& mask, double value) {
  check_self("masked_fill_", *this);
  ops::check_defined("masked_fill_", mask);
  if (mask.dtype() != DType::Bool)
    fail<DTypeMismatch>("masked_fill_", "mask must be Bool, got ", mask.dtype());
  if (mask.device() != device())
    fail<DeviceMismatch>("masked_fill_", "mask on ", mask.device(), ", self on ", device());
  check_broadcasts("masked_fill_", *this, mask, "mask");
  check_accepts("masked_fill_", OpId::where_cond, dtype());
  ops::check_scalar_fits("masked_fill_", value, dtype());
  const Tensor fill = full({}, value, dtype(), device());
  write_into(*this, where_cond(mask, fill, *this));
  return *this;
}

}  // namespace numr
