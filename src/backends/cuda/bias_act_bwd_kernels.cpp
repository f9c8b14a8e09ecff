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
         (pre ? "_pre" : "_out") + (vec > 1 ? "_v" : "");
}

std::string bias_sum_kernel_name(DType dtype) {
  return "bias_sum_" + std::string(dtype_name(dtype));
}

GeneratedKernel generate_bias_act_bwd_kernel(const BiasActBwdKernelConfig& cfg,
                                             const ptx::Target& target) {
  if (!is_floating(cfg.dtype) || (cfg.vec != 1 && cfg.vec != vector_width(cfg.dtype)))
    fail<BackendError>("cuda", "bias_activation_bwd: invalid kernel configuration ", cfg.name());
  const DType d = cfg.dtype;
  const int size = int(dtype_size(d));
  const int vec = cfg.vec;
  const int tile = 32 * vec;  // columns of a block
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
  const Reg smem = b.address_of(b.shared_array(acc, tile * kBiasSlices, "sums", 16));

  const Reg tx = b.tid_x(), ty = b.tid_y();
  const Reg col = b.mul(b.mad(wide(b, b.ctaid_x()), 32, wide(b, tx)), vec);  // first column
  const Reg valid = b.setp(Cmp::lt, col, N);  // then all vec columns are (N % vec == 0)
  const Reg split = wide(b, b.ctaid_y());
  const Reg r0 = b.mul(split, per_split);
  // Lanes past the last column run no rows but still reach the barrier.
  const Reg r1 = b.selp(valid, b.min(b.add(r0, per_split), rows), r0);
  std::vector<Reg> sums;
  for (int j = 0; j < vec; ++j) sums.push_back(b.mov(acc, Value::constant(acc, 0.0).reg()));

  // Row r's elements of this lane: loaded first, then finished, so that two rows' loads
  // can be in flight together.
  struct Loaded {
    Reg at;  // byte offset of (r, col)
    std::vector<Reg> g, x;
  };
  const auto load = [&](Reg r) {
    Loaded l;
    l.at = b.mul(b.mad(r, N, col), size);
    if (vec > 1) {
      l.g = load_raw_vector(b, d, b.add(grad, l.at));
      l.x = load_raw_vector(b, d, b.add(saved, l.at));
    } else {
      l.g = {load_raw(b, d, b.add(grad, l.at))};
      l.x = {load_raw(b, d, b.add(saved, l.at))};
    }
    return l;
  };
  const auto finish = [&](const Loaded& l) {
    std::vector<Reg> out;
    for (int j = 0; j < vec; ++j) {
      const Value g = ptx::from_storage(b, l.g[size_t(j)], d, acc);
      const Value x = ptx::from_storage(b, l.x[size_t(j)], d, acc);
      const Value gp = g * math::finite_or_zero(derivative(cfg, x));
      // The unrounded value is summed, as the CPU backend does.
      b.assign(sums[size_t(j)], (Value(sums[size_t(j)]) + gp).reg());
      out.push_back(ptx::to_storage(b, gp, d));
    }
    if (vec > 1)
      store_raw_vector(b, d, b.add(grad_pre, l.at), out);
    else
      b.st(ptx::Space::global, ptx::storage_mem_type(d), b.add(grad_pre, l.at), out[0]);
  };
  const Reg r = b.mov(PtxType::u64, b.add(r0, wide(b, ty)));
  b.while_loop([&] { return b.setp(Cmp::lt, b.add(r, kBiasSlices), r1); },
               [&] {
                 const Loaded first = load(r);
                 const Loaded second = load(b.add(r, kBiasSlices));
                 finish(first);
                 finish(second);
                 b.assign(r, b.add(r, 2 * kBiasSlices));
               });
  b.if_then(b.setp(Cmp::lt, r, r1), [&] { finish(load(r)); });

  // Sums of warp ty at sums[ty][lane * vec + j]; warp 0 adds the slices in order.
  const Reg mine = b.mad(b.mad(ty, tile, b.mul(tx, vec)), acc_size, smem);
  for (int j = 0; j < vec; ++j) b.st_shared(mine, sums[size_t(j)], int64_t(j) * acc_size);
  b.bar_sync();
  b.if_then(b.and_(valid, b.setp(Cmp::eq, ty, 0)), [&] {
    for (int j = 0; j < vec; ++j) {
      Value total(sums[size_t(j)]);
      for (int y = 1; y < kBiasSlices; ++y)
        total = total + Value(b.ld_shared(acc, mine, (int64_t(y) * tile + j) * acc_size));
      const Reg c = b.add(col, j);
      b.if_then_else(
          b.setp(Cmp::eq, b.special(ptx::SpecialReg::nctaid_y), 1),
          [&] { ptx::store_element(b, d, ptx::element_address(b, d_bias, c, d), total); },
          [&] { b.st_global(b.mad(b.mad(split, N, c), acc_size, partials), total.reg()); });
    }
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
  const Reg smem = b.address_of(b.shared_array(PtxType::f64, 32 * kBiasSlices, "sums", 16));
  const Reg tx = b.tid_x(), ty = b.tid_y();
  const Reg col = b.mad(wide(b, b.ctaid_x()), 32, wide(b, tx));
  const Reg valid = b.setp(Cmp::lt, col, N);
  // Warp ty adds splits ty, ty + 8, ... of column col (lane tx), four loads in flight.
  const Reg total = b.mov(PtxType::f64, 0.0);
  const auto term = [&](Reg s) {
    const Reg v = b.ld_global(acc, b.mad(b.mad(s, N, col), acc_size, partials));
    return acc == PtxType::f64 ? v : b.cvt(v, PtxType::f64);
  };
  const Reg last = b.selp(valid, splits, b.mov(PtxType::u64, 0));
  const Reg s = b.mov(PtxType::u64, wide(b, ty));
  constexpr int kInFlight = 4;
  b.while_loop([&] { return b.setp(Cmp::lt, b.add(s, (kInFlight - 1) * kBiasSlices), last); },
               [&] {
                 std::vector<Reg> t;
                 for (int i = 0; i < kInFlight; ++i) t.push_back(term(b.add(s, i * kBiasSlices)));
                 for (const Reg v : t) b.assign(total, b.add(total, v));
                 b.assign(s, b.add(s, kInFlight * kBiasSlices));
               });
  b.while_loop([&] { return b.setp(Cmp::lt, s, last); },
               [&] {
                 b.assign(total, b.add(total, term(s)));
                 b.assign(s, b.add(s, kBiasSlices));
               });
  const Reg mine = b.mad(b.mad(ty, 32, tx), 8, smem);
  b.st_shared(mine, total);
  b.bar_sync();
  b.if_then(b.and_(valid, b.setp(Cmp::eq, ty, 0)), [&] {
    Value sum(total);
    for (int y = 1; y < kBiasSlices; ++y)
      sum = sum + Value(b.ld_shared(PtxType::f64, mine, int64_t(y) * 32 * 8));
    ptx::store_element(b, d, ptx::element_address(b, d_bias, col, d), sum);
  });
  return {bias_sum_kernel_name(d), b.finish()};
}

}  // namespace numr::cuda
