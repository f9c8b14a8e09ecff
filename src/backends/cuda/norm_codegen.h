// Code-generation pieces shared by the Norm kernels (norm_forward.cpp, norm_backward.cpp):
// the threads of one row, the row loop, walking a row in units, the group sums.
#pragma once

#include <functional>
#include <vector>

#include "backends/cuda/norm_kernels.h"
#include "codegen/ptx/builder.h"
#include "codegen/ptx/value.h"

namespace numr::cuda::norm_gen {

inline constexpr int kWarps = kNormBlock / 32;

// The threads of one row: a warp or the whole block.
struct RowGroup {
  ptx::Reg tid, size;   // u64: the thread's index in the group, the group's threads
  ptx::Reg lane, warp;  // u32
  bool block = false;
};

// Calls body(g, row) for each row this group handles (grid-stride). For blocks the loop is
// uniform, so body may hold barriers.
void for_each_row(ptx::KernelBuilder& b, bool block, ptx::Reg rows,
                  const std::function<void(const RowGroup&, ptx::Reg)>& body);

using Raws = std::vector<std::vector<ptx::Reg>>;  // per tensor, the raw elements of one unit

// Calls visit(first, raws) for the elements [0, len) of a row, shared among the group's
// threads in units of vec elements (vec > 1: 16-byte vectors, so every base is 16-byte
// aligned and len a multiple of vec). raws[t] holds the unit's elements of the row that
// starts at bases[t] (u64 addresses); first (u64) is the unit's first element index. Unit u
// is always thread u mod the group's size.
void walk_row(ptx::KernelBuilder& b, DType d, int vec, const std::vector<ptx::Reg>& bases,
              ptx::Reg len, const RowGroup& g,
              const std::function<void(ptx::Reg, const Raws&)>& visit);

// The sums of v over the group, the same in every thread (a butterfly gives each lane the
// same sums, since a + b == b + a; the warps' sums are then added in warp order). Block:
// through buf (kWarps * v.size() values) behind one barrier; buf may be written again only
// after a later barrier that every thread passes once it has read.
std::vector<ptx::Value> group_sum(ptx::KernelBuilder& b, const RowGroup& g,
                                  std::vector<ptx::Value> v, ptx::Reg buf);

// A register of type t holding 0, updated in place by the walks.
ptx::Reg zero(ptx::KernelBuilder& b, ptx::PtxType t);
// acc += v, in place.
void add_to(ptx::KernelBuilder& b, ptx::Reg acc, const ptx::Value& v);
// Stores the unit's raw outputs at row + first elements.
void store_unit(ptx::KernelBuilder& b, DType d, int vec, ptx::Reg row, ptx::Reg first,
                const std::vector<ptx::Reg>& raw);

void gen_forward(ptx::KernelBuilder& b, const NormKernelConfig& cfg, ptx::PtxType acc);
void gen_forward_regs(ptx::KernelBuilder& b, const NormKernelConfig& cfg, ptx::PtxType acc);
void gen_backward_rows(ptx::KernelBuilder& b, const NormKernelConfig& cfg, ptx::PtxType acc);
void gen_backward_columns(ptx::KernelBuilder& b, const NormKernelConfig& cfg, ptx::PtxType acc);

}  // namespace numr::cuda::norm_gen
