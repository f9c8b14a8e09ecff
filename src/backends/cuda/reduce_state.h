// The running state of one Reduce-family reduction inside a generated kernel: a few
// registers (a sum; a value and its index; count, mean and M2; ...), how one element is
// fed in, how two states merge (across lanes, warps and blocks), how a state moves through
// shared or global memory, and the final value. Every reduction kernel (rows, split rows,
// columns, partials) is written over this one definition, so an op's rules (NaN
// propagation, first-index ties, Welford's update, logsumexp's guards) live here once.
//
// Accumulation types: F64 in f64; F32, F16 and BF16 in f32; integers and Bool in s64,
// wrapping like the CPU backend's int64 arithmetic.
#pragma once

#include <utility>
#include <vector>

#include "codegen/ptx/value.h"
#include "numr/dtype.h"
#include "numr/op_info.h"

namespace numr::cuda {

// The register type a reduction of `in` accumulates in.
ptx::PtxType reduce_acc_type(DType in);
// The type of op's reduction state: var and std of floats keep their moments in f64, as the
// CPU does, so that M2 keeps its digits when the mean dwarfs the spread.
ptx::PtxType reduce_state_type(OpId op, DType in);
// The f32 approximations the kernels of `in` may use: F16 and BF16, whose float results
// are stored as F16/BF16 only (a half ulp of 2.4e-4 or 2e-3), take the fast exp and
// division (value.h: errors below 3e-6); every other dtype none.
ptx::FastMath reduce_fast_math(DType in);

class ReduceState {
 public:
  // A fresh state holding the op's identity (sum 0, max -inf, no index yet, ...), in
  // registers that feed/merge update in place. Needs a FormulaScope on b.
  static ReduceState identity(ptx::KernelBuilder& b, OpId op, ptx::PtxType acc);
  // A state read from memory laid out by store() (shared: u32 address; global: u64).
  static ReduceState load(ptx::KernelBuilder& b, OpId op, ptx::PtxType acc, ptx::Space s,
                          ptx::Reg addr);
  // Bytes one state takes in memory (a multiple of 8).
  static int bytes(OpId op, ptx::PtxType acc);

  // Folds element x (a Value of the accumulation type) whose index in the reduced block is
  // `index` (s64; only argmax/argmin read it). Elements fed to one state must come in
  // increasing index order.
  void feed(const ptx::Value& x, ptx::Reg index);
  // Folds another state into this one (any order: argmax/argmin break ties by index).
  void merge(const ReduceState& other);
  // The state of lane (laneid ^ lane_mask): a fresh copy, for a butterfly reduction.
  ReduceState shfl_bfly(int lane_mask) const;
  // The whole warp's merged state in every lane (all 32 lanes must take part).
  void warp_reduce();
  void store(ptx::Space s, ptx::Reg addr) const;
  // Copies other's registers into this state's (mov): a uniform hand-over.
  void assign(const ReduceState& other);

  // logsumexp states, for softmax: the shift (the max; NaN when a NaN was seen, +inf when
  // a +inf was) and Σexp(x - shift), NaN when the shift is not finite (as the reference's
  // exp(x - shift) sums give).
  // Returns {shift, sum}.
  std::pair<ptx::Value, ptx::Value> softmax_terms() const;

  // The reduction's result for `count` elements (u64 register), as a Value ready for
  // store_element: the accumulation type, s64 for argmax/argmin, s32 for any/all.
  ptx::Value result(ptx::Reg count, ptx::Reg correction) const;

  OpId op() const { return op_; }
  ptx::PtxType acc() const { return acc_; }

 private:
  ReduceState(ptx::KernelBuilder& b, OpId op, ptx::PtxType acc) : b_(&b), op_(op), acc_(acc) {}
  // Field types in memory order.
  static std::vector<ptx::PtxType> fields(OpId op, ptx::PtxType acc);
  static std::vector<int> offsets(OpId op, ptx::PtxType acc);
  // Writes the new field values into this state's registers.
  void set(const std::vector<ptx::Reg>& next);

  ptx::KernelBuilder* b_;
  OpId op_;
  ptx::PtxType acc_;
  std::vector<ptx::Reg> r_;  // one register per field
};

// Merges the states of a block of `warps` warps: afterwards every lane of warp 0 holds the
// block's state. Every thread must call it (it has a barrier); smem (u32 shared address)
// holds `warps` states; the caller adds a barrier before smem is written again.
void block_reduce(ptx::KernelBuilder& b, ReduceState& st, ptx::Reg smem, ptx::Reg warp,
                  ptx::Reg lane, int warps);

}  // namespace numr::cuda
