#include "numr/tensor.h"

#include <atomic>
#include <cstring>
#include <sstream>

#include "core/backend.h"
#include "numr/ops.h"

namespace numr {

Storage::Storage(Backend* backend, size_t nbytes) : backend_(backend), nbytes_(nbytes) {
  handle_ = backend_->allocate(nbytes);
}
Storage::~Storage() { backend_->deallocate(handle_); }
Device Storage::device() const { return backend_->device(); }

Tensor::Tensor(std::shared_ptr<Storage> storage, Shape shape, Strides strides, int64_t offset,
               DType dtype)
    : storage_(std::move(storage)),
      shape_(std::move(shape)),
      strides_(std::move(strides)),
      offset_(offset),
      dtype_(dtype) {}

Tensor Tensor::empty(const Shape& shape, DType dtype, Device device) {
  const int64_t numel = checked_numel("empty", shape);
  Backend& be = backend_for(device);
  const size_t bytes = size_t(numel) * dtype_size(dtype);
  auto storage = std::make_shared<Storage>(&be, bytes);
  if (poison_allocations() && bytes > 0) be.fill_bytes(storage->handle(), bytes, 0x5A);
  return Tensor(std::move(storage), shape, contiguous_strides(shape), 0, dtype);
}

Tensor Tensor::from_host(const void* data, size_t count, DType dtype, const Shape& shape,
                         Device device) {
  if (int64_t(count) != checked_numel("from_vector", shape))
    fail<ShapeMismatch>("from_vector", count, " values for shape ", shape_str(shape), " (",
                        shape_numel(shape), " elements)");
  Tensor t = empty(shape, dtype, device);
  if (count != 0)
    t.storage_->backend().copy_from_host(t.storage_->handle(), 0, data, count * dtype_size(dtype));
  return t;
}

Device Tensor::device() const {
  if (!storage_) fail<InvalidArgument>("device", "undefined tensor");
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
  return cast(DType::F64).item<double>();
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

std::string Tensor::to_string() const {
  std::ostringstream os;
  if (!defined()) return "Tensor(undefined)";
  os << "Tensor(" << shape_str(shape_) << ", " << dtype_ << ", " << device() << ", [";
  const int64_t n = std::min<int64_t>(numel(), 64);
  // Integers exactly (through I64), floating values through F64.
  auto print = [&](const auto& vals) {
    for (int64_t i = 0; i < n; ++i) os << (i ? ", " : "") << vals[size_t(i)];
  };
  // Only the printed elements are read: a large view (a broadcast, say) may have far
  // more elements than memory could hold in a copy.
  Tensor head = *this;
  if (numel() > n) {
    std::vector<Tensor> firsts;
    for (int64_t i = 0; i < n; ++i) {
      Tensor e = *this;
      for (int64_t d = dim() - 1, rest = i; d >= 0; --d) {
        e = e.narrow(d, rest % shape_[size_t(d)], 1);
        rest /= shape_[size_t(d)];
      }
      firsts.push_back(e.reshape({1}));
    }
    head = numr::cat(firsts, 0);
  }
  if (is_floating(dtype_))
    print(head.cast(DType::F64).to_vector<double>());
  else
    print(head.cast(DType::I64).to_vector<int64_t>());
  if (numel() > n) os << ", ...";
  os << "])";
  return os.str();
}

std::ostream& operator<<(std::ostream& os, const Tensor& t) { return os << t.to_string(); }

namespace {
std::atomic<bool> g_poison{false};
}
void set_poison_allocations(bool on) { g_poison = on; }
bool poison_allocations() { return g_poison; }

TensorRef ref_of(const Tensor& t) {
  return TensorRef{t.storage()->handle(), t.offset(), t.dtype(), t.shape(), t.strides()};
}

}  // namespace numr
