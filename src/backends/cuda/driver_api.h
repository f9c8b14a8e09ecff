// Our own declarations of the subset of the CUDA driver API numr uses. numr builds with
// nothing but a C++ compiler, so it never includes cuda.h; the driver is loaded with
// dlopen at run time. The names, values and signatures follow cuda.h (CUDA 13.0) exactly,
// which tests/test_cuda_runtime.cpp checks against the official header when it is present.
#pragma once

#include <cstddef>
#include <cstdint>

namespace numr::cuda {

// Opaque handles. The structs are never defined: the driver owns them.
struct CUctx_st;
struct CUmod_st;
struct CUfunc_st;
struct CUstream_st;
struct CUevent_st;
struct CUmemPoolHandle_st;
using CUcontext = CUctx_st*;
using CUmodule = CUmod_st*;
using CUfunction = CUfunc_st*;
using CUstream = CUstream_st*;
using CUevent = CUevent_st*;
using CUmemoryPool = CUmemPoolHandle_st*;
using CUdevice = int;
using CUdeviceptr = unsigned long long;  // 64-bit builds only

// The result codes numr looks at; every other code is reported by name through
// cuGetErrorName.
enum CUresult : int {
  CUDA_SUCCESS = 0,
  CUDA_ERROR_INVALID_VALUE = 1,
  CUDA_ERROR_OUT_OF_MEMORY = 2,
  CUDA_ERROR_NOT_INITIALIZED = 3,
  CUDA_ERROR_DEINITIALIZED = 4,
  CUDA_ERROR_STUB_LIBRARY = 34,
  CUDA_ERROR_NO_DEVICE = 100,
  CUDA_ERROR_INVALID_DEVICE = 101,
  CUDA_ERROR_INVALID_PTX = 218,
  CUDA_ERROR_UNSUPPORTED_PTX_VERSION = 222,
  CUDA_ERROR_NOT_READY = 600,
};

enum CUdevice_attribute : int {
  CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1,
  CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK = 8,
  CU_DEVICE_ATTRIBUTE_WARP_SIZE = 10,
  CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
  CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE = 38,
  CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR = 39,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
  CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR = 81,
  CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97,
  CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED = 115,
};

enum CUmemPool_attribute : int {
  CU_MEMPOOL_ATTR_RELEASE_THRESHOLD = 4,     // cuuint64_t
  CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT = 5,  // cuuint64_t
  CU_MEMPOOL_ATTR_USED_MEM_CURRENT = 7,      // cuuint64_t
};

enum CUjit_option : int {
  CU_JIT_INFO_LOG_BUFFER = 3,
  CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4,
  CU_JIT_ERROR_LOG_BUFFER = 5,
  CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6,
  CU_JIT_LOG_VERBOSE = 12,
};

enum CUfunction_attribute : int {
  CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 0,
  CU_FUNC_ATTRIBUTE_NUM_REGS = 4,
  CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
};

enum CUstream_flags : unsigned {
  CU_STREAM_DEFAULT = 0x0,
  CU_STREAM_NON_BLOCKING = 0x1,
};

enum CUevent_flags : unsigned {
  CU_EVENT_DEFAULT = 0x0,
  CU_EVENT_BLOCKING_SYNC = 0x1,
  CU_EVENT_DISABLE_TIMING = 0x2,
};

// Tensor maps: the descriptors that bulk tensor copies (cp.async.bulk.tensor, sm_90 and
// newer) read the global layout of a tensor from. Made on the host by
// cuTensorMapEncodeTiled and passed to kernels by value (`.param .align 64 .b8 name[128]`).
// cuda.h declares the struct 128-byte aligned; the driver requires 64.
struct alignas(128) CUtensorMap {
  uint64_t opaque[16];  // CU_TENSOR_MAP_NUM_QWORDS
};

enum CUtensorMapDataType : int {
  CU_TENSOR_MAP_DATA_TYPE_UINT8 = 0,
  CU_TENSOR_MAP_DATA_TYPE_FLOAT16 = 6,
  CU_TENSOR_MAP_DATA_TYPE_FLOAT32 = 7,
  CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 = 9,
};

enum CUtensorMapInterleave : int {
  CU_TENSOR_MAP_INTERLEAVE_NONE = 0,
};

enum CUtensorMapSwizzle : int {
  CU_TENSOR_MAP_SWIZZLE_NONE = 0,
  CU_TENSOR_MAP_SWIZZLE_32B = 1,
  CU_TENSOR_MAP_SWIZZLE_64B = 2,
  CU_TENSOR_MAP_SWIZZLE_128B = 3,
};

enum CUtensorMapL2promotion : int {
  CU_TENSOR_MAP_L2_PROMOTION_NONE = 0,
  CU_TENSOR_MAP_L2_PROMOTION_L2_64B = 1,
  CU_TENSOR_MAP_L2_PROMOTION_L2_128B = 2,
  CU_TENSOR_MAP_L2_PROMOTION_L2_256B = 3,
};

enum CUtensorMapFloatOOBfill : int {
  CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE = 0,
  CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA = 1,
};

// Function-pointer types of the entry points (all are `CUresult CUDAAPI f(...)`; CUDAAPI
// is empty on Linux).
using PfnGetErrorString = CUresult (*)(CUresult, const char**);
using PfnGetErrorName = CUresult (*)(CUresult, const char**);
using PfnInit = CUresult (*)(unsigned);
using PfnDriverGetVersion = CUresult (*)(int*);
using PfnDeviceGetCount = CUresult (*)(int*);
using PfnDeviceGet = CUresult (*)(CUdevice*, int);
using PfnDeviceGetName = CUresult (*)(char*, int, CUdevice);
using PfnDeviceGetAttribute = CUresult (*)(int*, CUdevice_attribute, CUdevice);
using PfnDeviceTotalMem = CUresult (*)(size_t*, CUdevice);
using PfnDeviceGetDefaultMemPool = CUresult (*)(CUmemoryPool*, CUdevice);
using PfnDevicePrimaryCtxRetain = CUresult (*)(CUcontext*, CUdevice);
using PfnCtxSetCurrent = CUresult (*)(CUcontext);
using PfnMemGetInfo = CUresult (*)(size_t*, size_t*);
using PfnStreamCreate = CUresult (*)(CUstream*, unsigned);
using PfnStreamSynchronize = CUresult (*)(CUstream);
using PfnMemAllocAsync = CUresult (*)(CUdeviceptr*, size_t, CUstream);
using PfnMemFreeAsync = CUresult (*)(CUdeviceptr, CUstream);
using PfnMemPoolSetAttribute = CUresult (*)(CUmemoryPool, CUmemPool_attribute, void*);
using PfnMemPoolGetAttribute = CUresult (*)(CUmemoryPool, CUmemPool_attribute, void*);
using PfnMemPoolTrimTo = CUresult (*)(CUmemoryPool, size_t);
using PfnMemcpyHtoDAsync = CUresult (*)(CUdeviceptr, const void*, size_t, CUstream);
using PfnMemcpyDtoHAsync = CUresult (*)(void*, CUdeviceptr, size_t, CUstream);
using PfnMemcpyDtoDAsync = CUresult (*)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
using PfnMemsetD8Async = CUresult (*)(CUdeviceptr, unsigned char, size_t, CUstream);
using PfnModuleLoadDataEx = CUresult (*)(CUmodule*, const void*, unsigned, CUjit_option*, void**);
using PfnModuleGetFunction = CUresult (*)(CUfunction*, CUmodule, const char*);
using PfnModuleUnload = CUresult (*)(CUmodule);
using PfnFuncSetAttribute = CUresult (*)(CUfunction, CUfunction_attribute, int);
using PfnFuncGetAttribute = CUresult (*)(int*, CUfunction_attribute, CUfunction);
using PfnLaunchKernel = CUresult (*)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                                     unsigned, unsigned, CUstream, void**, void**);
using PfnEventCreate = CUresult (*)(CUevent*, unsigned);
using PfnEventRecord = CUresult (*)(CUevent, CUstream);
using PfnEventSynchronize = CUresult (*)(CUevent);
using PfnEventElapsedTime = CUresult (*)(float*, CUevent, CUevent);
using PfnEventDestroy = CUresult (*)(CUevent);
using PfnEventQuery = CUresult (*)(CUevent);
using PfnStreamWaitEvent = CUresult (*)(CUstream, CUevent, unsigned);
using PfnStreamDestroy = CUresult (*)(CUstream);
// cuTensorMapEncodeTiled(map, data type, rank, global address, global dims, global strides
// (rank - 1 of them, bytes), box dims, element strides, interleave, swizzle, L2 promotion,
// out-of-bounds fill).
using PfnTensorMapEncodeTiled = CUresult (*)(CUtensorMap*, CUtensorMapDataType, uint32_t, void*,
                                             const uint64_t*, const uint64_t*, const uint32_t*,
                                             const uint32_t*, CUtensorMapInterleave,
                                             CUtensorMapSwizzle, CUtensorMapL2promotion,
                                             CUtensorMapFloatOOBfill);

}  // namespace numr::cuda
