// Tensor: shared storage + (shape, strides, offset, dtype). Views share storage; ops
// allocate new contiguous outputs.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "numr/device.h"
#include "numr/dtype.h"
#include "numr/error.h"
#include "numr/shape.h"
#include "numr/shape_like.h"

namespace numr {

class Backend;

// A block of device memory owned by one backend; freed when the last tensor using it goes.
class Storage {
 public:
  Storage(Backend* backend, size_t nbytes);
  // Adopts memory numr did not allocate (DLPack import): `release` runs instead of the
  // backend's deallocate when the last tensor using it goes.
  Storage(Backend* backend, void* handle, size_t nbytes, std::function<void()> release);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  Backend& backend() const { return *backend_; }
  Device device() const;
  void* handle() const { return handle_; }  // CPU/CUDA: a pointer; WebGPU: a buffer
  size_t nbytes() const { return nbytes_; }

  // Counts the in-place writes into this storage (through any view), so that autograd
  // can tell when a tensor it saved for backward has changed since.
  uint64_t version() const { return version_.load(std::memory_order_relaxed); }
  void bump_version() { version_.fetch_add(1, std::memory_order_relaxed); }

 private:
  Backend* backend_;
  void* handle_ = nullptr;
  size_t nbytes_;
  std::function<void()> release_;
  std::atomic<uint64_t> version_{0};
};

class Tensor {
 public:
  Tensor() = default;  // undefined tensor; most calls on it throw InvalidArgument
  Tensor(std::shared_ptr<Storage> storage, Shape shape, Strides strides, int64_t offset,
         DType dtype);

  // New contiguous tensor with unspecified contents.
  static Tensor empty(const Shape& shape, DType dtype, Device device = Device::cpu());
  // Copies host data (row-major); data.size() must equal the shape's element count.
  template <class T>
  static Tensor from_vector(const std::vector<T>& data, const Shape& shape,
                            Device device = Device::cpu()) {
    if constexpr (std::is_same_v<T, bool>) {  // std::vector<bool> packs bits: one byte each
      const std::vector<uint8_t> bytes(data.begin(), data.end());
      return from_host(bytes.data(), bytes.size(), DType::Bool, shape, device);
    } else {
      return from_host(data.data(), data.size(), dtype_of_v<T>, shape, device);
    }
  }
  static Tensor from_host(const void* data, size_t count, DType dtype, const Shape& shape,
                          Device device);

  // Copies to the host in row-major order; T must be the tensor's dtype exactly.
  template <class T>
  std::vector<T> to_vector() const {
    check_host_type(dtype_of_v<T>, "to_vector");
    if constexpr (std::is_same_v<T, bool>) {
      std::vector<uint8_t> bytes(static_cast<size_t>(numel()));
      copy_to_host(bytes.data());
      return std::vector<bool>(bytes.begin(), bytes.end());
    } else {
      std::vector<T> out(static_cast<size_t>(numel()));
      copy_to_host(out.data());
      return out;
    }
  }
  // The value of a one-element tensor; T must be the tensor's dtype exactly.
  template <class T>
  T item() const {
    check_host_type(dtype_of_v<T>, "item");
    if (numel() != 1) fail<InvalidArgument>("item", "tensor has ", numel(), " elements, not 1");
    if constexpr (std::is_same_v<T, bool>) {
      uint8_t byte = 0;
      copy_to_host(&byte);
      return byte != 0;
    } else {
      T v{};
      copy_to_host(&v);
      return v;
    }
  }
  // The value of a one-element tensor of any dtype, converted to double.
  double item_double() const;

  bool defined() const { return storage_ != nullptr; }
  DType dtype() const { return dtype_; }
  Device device() const;
  const Shape& shape() const { return shape_; }
  const Strides& strides() const { return strides_; }
  int64_t offset() const { return offset_; }
  int64_t dim() const { return int64_t(shape_.size()); }
  int64_t size(int64_t d) const;
  int64_t numel() const { return shape_numel(shape_); }
  bool is_contiguous() const;
  const std::shared_ptr<Storage>& storage() const { return storage_; }

  // Copies and conversions.
  Tensor contiguous() const;  // itself when already contiguous
  Tensor clone() const;       // always a new contiguous copy
  Tensor cast(DType dtype) const;
  Tensor to(Device device) const;

  // Views, sharing storage (see ops.h for the free-function forms).
  Tensor reshape(const Shape& shape) const;
  Tensor view(const Shape& shape) const;
  Tensor transpose(int64_t d0, int64_t d1) const;
  Tensor permute(const std::vector<int64_t>& dims) const;
  Tensor narrow(int64_t dim, int64_t start, int64_t length) const;
  Tensor broadcast_to(const Shape& shape) const;
  Tensor squeeze() const;
  Tensor squeeze(int64_t dim) const;
  Tensor unsqueeze(int64_t dim) const;
  Tensor flatten(int64_t start_dim = 0, int64_t end_dim = -1) const;
  Tensor flip(const std::vector<int64_t>& dims) const;

