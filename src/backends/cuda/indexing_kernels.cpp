#include "backends/cuda/indexing_kernels.h"

#include <array>

#include "backends/cuda/reduce_codegen.h"
#include "backends/cuda/reduce_state.h"
#include "codegen/ptx/element_io.h"
#include "codegen/ptx/value.h"
#include "math/reduce_rules.h"
#include "numr/error.h"

namespace numr::cuda {

using ptx::KernelBuilder;
using ptx::PtxType;
using ptx::Reg;
using ptx::Value;

namespace {

const char* op_label(ScatterOp op) {
  switch (op) {
    case ScatterOp::Assign: return "assign";
    case ScatterOp::Sum: return "sum";
    case ScatterOp::Prod: return "prod";
    case ScatterOp::Amax: return "amax";
    case ScatterOp::Amin: return "amin";
  }
  return "?";
}

using Strides3 = std::array<Reg, 3>;

Strides3 stride_params(KernelBuilder& b, const char* name) {
  const std::string n(name);
  return {b.param(PtxType::s64, n + "_s0"), b.param(PtxType::s64, n + "_s1"),
          b.param(PtxType::s64, n + "_s2")};
}

// o * s0 + j * s1 + i * s2 (s64; o, j, i as s64).
Reg offset3(KernelBuilder& b, const Strides3& s, Reg o, Reg j, Reg i) {
  return b.mad(i, s[2], b.mad(j, s[1], b.mul(o, s[0])));
}

Reg as_s64(KernelBuilder& b, Reg u) { return b.bitcast(u, PtxType::s64); }

void gen_gather(KernelBuilder& b, const IndexKernelConfig& cfg) {
  const DType d = cfg.dtype;
  const Reg x = b.param_ptr("x"), index = b.param_ptr("index"), out = b.param_ptr("out");
  const Reg m = b.param(PtxType::u64, "m"), inner = b.param(PtxType::u64, "inner");
  const Reg total = b.param(PtxType::u64, "total");
  const Strides3 xs = stride_params(b, "x"), is = stride_params(b, "index");
  const Reg first = wide(b, b.global_index_x());
  const Reg step = b.mul(wide(b, b.nctaid_x()), kIndexBlock);
  b.for_range(first, total, step, PtxType::u64, [&](Reg e) {
    const Reg row = b.div(e, inner);
    const Reg i = as_s64(b, b.sub(e, b.mul(row, inner)));
    const Reg o_u = b.div(row, m);
    const Reg j = as_s64(b, b.sub(row, b.mul(o_u, m)));
    const Reg o = as_s64(b, o_u);
    const Reg k = b.ld_global_nc(
        PtxType::s64, ptx::element_address(b, index, offset3(b, is, o, j, i), DType::I64));
    const Reg v = b.ld_global_nc(ptx::storage_mem_type(d),
                                 ptx::element_address(b, x, offset3(b, xs, o, k, i), d));
    b.st(ptx::Space::global, ptx::storage_mem_type(d), ptx::element_address(b, out, e, d), v);
  });
}

Value combine(ScatterOp op, const Value& acc, const Value& v) {
  switch (op) {
    case ScatterOp::Sum: return acc + v;
    case ScatterOp::Prod: return acc * v;
    case ScatterOp::Amax: return math::extreme_merge<true>(acc, v);
    case ScatterOp::Amin: return math::extreme_merge<false>(acc, v);
    default: return v;
  }
}

void gen_scatter(KernelBuilder& b, const IndexKernelConfig& cfg) {
  const DType d = cfg.dtype;
  const Reg out = b.param_ptr("out"), index = b.param_ptr("index"), src = b.param_ptr("src");
  const Reg outer = b.param(PtxType::u64, "outer"), m = b.param(PtxType::u64, "m");
  const Reg inner = b.param(PtxType::u64, "inner");
  const Strides3 os = stride_params(b, "out"), is = stride_params(b, "index"),
                 ss = stride_params(b, "src");
  const PtxType acc = reduce_acc_type(d);
  const PtxType mem = ptx::storage_mem_type(d);
  const Reg columns = b.mul(outer, inner);
  const Reg first = wide(b, b.global_index_x());
  const Reg step = b.mul(wide(b, b.nctaid_x()), kIndexBlock);
  b.for_range(first, columns, step, PtxType::u64, [&](Reg col) {
    const Reg o_u = b.div(col, inner);
    const Reg i = as_s64(b, b.sub(col, b.mul(o_u, inner)));
    const Reg o = as_s64(b, o_u);
    b.for_range(b.mov(PtxType::s64, 0), as_s64(b, m), 1, PtxType::s64, [&](Reg j) {
      const Reg k = b.ld_global_nc(
          PtxType::s64, ptx::element_address(b, index, offset3(b, is, o, j, i), DType::I64));
      const Reg from = ptx::element_address(b, src, offset3(b, ss, o, j, i), cfg.src);
      const Reg to = ptx::element_address(b, out, offset3(b, os, o, k, i), d);
      if (cfg.op == ScatterOp::Assign) {
        b.st(ptx::Space::global, mem, to, b.ld_global_nc(mem, from));
        return;
      }
      // out is read and written by this thread: a coherent load.
      const Value cur = ptx::from_storage(b, b.ld_global(mem, to), d, acc);
      const Value v =
          ptx::from_storage(b, b.ld_global_nc(ptx::storage_mem_type(cfg.src), from), cfg.src, acc);
      ptx::store_element(b, d, to, combine(cfg.op, cur, v));
    });
  });
}

}  // namespace

std::string IndexKernelConfig::name() const {
  return std::string(scatter ? "index_scatter_" : "index_gather_") +
         (scatter ? std::string(op_label(op)) + "_" : "") + std::string(dtype_name(dtype)) +
         (scatter && src != dtype ? "_from_" + std::string(dtype_name(src)) : "");
}

GeneratedKernel generate_index_kernel(const IndexKernelConfig& cfg, const ptx::Target& target) {
  const bool half = cfg.dtype == DType::F16 || cfg.dtype == DType::BF16;
  const bool half_src = cfg.src == DType::F16 || cfg.src == DType::BF16;
  const bool src_ok =
      cfg.src == cfg.dtype || (cfg.dtype == DType::F32 && half_src && cfg.op != ScatterOp::Assign);
  if (cfg.scatter &&
      (!src_ok || (cfg.op != ScatterOp::Assign && (half || cfg.dtype == DType::Bool))))
    fail<BackendError>("cuda", "index_scatter: invalid kernel configuration ", cfg.name());
  KernelBuilder b(cfg.name(), target);
  ptx::FormulaScope scope(b, reduce_acc_type(cfg.dtype));
  if (cfg.scatter)
    gen_scatter(b, cfg);
  else
    gen_gather(b, cfg);
  return {cfg.name(), b.finish()};
}

}  // namespace numr::cuda
