#include "backends/cuda/bias_act_bwd_kernels.h"

#include "backends/cuda/fast_math.h"
#include "backends/cuda/reduce_codegen.h"
#include "backends/cuda/reduce_state.h"
#include "codegen/ptx/element_io.h"
#include "codegen/ptx/value_math.h"
#include "math/elementwise.h"
#include "numr/error.h"

namespace numr::cuda {

using ptx::Cmp;
using ptx::KernelBuilder;
using ptx::PtxType;
using ptx::Reg;
using ptx::Value;

namespace {

// act'(v) before finite_or_zero, v the pre-activation or (when !from_pre) the output.
Value derivative(const BiasActBwdKernelConfig& cfg, const Value& v) {
  const bool pre = cfg.from_pre || !cfg.output_determines_derivative();
  switch (cfg.act) {
    case Activation::None: return Value::constant(v.type(), 1.0);
    case Activation::Relu: return pre ? math::relu_grad(v) : math::relu_grad_from_out(v);
    case Activation::Gelu: return math::gelu_grad(v);
    case Activation::Silu: return math::silu_grad(v);
    case Activation::Sigmoid: return pre ? math::sigmoid_grad(v) : math::sigmoid_grad_from_out(v);
    case Activation::Tanh: return pre ? math::tanh_grad(v) : math::tanh_grad_from_out(v);
  }
  return v;
}

std::string act_name(Activation act) { return std::string(activation_name(act)); }

}  // namespace

std::string BiasActBwdKernelConfig::name() const {
  const bool pre = from_pre || !output_determines_derivative();
  return "bias_act_bwd_" + act_name(act) + "_" + std::string(dtype_name(dtype)) +
         (pre ? "_pre" : "_out");
}

std::string bias_sum_kernel_name(DType dtype) {
  return "bias_sum_" + std::string(dtype_name(dtype));
}

GeneratedKernel generate_bias_act_bwd_kernel(const BiasActBwdKernelConfig& cfg,
                                             const ptx::Target& target) {
  if (!is_floating(cfg.dtype))
    fail<BackendError>("cuda", "bias_activation_bwd: invalid kernel configuration ", cfg.name());
  const DType d = cfg.dtype;
  const int size = int(dtype_size(d));
  const PtxType acc = reduce_acc_type(d);
  const int acc_size = ptx::type_size(acc);
  KernelBuilder b(cfg.name(), target);
  // The activation's derivative as the elementwise *_bwd ops compute it (fast_math.h).
  ptx::FormulaScope scope(b, acc, formula_fast_math(d, true));
  const Reg grad = b.param_ptr("grad");
  const Reg saved = b.param_ptr("saved");
  const Reg grad_pre = b.param_ptr("grad_pre");
  const Reg d_bias = b.param_ptr("d_bias");
  const Reg partials = b.param_ptr("partials");
  const Reg rows = b.param(PtxType::u64, "rows");
  const Reg N = b.param(PtxType::u64, "N");
  const Reg per_split = b.param(PtxType::u64, "rows_per_split");
  const Reg smem = b.address_of(b.shared_array(acc, kBiasCols * kBiasSlices, "sums", 16));

  const Reg tx = b.tid_x(), ty = b.tid_y();
  const Reg col = b.mad(wide(b, b.ctaid_x()), kBiasCols, wide(b, tx));
  const Reg valid = b.setp(Cmp::lt, col, N);
  const Reg split = wide(b, b.ctaid_y());
  const Reg r0 = b.mul(split, per_split);
  // Threads past the last column run no rows but still reach the barrier.
  const Reg r1 = b.selp(valid, b.min(b.add(r0, per_split), rows), r0);
  const Reg sum = b.mov(acc, Value::constant(acc, 0.0).reg());
  b.for_range(b.add(r0, wide(b, ty)), r1, kBiasSlices, PtxType::u64, [&](Reg r) {
    const Reg at = b.mul(b.mad(r, N, col), size);  // byte offset of (r, col)
    const Value g = ptx::from_storage(b, load_raw(b, d, b.add(grad, at)), d, acc);
    const Value x = ptx::from_storage(b, load_raw(b, d, b.add(saved, at)), d, acc);
    const Value gp = g * math::finite_or_zero(derivative(cfg, x));
    ptx::store_element(b, d, b.add(grad_pre, at), gp);
    // The unrounded value is summed, as the CPU backend does.
    b.assign(sum, (Value(sum) + gp).reg());
  });
  const Reg slot = b.mad(ty, kBiasCols, tx);
  b.st_shared(b.mad(slot, acc_size, smem), sum);
  b.bar_sync();
  b.if_then(b.and_(valid, b.setp(Cmp::eq, ty, 0)), [&] {
    Value total(sum);
    for (int y = 1; y < kBiasSlices; ++y)
      total = total +
              Value(b.ld_shared(acc, b.mad(tx, acc_size, smem), int64_t(y) * kBiasCols * acc_size));
    b.if_then_else(
        b.setp(Cmp::eq, b.special(ptx::SpecialReg::nctaid_y), 1),
        [&] { ptx::store_element(b, d, ptx::element_address(b, d_bias, col, d), total); },
        [&] {
          const Reg at = b.mad(split, N, col);
          b.st_global(b.mad(at, acc_size, partials), total.reg());
        });
  });
  return {cfg.name(), b.finish()};
}

GeneratedKernel generate_bias_sum_kernel(DType d, const ptx::Target& target) {
  if (!is_floating(d))
    fail<BackendError>("cuda", "bias_activation_bwd: bias sums of ", dtype_name(d));
  const PtxType acc = reduce_acc_type(d);
  const int acc_size = ptx::type_size(acc);
  KernelBuilder b(bias_sum_kernel_name(d), target);
  ptx::FormulaScope scope(b, PtxType::f64);
  const Reg partials = b.param_ptr("partials");
  const Reg d_bias = b.param_ptr("d_bias");
  const Reg N = b.param(PtxType::u64, "N");
  const Reg splits = b.param(PtxType::u64, "splits");
  const Reg first = wide(b, b.global_index_x());
  const Reg step = b.mul(wide(b, b.nctaid_x()), wide(b, b.ntid_x()));
  b.for_range(first, N, step, PtxType::u64, [&](Reg col) {
    const Reg total = b.mov(PtxType::f64, 0.0);
    b.for_range(b.mov(PtxType::u64, 0), splits, 1, PtxType::u64, [&](Reg s) {
      const Reg at = b.mad(b.mad(s, N, col), acc_size, partials);
      const Reg v = b.ld_global(acc, at);
      b.assign(total, b.add(total, acc == PtxType::f64 ? v : b.cvt(v, PtxType::f64)));
    });
    ptx::store_element(b, d, ptx::element_address(b, d_bias, col, d), Value(total));
  });
  return {bias_sum_kernel_name(d), b.finish()};
}

}  // namespace numr::cuda
