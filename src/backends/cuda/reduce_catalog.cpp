// reduce_kernels(): every kernel configuration of the Reduce, Scan/Softmax (along_axis)
// and bias-gradient families, for assembling with ptxas in tests.
#include <initializer_list>

#include "backends/cuda/axis_kernels.h"
#include "backends/cuda/bias_act_bwd_kernels.h"
#include "backends/cuda/kernel_catalog.h"
#include "backends/cuda/reduce_codegen.h"
#include "backends/cuda/reduce_kernels.h"

namespace numr::cuda {
namespace {

constexpr OpId kReduceOps[] = {OpId::sum,    OpId::mean, OpId::max, OpId::min,
                               OpId::prod,   OpId::any,  OpId::all, OpId::argmax,
                               OpId::argmin, OpId::var,  OpId::std, OpId::logsumexp};

bool accepts(OpId op, DType t) {
  switch (op) {
    case OpId::any:
    case OpId::all: return true;
    case OpId::mean:
    case OpId::var:
    case OpId::std:
    case OpId::logsumexp:
    case OpId::softmax:
    case OpId::log_softmax: return is_floating(t);
    default: return t != DType::Bool;
  }
}

void add_reduce(std::vector<GeneratedKernel>& out, const ptx::Target& target) {
  for (OpId op : kReduceOps)
    for (DType t : kAllDTypes) {
      if (!accepts(op, t)) continue;
      ReduceKernelConfig cfg;
      cfg.op = op;
      cfg.in = t;
      for (ReduceVariant v :
           {ReduceVariant::warp_rows, ReduceVariant::block_rows, ReduceVariant::split_rows}) {
        cfg.variant = v;
        cfg.contiguous = true;
        cfg.red_dims = 1;
        out.push_back(generate_reduce_kernel(cfg, target));
        cfg.contiguous = false;
        out.push_back(generate_reduce_kernel(cfg, target));
      }
      cfg.contiguous = false;
      cfg.variant = ReduceVariant::columns;
      out.push_back(generate_reduce_kernel(cfg, target));
      if (vector_width(t) <= kMaxColumnVector) {
        cfg.variant = ReduceVariant::vec_columns;
        out.push_back(generate_reduce_kernel(cfg, target));
      }
      cfg.variant = ReduceVariant::partials;
      out.push_back(generate_reduce_kernel(cfg, target));
      // Multi-dim index arithmetic, once per dtype family is enough to cover the code.
      if (op == OpId::sum) {
        cfg.variant = ReduceVariant::block_rows;
        cfg.keep_dims = 3;
        cfg.red_dims = 2;
        out.push_back(generate_reduce_kernel(cfg, target));
        cfg.keep_dims = 1;
        cfg.red_dims = 1;
      }
    }
}

void add_axis(std::vector<GeneratedKernel>& out, const ptx::Target& target) {
  for (OpId op : {OpId::cumsum, OpId::cumprod, OpId::softmax, OpId::log_softmax})
    for (DType t : kAllDTypes) {
      if (!accepts(op, t)) continue;
      for (AxisVariant v : {AxisVariant::warp_rows, AxisVariant::block_rows, AxisVariant::columns,
                            AxisVariant::warp_regs, AxisVariant::block_regs}) {
        const bool regs = v == AxisVariant::warp_regs || v == AxisVariant::block_regs;
        if (regs && op != OpId::softmax && op != OpId::log_softmax) continue;
        for (bool vec_store : {false, true})
          for (bool aligned : {false, true}) {
            const AxisKernelConfig cfg{op, t, v, vec_store, aligned};
            if ((vec_store && !cfg.uses_vector_store()) || (aligned && !cfg.uses_aligned()))
              continue;
            out.push_back(generate_axis_kernel(cfg, target));
          }
      }
    }
}

void add_bias_act_bwd(std::vector<GeneratedKernel>& out, const ptx::Target& target) {
  for (DType t : {DType::F64, DType::F32, DType::F16, DType::BF16})
    for (Activation act : {Activation::None, Activation::Relu, Activation::Gelu, Activation::Silu,
                           Activation::Sigmoid, Activation::Tanh})
      for (bool from_pre : {true, false})
        for (int vec : {1, vector_width(t)}) {
          const BiasActBwdKernelConfig cfg{t, act, from_pre, vec};
          if (!from_pre && !cfg.output_determines_derivative()) continue;
          out.push_back(generate_bias_act_bwd_kernel(cfg, target));
        }
  for (DType t : {DType::F64, DType::F32, DType::F16, DType::BF16})
    out.push_back(generate_bias_sum_kernel(t, target));
}

}  // namespace

std::vector<GeneratedKernel> reduce_kernels(const ptx::Target& target) {
  std::vector<GeneratedKernel> out;
  add_reduce(out, target);
  add_axis(out, target);
  add_bias_act_bwd(out, target);
  return out;
}

}  // namespace numr::cuda
