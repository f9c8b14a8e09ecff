// Our own declarations of the subset of the webgpu.h C API that numr uses. No header of the
// implementation is needed to build: the library is opened with dlopen at run time
// (loader.h). The layouts are those of the webgpu-headers of 2025 that Dawn implements;
// where Dawn and the standard header differ (the instance descriptor, feature numbers) both
// forms are declared and the loader picks one by the symbols the library exports. The
// static_asserts pin the layouts on x86-64 and a start-up test checks them against the
// loaded library.
#pragma once

#include <cstddef>
#include <cstdint>

extern "C" {

typedef uint32_t WGPUBool;
typedef uint64_t WGPUFlags;
typedef struct WGPUInstanceImpl* WGPUInstance;
typedef struct WGPUAdapterImpl* WGPUAdapter;
typedef struct WGPUDeviceImpl* WGPUDevice;
typedef struct WGPUQueueImpl* WGPUQueue;
typedef struct WGPUBufferImpl* WGPUBuffer;
typedef struct WGPUShaderModuleImpl* WGPUShaderModule;
typedef struct WGPUComputePipelineImpl* WGPUComputePipeline;
typedef struct WGPUBindGroupLayoutImpl* WGPUBindGroupLayout;
typedef struct WGPUBindGroupImpl* WGPUBindGroup;
typedef struct WGPUPipelineLayoutImpl* WGPUPipelineLayout;
typedef struct WGPUCommandEncoderImpl* WGPUCommandEncoder;
typedef struct WGPUComputePassEncoderImpl* WGPUComputePassEncoder;
typedef struct WGPUCommandBufferImpl* WGPUCommandBuffer;

struct WGPUStringView {
  const char* data;
  size_t length;
};
struct WGPUChainedStruct {
  const WGPUChainedStruct* next;
  uint32_t sType;
};
struct WGPUFuture {
  uint64_t id;
};
struct WGPUFutureWaitInfo {
  WGPUFuture future;
  WGPUBool completed;
};

// Dawn's instance descriptor: capabilities inline.
struct WGPUDawnInstanceCapabilities {
  WGPUChainedStruct* nextInChain;
  WGPUBool timedWaitAnyEnable;
  size_t timedWaitAnyMaxCount;
};
struct WGPUDawnInstanceDescriptor {
  WGPUChainedStruct* nextInChain;
  WGPUDawnInstanceCapabilities capabilities;
};
// The standard header's: required instance features and limits.
struct WGPUInstanceLimits {
  WGPUChainedStruct* nextInChain;
  size_t timedWaitAnyMaxCount;
};
struct WGPUStdInstanceDescriptor {
  WGPUChainedStruct* nextInChain;
  size_t requiredFeatureCount;
  const uint32_t* requiredFeatures;
  const WGPUInstanceLimits* requiredLimits;
};

struct WGPURequestAdapterOptions {
  WGPUChainedStruct* nextInChain;
  uint32_t featureLevel;
  uint32_t powerPreference;
  WGPUBool forceFallbackAdapter;
  uint32_t backendType;
  void* compatibleSurface;
};
// The callback infos of RequestAdapter, RequestDevice, MapAsync, OnSubmittedWorkDone,
// PopErrorScope and the device-lost callback share this layout.
struct WGPUCallbackInfo {
  WGPUChainedStruct* nextInChain;
  uint32_t mode;
  void* callback;
  void* userdata1;
  void* userdata2;
};
struct WGPUUncapturedErrorCallbackInfo {
  WGPUChainedStruct* nextInChain;
  void* callback;
  void* userdata1;
  void* userdata2;
};
struct WGPUAdapterInfo {
  WGPUChainedStruct* nextInChain;
  WGPUStringView vendor, architecture, device, description;
  uint32_t backendType, adapterType, vendorID, deviceID, subgroupMinSize, subgroupMaxSize;
};
struct WGPULimits {
  WGPUChainedStruct* nextInChain;
  uint32_t maxTextureDimension1D, maxTextureDimension2D, maxTextureDimension3D;
  uint32_t maxTextureArrayLayers, maxBindGroups, maxBindGroupsPlusVertexBuffers;
  uint32_t maxBindingsPerBindGroup, maxDynamicUniformBuffersPerPipelineLayout;
  uint32_t maxDynamicStorageBuffersPerPipelineLayout, maxSampledTexturesPerShaderStage;
  uint32_t maxSamplersPerShaderStage, maxStorageBuffersPerShaderStage;
  uint32_t maxStorageTexturesPerShaderStage, maxUniformBuffersPerShaderStage;
  uint64_t maxUniformBufferBindingSize, maxStorageBufferBindingSize;
  uint32_t minUniformBufferOffsetAlignment, minStorageBufferOffsetAlignment, maxVertexBuffers;
  uint64_t maxBufferSize;
  uint32_t maxVertexAttributes, maxVertexBufferArrayStride, maxInterStageShaderVariables;
  uint32_t maxColorAttachments, maxColorAttachmentBytesPerSample, maxComputeWorkgroupStorageSize;
  uint32_t maxComputeInvocationsPerWorkgroup, maxComputeWorkgroupSizeX, maxComputeWorkgroupSizeY;
  uint32_t maxComputeWorkgroupSizeZ, maxComputeWorkgroupsPerDimension, maxImmediateSize;
};
struct WGPUQueueDescriptor {
  WGPUChainedStruct* nextInChain;
  WGPUStringView label;
};
struct WGPUDeviceDescriptor {
  WGPUChainedStruct* nextInChain;
  WGPUStringView label;
  size_t requiredFeatureCount;
  const uint32_t* requiredFeatures;
  const WGPULimits* requiredLimits;
  WGPUQueueDescriptor defaultQueue;
  WGPUCallbackInfo deviceLostCallbackInfo;
  WGPUUncapturedErrorCallbackInfo uncapturedErrorCallbackInfo;
};
struct WGPUShaderSourceWGSL {
  WGPUChainedStruct chain;
  WGPUStringView code;
};
struct WGPUShaderModuleDescriptor {
  WGPUChainedStruct* nextInChain;
  WGPUStringView label;
};
struct WGPUBufferDescriptor {
  WGPUChainedStruct* nextInChain;
  WGPUStringView label;
  WGPUFlags usage;
  uint64_t size;
  WGPUBool mappedAtCreation;
};
struct WGPUConstantEntry {
  WGPUChainedStruct* nextInChain;
  WGPUStringView key;
  double value;
};
struct WGPUComputeState {
  WGPUChainedStruct* nextInChain;
  WGPUShaderModule module;
  WGPUStringView entryPoint;
  size_t constantCount;
  const WGPUConstantEntry* constants;
};
struct WGPUComputePipelineDescriptor {
  WGPUChainedStruct* nextInChain;
  WGPUStringView label;
  WGPUPipelineLayout layout;
  WGPUComputeState compute;
};
struct WGPUBindGroupEntry {
  WGPUChainedStruct* nextInChain;
  uint32_t binding;
  WGPUBuffer buffer;
  uint64_t offset;
  uint64_t size;
  void* sampler;
  void* textureView;
};
struct WGPUBindGroupDescriptor {
  WGPUChainedStruct* nextInChain;
  WGPUStringView label;
  WGPUBindGroupLayout layout;
  size_t entryCount;
  const WGPUBindGroupEntry* entries;
};
struct WGPUCommandEncoderDescriptor {
  WGPUChainedStruct* nextInChain;
  WGPUStringView label;
};
struct WGPUComputePassDescriptor {
  WGPUChainedStruct* nextInChain;
  WGPUStringView label;
  const void* timestampWrites;
};
struct WGPUCommandBufferDescriptor {
  WGPUChainedStruct* nextInChain;
  WGPUStringView label;
};

}  // extern "C"