  // ---- In-place writes (src/ops/inplace.cpp) ----
  // Each writes into this tensor's elements, which may be a view (narrow, transpose, flip,
  // ...): the write lands in the shared storage. The result is as if every input had been
  // read completely before the first write, even when an input overlaps this tensor. A
  // view with overlapping elements (broadcast_to, stride 0) cannot be written into
  // (InvalidArgument). `other` broadcasts to this tensor's shape and must have its dtype
  // and device. Each call bumps the storage's version (see Storage::version). These are
  // Tensor operations only: autograd does not record them (docs/semantics.md, "In-place
  // ops and aliasing").
  Tensor& add_(const Tensor& other);
  Tensor& sub_(const Tensor& other);
  Tensor& mul_(const Tensor& other);
  Tensor& div_(const Tensor& other);
  Tensor& add_(double s);
  Tensor& sub_(double s);
  Tensor& mul_(double s);
  Tensor& div_(double s);
  Tensor& neg_();
  Tensor& clamp_(std::optional<double> lo, std::optional<double> hi);
  // src broadcast to this shape, converted to this dtype (as cast does) and moved to this
  // device: copy_ is the explicit conversion, so unlike the arithmetic ops it converts.
  Tensor& copy_(const Tensor& src);
  // value must be representable in the dtype (as for full).
  Tensor& fill_(double value);
  Tensor& zero_();
  // Sets the elements where mask (Bool, broadcast to this shape) is true to value.
  Tensor& masked_fill_(const Tensor& mask, double value);
  // ---- end of in-place writes ----

  // ---- conveniences: shape ranges, method forms of common ops, printing ----
  // Element type deduced from a brace list: Tensor::from_vector({1.f, 2.f}, {2}).
  template <class T>
  static Tensor from_vector(std::initializer_list<T> data, const Shape& shape,
                            Device device = Device::cpu()) {
    return from_vector(std::vector<T>(data), shape, device);
  }
  // Shapes as any range of integers (std::vector<long long>, std::array<int, N>, ...).
  template <class T, ShapeLike S>
  static Tensor from_vector(const std::vector<T>& data, const S& shape,
                            Device device = Device::cpu()) {
    return from_vector(data, to_shape("from_vector", shape), device);
  }
  template <ShapeLike S>
  static Tensor empty(const S& shape, DType dtype, Device device = Device::cpu()) {
    return empty(to_shape("empty", shape), dtype, device);
  }
  template <ShapeLike S>
  Tensor reshape(const S& shape) const {
    return reshape(to_shape("reshape", shape));
  }
  template <ShapeLike S>
  Tensor view(const S& shape) const {
    return view(to_shape("view", shape));
  }
  template <ShapeLike S>
  Tensor broadcast_to(const S& shape) const {
    return broadcast_to(to_shape("broadcast_to", shape));
  }
  // The ops of ops.h with the same names and defaults, as methods (src/ops/methods.cpp).
  Tensor sum(const std::vector<int64_t>& dims = {}, bool keepdim = false) const;
  Tensor mean(const std::vector<int64_t>& dims = {}, bool keepdim = false) const;
  Tensor max(const std::vector<int64_t>& dims = {}, bool keepdim = false) const;
  Tensor min(const std::vector<int64_t>& dims = {}, bool keepdim = false) const;
  Tensor prod(const std::vector<int64_t>& dims = {}, bool keepdim = false) const;
  Tensor argmax(std::optional<int64_t> dim = std::nullopt, bool keepdim = false) const;
  Tensor argmin(std::optional<int64_t> dim = std::nullopt, bool keepdim = false) const;
  Tensor var(const std::vector<int64_t>& dims = {}, int64_t correction = 1,
             bool keepdim = false) const;
  Tensor stddev(const std::vector<int64_t>& dims = {}, int64_t correction = 1,
                bool keepdim = false) const;
  Tensor abs() const;
  Tensor exp() const;
  Tensor log() const;
  Tensor sqrt() const;
  Tensor matmul(const Tensor& other) const;
  Tensor softmax(int64_t dim) const;
  // PyTorch-like nested text with dtype and device (src/core/print.cpp); tensors of more
  // than 1000 elements show the first and last 3 entries of each dim around "...".
  std::string to_string() const;

 private:
  void check_host_type(DType t, const char* op) const;
  void copy_to_host(void* dst) const;

  std::shared_ptr<Storage> storage_;
  Shape shape_;
  Strides strides_;
  int64_t offset_ = 0;
  DType dtype_ = DType::F32;
};

std::ostream& operator<<(std::ostream& os, const Tensor& t);

}  // namespace numr
