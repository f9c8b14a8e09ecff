// run_matmul_epilogue: out = act(a @ b + bias) (+ residual), pre = a @ b + bias when kept,
// to numr's contract: computed in f32 (f64 for F64) and every stored value rounded once,
// as the CPU backend does.
//
// cuBLASLt computes D = epilogue(alpha * A @ B + beta * C + bias). It is used only where
// that equals numr's result:
//  - with a 16-bit D and a 16-bit bias, its epilogues add the bias (and C) to a @ b
//    already rounded to 16 bits: on an H200, results near -bias kept only the rounding
//    error of a @ b (exact zeros), with every reduction scheme. With the bias in f32
//    (BIAS_DATA_TYPE) the results were rounded once, but the kernels were no faster than
//    the staged path below; so F16/BF16 never use them;
//  - its GELU is evaluated in f32 and is less accurate than numr's formula (1e-10 relative
//    in F64, several ulps in F32);
//  - its Relu aux output is a bit mask, not the pre-activation.
// Hence, per dtype and activation (gemm_epilogue_forms.h lists the forms, in order):
//   F32, F64  None, pre not kept    BIAS, D = out; a residual is C with beta = 1
//             Relu, pre not kept,   RELU_BIAS, D = out
//               no residual
//             everything else       BIAS with D = pre (kept) or out, then the elementwise
//                                   pass out = act(D) (+ residual) (gemm_epilogue_kernel.h)
//   F16, BF16 every case            staged: no epilogue, the f32 product goes to a staging
//                                   buffer (gemm_epilogue_chunks.h: the whole product in
//                                   one buffer unless it passes 256 MiB, so the GEMM is
//                                   never cut into small ones), and the pass computes
//                                   pre = v, out = act(v) (+ residual) with v = x + bias
//                                   in f32, one rounding per stored value. That costs the
//                                   f32 product's write and read (8 bytes per output beyond
//                                   the 2 of the result).
// Before all of these, BF16 calls the own GEMM takes (gemm_epilogue_own.h: sm_90, no kept
// pre-activation or residual, None/Relu/Gelu/Silu, tiled shapes) run there: the epilogue
// on the accumulators in registers, with neither the f32 staging nor the pass.
// Fallbacks: when cuBLASLt has no algorithm for a direct form (e.g. an epilogue a dtype
// lacks), the next is tried, finally no epilogue with the bias added by the pass. Every
// path is tried once more with a and b copied into dense, aligned buffers (misaligned
// views). K == 0 is the pass alone (the product is 0).
#include <algorithm>
#include <optional>
#include <vector>

#include "backends/cuda/context.h"
#include "backends/cuda/gemm_epilogue_chunks.h"
#include "backends/cuda/gemm_epilogue_forms.h"
#include "backends/cuda/gemm_epilogue_kernel.h"
#include "backends/cuda/gemm_epilogue_own.h"
#include "backends/cuda/matmul_plan.h"
#include "backends/cuda/ops.h"
#include "numr/error.h"

