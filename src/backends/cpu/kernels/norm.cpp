// rms_norm and layer_norm over contiguous rows, forward and backward. Each row is read in
// the compute type (F32 for F32/F16/BF16, F64 for F64; F16/BF16 rows widened into a
// scratch row first), its statistics summed in vectors, and its output written in one more
// pass. Rows are split over the thread pool; the backward's weight and bias gradients are
// summed per task and the tasks' partial sums added at the end.

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <type_traits>

#include "backends/cpu/kernels/kernels.h"
#include "core/thread_pool.h"

#include "backends/cpu/kernels/isa.h"  // after every system header

#include "backends/cpu/kernels/convert.h"
#include "backends/cpu/kernels/vec.h"

namespace numr::cpu::NUMR_ISA {
namespace {

template <class C>
struct VecOf;
template <>
struct VecOf<float> {
  using type = VF;
};
template <>
struct VecOf<double> {
  using type = VD;
};

// Σ f(i) over a row of d elements, in four vector accumulators (f gives a vector at i, or a
// scalar in the tail through fs).
template <class V, class F, class FS>
inline typename V::scalar row_sum(int64_t d, F f, FS fs) {
  using C = typename V::scalar;
  constexpr int W = V::width;
  V a0(0), a1(0), a2(0), a3(0);
  int64_t i = 0;
  for (; i + 4 * W <= d; i += 4 * W) {
    a0 += f(i);
    a1 += f(i + W);
    a2 += f(i + 2 * W);
    a3 += f(i + 3 * W);
  }
  for (; i + W <= d; i += W) a0 += f(i);
  const V s = (a0 + a1) + (a2 + a3);
  C t = 0;
  for (int k = 0; k < W; ++k) t += s.lane(k);
  for (; i < d; ++i) t += fs(i);
  return t;
}

// A row in the compute type: the storage itself for F32/F64, else widened into `buf`.
template <class C, class S>
inline const C* widen(const S* p, int64_t d, C* buf) {
  if constexpr (std::is_same_v<S, C>) {
    return p;
  } else {
    for (int64_t i = 0; i < d; ++i) buf[i] = convert<C>(p[i]);
    return buf;
  }
}
template <class C, class S>
inline void narrow(const C* src, int64_t d, S* p) {
  if constexpr (!std::is_same_v<S, C>)
    for (int64_t i = 0; i < d; ++i) p[i] = convert<S>(src[i]);
}

// Rows per task, so that a task has enough work to pay for its start.
inline int64_t row_grain(int64_t d) {
  return std::max<int64_t>(1, 16384 / std::max<int64_t>(d, 1));
}

template <class S, class C>
void forward(const RowNormCall& c) {
  using V = typename VecOf<C>::type;
  constexpr int W = V::width;
  const int64_t d = c.d;
  const bool centred = c.op == OpId::layer_norm;
  const S* x = static_cast<const S*>(c.x.base) + c.x.offset;
  S* out = static_cast<S*>(c.out.base) + c.out.offset;
  const S* res =
      c.has_residual ? static_cast<const S*>(c.residual.base) + c.residual.offset : nullptr;
  S* sum = c.has_residual ? static_cast<S*>(c.sum.base) + c.sum.offset : nullptr;
  C* mean_out = c.has_stats && centred ? static_cast<C*>(c.mean.base) + c.mean.offset : nullptr;
  C* rstd_out = c.has_stats ? static_cast<C*>(c.rstd.base) + c.rstd.offset : nullptr;
  const C eps = C(c.eps);
  // The weight and bias in the compute type, once for all rows.
  const std::unique_ptr<C[]> wb(new C[size_t(2 * d)]);
  C* w = wb.get();
  C* b = wb.get() + d;
  const S* ws = static_cast<const S*>(c.weight.base) + c.weight.offset;
  for (int64_t i = 0; i < d; ++i) w[i] = convert<C>(ws[i]);
  if (centred) {
    const S* bs = static_cast<const S*>(c.bias.base) + c.bias.offset;
    for (int64_t i = 0; i < d; ++i) b[i] = convert<C>(bs[i]);
  }
  ThreadPool::instance().parallel_for(c.rows, row_grain(d), [&](int64_t r0, int64_t r1) {
    constexpr bool kWide = !std::is_same_v<S, C>;
    const std::unique_ptr<C[]> scratch(kWide ? new C[size_t(2 * d)] : nullptr);
    for (int64_t r = r0; r < r1; ++r) {
      if (res) {  // the row normalised is x + residual, rounded to S as add rounds it
        const S* a = x + r * d;
        const S* b2 = res + r * d;
        S* sr = sum + r * d;
        for (int64_t i = 0; i < d; ++i) sr[i] = convert<S>(convert<C>(a[i]) + convert<C>(b2[i]));
      }
      const C* xr = widen<C>((res ? sum : x) + r * d, d, scratch.get());
      C* yr = kWide ? scratch.get() + d : reinterpret_cast<C*>(out + r * d);
      C mu = 0;
      if (centred)
        mu = row_sum<V>(
                 d, [&](int64_t i) { return V::load(xr + i); }, [&](int64_t i) { return xr[i]; }) /
             C(d);
      const V vmu(mu);
      const C ss = row_sum<V>(
          d,
          [&](int64_t i) {
            const V v = V::load(xr + i) - vmu;
            return v * v;
          },
          [&](int64_t i) { return (xr[i] - mu) * (xr[i] - mu); });
      const C rstd = C(1) / std::sqrt(ss / C(d) + eps);
      const V vr(rstd);
      int64_t i = 0;
      for (; i + W <= d; i += W) {
        V y = (V::load(xr + i) - vmu) * vr * V::load(w + i);
        if (centred) y = y + V::load(b + i);
        y.store(yr + i);
      }
      for (; i < d; ++i) {
        C y = (xr[i] - mu) * rstd * w[i];
        if (centred) y = y + b[i];
        yr[i] = y;
      }
      narrow(yr, d, out + r * d);
      if (mean_out) mean_out[r] = mu;
      if (rstd_out) rstd_out[r] = rstd;
    }
  });
}

template <class S, class C>
void backward(const RowNormBwdCall& c) {
  using V = typename VecOf<C>::type;
  constexpr int W = V::width;
  constexpr bool kWide = !std::is_same_v<S, C>;
  const int64_t d = c.d, rows = c.rows;
  const bool centred = c.op == OpId::layer_norm;
  const S* x = static_cast<const S*>(c.x.base) + c.x.offset;
  const S* g = static_cast<const S*>(c.grad.base) + c.grad.offset;
  S* dx = static_cast<S*>(c.d_x.base) + c.d_x.offset;
  const C* mean = centred ? static_cast<const C*>(c.mean.base) + c.mean.offset : nullptr;
  const C* rstd = static_cast<const C*>(c.rstd.base) + c.rstd.offset;
  const std::unique_ptr<C[]> wmem(new C[size_t(d)]);
  C* w = wmem.get();
  const S* ws = static_cast<const S*>(c.weight.base) + c.weight.offset;
  for (int64_t i = 0; i < d; ++i) w[i] = convert<C>(ws[i]);
  // One task per thread at most: each keeps its own Σ g xhat and Σ g over its rows.
  ThreadPool& pool = ThreadPool::instance();
  const int64_t tasks =
      std::clamp<int64_t>(rows / std::max<int64_t>(row_grain(d), 1), 1, std::max(pool.size(), 1));
  const int64_t per_task = (rows + tasks - 1) / tasks;
  const std::unique_ptr<C[]> partial(new C[size_t(2 * tasks * d)]());
  pool.parallel_for(tasks, 1, [&](int64_t t0, int64_t t1) {
    const std::unique_ptr<C[]> scratch(new C[size_t(4 * d)]);
    C* xw = scratch.get();  // x widened
    C* gw = xw + d;         // g widened
    C* xhat = gw + d;
    C* dxr = xhat + d;
    for (int64_t t = t0; t < t1; ++t) {
      C* dw_acc = partial.get() + 2 * t * d;
      C* db_acc = dw_acc + d;
      for (int64_t r = t * per_task; r < std::min(rows, (t + 1) * per_task); ++r) {
        const C* xr = widen<C>(x + r * d, d, xw);
        const C* gr = widen<C>(g + r * d, d, gw);
        const C mu = centred ? mean[r] : C(0), rs = rstd[r];
        const V vmu(mu), vrs(rs);
        // xhat, Σ gw xhat and Σ gw (gw = g w), and the weight and bias sums.
        V s1(0), s2(0);
        int64_t i = 0;
        for (; i + W <= d; i += W) {
          const V xh = (V::load(xr + i) - vmu) * vrs;
          const V gv = V::load(gr + i);
          const V gwv = gv * V::load(w + i);
          xh.store(xhat + i);
          s1 += gwv * xh;
          s2 += gwv;
          (V::load(dw_acc + i) + gv * xh).store(dw_acc + i);
          (V::load(db_acc + i) + gv).store(db_acc + i);
        }
        C a = 0, m = 0;
        for (int k = 0; k < W; ++k) a += s1.lane(k), m += s2.lane(k);
        for (; i < d; ++i) {
          const C xh = (xr[i] - mu) * rs;
          const C gwi = gr[i] * w[i];
          xhat[i] = xh;
          a += gwi * xh;
          m += gwi;
          dw_acc[i] += gr[i] * xh;
          db_acc[i] += gr[i];
        }
        a /= C(d);
        m = centred ? m / C(d) : C(0);
        const V va(a), vm(m);
        C* out = kWide ? dxr : reinterpret_cast<C*>(dx + r * d);
        i = 0;
        for (; i + W <= d; i += W) {
          const V gwv = V::load(gr + i) * V::load(w + i);
          ((gwv - V::load(xhat + i) * va - vm) * vrs).store(out + i);
        }
        for (; i < d; ++i) out[i] = (gr[i] * w[i] - xhat[i] * a - m) * rs;
        narrow(out, d, dx + r * d);
      }
    }
  });
  // The tasks' partial sums, added in task order.
  S* dws = static_cast<S*>(c.d_weight.base) + c.d_weight.offset;
  S* dbs = centred ? static_cast<S*>(c.d_bias.base) + c.d_bias.offset : nullptr;
  for (int64_t i = 0; i < d; ++i) {
    C sw = 0, sb = 0;
    for (int64_t t = 0; t < tasks; ++t) {
      sw += partial[size_t(2 * t * d + i)];
      sb += partial[size_t((2 * t + 1) * d + i)];
    }
    dws[i] = convert<S>(sw);
    if (dbs) dbs[i] = convert<S>(sb);
  }
}

// Calls f(S{}, C{}) with the storage and compute types of a float dtype.
template <class F>
inline void visit_float(DType t, F&& f) {
  switch (t) {
    case DType::F64: f(double{}, double{}); return;
    case DType::F32: f(float{}, float{}); return;
    case DType::F16: f(H16{}, float{}); return;
    default: f(B16{}, float{}); return;  // BF16
  }
}

}  // namespace

void row_norm(const RowNormCall& c) {
  visit_float(c.x.dtype, [&](auto s, auto cw) { forward<decltype(s), decltype(cw)>(c); });
}

void row_norm_bwd(const RowNormBwdCall& c) {
  visit_float(c.x.dtype, [&](auto s, auto cw) { backward<decltype(s), decltype(cw)>(c); });
}

}  // namespace numr::cpu::NUMR_ISA

#pragma GCC pop_options
