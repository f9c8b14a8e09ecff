// elementwise_kernels(): the PTX of the configurations the elementwise, copy, fill,
// sequence and random generators produce, for ptxas in the tests. Every op x dtype the op
// table allows, in the contiguous vector layout and the strided layout at rank 3; every
// rank (32- and 64-bit indexing) and the scalar and uniform-input variants for one op;
// Complex64 mul, div and abs; every dtype pair of copies; every factory kind x dtype.
#include <vector>

#include "backends/cuda/copy_kernels.h"
#include "backends/cuda/elementwise_kernels.h"
#include "backends/cuda/factory_kernels.h"
#include "backends/cuda/kernel_catalog.h"

namespace numr::cuda {
namespace {

// The dtypes of an op's outputs and inputs when its values have dtype d, as the front end
// makes them.
bool signature(OpId op, DType d, std::vector<DType>& outs, std::vector<DType>& ins) {
  switch (op_info(op).family) {
    case OpFamily::Unary:
    case OpFamily::Activation:
    case OpFamily::Scalar:
    case OpFamily::Clamp: outs = {d}, ins = {d}; return true;
    case OpFamily::UnaryPred: outs = {DType::Bool}, ins = {d}; return true;
    case OpFamily::Binary:
    case OpFamily::ActMul:
    case OpFamily::ActBwd: outs = {d}, ins = {d, d}; return true;
    case OpFamily::Compare:
    case OpFamily::Logical: outs = {DType::Bool}, ins = {d, d}; return true;
    case OpFamily::Ternary: outs = {d}, ins = {d, d, d}; return true;
    case OpFamily::Select: outs = {d}, ins = {DType::Bool, d, d}; return true;
    case OpFamily::ActMulBwd: outs = {d, d}, ins = {d, d, d}; return true;
    default: return false;
  }
}

MapShape vector_shape(const std::vector<DType>& outs, const std::vector<DType>& ins) {
  std::vector<int> sizes;
  for (DType d : outs) sizes.push_back(int(dtype_size(d)));
  for (DType d : ins) sizes.push_back(int(dtype_size(d)));
  MapShape s;
  s.vec = map_vector_width(sizes);
  return s;
}

MapShape strided_shape(int rank, bool wide = false) {
  MapShape s;
  s.layout = MapLayout::Strided;
  s.rank = rank;
  s.wide = wide;
  return s;
}

}  // namespace

std::vector<GeneratedKernel> elementwise_kernels(const ptx::Target& target) {
  std::vector<GeneratedKernel> out;
  for (const OpInfo& info : all_ops()) {
    for (DType d : kAllDTypes) {
      ElementwiseConfig c;
      c.op = info.id;
      if (!op_accepts(info.id, d) || !signature(info.id, d, c.outs, c.ins)) continue;
      c.shape = elementwise_one_per_step(info.id) ? MapShape{} : vector_shape(c.outs, c.ins);
      out.push_back(generate_elementwise(c, target));
      c.shape = strided_shape(3);
      out.push_back(generate_elementwise(c, target));
    }
  }
  // Complex64 mul, div and abs (complex operands reach no other elementwise kernel).
  for (OpId op : {OpId::mul, OpId::div, OpId::abs}) {
    ElementwiseConfig c;
    c.op = op;
    c.outs = {op == OpId::abs ? DType::F32 : DType::Complex64};
    c.ins = std::vector<DType>(op == OpId::abs ? 1 : 2, DType::Complex64);
    c.shape = vector_shape(c.outs, c.ins);
    out.push_back(generate_elementwise(c, target));
    c.shape = strided_shape(3);
    out.push_back(generate_elementwise(c, target));
  }
  // The layout variants, on one op.
  ElementwiseConfig add{OpId::add, {DType::F32}, {DType::F32, DType::F32}, {}};
  for (int rank = 1; rank <= kMapMaxRank; ++rank)
    for (bool wide : {false, true}) {
      if (rank == 3 && !wide) continue;  // in the list above
      add.shape = strided_shape(rank, wide);
      out.push_back(generate_elementwise(add, target));
    }
  for (uint32_t uniform : {0u, 1u, 2u}) {
    for (int vec : {1, 4}) {
      add.shape = MapShape{};
      add.shape.vec = vec;
      add.shape.uniform = uniform;
      if (uniform != 0 || vec != 4) out.push_back(generate_elementwise(add, target));
    }
  }
  ElementwiseConfig clamp{OpId::clamp, {DType::I32}, {DType::I32}, {}};
  clamp.shape.vec = 4;
  for (bool lo : {false, true})
    for (bool hi : {false, true}) {
      clamp.has_lo = lo;
      clamp.has_hi = hi;
      if (!(lo && hi)) out.push_back(generate_elementwise(clamp, target));
    }

  for (DType src : kAllDTypes)
    for (DType dst : kAllDTypes) {
      CopyConfig c{src, dst, vector_shape({dst}, {src})};
      out.push_back(generate_copy(c, target));
      c.shape = strided_shape(2);
      out.push_back(generate_copy(c, target));
    }
  // Copies: one kernel per element size; casts: one per pair of dtypes.
  for (DType d : {DType::U8, DType::BF16, DType::F32, DType::F64})
    out.push_back(generate_transpose_copy({d, d}, target));
  out.push_back(generate_transpose_copy({DType::BF16, DType::BF16, true}, target));
  for (DType s : kAllDTypes)
    for (DType d : kAllDTypes)
      if (s != d) {
        out.push_back(generate_transpose_copy({s, d}, target));
        if (transpose_copy_pairs_possible(s, d))
          out.push_back(generate_transpose_copy({s, d, true}, target));
      }
  for (DType d : kAllDTypes) {
    FillConfig f{d, vector_shape({d}, {})};
    out.push_back(generate_fill(f, target));
    f.shape = strided_shape(2);
    out.push_back(generate_fill(f, target));
  }
  for (DType d : kAllDTypes) {
    if (d == DType::Bool) continue;
    for (bool sym : {false, true}) {
      SequenceConfig s{d, sym, vector_shape({d}, {})};
      out.push_back(generate_sequence(s, target));
    }
    for (RandomKind k : {RandomKind::Uniform, RandomKind::Normal, RandomKind::Integer}) {
      if (k != RandomKind::Integer && !is_floating(d)) continue;
      RandomConfig r{d, k, vector_shape({d}, {})};
      out.push_back(generate_random(r, target));
    }
  }
  SequenceConfig scalar_seq{DType::F32, true, MapShape{}};
  out.push_back(generate_sequence(scalar_seq, target));
  RandomConfig strided_rand{DType::F32, RandomKind::Normal, strided_shape(2)};
  out.push_back(generate_random(strided_rand, target));
  return out;
}

}  // namespace numr::cuda
