// Pipelines cached per kernel configuration: the key is the configuration struct itself
// (ordered by its defaulted <=>), never a string assembled beside it.
#pragma once

#include <map>
#include <mutex>
#include <string>

#include "backends/webgpu/context.h"

namespace numr::webgpu {

// The pipeline of config c on ctx, made with make_wgsl(c) the first time.
template <class Config, class MakeWgsl>
WGPUComputePipeline cached_pipeline(Context& ctx, const Config& c, MakeWgsl make_wgsl,
                                    const std::string& label) {
  static std::mutex mu;
  static std::map<Config, WGPUComputePipeline> cache;
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(c);
  if (it != cache.end()) return it->second;
  WGPUComputePipeline p = ctx.make_pipeline(make_wgsl(c), label);
  cache.emplace(c, p);
  return p;
}

// Workgroups needed for n invocations.
inline uint64_t groups_for(uint64_t n, uint64_t per_group) {
  return (n + per_group - 1) / per_group;
}

}  // namespace numr::webgpu