namespace numr::cuda {
namespace {

constexpr const char* kOp = "matmul_epilogue";

// Queues the pass over a.total elements, as wide as the operands' alignment allows.
void finish(CudaDevice& dev, FinishConfig cfg, const FinishArgs& a) {
  cfg.vec = finish_vector_width(cfg.dtype, cfg, a);
  launch_finish(dev, cfg, a);
}

// Through the first direct form cuBLASLt has an algorithm for; false if none.
bool run_direct(CudaDevice& dev, const GemmEpilogueCall& call, const GemmPlan& plan,
                const FinishArgs& args, uint64_t bias, const std::vector<EpilogueForm>& forms) {
  const DType dt = call.out.dtype;
  for (const EpilogueForm& f : forms) {
    GemmOutputs o;
    o.epilogue = f.epilogue;
    o.d = f.gemm_to_pre ? args.pre : args.out;
    if (f.epilogue != CUBLASLT_EPILOGUE_DEFAULT) o.bias = bias;
    if (f.residual_c) o.c = args.residual;
    if (!run_gemm(dev, dt, plan, o)) continue;
    if (f.pass) {
      FinishArgs a = args;
      a.x = o.d;
      finish(dev,
             {.dtype = dt,
              .act = call.act,
              .has_x = true,
              .has_bias = f.pass_bias,
              .has_residual = call.has_residual,
              .write_pre = f.pass_bias && call.has_pre},
             a);
    }
    return true;
  }
  return false;
}

// F16/BF16: per block of rows (usually one: gemm_epilogue_chunks.h), cuBLASLt writes the
// f32 product into the staging buffer and the pass finishes that block of out (and pre)
// from it. False when cuBLASLt has no algorithm for a block; blocks before it may have
// been written, which is harmless since the fallback rewrites every one.
bool run_staged(CudaDevice& dev, const GemmEpilogueCall& call, const GemmPlan& plan,
                const FinishArgs& args) {
  const DType dt = call.out.dtype;
  const int64_t n = plan.n, es = int64_t(dtype_size(dt));
  const std::vector<RowChunk> chunks = row_chunks(
      plan.batch, plan.rows_per_call(), n, plan.a.col_major, plan.a.ld, staged_chunk_rows(n));
  int64_t most = 0;
  for (const RowChunk& c : chunks) most = std::max(most, c.gemm.count * c.rows * n);
  const DeviceTemp stage(dev, size_t(most) * sizeof(float));
  const uint64_t stage_addr = operand_address(stage.get(), 0, DType::F32);
  const FinishConfig cfg{.dtype = dt,
                         .act = call.act,
                         .has_x = true,
                         .x_f32 = true,
                         .has_bias = true,
                         .has_residual = call.has_residual,
                         .write_pre = call.has_pre};
  for (const RowChunk& c : chunks) {
    GemmOutputs o;
    o.d = stage_addr;
    o.d_f32 = true;
    GemmPiece piece = c.gemm;
    piece.d_off = 0;  // the block starts the staging buffer
    if (!run_gemm_call(dev, dt, plan, piece, c.rows, o)) return false;
    // The same block of out, pre and the residual; the bias is per column and the block
    // starts a row, so it is read from its start.
    const uint64_t off = uint64_t(c.gemm.d_off * es);
    FinishArgs a = args;
    a.x = stage_addr;
    a.out += off;
    if (a.pre) a.pre += off;
    if (a.residual) a.residual += off;
    a.total = c.gemm.count * c.rows * n;
    finish(dev, cfg, a);
  }
  return true;
}

}  // namespace

void run_matmul_epilogue(CudaDevice& dev, const GemmEpilogueCall& call) {
  const TensorRef& out = call.out;
  const size_t nd = out.shape.size();
  if (nd < 2 || call.a.shape.size() != nd || call.b.shape.size() != nd)
    fail<InvalidArgument>(kOp, "operands and output need the same rank (at least 2)");
  const DType dt = out.dtype;
  if (call.a.dtype != dt || call.b.dtype != dt || call.bias.dtype != dt ||
      (call.has_residual && call.residual.dtype != dt) || (call.has_pre && call.pre.dtype != dt))
    fail<DTypeMismatch>(kOp, "every operand needs the output's dtype ", dtype_name(dt));
  (void)lt_types(dt);  // rejects dtypes without a CUDA GEMM
  if (out.numel() == 0) return;

  const int64_t n = out.shape[nd - 1], k = call.a.shape[nd - 1];
  const Shape batch(out.shape.begin(), out.shape.end() - 2);
  FinishArgs args;
  args.out = operand_address(out.base, out.offset, dt);
  args.pre = call.has_pre ? operand_address(call.pre.base, call.pre.offset, dt) : 0;
  args.bias = operand_address(call.bias.base, call.bias.offset, dt);
  args.residual =
      call.has_residual ? operand_address(call.residual.base, call.residual.offset, dt) : 0;
  args.total = out.numel();
  args.n = n;

  if (k == 0) {  // an empty sum: v = bias
    finish(dev,
           {.dtype = dt,
            .act = call.act,
            .has_x = false,
            .has_bias = true,
            .has_residual = call.has_residual,
            .write_pre = call.has_pre},
           args);
    return;
  }

  if (try_own_gemm_epilogue(dev, call)) return;

  const std::vector<EpilogueForm> forms =
      direct_epilogue_forms(dt, call.act, call.has_pre, call.has_residual);
  const bool can_stage = dtype_size(dt) == 2;
  // cuBLASLt derives the bias's alignment from its pointer; a bias that starts mid-way
  // through an allocation gets an aligned copy (n elements: cheap). The staged path never
  // hands cuBLASLt the bias.
  std::optional<DeviceTemp> bias_copy;
  uint64_t bias = args.bias;
  if (!forms.empty() && bias % 16 != 0) {
    bias_copy.emplace(dev, size_t(n) * dtype_size(dt));
    TensorRef dst = call.bias;
    dst.base = bias_copy->get();
    dst.offset = 0;
    dst.strides = contiguous_strides(dst.shape);
    copy_on_device(dev, call.bias, dst);
    bias = operand_address(dst.base, 0, dt);
  }

  auto attempt = [&](const GemmPlan& plan) {
    return run_direct(dev, call, plan, args, bias, forms) ||
           (can_stage && run_staged(dev, call, plan, args));
  };
  {
    const GemmPlan plan(dev, call.a, call.b, batch, false);
    if (attempt(plan)) return;
  }  // its copies are released before the dense ones are made
  const GemmPlan dense(dev, call.a, call.b, batch, true);
  if (attempt(dense)) return;
  fail<BackendLimitation>(kOp, "cuBLASLt has no algorithm for ", dtype_name(dt), " [", dense.m,
                          ", ", dense.k, "] @ [", dense.k, ", ", dense.n, "]",
                          can_stage ? " (nor with an f32 result)" : "");
}

}  // namespace numr::cuda
