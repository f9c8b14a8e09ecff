#include "backends/cuda/gemm_epilogue_kernel.h"

#include <algorithm>
#include <bit>
#include <vector>

#include "backends/cuda/context.h"
#include "backends/cuda/fast_math.h"
#include "backends/cuda/kernel_catalog.h"
#include "backends/cuda/launch.h"
#include "backends/cuda/module.h"
#include "codegen/ptx/builder.h"
#include "codegen/ptx/element_io.h"
#include "codegen/ptx/value.h"
#include "codegen/ptx/value_math.h"
#include "math/elementwise.h"
#include "numr/error.h"

namespace numr::cuda {

using ptx::Cmp;
using ptx::FormulaScope;
using ptx::KernelBuilder;
using ptx::PtxType;
using ptx::Reg;
using ptx::Value;

namespace {

constexpr int kVectorBytes = 16;
constexpr unsigned kThreads = 256;

// act(v) with numr's formulas. Unqualified calls find the templates of math/elementwise.h
// and, by argument-dependent lookup, Value's own functions (value.h, value_math.h).
Value activate(Activation act, const Value& v) {
  using namespace ::numr::math;
  switch (act) {
    case Activation::None: return v;
    case Activation::Relu: return relu(v);
    case Activation::Gelu: return gelu(v);
    case Activation::Silu: return silu(v);
    case Activation::Sigmoid: return sigmoid(v);
    case Activation::Tanh: return tanh(v);
  }
  fail<BackendError>("cuda", "unknown activation ", int(act));
}

PtxType compute_type(DType dt) { return dt == DType::F64 ? PtxType::f64 : PtxType::f32; }

// The dtype x is stored in.
DType x_dtype(const FinishConfig& c) { return c.x_f32 ? DType::F32 : c.dtype; }

// The raw elements held in four b32 words (16 bytes, element 0 in the lowest bits).
std::vector<Reg> split_words(KernelBuilder& b, const std::vector<Reg>& w, DType dt) {
  const PtxType rt = ptx::storage_reg_type(dt);
  std::vector<Reg> e;
  switch (dtype_size(dt)) {
    case 8:
      for (size_t j = 0; j < w.size(); j += 2) e.push_back(b.bitcast(b.pack(w[j], w[j + 1]), rt));
      break;
    case 4:
      for (const Reg& word : w) e.push_back(b.bitcast(word, rt));
      break;
    default:  // 2
      for (const Reg& word : w) {
        const auto [lo, hi] = b.unpack(word);
        e.push_back(b.bitcast(lo, rt));
        e.push_back(b.bitcast(hi, rt));
      }
      break;
  }
  return e;
}

std::vector<Reg> join_words(KernelBuilder& b, const std::vector<Reg>& e, DType dt) {
  std::vector<Reg> w;
  switch (dtype_size(dt)) {
    case 8:
      for (const Reg& x : e) {
        const auto [lo, hi] = b.unpack(b.bitcast(x, PtxType::b64));
        w.push_back(lo);
        w.push_back(hi);
      }
      break;
    case 4:
      for (const Reg& x : e) w.push_back(b.bitcast(x, PtxType::b32));
      break;
    default:  // 2
      for (size_t j = 0; j < e.size(); j += 2)
        w.push_back(b.pack(b.bitcast(e[j], PtxType::b16), b.bitcast(e[j + 1], PtxType::b16)));
      break;
  }
  return w;
}

// `count` elements of dtype dt at addr (16-byte aligned), in 16-byte loads.
std::vector<Reg> load_vector(KernelBuilder& b, Reg addr, DType dt, int count) {
  std::vector<Reg> e;
  const int loads = count * int(dtype_size(dt)) / kVectorBytes;
  for (int j = 0; j < loads; ++j) {
    const std::vector<Reg> part =
        split_words(b, b.ld_global_v(PtxType::b32, 4, addr, int64_t(j) * kVectorBytes), dt);
    e.insert(e.end(), part.begin(), part.end());
  }
  return e;
}

void store_vector(KernelBuilder& b, Reg addr, const std::vector<Reg>& e, DType dt) {
  const std::vector<Reg> w = join_words(b, e, dt);
  b.st_global_v(addr, w);
}

struct Pointers {
  Reg out, pre, x, bias, residual, n;
  Reg n_inv;  // f64 1 / n
};

// i mod n (u64, i < 2^53) without a 64-bit division, which ptxas expands into a loop of
// some 70 instructions, a large share of a memory-bound pass: the quotient
// from f64 arithmetic is exact or off by one either way, which one step corrects.
Reg column_of(KernelBuilder& b, const Pointers& p, Reg i) {
  const Reg q = b.cvt(b.mul(b.cvt(i, PtxType::f64), p.n_inv), PtxType::u64);
  const Reg r = b.bitcast(b.sub(i, b.mul(q, p.n)), PtxType::s64);
  const Reg n = b.bitcast(p.n, PtxType::s64);
  const Reg up = b.selp(b.setp(Cmp::lt, r, 0), b.add(r, n), r);
  const Reg down = b.selp(b.setp(Cmp::ge, up, n), b.sub(up, n), up);
  return b.bitcast(down, PtxType::u64);
}

// One element's arithmetic on raw storage registers (invalid Reg where absent): returns
// {pre, out} as raw registers.
std::pair<Reg, Reg> finish_one(KernelBuilder& b, const FinishConfig& c, Reg x, Reg bias, Reg res) {
  const PtxType ct = compute_type(c.dtype);
  Value v = c.has_x ? ptx::from_storage(b, x, x_dtype(c), ct) : Value::constant(ct, 0.0);
  if (c.has_bias) v = v + ptx::from_storage(b, bias, c.dtype, ct);
  Value y = activate(c.act, v);
  if (c.has_residual) y = y + ptx::from_storage(b, res, c.dtype, ct);
  const Reg pre = c.write_pre ? ptx::to_storage(b, v, c.dtype) : Reg{};
  return {pre, ptx::to_storage(b, y, c.dtype)};
}

// Steps of vec elements: 16 bytes of each output-typed operand (x's share when it is f32),
// the bias read at the step's column.
void vector_loop(KernelBuilder& b, const FinishConfig& c, const Pointers& p, Reg gid, Reg gstride,
                 Reg total, Reg tail_start) {
  const int shift = std::countr_zero(unsigned(c.vec));
  const int x_step = c.vec * int(dtype_size(x_dtype(c)));
  const Reg steps = b.shr(total, shift);
  b.for_range(gid, steps, gstride, PtxType::u64, [&](Reg s) {
    const Reg off = b.mul(s, kVectorBytes);
    std::vector<Reg> xs, bs, rs;
    if (c.has_x) {
      const Reg x_off = x_step == kVectorBytes ? off : b.mul(s, x_step);
      xs = load_vector(b, b.add(p.x, x_off), x_dtype(c), c.vec);
    }
    if (c.has_bias) {
      const Reg col = column_of(b, p, b.shl(s, shift));
      bs = load_vector(b, ptx::element_address(b, p.bias, col, c.dtype), c.dtype, c.vec);
    }
    if (c.has_residual) rs = load_vector(b, b.add(p.residual, off), c.dtype, c.vec);
    std::vector<Reg> pre, out;
    for (size_t j = 0; j < size_t(c.vec); ++j) {
      const auto [pj, oj] = finish_one(b, c, c.has_x ? xs[j] : Reg{}, c.has_bias ? bs[j] : Reg{},
                                       c.has_residual ? rs[j] : Reg{});
      pre.push_back(pj);
      out.push_back(oj);
    }
    if (c.write_pre) store_vector(b, b.add(p.pre, off), pre, c.dtype);
    store_vector(b, b.add(p.out, off), out, c.dtype);
  });
  b.assign(tail_start, b.shl(steps, shift));
}

void scalar_loop(KernelBuilder& b, const FinishConfig& c, const Pointers& p, Reg start, Reg gstride,
                 Reg total) {
  b.for_range(start, total, gstride, PtxType::u64, [&](Reg i) {
    const auto at = [&](Reg base) { return ptx::element_address(b, base, i, c.dtype); };
    const PtxType mt = ptx::storage_mem_type(c.dtype);
    const Reg x = c.has_x ? b.ld_global(ptx::storage_mem_type(x_dtype(c)),
                                        ptx::element_address(b, p.x, i, x_dtype(c)))
                          : Reg{};
    const Reg bias =
        c.has_bias ? b.ld_global(mt, ptx::element_address(b, p.bias, column_of(b, p, i), c.dtype))
                   : Reg{};
    const Reg res = c.has_residual ? b.ld_global(mt, at(p.residual)) : Reg{};
    const auto [pre, out] = finish_one(b, c, x, bias, res);
    if (c.write_pre) b.st(ptx::Space::global, mt, at(p.pre), pre);
    b.st(ptx::Space::global, mt, at(p.out), out);
  });
}

ptx::Target target_of(const CudaDevice& dev) {
  const DeviceProperties& p = dev.props();
  return ptx::Target{.sm = p.cc_major * 10 + p.cc_minor,
                     .ptx_major = p.ptx_isa_major,
                     .ptx_minor = p.ptx_isa_minor};
}

}  // namespace

std::string FinishConfig::name() const {
  std::string s = "gemm_finish_" + std::string(dtype_name(dtype)) + "_" +
                  std::string(activation_name(act)) + "_v" + std::to_string(vec);
  if (has_x) s += x_f32 ? "_xf32" : "_x";
  if (has_bias) s += "_b";
  if (has_residual) s += "_r";
  if (write_pre) s += "_p";
  for (char& ch : s)
    if (ch >= 'A' && ch <= 'Z') ch = char(ch - 'A' + 'a');
  return s;
}

GeneratedKernel generate_finish(const FinishConfig& c, const ptx::Target& target) {
  const int full = kVectorBytes / int(dtype_size(c.dtype));
  if (c.dtype != DType::F32 && c.dtype != DType::F64 && c.dtype != DType::F16 &&
      c.dtype != DType::BF16)
    fail<BackendError>("cuda", "gemm epilogue pass for ", dtype_name(c.dtype));
  if (c.vec != 1 && c.vec != full)
    fail<BackendError>("cuda", "gemm epilogue pass: vector width ", c.vec, " for ",
                       dtype_name(c.dtype));
  if (c.x_f32 && (!c.has_x || dtype_size(c.dtype) != 2))
    fail<BackendError>("cuda", "gemm epilogue pass: an f32 product for ", dtype_name(c.dtype));
  const std::string name = c.name();
  KernelBuilder b(name, target);
  Pointers p;
  p.out = b.param_ptr("out");
  p.pre = b.param_ptr("pre");
  p.x = b.param_ptr("x");
  p.bias = b.param_ptr("bias");
  p.residual = b.param_ptr("residual");
  const Reg total = b.param(PtxType::u64, "total");
  p.n = b.param(PtxType::u64, "n");
  p.n_inv = b.param(PtxType::f64, "n_inv");
  // The activation as the elementwise ops compute it (fast_math.h).
  const FormulaScope scope(b, compute_type(c.dtype), formula_fast_math(c.dtype, true));

  const Reg gid = b.cvt(b.global_index_x(), PtxType::u64);
  const Reg gstride = b.mul_wide(b.ntid_x(), b.nctaid_x());
  const Reg tail_start = b.mov(PtxType::u64, 0);
  if (c.vec > 1) vector_loop(b, c, p, gid, gstride, total, tail_start);
  // Everything when vec == 1, else the last total mod vec elements.
  scalar_loop(b, c, p, b.add(tail_start, gid), gstride, total);
  return {name, b.finish()};
}

int finish_vector_width(DType dt, const FinishConfig& c, const FinishArgs& a) {
  const int vec = kVectorBytes / int(dtype_size(dt));
  const auto aligned = [](uint64_t addr) { return addr % kVectorBytes == 0; };
  if (!aligned(a.out)) return 1;
  if (c.write_pre && !aligned(a.pre)) return 1;
  if (c.has_x && !aligned(a.x)) return 1;
  if (c.has_residual && !aligned(a.residual)) return 1;
  if (c.has_bias && (!aligned(a.bias) || a.n % vec != 0)) return 1;
  return vec;
}

void launch_finish(CudaDevice& dev, const FinishConfig& c, const FinishArgs& a) {
  if (a.total == 0) return;
  const std::string name = c.name();
  const CUfunction f =
      dev.kernels().get_or_build(name, [&] { return generate_finish(c, target_of(dev)); });
  // Work items: vector steps (and at most vec - 1 tail elements), or elements.
  const int64_t work = c.vec > 1 ? std::max(a.total / c.vec, a.total % c.vec) : a.total;
  LaunchConfig cfg;
  cfg.grid.x = one_pass_blocks(work, kThreads);
  cfg.block.x = kThreads;
  launch_kernel(dev, f, cfg, name, a.out, a.pre, a.x, a.bias, a.residual, uint64_t(a.total),
                uint64_t(a.n), a.n > 0 ? 1.0 / double(a.n) : 0.0);
}

// Every configuration run_matmul_epilogue can ask for, for ptxas in the tests: F32 and F64
// over what cuBLASLt wrote in their own dtype (each activation, both vector widths, with
// and without a residual); F16 and BF16 over the f32 staging buffer (bias always added
// here; residual and pre together or neither) and, for None and Relu, over a pre that
// cuBLASLt wrote in their own dtype; plus the rarer shapes (bias added by the pass in
// F32/F64, no product at all).
std::vector<GeneratedKernel> epilogue_kernels(const ptx::Target& target) {
  std::vector<GeneratedKernel> out;
  constexpr DType kTypes[] = {DType::F64, DType::F32, DType::F16, DType::BF16};
  constexpr Activation kActs[] = {Activation::None, Activation::Relu,    Activation::Gelu,
                                  Activation::Silu, Activation::Sigmoid, Activation::Tanh};
  for (DType dt : kTypes) {
    const int full = kVectorBytes / int(dtype_size(dt));
    const bool staged = dtype_size(dt) == 2;
    for (Activation act : kActs)
      for (int vec : {1, full}) {
        FinishConfig c{.dtype = dt, .act = act, .vec = vec};
        if (staged) {
          if (act == Activation::None || act == Activation::Relu)
            out.push_back(generate_finish(c, target));  // out = act(pre)
          c.x_f32 = true;
          c.has_bias = true;
          out.push_back(generate_finish(c, target));
          c.has_residual = c.write_pre = true;
          out.push_back(generate_finish(c, target));
        } else {
          out.push_back(generate_finish(c, target));
          c.has_residual = true;
          out.push_back(generate_finish(c, target));
        }
      }
    for (int vec : {1, full}) {
      // The bias not fused by cuBLASLt (F32/F64), and an empty product (K == 0).
      FinishConfig c{.dtype = dt,
                     .act = Activation::Silu,
                     .vec = vec,
                     .has_x = true,
                     .has_bias = true,
                     .has_residual = true,
                     .write_pre = true};
      if (!staged) out.push_back(generate_finish(c, target));
      c.has_x = false;
      out.push_back(generate_finish(c, target));
    }
  }
  return out;
}

}  // namespace numr::cuda
