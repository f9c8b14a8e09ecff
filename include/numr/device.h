// Devices and the backend registry.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace numr {

enum class DeviceType : uint8_t { Cpu, Cuda, WebGpu };

struct Device {
  DeviceType type = DeviceType::Cpu;
  int index = 0;

  static Device cpu() { return {DeviceType::Cpu, 0}; }
  static Device cuda(int i = 0) { return {DeviceType::Cuda, i}; }
  static Device webgpu(int i = 0) { return {DeviceType::WebGpu, i}; }

  bool is_cpu() const { return type == DeviceType::Cpu; }
  std::string str() const;  // "cpu", "cuda:0", "webgpu:0"
  friend bool operator==(const Device&, const Device&) = default;
};

inline std::ostream& operator<<(std::ostream& os, const Device& d) { return os << d.str(); }

// Parses "cpu", "cuda", "cuda:1", "webgpu:0"; throws InvalidArgument otherwise.
Device parse_device(const std::string& text);

// The devices this machine can run on now (the CPU always; GPUs whose driver loads).
std::vector<Device> available_devices();

// Waits until every operation queued on `device` has finished (a no-op on the CPU, whose
// operations finish before they return). Device faults surface here as BackendError.
void synchronize(Device device);

// Whether F32 matmuls on CUDA may use TF32 tensor cores (inputs rounded to a 10-bit
// mantissa, about 3e-4 relative error; several times faster). Off by default, as
// PyTorch's matmuls are; applies to the matmuls and GEMM epilogues queued after the call.
void set_allow_tf32(bool allow);
bool allow_tf32();

// CPU threads used by numr's kernels and its BLAS. Defaults to the hardware's core count
// (or NUMR_NUM_THREADS from the environment).
void set_num_threads(int n);
int num_threads();

}  // namespace numr
