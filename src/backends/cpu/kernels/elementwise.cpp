// Elementwise kernels: strided/broadcast operands of any storage dtype are brought into
// contiguous chunks of the compute type (F16/BF16 -> float), the formula from
// src/math/elementwise.h runs on SIMD vectors, and the chunk is stored in the output
// dtype. Integer dtypes run scalar loops with wrapping arithmetic.

#include <immintrin.h>
#include <sleef.h>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "backends/cpu/host_allocator.h"
#include "backends/cpu/kernels/kernels.h"
#include "backends/cpu/loop_plan.h"
#include "core/thread_pool.h"

#include "backends/cpu/kernels/isa.h"  // after every system header

#include "backends/cpu/kernels/convert.h"
#include "backends/cpu/kernels/transposed_pieces.h"
#include "backends/cpu/kernels/vec.h"
#include "math/complex.h"
#include "math/formula.h"

namespace numr::cpu::NUMR_ISA {

// erfinv has no SLEEF function: the device libraries' templates, on vectors. Declared
// beside the vector types, where math/formula.h finds them by argument-dependent lookup.
inline VF erfinv(VF x) { return math::libm32::erfinv(x); }
inline VD erfinv(VD x) { return math::libm::erfinv(x); }
inline VFH erfinv(VFH x) { return VFH(erfinv(VF(x.v)).v); }

namespace {

using namespace ::numr::math;

constexpr int64_t kChunk = 1024;  // elements per chunk; chunk buffers stay in L1

struct Args {
  OpId op;
  double s0, s1;
  bool has_lo, has_hi;
};

// ---- floating point: the formulas on SIMD vectors ----

// Large outputs are written with non-temporal stores (see Vec::stream).
thread_local bool tl_stream_out = false;

template <class V, class IO, class F>
inline void map_n(int64_t n, typename IO::T* out, const typename IO::T* const* in, int n_in,
                  F&& f) {
  using T = typename IO::T;
  constexpr int W = V::width;
  int64_t i = 0;
  if constexpr (IO::kCanStream) {
    if (tl_stream_out && reinterpret_cast<uintptr_t>(out) % (W * sizeof(T)) == 0) {
      for (; i + W <= n; i += W) {
        V a = IO::load(in[0] + i);
        V b = n_in > 1 ? IO::load(in[1] + i) : a;
        V c = n_in > 2 ? IO::load(in[2] + i) : a;
        f(a, b, c).stream(out + i);
      }
    }
  }
  for (; i + W <= n; i += W) {
    V a = IO::load(in[0] + i);
    V b = n_in > 1 ? IO::load(in[1] + i) : a;
    V c = n_in > 2 ? IO::load(in[2] + i) : a;
    IO::store(f(a, b, c), out + i);
  }
  if (i < n) {  // tail through zero-padded lanes
    T buf[3][W] = {};
    T res[W];
    const int64_t r = n - i;
    for (int k = 0; k < n_in; ++k) std::memcpy(buf[k], in[k] + i, size_t(r) * sizeof(T));
    V a = IO::load(buf[0]);
    V b = IO::load(buf[n_in > 1 ? 1 : 0]);
    V c = IO::load(buf[n_in > 2 ? 2 : 0]);
    IO::store(f(a, b, c), res);
    std::memcpy(out + i, res, size_t(r) * sizeof(T));
  }
}

// Two outputs from one pass over the inputs (the fused gate backward).
template <class V>
struct Two {
  V first, second;
};

template <class V, class IO, class F>
inline void map_n2(int64_t n, typename IO::T* out0, typename IO::T* out1,
                   const typename IO::T* const* in, F&& f) {
  using T = typename IO::T;
  constexpr int W = V::width;
  int64_t i = 0;
  for (; i + W <= n; i += W) {
    const Two<V> r = f(IO::load(in[0] + i), IO::load(in[1] + i), IO::load(in[2] + i));
    IO::store(r.first, out0 + i);
    IO::store(r.second, out1 + i);
  }
  if (i < n) {
    T buf[3][W] = {};
    T res0[W], res1[W];
    const int64_t r = n - i;
    for (int k = 0; k < 3; ++k) std::memcpy(buf[k], in[k] + i, size_t(r) * sizeof(T));
    const Two<V> t = f(IO::load(buf[0]), IO::load(buf[1]), IO::load(buf[2]));
    IO::store(t.first, res0);
    IO::store(t.second, res1);
    std::memcpy(out0 + i, res0, size_t(r) * sizeof(T));
    std::memcpy(out1 + i, res1, size_t(r) * sizeof(T));
  }
}

// One function per op and vector type, the formula (math/formula.h) inlined into its
// loop. Kept out of line so that each op's loop has the inliner's whole budget: inlined
// into the dispatch, a gate backward's formula was left as calls, and its two outputs
// no longer shared their sigmoid.
template <class F, class V, class IO>
[[gnu::noinline]] void map_formula(int64_t n, typename IO::T* out, const typename IO::T* const* in,
                                   int n_in, const FormulaScalars<V>& s) {
  map_n<V, IO>(n, out, in, n_in, [&](V x, V y, V z) { return F::fn(x, y, z, s); });
}

template <class F, class V, class IO>
[[gnu::noinline]] void map_formula2(int64_t n, typename IO::T* out0, typename IO::T* out1,
                                    const typename IO::T* const* in, const FormulaScalars<V>& s) {
  map_n2<V, IO>(n, out0, out1, in, [&](V g, V x, V y) {
    Two<V> r;
    F::fn2(g, x, y, s, r.first, r.second);
    return r;
  });
}

template <class V, class IO>
void float_body2(const Args& a, int64_t n, typename IO::T* out0, typename IO::T* out1,
                 const typename IO::T* const* in) {
  const FormulaScalars<V> s{V(a.s0), V(a.s1), a.has_lo, a.has_hi};
  visit_formula(a.op, [&](auto f) {
    using F = decltype(f);
    if constexpr (F::outputs == 2) map_formula2<F, V, IO>(n, out0, out1, in, s);
  });
}

template <class V, class IO>
void float_body(const Args& a, int64_t n, typename IO::T* out, const typename IO::T* const* in,
                int n_in) {
  const FormulaScalars<V> s{V(a.s0), V(a.s1), a.has_lo, a.has_hi};
  visit_formula(a.op, [&](auto f) {
    using F = decltype(f);
    if constexpr (F::outputs == 1) map_formula<F, V, IO>(n, out, in, n_in, s);
  });
}

// ---- integers: scalar loops, wrapping like two's complement hardware ----

template <class C>
C wrap(std::make_unsigned_t<C> u) { return C(u); }
template <class C> C iadd(C a, C b) { using U = std::make_unsigned_t<C>; return wrap<C>(U(U(a) + U(b))); }
template <class C> C isub(C a, C b) { using U = std::make_unsigned_t<C>; return wrap<C>(U(U(a) - U(b))); }
template <class C> C imul(C a, C b) { using U = std::make_unsigned_t<C>; return wrap<C>(U(U(a) * U(b))); }

template <class C>
void int_body(const Args& a, int64_t n, C* out, const C* const* in) {
  const C s0 = C(a.s0), s1 = C(a.s1);
  const C* x = in[0];
  const C* y = in[1];
  const C* z = in[2];
#define NUMR_LOOP(expr) \
  for (int64_t i = 0; i < n; ++i) out[i] = C(expr); \
  return;
  switch (a.op) {
    case OpId::neg: NUMR_LOOP(isub<C>(C(0), x[i]))
    case OpId::abs: NUMR_LOOP(x[i] < 0 ? isub<C>(C(0), x[i]) : x[i])
    case OpId::sign: NUMR_LOOP((x[i] > 0) - (x[i] < 0))
    case OpId::square: NUMR_LOOP(imul<C>(x[i], x[i]))
    case OpId::logical_not: NUMR_LOOP(x[i] == 0)
    case OpId::add: NUMR_LOOP(iadd<C>(x[i], y[i]))
    case OpId::sub: NUMR_LOOP(isub<C>(x[i], y[i]))
    case OpId::mul: NUMR_LOOP(imul<C>(x[i], y[i]))
    case OpId::maximum: NUMR_LOOP(x[i] > y[i] ? x[i] : y[i])
    case OpId::minimum: NUMR_LOOP(x[i] < y[i] ? x[i] : y[i])
    case OpId::fused_mul_add: NUMR_LOOP(iadd<C>(imul<C>(x[i], y[i]), z[i]))
    case OpId::fused_add_mul: NUMR_LOOP(imul<C>(iadd<C>(x[i], y[i]), z[i]))
    case OpId::add_scalar: NUMR_LOOP(iadd<C>(x[i], s0))
    case OpId::sub_scalar: NUMR_LOOP(isub<C>(x[i], s0))
    case OpId::mul_scalar: NUMR_LOOP(imul<C>(x[i], s0))
    case OpId::rsub_scalar: NUMR_LOOP(isub<C>(s0, x[i]))
    case OpId::eq: NUMR_LOOP(x[i] == y[i])
    case OpId::ne: NUMR_LOOP(x[i] != y[i])
    case OpId::lt: NUMR_LOOP(x[i] < y[i])
    case OpId::le: NUMR_LOOP(x[i] <= y[i])
    case OpId::gt: NUMR_LOOP(x[i] > y[i])
    case OpId::ge: NUMR_LOOP(x[i] >= y[i])
    case OpId::logical_and: NUMR_LOOP(x[i] != 0 && y[i] != 0)
    case OpId::logical_or: NUMR_LOOP(x[i] != 0 || y[i] != 0)
    case OpId::logical_xor: NUMR_LOOP((x[i] != 0) != (y[i] != 0))
    case OpId::where_cond: NUMR_LOOP(x[i] != 0 ? y[i] : z[i])
    case OpId::clamp:
      NUMR_LOOP(a.has_lo && x[i] < s0 ? s0 : (a.has_hi && x[i] > s1 ? s1 : x[i]))
    default: return;
  }
#undef NUMR_LOOP
}

// ---- the driver ----

// BF16 results (bf16_out) are computed in VFH: its exp is accurate enough for 8 significant
// bits (vec.h). The same for every layout and instruction set, so a BF16 op gives the same
// bits for a contiguous tensor and a view of it.
template <class C>
void run_body(const Args& a, int64_t n, C* out, const C* const* in, int n_in, bool bf16_out) {
  if constexpr (std::is_same_v<C, float>) {
    if (bf16_out) float_body<VFH, PlainIO<VFH>>(a, n, out, in, n_in);
    else float_body<VF, PlainIO<VF>>(a, n, out, in, n_in);
  } else if constexpr (std::is_same_v<C, double>) {
    float_body<VD, PlainIO<VD>>(a, n, out, in, n_in);
  } else {
    int_body<C>(a, n, out, in);
  }
}

template <class C>
void run_body2(const Args& a, int64_t n, C* out0, C* out1, const C* const* in, bool bf16_out) {
  if constexpr (std::is_same_v<C, float>) {
    if (bf16_out) float_body2<VFH, PlainIO<VFH>>(a, n, out0, out1, in);
    else float_body2<VF, PlainIO<VF>>(a, n, out0, out1, in);
  } else if constexpr (std::is_same_v<C, double>) {
    float_body2<VD, PlainIO<VD>>(a, n, out0, out1, in);
  }
}

#if NUMR_ISA_LEVEL >= 3
// BF16 results are computed in VFH, as in run_body.
template <bool kBf16>
void run_half(const Args& a, int64_t n, uint16_t* out, uint16_t* out2,
              const uint16_t* const* in, int n_in, int n_out) {
  using V = std::conditional_t<kBf16, VFH, VF>;
  if (n_out == 2) float_body2<V, HalfIO<kBf16, V>>(a, n, out, out2, in);
  else float_body<V, HalfIO<kBf16, V>>(a, n, out, in, n_in);
}
#endif

// total_numel: the whole result's elements (more than plan's when this is one piece of it),
// which decides whether the results are streamed.
template <class C>
void run(const ElementwiseCall& call, const LoopPlan& plan, int64_t total_numel) {
  const Args args{call.op, call.scalars[0], call.scalars[1], call.has_lo, call.has_hi};
  const int n_in = call.n_in;
  const DType out_dt = call.out.dtype;
  const bool out_direct = compute_dtype(out_dt) == out_dt && dtype_of_v<C> == out_dt;
  char* out_base = static_cast<char*>(call.out.base) + call.out.offset * int64_t(dtype_size(out_dt));
  const DType out2_dt = call.n_out == 2 ? call.out2.dtype : out_dt;
  const bool out2_direct = dtype_of_v<C> == out2_dt;
  char* out2_base = call.n_out == 2 ? static_cast<char*>(call.out2.base) +
                                          call.out2.offset * int64_t(dtype_size(out2_dt))
                                    : nullptr;
  const char* in_base[3] = {};
  for (int k = 0; k < n_in; ++k)
    in_base[k] = static_cast<const char*>(call.in[size_t(k)].base) +
                 call.in[size_t(k)].offset * int64_t(dtype_size(call.in[size_t(k)].dtype));
  // Every operand and result F16, or every one BF16: rows whose operands are all contiguous
  // are converted in registers instead of through the chunk buffers.
  [[maybe_unused]] bool half_io = false;
#if NUMR_ISA_LEVEL >= 3
  if constexpr (std::is_same_v<C, float>) {
    half_io = (out_dt == DType::BF16 || out_dt == DType::F16) &&
              (call.n_out == 1 || out2_dt == out_dt);
    for (int k = 0; k < n_in; ++k) half_io = half_io && call.in[size_t(k)].dtype == out_dt;
  }
#endif
  const bool bf16_out = out_dt == DType::BF16;
  const int64_t grain = 16384;
  const bool stream =
      out_direct && call.n_out == 1 && total_numel * int64_t(sizeof(C)) >= kStreamBytes;
  ThreadPool::instance().parallel_for(plan.numel, grain, [&](int64_t begin, int64_t end) {
    alignas(64) C buf_in[3][kChunk];
    alignas(64) C buf_out[kChunk];
    alignas(64) C buf_out2[kChunk];
    tl_stream_out = stream;
    for_each_row(plan, begin, end, [&](const int64_t* offs, int64_t len) {
      const int64_t last = plan.ndim - 1;
#if NUMR_ISA_LEVEL >= 3
      if (half_io) {
        bool contiguous = true;
        for (int k = 0; k < n_in; ++k) contiguous = contiguous && plan.strides[k + 1][last] == 1;
        if (contiguous) {
          const uint16_t* ins[3] = {nullptr, nullptr, nullptr};
          for (int k = 0; k < n_in; ++k)
            ins[k] = reinterpret_cast<const uint16_t*>(in_base[k]) + offs[k + 1];
          uint16_t* o = reinterpret_cast<uint16_t*>(out_base) + offs[0];
          uint16_t* o2 = call.n_out == 2 ? reinterpret_cast<uint16_t*>(out2_base) + offs[0] : nullptr;
          if (out_dt == DType::BF16) run_half<true>(args, len, o, o2, ins, n_in, call.n_out);
          else run_half<false>(args, len, o, o2, ins, n_in, call.n_out);
          return;
        }
      }
#endif
      for (int64_t j = 0; j < len; j += kChunk) {
        const int64_t m = len - j < kChunk ? len - j : kChunk;
        const C* ins[3] = {nullptr, nullptr, nullptr};
        for (int k = 0; k < n_in; ++k) {
          const DType dt = call.in[size_t(k)].dtype;
          const int64_t st = plan.strides[k + 1][last];
          const char* p = in_base[k] + (offs[k + 1] + j * st) * int64_t(dtype_size(dt));
          if (st == 1 && dt == dtype_of_v<C>) {
            ins[k] = reinterpret_cast<const C*>(p);
          } else {
            gather_row<C>(p, dt, st, m, buf_in[k]);
            ins[k] = buf_in[k];
          }
        }
        char* po = out_base + (offs[0] + j) * int64_t(dtype_size(out_dt));
        if (call.n_out == 2) {  // both outputs share out's layout; dtypes may differ
          char* po2 = out2_base + (offs[0] + j) * int64_t(dtype_size(out2_dt));
          C* o1 = out_direct ? reinterpret_cast<C*>(po) : buf_out;
          C* o2 = out2_direct ? reinterpret_cast<C*>(po2) : buf_out2;
          run_body2<C>(args, m, o1, o2, ins, bf16_out);
          if (!out_direct) scatter_row<C>(buf_out, m, po, out_dt);
          if (!out2_direct) scatter_row<C>(buf_out2, m, po2, out2_dt);
        } else if (out_direct) {
          run_body<C>(args, m, reinterpret_cast<C*>(po), ins, n_in, bf16_out);
        } else {
          run_body<C>(args, m, buf_out, ins, n_in, bf16_out);
          scatter_row<C>(buf_out, m, po, out_dt);
        }
      }
    });
    if (stream) _mm_sfence();  // order the non-temporal stores before the op returns
    tl_stream_out = false;
  });
}

LoopPlan plan_of(const ElementwiseCall& call) {
  const char* name = op_name(call.op).data();
  if (call.n_in == 1)
    return make_loop_plan(name, call.out.shape, {&call.out.strides, &call.in[0].strides});
  if (call.n_in == 2)
    return make_loop_plan(name, call.out.shape,
                          {&call.out.strides, &call.in[0].strides, &call.in[1].strides});
  return make_loop_plan(
      name, call.out.shape,
      {&call.out.strides, &call.in[0].strides, &call.in[1].strides, &call.in[2].strides});
}

void run_any(const ElementwiseCall& call, const LoopPlan& plan, int64_t total_numel) {
  const DType src = call.op == OpId::where_cond ? call.in[1].dtype : call.in[0].dtype;
  switch (compute_dtype(src)) {
    case DType::F64: return run<double>(call, plan, total_numel);
    case DType::F32: return run<float>(call, plan, total_numel);
    case DType::I64: return run<int64_t>(call, plan, total_numel);
    case DType::I32: return run<int32_t>(call, plan, total_numel);
    case DType::U8: return run<uint8_t>(call, plan, total_numel);
    default: return;
  }
}

// ---- complex mul, div, abs: one pass over the (re, im) pairs (math/complex.h) ----

NUMR_MATH_EXACT_BEGIN
template <class P>
void complex_run(const ElementwiseCall& call, const LoopPlan& plan) {
  const bool two = call.n_in == 2;
  const int64_t ow = is_complex(call.out.dtype) ? 2 : 1;  // abs writes one part per element
  P* out = static_cast<P*>(call.out.base) + call.out.offset * ow;
  const P* in0 = static_cast<const P*>(call.in[0].base) + call.in[0].offset * 2;
  const P* in1 = two ? static_cast<const P*>(call.in[1].base) + call.in[1].offset * 2 : nullptr;
  const OpId op = call.op;
  ThreadPool::instance().parallel_for(plan.numel, 16384, [&](int64_t begin, int64_t end) {
    for_each_row(plan, begin, end, [&](const int64_t* offs, int64_t len) {
      const int64_t last = plan.ndim - 1;
      const int64_t so = plan.strides[0][last] * ow, sa = plan.strides[1][last] * 2;
      const int64_t sb = two ? plan.strides[2][last] * 2 : 0;
      P* o = out + offs[0] * ow;
      const P* a = in0 + offs[1] * 2;
      const P* b = two ? in1 + offs[2] * 2 : nullptr;
      if (op == OpId::abs) {
        for (int64_t i = 0; i < len; ++i) o[i * so] = math::cx::abs(a[i * sa], a[i * sa + 1]);
      } else if (op == OpId::mul) {
        for (int64_t i = 0; i < len; ++i)
          math::cx::mul(a[i * sa], a[i * sa + 1], b[i * sb], b[i * sb + 1], o[i * so],
                        o[i * so + 1]);
      } else {
        for (int64_t i = 0; i < len; ++i)
          math::cx::div(a[i * sa], a[i * sa + 1], b[i * sb], b[i * sb + 1], o[i * so],
                        o[i * so + 1]);
      }
    });
  });
}
NUMR_MATH_EXACT_END

void complex_elementwise(const ElementwiseCall& call) {
  if (!complex_elementwise_op(call.op))
    fail<BackendError>(op_name(call.op), "no complex elementwise kernel");
  const LoopPlan plan = plan_of(call);
  if (call.in[0].dtype == DType::Complex64)
    complex_run<float>(call, plan);
  else
    complex_run<double>(call, plan);
}

}  // namespace

void elementwise(const ElementwiseCall& call) {
  if (is_complex(call.in[0].dtype)) return complex_elementwise(call);
  const LoopPlan plan = plan_of(call);
  // A large transposed input is read through the transposing copy, piece by piece
  // (transposed_pieces.h): read along the output's rows, each of its elements would cost a
  // cache line.
  int64_t es_sum = 0;
  for (int k = 0; k < call.n_in && plan.numel >= kTransposedCopyMin; ++k)
    if (transposed_dim(plan, k + 1) >= 0) es_sum += int64_t(dtype_size(call.in[size_t(k)].dtype));
  if (es_sum == 0) return run_any(call, plan, plan.numel);
  for_each_piece(call.out.shape, es_sum, [&](const Piece& p, char* scratch) {
    ElementwiseCall c = call;
    c.out = piece_of(call.out, p);
    if (call.n_out == 2) c.out2 = piece_of(call.out2, p);
    const Strides row_major_strides = contiguous_strides(c.out.shape);
    for (int k = 0; k < call.n_in; ++k) {
      TensorRef& in = c.in[size_t(k)];
      in = piece_of(in, p);
      if (transposed_dim(plan, k + 1) < 0) continue;
      const TensorRef row_major{scratch, 0, in.dtype, c.out.shape, row_major_strides};
      copy(CopyCall{in, row_major});  // on this thread: the pool does not nest
      scratch += scratch_part(shape_numel(c.out.shape), dtype_size(in.dtype));
      in = row_major;
    }
    run_any(c, plan_of(c), plan.numel);
  });
}

}  // namespace numr::cpu::NUMR_ISA

#pragma GCC pop_options