static_assert(sizeof(WGPUStringView) == 16);
static_assert(sizeof(WGPUDawnInstanceDescriptor) == 32);
static_assert(sizeof(WGPUStdInstanceDescriptor) == 32);
static_assert(sizeof(WGPURequestAdapterOptions) == 32);
static_assert(sizeof(WGPUCallbackInfo) == 40);
static_assert(sizeof(WGPUUncapturedErrorCallbackInfo) == 32);
static_assert(sizeof(WGPUAdapterInfo) == 96 && offsetof(WGPUAdapterInfo, backendType) == 72);
static_assert(sizeof(WGPULimits) == 152 &&
              offsetof(WGPULimits, maxStorageBufferBindingSize) == 72 &&
              offsetof(WGPULimits, maxBufferSize) == 96 &&
              offsetof(WGPULimits, maxImmediateSize) == 148);
static_assert(sizeof(WGPUDeviceDescriptor) == 144 &&
              offsetof(WGPUDeviceDescriptor, deviceLostCallbackInfo) == 72 &&
              offsetof(WGPUDeviceDescriptor, uncapturedErrorCallbackInfo) == 112);
static_assert(sizeof(WGPUShaderModuleDescriptor) == 24);
static_assert(sizeof(WGPUBufferDescriptor) == 48);
static_assert(sizeof(WGPUComputeState) == 48);
static_assert(sizeof(WGPUComputePipelineDescriptor) == 80);
static_assert(sizeof(WGPUBindGroupEntry) == 56);
static_assert(sizeof(WGPUBindGroupDescriptor) == 48);
static_assert(sizeof(WGPUComputePassDescriptor) == 32);
static_assert(sizeof(WGPUFutureWaitInfo) == 16);

