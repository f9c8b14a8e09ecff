// The Norm kernel configurations: names, register capacity, and the generator entry.
#include "backends/cuda/norm_kernels.h"

#include "backends/cuda/norm_codegen.h"
#include "backends/cuda/reduce_codegen.h"
#include "backends/cuda/reduce_state.h"
#include "codegen/ptx/value.h"
#include "numr/error.h"

namespace numr::cuda {
namespace {

const char* kind_name(NormKernel k) {
  switch (k) {
    case NormKernel::forward: return "fwd";
    case NormKernel::backward_rows: return "bwd";
    case NormKernel::backward_columns: return "bwdcols";
  }
  return "?";
}

}  // namespace

int norm_reg_slots(DType d) { return (dtype_size(d) == 8 ? 16 : 32) / vector_width(d); }

int64_t norm_regs_capacity(DType d, bool block) {
  return int64_t(block ? kNormBlock : 32) * norm_reg_slots(d) * vector_width(d);
}

std::string NormKernelConfig::name() const {
  const bool rows = kind != NormKernel::backward_columns;
  return "norm_" + std::string(kind_name(kind)) + "_" + std::string(op_name(op)) + "_" +
         std::string(dtype_name(dtype)) + (rows ? (block ? "_block" : "_warp") : "") +
         (vec > 1 ? "_v" : "") + (stats ? "_stats" : "") + (fused ? "_fused" : "") +
         (regs ? "_regs" : "") + (residual ? "_res" : "");
}

GeneratedKernel generate_norm_kernel(const NormKernelConfig& cfg, const ptx::Target& target) {
  const bool norm_op = cfg.op == OpId::rms_norm || cfg.op == OpId::layer_norm;
  if (!norm_op || !is_floating(cfg.dtype) || (cfg.vec != 1 && cfg.vec != vector_width(cfg.dtype)) ||
      (cfg.stats && cfg.kind != NormKernel::forward) ||
      (cfg.fused && cfg.kind != NormKernel::backward_rows) ||
      (cfg.regs && (cfg.kind != NormKernel::forward || cfg.vec == 1)) ||
      (cfg.residual && cfg.kind != NormKernel::forward) ||
      (cfg.block && cfg.kind == NormKernel::backward_columns))
    fail<BackendError>("cuda", "row_norm: invalid kernel configuration ", cfg.name());
  const ptx::PtxType acc = reduce_acc_type(cfg.dtype);
  ptx::KernelBuilder b(cfg.name(), target);
  // IEEE division and square root, as the CPU kernels compute the statistics.
  ptx::FormulaScope scope(b, acc);
  using namespace norm_gen;
  switch (cfg.kind) {
    case NormKernel::forward:
      if (cfg.regs)
        gen_forward_regs(b, cfg, acc);
      else
        gen_forward(b, cfg, acc);
      break;
    case NormKernel::backward_rows: gen_backward_rows(b, cfg, acc); break;
    case NormKernel::backward_columns: gen_backward_columns(b, cfg, acc); break;
  }
  return {cfg.name(), b.finish()};
}

}  // namespace numr::cuda
