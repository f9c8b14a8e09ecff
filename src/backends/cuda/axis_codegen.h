// Pieces shared by the along-axis kernel generators (axis_kernels.cpp, axis_softmax.cpp,
// axis_scan.cpp): the parameters, the threads of one row, and the row loop.
#pragma once

#include <functional>

#include "backends/cuda/axis_kernels.h"
#include "codegen/ptx/builder.h"

namespace numr::cuda {

inline constexpr int kAxisWarps = kAxisBlock / 32;

inline bool is_softmax(OpId op) { return op == OpId::softmax || op == OpId::log_softmax; }

struct AxisParams {
  ptx::Reg in, out, outer, n, inner;
};
AxisParams axis_params(ptx::KernelBuilder& b);

// The threads of one row: a warp (lanes) or the whole block.
struct Group {
  ptx::Reg g_tid, g_size;  // u64
  ptx::Reg lane, warp;     // u32
  int size = 0;            // threads
  bool block = false;
};

// Whether cfg's rows are handled by a whole block (else by a warp).
bool block_variant(const AxisKernelConfig& cfg);

// Calls body(g, k) for each row k this group handles (grid-stride). For blocks the loop is
// uniform, so body may hold barriers.
void for_each_row(ptx::KernelBuilder& b, const AxisKernelConfig& cfg, const AxisParams& p,
                  const std::function<void(const Group&, ptx::Reg)>& body);

void gen_softmax_rows(ptx::KernelBuilder& b, const AxisKernelConfig& cfg, ptx::PtxType acc);
void gen_softmax_regs(ptx::KernelBuilder& b, const AxisKernelConfig& cfg, ptx::PtxType acc);
void gen_scan_rows(ptx::KernelBuilder& b, const AxisKernelConfig& cfg, ptx::PtxType acc);

}  // namespace numr::cuda
