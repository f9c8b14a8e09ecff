#include "backends/cuda/elementwise_launch.h"

#include <algorithm>

#include "backends/cuda/context.h"
#include "backends/cuda/launch.h"
#include "core/dim_merge.h"
#include "numr/error.h"

namespace numr::cuda {

std::vector<void*> KernelArgs::pointers() const {
  std::vector<void*> p;
  for (const std::vector<uint64_t>& b : blocks_) p.push_back(const_cast<uint64_t*>(b.data()));
  return p;
}

MapPlan plan_map(const char* op, const Shape& shape, std::span<const TensorRef* const> outs,
                 std::span<const TensorRef* const> ins, bool vector_ok) {
  std::vector<const TensorRef*> ops(outs.begin(), outs.end());
  ops.insert(ops.end(), ins.begin(), ins.end());
  const size_t n_ops = ops.size();

  MapPlan plan;
  plan.n = shape_numel(shape);
  for (const TensorRef* t : ops)
    plan.addresses.push_back(reinterpret_cast<uintptr_t>(t->base) +
                             uint64_t(t->offset) * dtype_size(t->dtype));
  if (plan.n == 0) return plan;

  std::vector<const Strides*> op_strides;
  for (const TensorRef* t : ops) op_strides.push_back(&t->strides);
  MergedDims merged = merge_dims(shape, op_strides);
  std::vector<int64_t> ext = std::move(merged.extents);
  std::vector<std::vector<int64_t>> st = std::move(merged.strides);
  if (ext.empty()) {  // a single element
    ext.push_back(1);
    for (size_t k = 0; k < n_ops; ++k) st[k].push_back(1);
  }

  bool contiguous = ext.size() == 1;
  for (size_t k = 0; k < n_ops && contiguous; ++k)
    contiguous = st[k][0] == 1 || (k >= outs.size() && st[k][0] == 0);
  if (contiguous) {
    plan.shape.layout = MapLayout::Contiguous;
    std::vector<int> sizes;
    for (size_t k = 0; k < n_ops; ++k) {
      if (st[k][0] == 0 && plan.n > 1) {
        plan.shape.uniform |= 1u << (k - outs.size());
        continue;
      }
      sizes.push_back(int(dtype_size(ops[k]->dtype)));
    }
    int vec = vector_ok ? map_vector_width(sizes) : 1;
    for (size_t k = 0; k < n_ops && vec > 1; ++k) {
      if (k >= outs.size() && ((plan.shape.uniform >> (k - outs.size())) & 1u)) continue;
      if (plan.addresses[k] % (uint64_t(vec) * dtype_size(ops[k]->dtype)) != 0) vec = 1;
    }
    plan.shape.vec = vec;
    return plan;
  }

  if (ext.size() > size_t(kMapMaxRank))
    fail<BackendLimitation>(op, "the CUDA kernels iterate at most ", kMapMaxRank,
                            " dims after merging; this operation needs ", ext.size());
  plan.shape.layout = MapLayout::Strided;
  plan.shape.rank = int(ext.size());
  plan.shape.wide = plan.n >= (int64_t(1) << 31);
  plan.extents = std::move(ext);
  plan.strides = std::move(st);
  return plan;
}

ptx::Target map_kernel_target(const CudaDevice& dev) {
  const DeviceProperties& p = dev.props();
  return ptx::Target{.sm = p.cc_major * 10 + p.cc_minor,
                     .ptx_major = p.ptx_isa_major,
                     .ptx_minor = p.ptx_isa_minor};
}

void launch_map(CudaDevice& dev, CUfunction f, const std::string& name, const MapPlan& plan,
                const KernelArgs& extra) {
  KernelArgs common;
  for (uint64_t a : plan.addresses) common.add(a);
  common.add(uint64_t(plan.n));
  const MapShape& sh = plan.shape;
  if (sh.layout == MapLayout::Strided) {
    if (sh.wide) {
      std::vector<uint64_t> e(plan.extents.begin(), plan.extents.end());
      common.add_array<uint64_t>(e);
    } else {
      std::vector<uint32_t> e(plan.extents.begin(), plan.extents.end());
      common.add_array<uint32_t>(e);
    }
    for (const std::vector<int64_t>& s : plan.strides) common.add_array<int64_t>(s);
  }
  std::vector<void*> params = common.pointers();
  for (void* p : extra.pointers()) params.push_back(p);
  params.push_back(nullptr);

  // Work items: vector steps (and at most vec - 1 tail elements), or elements.
  int64_t work = plan.n;
  if (sh.layout == MapLayout::Contiguous && sh.vec > 1)
    work = std::max(plan.n / sh.vec, plan.n % sh.vec);
  constexpr unsigned kThreads = 256;
  LaunchConfig cfg;
  cfg.grid.x = one_pass_blocks(work, kThreads);
  cfg.block.x = kThreads;
  launch(dev, f, cfg, params.data(), name);
}

}  // namespace numr::cuda