namespace numr::webgpu {

inline constexpr size_t kStrlen = SIZE_MAX;  // WGPU_STRLEN: a NUL-terminated string

// Enum values shared by Dawn and the standard header.
enum : uint32_t {
  kSTypeShaderSourceWGSL = 0x2,
  kBackendNull = 1,
  kBackendVulkan = 6,
  kFeatureLevelCore = 2,
  kCallbackModeWaitAnyOnly = 1,
  kCallbackModeAllowSpontaneous = 3,
  kStatusSuccess = 1,
  kWaitStatusSuccess = 1,
  kWaitStatusTimedOut = 2,
  kErrorFilterValidation = 1,
  kErrorFilterOutOfMemory = 2,
  kErrorTypeNoError = 1,
  kMapAsyncStatusSuccess = 1,
  kQueueWorkDoneStatusSuccess = 1,
  kStdInstanceFeatureTimedWaitAny = 1,
};
inline constexpr WGPUFlags kBufferUsageMapRead = 0x1, kBufferUsageMapWrite = 0x2,
                           kBufferUsageCopySrc = 0x4, kBufferUsageCopyDst = 0x8,
                           kBufferUsageStorage = 0x80, kMapModeRead = 0x1, kMapModeWrite = 0x2;

// The entry points numr calls: name, return type, parameters.
#define NUMR_WGPU_FUNCTIONS(X)                                                                     \
  X(wgpuCreateInstance, WGPUInstance, const void*)                                                 \
  X(wgpuInstanceRequestAdapter, WGPUFuture, WGPUInstance, const WGPURequestAdapterOptions*,        \
    WGPUCallbackInfo)                                                                              \
  X(wgpuInstanceWaitAny, uint32_t, WGPUInstance, size_t, WGPUFutureWaitInfo*, uint64_t)            \
  X(wgpuInstanceProcessEvents, void, WGPUInstance)                                                 \
  X(wgpuInstanceRelease, void, WGPUInstance)                                                       \
  X(wgpuAdapterGetInfo, uint32_t, WGPUAdapter, WGPUAdapterInfo*)                                   \
  X(wgpuAdapterInfoFreeMembers, void, WGPUAdapterInfo)                                             \
  X(wgpuAdapterGetLimits, uint32_t, WGPUAdapter, WGPULimits*)                                      \
  X(wgpuAdapterHasFeature, WGPUBool, WGPUAdapter, uint32_t)                                        \
  X(wgpuAdapterRequestDevice, WGPUFuture, WGPUAdapter, const WGPUDeviceDescriptor*,                \
    WGPUCallbackInfo)                                                                              \
  X(wgpuAdapterRelease, void, WGPUAdapter)                                                         \
  X(wgpuDeviceGetQueue, WGPUQueue, WGPUDevice)                                                     \
  X(wgpuDeviceCreateBuffer, WGPUBuffer, WGPUDevice, const WGPUBufferDescriptor*)                   \
  X(wgpuDeviceCreateShaderModule, WGPUShaderModule, WGPUDevice, const WGPUShaderModuleDescriptor*) \
  X(wgpuDeviceCreateComputePipeline, WGPUComputePipeline, WGPUDevice,                              \
    const WGPUComputePipelineDescriptor*)                                                          \
  X(wgpuComputePipelineGetBindGroupLayout, WGPUBindGroupLayout, WGPUComputePipeline, uint32_t)     \
  X(wgpuDeviceCreateBindGroup, WGPUBindGroup, WGPUDevice, const WGPUBindGroupDescriptor*)          \
  X(wgpuDeviceCreateCommandEncoder, WGPUCommandEncoder, WGPUDevice,                                \
    const WGPUCommandEncoderDescriptor*)                                                           \
  X(wgpuDevicePushErrorScope, void, WGPUDevice, uint32_t)                                          \
  X(wgpuDevicePopErrorScope, WGPUFuture, WGPUDevice, WGPUCallbackInfo)                             \
  X(wgpuDeviceDestroy, void, WGPUDevice)                                                           \
  X(wgpuDeviceRelease, void, WGPUDevice)                                                           \
  X(wgpuCommandEncoderBeginComputePass, WGPUComputePassEncoder, WGPUCommandEncoder,                \
    const WGPUComputePassDescriptor*)                                                              \
  X(wgpuCommandEncoderCopyBufferToBuffer, void, WGPUCommandEncoder, WGPUBuffer, uint64_t,          \
    WGPUBuffer, uint64_t, uint64_t)                                                                \
  X(wgpuCommandEncoderClearBuffer, void, WGPUCommandEncoder, WGPUBuffer, uint64_t, uint64_t)       \
  X(wgpuCommandEncoderFinish, WGPUCommandBuffer, WGPUCommandEncoder,                               \
    const WGPUCommandBufferDescriptor*)                                                            \
  X(wgpuCommandEncoderRelease, void, WGPUCommandEncoder)                                           \
  X(wgpuComputePassEncoderSetPipeline, void, WGPUComputePassEncoder, WGPUComputePipeline)          \
  X(wgpuComputePassEncoderSetBindGroup, void, WGPUComputePassEncoder, uint32_t, WGPUBindGroup,     \
    size_t, const uint32_t*)                                                                       \
  X(wgpuComputePassEncoderDispatchWorkgroups, void, WGPUComputePassEncoder, uint32_t, uint32_t,    \
    uint32_t)                                                                                      \
  X(wgpuComputePassEncoderEnd, void, WGPUComputePassEncoder)                                       \
  X(wgpuComputePassEncoderRelease, void, WGPUComputePassEncoder)                                   \
  X(wgpuCommandBufferRelease, void, WGPUCommandBuffer)                                             \
  X(wgpuQueueSubmit, void, WGPUQueue, size_t, const WGPUCommandBuffer*)                            \
  X(wgpuQueueWriteBuffer, void, WGPUQueue, WGPUBuffer, uint64_t, const void*, size_t)              \
  X(wgpuQueueOnSubmittedWorkDone, WGPUFuture, WGPUQueue, WGPUCallbackInfo)                         \
  X(wgpuQueueRelease, void, WGPUQueue)                                                             \
  X(wgpuBufferMapAsync, WGPUFuture, WGPUBuffer, WGPUFlags, size_t, size_t, WGPUCallbackInfo)       \
  X(wgpuBufferGetConstMappedRange, const void*, WGPUBuffer, size_t, size_t)                        \
  X(wgpuBufferGetMappedRange, void*, WGPUBuffer, size_t, size_t)                                   \
  X(wgpuBufferUnmap, void, WGPUBuffer)                                                             \
  X(wgpuBufferDestroy, void, WGPUBuffer)                                                           \
  X(wgpuBufferRelease, void, WGPUBuffer)                                                           \
  X(wgpuBindGroupRelease, void, WGPUBindGroup)                                                     \
  X(wgpuBindGroupLayoutRelease, void, WGPUBindGroupLayout)                                         \
  X(wgpuComputePipelineRelease, void, WGPUComputePipeline)                                         \
  X(wgpuShaderModuleRelease, void, WGPUShaderModule)

}  // namespace numr::webgpu
