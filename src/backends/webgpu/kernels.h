// The op families of the WebGPU backend, one file each; each generates its WGSL from a
// configuration struct through the shared formulas and records a dispatch on ctx.
#pragma once

#include "backends/webgpu/context.h"
#include "core/backend.h"

namespace numr::webgpu {

void run_elementwise(Context& ctx, const ElementwiseCall& call);  // elementwise.cpp
void run_reduce(Context& ctx, const ReduceCall& call);            // reduce.cpp
void run_copy(Context& ctx, const CopyCall& call);                // copy.cpp
void run_fill(Context& ctx, const FillCall& call);                // copy.cpp
void run_sequence(Context& ctx, const SequenceCall& call);        // factory.cpp
void run_random(Context& ctx, const RandomCall& call);            // factory.cpp
// The optional families with kernels (WebGpuBackend::supports lists their ops).
void run_matmul(Context& ctx, const MatmulCall& call);                   // matmul.cpp
void run_matmul_epilogue(Context& ctx, const GemmEpilogueCall& call);    // matmul.cpp
void run_bias_activation_bwd(Context& ctx, const BiasActBwdCall& call);  // bias_act_bwd.cpp
void run_sort_rows(Context& ctx, const SortCall& call);                  // sort.cpp
void run_search_sorted(Context& ctx, const SearchSortedCall& call);      // sort.cpp
void run_index_gather(Context& ctx, const GatherCall& call);             // indexing.cpp
void run_index_scatter(Context& ctx, const ScatterCall& call);           // indexing.cpp
void run_along_axis(Context& ctx, const AxisCall& call);                 // axis.cpp

// Dispatches of the GEMM's subgroup kernel so far (the tests' witness of which kernel ran).
uint64_t matmul_subgroup_dispatches();  // matmul.cpp
// Dispatches of the GEMM's wide (128x128-tile) kernel so far.
uint64_t matmul_wide_dispatches();  // matmul.cpp
// What one workgroup of the GEMM's subgroup kernel finds: whether its subgroups are laid out
// as the shuffled loop needs (else it takes the staged loop), and the subgroup size of its
// first invocation. Both false / 0 without subgroups.
struct SubgroupLayout {
  bool linear = false;
  uint32_t size = 0;
};
SubgroupLayout probe_subgroup_layout(Context& ctx);  // matmul.cpp

inline Buffer* buffer_of(const TensorRef& r) { return static_cast<Buffer*>(r.base); }

}  // namespace numr::webgpu
