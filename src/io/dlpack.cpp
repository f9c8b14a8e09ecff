// DLPack exchange without copies: an exported DLManagedTensor keeps a numr Tensor (and so
// its storage) alive; an imported one becomes a Storage whose release calls its deleter.
#include <cstddef>
#include <optional>
#include <vector>

#include "core/backend.h"
#include "core/op_scope.h"
#include "numr/io.h"

namespace numr {

// The v0.8 ABI layout on 64-bit targets.
static_assert(sizeof(void*) == 8, "the DLPack layout below is that of 64-bit targets");
static_assert(sizeof(DLDevice) == 8 && offsetof(DLDevice, device_id) == 4);
static_assert(sizeof(DLDataType) == 4 && offsetof(DLDataType, bits) == 1 &&
              offsetof(DLDataType, lanes) == 2);
static_assert(offsetof(DLTensor, data) == 0 && offsetof(DLTensor, device) == 8 &&
              offsetof(DLTensor, ndim) == 16 && offsetof(DLTensor, dtype) == 20 &&
              offsetof(DLTensor, shape) == 24 && offsetof(DLTensor, strides) == 32 &&
              offsetof(DLTensor, byte_offset) == 40 && sizeof(DLTensor) == 48);
static_assert(offsetof(DLManagedTensor, manager_ctx) == 48 &&
              offsetof(DLManagedTensor, deleter) == 56 && sizeof(DLManagedTensor) == 64);

namespace {

DLDataType dl_dtype(DType t) {
  const auto bits = uint8_t(dtype_size(t) * 8);
  switch (t) {
    case DType::F64:
    case DType::F32:
    case DType::F16: return {kDLFloat, bits, 1};
    case DType::BF16: return {kDLBfloat, bits, 1};
    case DType::I64:
    case DType::I32: return {kDLInt, bits, 1};
    case DType::U8: return {kDLUInt, bits, 1};
    case DType::Bool: return {kDLBool, bits, 1};
    case DType::Complex64:
    case DType::Complex128: return {kDLComplex, bits, 1};
  }
  return {kDLOpaqueHandle, 0, 0};
}

std::optional<DType> numr_dtype(DLDataType d) {
  if (d.lanes != 1) return std::nullopt;
  for (const DType t : kAllDTypes) {
    const DLDataType x = dl_dtype(t);
    if (x.code == d.code && x.bits == d.bits) return t;
  }
  for (const DType t : kComplexDTypes) {
    const DLDataType x = dl_dtype(t);
    if (x.code == d.code && x.bits == d.bits) return t;
  }
  return std::nullopt;
}

// What to_dlpack hands out: the DLManagedTensor first, so that its address is this one's.
struct Exported {
  DLManagedTensor managed{};
  Tensor tensor;
  Shape shape;
  Strides strides;
};

void delete_exported(DLManagedTensor* self) { delete static_cast<Exported*>(self->manager_ctx); }

}  // namespace

DLManagedTensor* to_dlpack(const Tensor& t) {
  const OpScope scope("to_dlpack");
  constexpr std::string_view op = "to_dlpack";
  if (!t.defined()) fail<InvalidArgument>(op, "undefined tensor");
  const Device dev = t.device();
  DLDevice dl_dev{};
  if (dev.type == DeviceType::Cpu) {
    dl_dev = {kDLCPU, 0};
  } else if (dev.type == DeviceType::Cuda) {
    dl_dev = {kDLCUDA, dev.index};
    synchronize(dev);  // the consumer may read on any stream
  } else {
    fail<BackendLimitation>(op, dev,
                            " tensors cannot be exported: DLPack carries CPU and CUDA "
                            "pointers");
  }
  auto* e = new Exported{{}, t, t.shape(), t.strides()};
  DLTensor& d = e->managed.dl_tensor;
  // data points at the first element (byte_offset 0), as most consumers expect.
  d.data = static_cast<char*>(t.storage()->handle()) + t.offset() * int64_t(dtype_size(t.dtype()));
  d.device = dl_dev;
  d.ndim = int32_t(t.dim());
  d.dtype = dl_dtype(t.dtype());
  d.shape = e->shape.data();
  d.strides = e->strides.data();
  d.byte_offset = 0;
  e->managed.manager_ctx = e;
  e->managed.deleter = delete_exported;
  return &e->managed;
}

Tensor from_dlpack(DLManagedTensor* m) {
  const OpScope scope("from_dlpack");
  constexpr std::string_view op = "from_dlpack";
  if (!m) fail<InvalidArgument>(op, "null DLManagedTensor");
  bool owned = false;  // once a Storage owns m, its release calls the deleter, not this
  try {
    const DLTensor& d = m->dl_tensor;
    Device dev;
    if (d.device.device_type == kDLCPU)
      dev = Device::cpu();
    else if (d.device.device_type == kDLCUDA)
      dev = Device::cuda(d.device.device_id);
    else
      fail<BackendUnavailable>(op, "DLPack device type ", int(d.device.device_type),
                               " has no numr backend (numr takes kDLCPU and kDLCUDA memory)");
    const std::optional<DType> dtype = numr_dtype(d.dtype);
    if (!dtype)
      fail<UnsupportedDType>(op, "DLPack dtype (code ", int(d.dtype.code), ", ", int(d.dtype.bits),
                             " bits, ", d.dtype.lanes,
                             " lanes) is not a numr dtype (numr has float 64/32/16, bfloat 16, "
                             "int 64/32, uint 8 and bool 8, one lane)");
    if (d.ndim < 0) fail<InvalidArgument>(op, "negative ndim ", d.ndim);
    if (d.ndim > 0 && !d.shape) fail<InvalidArgument>(op, "null shape for ndim ", d.ndim);
    const Shape shape(d.shape, d.shape + d.ndim);
    const int64_t numel = checked_numel(op, shape);
    const Strides strides =
        d.strides ? Strides(d.strides, d.strides + d.ndim) : contiguous_strides(shape);
    const size_t esize = dtype_size(*dtype);
    char* first = static_cast<char*>(d.data) + d.byte_offset;
    if (numel > 0 && !d.data) fail<InvalidArgument>(op, "null data for ", numel, " elements");
    if (reinterpret_cast<uintptr_t>(first) % esize != 0)
      fail<InvalidArgument>(op, "data + byte_offset is not aligned to the ", esize,
                            "-byte elements of ", *dtype);
    // The storage spans exactly the elements the view reaches, which may lie before the
    // first one (negative strides).
    int64_t lo = 0, hi = 0;
    bool overflow = false;
    if (numel > 0)
      for (size_t i = 0; i < shape.size(); ++i) {
        int64_t step = 0;
        overflow |= __builtin_mul_overflow(shape[i] - 1, strides[i], &step);
        overflow |= __builtin_add_overflow(step < 0 ? lo : hi, step, step < 0 ? &lo : &hi);
      }
    int64_t span = 0;
    overflow |= __builtin_sub_overflow(hi, lo, &span) || __builtin_add_overflow(span, 1, &span) ||
                __builtin_mul_overflow(span, int64_t(esize), &span);
    if (overflow)
      fail<InvalidArgument>(op, "shape ", shape_str(shape), " with strides ", shape_str(strides),
                            " spans more memory than an address space");
    Backend& be = backend_for(dev);
    void* base = numel > 0 ? first + lo * int64_t(esize) : first;
    auto storage = std::make_shared<Storage>(&be, base, numel > 0 ? size_t(span) : 0, [m] {
      if (m->deleter) m->deleter(m);
    });
    owned = true;
    return Tensor(std::move(storage), shape, strides, numel > 0 ? -lo : 0, *dtype);
  } catch (...) {
    if (!owned && m->deleter) m->deleter(m);
    throw;
  }
}

}  // namespace numr
