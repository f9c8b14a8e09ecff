#include "numr/tensor.h"

#include <atomic>
#include <cstring>
#include <sstream>

#include <unistd.h>

#include "core/backend.h"
#include "core/op_scope.h"
#include "numr/ops.h"
#include "ops/common.h"

namespace numr {

Storage::Storage(Backend* backend, size_t nbytes) : backend_(backend), nbytes_(nbytes) {
  handle_ = backend_->allocate(nbytes);
}
Storage::Storage(Backend* backend, void* handle, size_t nbytes, std::function<void()> release)
    : backend_(backend), handle_(handle), nbytes_(nbytes), release_(std::move(release)) {}
Storage::~Storage() {
  if (release_)
    release_();
  else
    backend_->deallocate(handle_);
}
Device Storage::device() const { return backend_->device(); }

namespace {

// Throws unless every element the view addresses lies in the storage. Runs for every view
// (O(rank)), so it checks overflow with builtins rather than wider types.
void check_view(const Storage* storage, const Shape& shape, const Strides& strides, int64_t offset,
                DType dtype) {
  if (!storage) fail<InvalidArgument>("Tensor", "null storage");
  ops::check_dtype_valid("Tensor", dtype);
  if (shape.size() != strides.size())
    fail<InvalidArgument>("Tensor", "shape ", shape_str(shape), " and strides ", shape_str(strides),
                          " differ in rank");
  const int64_t numel = checked_numel("Tensor", shape);
  if (offset < 0) fail<InvalidArgument>("Tensor", "negative offset ", offset);
  if (numel == 0) return;  // addresses nothing
  // The lowest and highest element addressed, relative to offset.
  int64_t lo = 0, hi = 0;
  bool overflow = false;
  for (size_t i = 0; i < shape.size(); ++i) {
    int64_t step = 0;
    overflow |= __builtin_mul_overflow(shape[i] - 1, strides[i], &step);
    overflow |= __builtin_add_overflow(step < 0 ? lo : hi, step, step < 0 ? &lo : &hi);
  }
  const int64_t elems = int64_t(storage->nbytes() / dtype_size(dtype));
  int64_t first = 0, last = 0;
  overflow |= __builtin_add_overflow(offset, lo, &first);
  overflow |= __builtin_add_overflow(offset, hi, &last);
  if (overflow || first < 0 || last >= elems)
    fail<InvalidArgument>("Tensor", "view of shape ", shape_str(shape), ", strides ",
                          shape_str(strides), " and offset ", offset, " reaches outside its ",
                          elems, "-element storage of ", dtype);
}

}  // namespace

Tensor::Tensor(std::shared_ptr<Storage> storage, Shape shape, Strides strides, int64_t offset,
               DType dtype)
    : storage_(std::move(storage)),
      shape_(std::move(shape)),
      strides_(std::move(strides)),
      offset_(offset),
      dtype_(dtype) {
  check_view(storage_.get(), shape_, strides_, offset_, dtype_);
}

Tensor Tensor::empty(const Shape& shape, DType dtype, Device device) {
  const OpScope scope("empty");  // ops that call empty() keep their own name
  ops::check_dtype_valid(current_op("empty"), dtype);
  const int64_t numel = checked_numel(current_op("empty"), shape);
  Backend& be = backend_for(device);
  const size_t bytes = size_t(numel) * dtype_size(dtype);
  auto storage = std::make_shared<Storage>(&be, bytes);
  if (poison_allocations() && bytes > 0) be.fill_bytes(storage->handle(), bytes, 0x5A);
  return Tensor(std::move(storage), shape, contiguous_strides(shape), 0, dtype);
}

Tensor Tensor::from_host(const void* data, size_t count, DType dtype, const Shape& shape,
                         Device device) {
  const OpScope scope("from_host");
  ops::check_dtype_valid("from_host", dtype);
  if (!data && count != 0)
    fail<InvalidArgument>("from_host", "null data pointer for ", count, " values");
  const int64_t numel = checked_numel("from_vector", shape);
  if (count > size_t(kMaxNumel) || int64_t(count) != numel)
    fail<ShapeMismatch>("from_vector", count, " values for shape ", shape_str(shape), " (", numel,
                        " elements)");
  Tensor t = empty(shape, dtype, device);
  if (count != 0)
    t.storage_->backend().copy_from_host(t.storage_->handle(), 0, data, count * dtype_size(dtype));
  return t;
}

Device Tensor::device() const {
  if (!storage_) fail<InvalidArgument>(current_op("device"), "undefined tensor");
  return storage_->device();
}

int64_t Tensor::size(int64_t d) const { return shape_[size_t(wrap_dim("size", d, dim()))]; }

bool Tensor::is_contiguous() const {
  int64_t expected = 1;
  for (size_t i = shape_.size(); i-- > 0;) {
    if (shape_[i] == 1) continue;
    if (shape_[i] == 0) return true;
    if (strides_[i] != expected) return false;
    expected *= shape_[i];
  }
  return true;
}

void Tensor::check_host_type(DType t, const char* op) const {
  if (!defined()) fail<InvalidArgument>(op, "undefined tensor");
  if (t != dtype_) fail<DTypeMismatch>(op, "tensor is ", dtype_, ", requested ", t);
  // to_vector is about to allocate numel() values on the host. Past the machine's memory
  // that throws std::bad_alloc, or succeeds (overcommit) only for the copy to be killed.
  if (std::string_view(op) == "to_vector") {
    static const double physical = double(sysconf(_SC_PHYS_PAGES)) * double(sysconf(_SC_PAGESIZE));
    if (physical > 0 && double(numel()) * double(dtype_size(dtype_)) > physical)
      fail<OutOfMemory>(op, "cannot copy the ", numel(), " values of shape ", shape_str(shape_),
                        " to the host: more than its ", uint64_t(physical), " bytes of memory");
  }
}

void Tensor::copy_to_host(void* dst) const {
  const Tensor c = contiguous();
  const size_t bytes = size_t(numel()) * dtype_size(dtype_);
  if (bytes == 0) return;
  c.storage_->backend().copy_to_host(dst, c.storage_->handle(),
                                     size_t(c.offset_) * dtype_size(dtype_), bytes);
}

double Tensor::item_double() const {
  // Checked here so the error names item_double, not the cast or item it calls.
  if (!defined()) fail<InvalidArgument>("item_double", "undefined tensor");
  if (numel() != 1)
    fail<InvalidArgument>("item_double", "tensor has ", numel(), " elements, not 1");
  if (is_complex(dtype_))
    fail<UnsupportedDType>("item_double", "a ", dtype_, " value is not one double (use item<",
                           dtype_ == DType::Complex64 ? "std::complex<float>" : "std::complex<double>",
                           ">)");
  // The one element goes to the host first: not every device holds F64 (WebGPU).
  return to(Device::cpu()).cast(DType::F64).item<double>();
}

Tensor Tensor::contiguous() const { return numr::contiguous(*this); }
Tensor Tensor::clone() const { return numr::clone(*this); }
Tensor Tensor::cast(DType t) const { return numr::cast(*this, t); }
Tensor Tensor::to(Device d) const { return numr::to_device(*this, d); }
Tensor Tensor::reshape(const Shape& s) const { return numr::reshape(*this, s); }
Tensor Tensor::view(const Shape& s) const { return numr::view(*this, s); }
Tensor Tensor::transpose(int64_t a, int64_t b) const { return numr::transpose(*this, a, b); }
Tensor Tensor::permute(const std::vector<int64_t>& d) const { return numr::permute(*this, d); }
Tensor Tensor::narrow(int64_t d, int64_t s, int64_t l) const { return numr::narrow(*this, d, s, l); }
Tensor Tensor::broadcast_to(const Shape& s) const { return numr::broadcast_to(*this, s); }
Tensor Tensor::squeeze() const { return numr::squeeze(*this); }
Tensor Tensor::squeeze(int64_t d) const { return numr::squeeze(*this, d); }
Tensor Tensor::unsqueeze(int64_t d) const { return numr::unsqueeze(*this, d); }
Tensor Tensor::flatten(int64_t s, int64_t e) const { return numr::flatten(*this, s, e); }
Tensor Tensor::flip(const std::vector<int64_t>& d) const { return numr::flip(*this, d); }

namespace {
std::atomic<bool> g_poison{false};
}
void set_poison_allocations(bool on) { g_poison = on; }
bool poison_allocations() { return g_poison; }

TensorRef ref_of(const Tensor& t) {
  // Kernels take real dtypes only; an op that supports complex passes the pair view.
  if (is_complex(t.dtype()))
    fail<UnsupportedDType>(current_op("op"), "unsupported dtype ", t.dtype(),
                           " (complex tensors reach this op only through real, imag and "
                           "view_as_real)");
  return TensorRef{t.storage()->handle(), t.offset(), t.dtype(), t.shape(), t.strides()};
}

}  // namespace numr
