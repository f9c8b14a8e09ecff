// Epilogue kernels: finishing GEMM rows (bias, activation, residual, pre-activation) while
// they are in cache, and the fused backward pass grad_pre = grad * act'(...) with the column
// sums for the bias gradient. F16/BF16 are computed in f32; formulas from src/math.

#include <immintrin.h>
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "backends/cpu/kernels/kernels.h"
#include "core/thread_pool.h"

#include "backends/cpu/kernels/isa.h"  // after every system header

#include "backends/cpu/kernels/activation.h"
#include "backends/cpu/kernels/convert.h"
#include "backends/cpu/kernels/vec.h"
#include "math/elementwise.h"

namespace numr::cpu::NUMR_ISA {
namespace {

using namespace ::numr::math;

constexpr int64_t kChunk = 1024;  // columns per step; the chunk buffers stay in L1

// Calls f with a functor computing act'(...) (before finite_or_zero) from the
// pre-activation, or from the output when !from_pre (Gelu and Silu always take the
// pre-activation: their output does not determine the derivative).
template <class V, class F>
void with_derivative(Activation act, bool from_pre, F&& f) {
  switch (act) {
    case Activation::None: return f([](V) { return V(1); });
    case Activation::Relu:
      return from_pre ? f([](V x) { return relu_grad(x); })
                      : f([](V y) { return relu_grad_from_out(y); });
    case Activation::Gelu: return f([](V x) { return gelu_grad(x); });
    case Activation::Silu: return f([](V x) { return silu_grad(x); });
    case Activation::Sigmoid:
      return from_pre ? f([](V x) { return sigmoid_grad(x); })
                      : f([](V y) { return sigmoid_grad_from_out(y); });
    case Activation::Tanh:
      return from_pre ? f([](V x) { return tanh_grad(x); })
                      : f([](V y) { return tanh_grad_from_out(y); });
  }
}

// ---- forward: finishing rows ----

// The pre-activation and the output of one vector (a plain struct: standard-library
// templates are kept out of the ISA-specific code).
template <class V>
struct PreOut {
  V pre, out;
};

// One contiguous run of m compute values: x = src (+ bias); pre = x; out = act(x) (+ res).
template <class V, class Act>
inline void finish_run(int64_t m, const typename V::scalar* src, const typename V::scalar* bias,
                       const typename V::scalar* res, typename V::scalar* pre,
                       typename V::scalar* out, Act act) {
  using S = typename V::scalar;
  constexpr int W = V::width;
  auto step = [&](V x, V b, V r) {
    if (bias) x = x + b;
    return PreOut<V>{x, res ? act(x) + r : act(x)};
  };
  int64_t i = 0;
  for (; i + W <= m; i += W) {
    const V x = src ? V::load(src + i) : V(0);
    const auto [p, y] = step(x, bias ? V::load(bias + i) : V(0), res ? V::load(res + i) : V(0));
    if (pre) p.store(pre + i);
    y.store(out + i);
  }
  if (i < m) {  // tail through zero-padded lanes
    const int64_t r = m - i;
    S bx[W] = {}, bb[W] = {}, br[W] = {}, bp[W], bo[W];
    if (src) std::memcpy(bx, src + i, size_t(r) * sizeof(S));
    if (bias) std::memcpy(bb, bias + i, size_t(r) * sizeof(S));
    if (res) std::memcpy(br, res + i, size_t(r) * sizeof(S));
    const auto [p, y] = step(V::load(bx), V::load(bb), V::load(br));
    p.store(bp);
    y.store(bo);
    if (pre) std::memcpy(pre + i, bp, size_t(r) * sizeof(S));
    std::memcpy(out + i, bo, size_t(r) * sizeof(S));
  }
}

// C: the compute type; V: its vectors (VFH for BF16 results, as in elementwise.cpp, so the
// epilogues give the bits of the unfused elementwise ops).
template <class C, class V>
void finish_rows(const EpilogueRows& e) {
  const DType dt = e.dtype;
  const bool direct = dtype_of_v<C> == dt;  // storage is the compute type
  const int64_t es = int64_t(dtype_size(dt));
  // The bias in the compute type, converted once for all rows.
  std::vector<C> bias_buf;
  const C* bias = nullptr;
  if (e.bias) {
    if (direct) {
      bias = static_cast<const C*>(e.bias);
    } else {
      bias_buf.resize(size_t(e.n));
      gather_row<C>(e.bias, dt, 1, e.n, bias_buf.data());
      bias = bias_buf.data();
    }
  }
  alignas(64) C res_buf[kChunk], pre_buf[kChunk], out_buf[kChunk];
  with_activation<V>(e.act, [&](auto act) {
    for (int64_t r = 0; r < e.rows; ++r) {
      const C* src = e.src ? static_cast<const C*>(e.src) + r * e.src_ld : nullptr;
      const char* res = e.residual ? static_cast<const char*>(e.residual) + r * e.res_ld * es
                                   : nullptr;
      char* out = static_cast<char*>(e.out) + r * e.out_ld * es;
      char* pre = e.pre ? static_cast<char*>(e.pre) + r * e.pre_ld * es : nullptr;
      for (int64_t j = 0; j < e.n; j += kChunk) {
        const int64_t m = std::min(kChunk, e.n - j);
        const C* rj = nullptr;
        if (res) {
          if (direct) {
            rj = reinterpret_cast<const C*>(res) + j;
          } else {
            gather_row<C>(res + j * es, dt, 1, m, res_buf);
            rj = res_buf;
          }
        }
        C* pj = pre ? (direct ? reinterpret_cast<C*>(pre) + j : pre_buf) : nullptr;
        C* oj = direct ? reinterpret_cast<C*>(out) + j : out_buf;
        finish_run<V>(m, src ? src + j : nullptr, bias ? bias + j : nullptr, rj, pj, oj, act);
        if (!direct) {
          if (pre) scatter_row<C>(pre_buf, m, pre + j * es, dt);
          scatter_row<C>(out_buf, m, out + j * es, dt);
        }
      }
    }
  });
}

// ---- backward: grad_pre and the bias gradient ----

// Float column partials are folded into double totals every this many rows, so long
// columns keep f32's rounding error per block, not per column.
constexpr int64_t kFlushRows = 128;

// grad_pre = g * act'(x) over one run of m elements, its f32 (or f64) values added into
// the column partials acc, which have W spare elements past the row's end.
template <class V, class IO, class D>
inline void bwd_run(int64_t m, const typename IO::T* g, const typename IO::T* x,
                    typename IO::T* gp, typename V::scalar* acc, D deriv) {
  using T = typename IO::T;
  constexpr int W = V::width;
  int64_t i = 0;
  for (; i + W <= m; i += W) {
    const V v = IO::load(g + i) * finite_or_zero(deriv(IO::load(x + i)));
    IO::store(v, gp + i);
    (V::load(acc + i) + v).store(acc + i);
  }
  if (i < m) {  // zero-padded lanes give 0 * act'(0) = 0, added into the spare elements
    const int64_t rest = m - i;
    T bg[W] = {}, bx[W] = {}, bo[W];
    std::memcpy(bg, g + i, size_t(rest) * sizeof(T));
    std::memcpy(bx, x + i, size_t(rest) * sizeof(T));
    const V v = IO::load(bg) * finite_or_zero(deriv(IO::load(bx)));
    IO::store(v, bo);
    std::memcpy(gp + i, bo, size_t(rest) * sizeof(T));
    (V::load(acc + i) + v).store(acc + i);
  }
}

template <class C, class V>
void bias_act_bwd(const BiasActBwdCall& c) {
  constexpr int W = V::width;
  const DType dt = c.grad.dtype;
  const bool direct = dtype_of_v<C> == dt;
  const int64_t es = int64_t(dtype_size(dt));
  const int64_t n = c.grad.shape.back();
  const int64_t rows = n == 0 ? 0 : c.grad.numel() / n;
  const char* g_base = static_cast<const char*>(c.grad.base) + c.grad.offset * es;
  const char* x_base = static_cast<const char*>(c.saved.base) + c.saved.offset * es;
  char* gp_base = static_cast<char*>(c.grad_pre.base) + c.grad_pre.offset * es;
  const DType bias_dt = c.d_bias.dtype;
  char* db = static_cast<char*>(c.d_bias.base) +
             c.d_bias.offset * int64_t(dtype_size(bias_dt));
  if (n == 0) return;

  // Row ranges, one per task, each with its own column totals; merged in task order, so
  // the result depends only on the number of tasks.
  const int64_t min_rows = std::max<int64_t>(1, 32768 / n);
  const int64_t tasks = std::max<int64_t>(
      1, std::min<int64_t>(ThreadPool::instance().size(), rows / min_rows));
  const int64_t per = rows == 0 ? 0 : (rows + tasks - 1) / tasks;
  std::vector<double> totals(size_t(tasks * n), 0.0);

  with_derivative<V>(c.act, c.saved_is_pre, [&](auto deriv) {
    ThreadPool::instance().parallel_for(tasks, 1, [&](int64_t t0, int64_t t1) {
      std::vector<C> part(size_t(n) + W, C(0));
      alignas(64) C g_buf[kChunk], x_buf[kChunk], gp_buf[kChunk];
      for (int64_t t = t0; t < t1; ++t) {
        double* total = totals.data() + t * n;
        const int64_t r0 = t * per, r1 = std::min(rows, r0 + per);
        auto flush = [&] {
          for (int64_t j = 0; j < n; ++j) {
            total[j] += double(part[size_t(j)]);
            part[size_t(j)] = C(0);
          }
        };
        for (int64_t r = r0; r < r1; ++r) {
          for (int64_t j = 0; j < n; j += kChunk) {
            const int64_t m = std::min(kChunk, n - j);
            const int64_t off = (r * n + j) * es;
            C* acc = part.data() + j;
#if NUMR_ISA_LEVEL >= 3
            if constexpr (std::is_same_v<C, float>) {
              if (dt == DType::BF16 || dt == DType::F16) {  // converted in registers
                const auto* g = reinterpret_cast<const uint16_t*>(g_base + off);
                const auto* x = reinterpret_cast<const uint16_t*>(x_base + off);
                auto* gp = reinterpret_cast<uint16_t*>(gp_base + off);
                if (dt == DType::BF16) bwd_run<V, HalfIO<true, V>>(m, g, x, gp, acc, deriv);
                else bwd_run<V, HalfIO<false, V>>(m, g, x, gp, acc, deriv);
                continue;
              }
            }
#endif
            if (direct) {
              bwd_run<V, PlainIO<V>>(m, reinterpret_cast<const C*>(g_base + off),
                                     reinterpret_cast<const C*>(x_base + off),
                                     reinterpret_cast<C*>(gp_base + off), acc, deriv);
            } else {
              gather_row<C>(g_base + off, dt, 1, m, g_buf);
              gather_row<C>(x_base + off, dt, 1, m, x_buf);
              bwd_run<V, PlainIO<V>>(m, g_buf, x_buf, gp_buf, acc, deriv);
              scatter_row<C>(gp_buf, m, gp_base + off, dt);
            }
          }
          if ((r - r0 + 1) % kFlushRows == 0) flush();
        }
        flush();
      }
    });
  });

  std::vector<double> sum(size_t(n), 0.0);
  for (int64_t t = 0; t < tasks; ++t)
    for (int64_t j = 0; j < n; ++j) sum[size_t(j)] += totals[size_t(t * n + j)];
  scatter_row<double>(sum.data(), n, db, bias_dt);
}

}  // namespace

void epilogue_rows(const EpilogueRows& e) {
  if (e.rows == 0 || e.n == 0) return;
  if (e.dtype == DType::F64)
    finish_rows<double, VD>(e);
  else if (e.dtype == DType::BF16)
    finish_rows<float, VFH>(e);
  else
    finish_rows<float, VF>(e);
}

void bias_activation_bwd(const BiasActBwdCall& c) {
  if (c.grad.dtype == DType::F64)
    bias_act_bwd<double, VD>(c);
  else if (c.grad.dtype == DType::BF16)
    bias_act_bwd<float, VFH>(c);
  else
    bias_act_bwd<float, VF>(c);
}

}  // namespace numr::cpu::NUMR_ISA

#pragma GCC pop_options
