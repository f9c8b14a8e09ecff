#include "backends/cuda/launch.h"

#include <algorithm>
#include <sstream>

#include "backends/cuda/context.h"
#include "backends/cuda/driver.h"
#include "numr/error.h"

namespace numr::cuda {
namespace {

constexpr unsigned kDefaultSharedLimit = 48 * 1024;

std::string describe(std::string_view kernel_name, const LaunchConfig& cfg) {
  std::ostringstream os;
  os << "kernel '" << kernel_name << "', grid [" << cfg.grid.x << ", " << cfg.grid.y << ", "
     << cfg.grid.z << "], block [" << cfg.block.x << ", " << cfg.block.y << ", " << cfg.block.z
     << "], " << cfg.shared_bytes << " B dynamic shared";
  return os.str();
}

}  // namespace

unsigned one_pass_blocks(int64_t work, unsigned threads) {
  constexpr int64_t kMaxGrid = 0x7fffffff;
  return unsigned(std::clamp<int64_t>((work + threads - 1) / threads, 1, kMaxGrid));
}

void launch(CudaDevice& dev, CUfunction f, const LaunchConfig& cfg, void** params,
            std::string_view kernel_name) {
  const Driver& d = driver();
  dev.make_current();
  if (cfg.shared_bytes > kDefaultSharedLimit) {
    if (cfg.shared_bytes > unsigned(dev.props().max_shared_per_block_optin))
      fail<BackendLimitation>("cuda", describe(kernel_name, cfg), ": ", dev.device().str(),
                              " allows at most ", dev.props().max_shared_per_block_optin,
                              " B of shared memory per block");
    check(d.func_set_attribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                               int(cfg.shared_bytes)),
          "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES) (" + describe(kernel_name, cfg) + ")");
  }
  const CUresult r =
      d.launch_kernel(f, cfg.grid.x, cfg.grid.y, cfg.grid.z, cfg.block.x, cfg.block.y, cfg.block.z,
                      cfg.shared_bytes, dev.stream(), params, nullptr);
  if (r != CUDA_SUCCESS) throw_error(r, "cuLaunchKernel (" + describe(kernel_name, cfg) + ")");
}

}  // namespace numr::cuda
