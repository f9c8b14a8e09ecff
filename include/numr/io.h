// Tensor I/O: safetensors and NumPy .npy files, and DLPack exchange with other libraries.
// Files are read and written in little-endian, row-major order. A malformed or truncated
// file raises IoError ("[load_safetensors] ..."), a dtype numr does not have raises
// UnsupportedDType; nothing is allocated before the sizes it depends on have been checked
// against the file's length. docs/semantics.md ("I/O") says what each format accepts.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

#include "numr/device.h"
#include "numr/tensor.h"

namespace numr {

// ---- safetensors ----
// Writes `tensors` (any dtype, device and strides; the name "__metadata__" is reserved)
// and the string pairs of `metadata` to `path`. Header keys are sorted by name; the data
// is laid out by falling element size, then name, so that every tensor starts at a
// multiple of its element size. Names and metadata must be valid UTF-8.
void save_safetensors(const std::string& path, const std::map<std::string, Tensor>& tensors,
                      const std::map<std::string, std::string>& metadata = {});
// Reads every tensor of a safetensors file onto `device`. Dtypes F64 F32 F16 BF16 I64 I32
// U8 BOOL; others (I8, U16, F8_*, ...) raise UnsupportedDType naming the tensor.
std::map<std::string, Tensor> load_safetensors(const std::string& path,
                                               Device device = Device::cpu());
// The "__metadata__" pairs of a safetensors file (empty when it has none), after the same
// checks of the whole header as load_safetensors; the data is not read.
std::map<std::string, std::string> load_safetensors_metadata(const std::string& path);

// ---- NumPy .npy ----
// Writes t as a version 1.0 .npy file (2.0 if its header would not fit), C order. BF16 has
// no NumPy dtype and raises UnsupportedDType: cast to F32 first (t.cast(DType::F32)).
void save_npy(const std::string& path, const Tensor& t);
// Reads a .npy file of version 1.0, 2.0 or 3.0 with descr '<f8' '<f4' '<f2' '<i8' '<i4'
// '|u1' '|b1' (big-endian '>' forms are byte-swapped; Fortran order is transposed to
// row-major) onto `device`.
Tensor load_npy(const std::string& path, Device device = Device::cpu());

// ---- DLPack (v0.8 ABI) ----
// numr's own declarations of the DLPack structs, in namespace numr so that they cannot
// clash with a dlpack.h the program also includes. Their layout is the ABI's (checked in
// src/io/dlpack.cpp), so a pointer may be reinterpret_cast to and from dlpack.h's types.
enum DLDeviceType : int32_t {
  kDLCPU = 1,
  kDLCUDA = 2,
  kDLCUDAHost = 3,
  kDLOpenCL = 4,
  kDLVulkan = 7,
  kDLMetal = 8,
  kDLVPI = 9,
  kDLROCM = 10,
  kDLROCMHost = 11,
  kDLExtDev = 12,
  kDLCUDAManaged = 13,
  kDLOneAPI = 14,
  kDLWebGPU = 15,
  kDLHexagon = 16,
};
struct DLDevice {
  DLDeviceType device_type;
  int32_t device_id;
};
enum DLDataTypeCode : uint8_t {
  kDLInt = 0,
  kDLUInt = 1,
  kDLFloat = 2,
  kDLOpaqueHandle = 3,
  kDLBfloat = 4,
  kDLComplex = 5,
  kDLBool = 6,
};
struct DLDataType {
  uint8_t code;    // a DLDataTypeCode
  uint8_t bits;    // bits of one lane
  uint16_t lanes;  // 1 for scalars
};
struct DLTensor {
  void* data;  // device pointer; the first element is at data + byte_offset
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t* shape;    // ndim extents
  int64_t* strides;  // ndim strides in elements, or null for row-major
  uint64_t byte_offset;
};
struct DLManagedTensor {
  DLTensor dl_tensor;
  void* manager_ctx;                       // the producer's
  void (*deleter)(DLManagedTensor* self);  // called once by the consumer when done
};

// Exports t without copying: the DLTensor points at t's storage with t's shape and
// strides, and keeps the storage alive until its deleter is called (exactly once, by the
// consumer). CPU -> kDLCPU, CUDA -> kDLCUDA (after the device's queued work has finished:
// the C ABI passes no stream); BF16 -> kDLBfloat, Bool -> kDLBool.
DLManagedTensor* to_dlpack(const Tensor& t);
// Imports m without copying and takes ownership: m's deleter runs when the last numr
// tensor using the memory goes, or before from_dlpack throws. kDLCPU and kDLCUDA memory of
// numr's dtypes with one lane, any strides; other dtypes raise UnsupportedDType, other
// devices BackendUnavailable.
Tensor from_dlpack(DLManagedTensor* m);

}  // namespace numr
