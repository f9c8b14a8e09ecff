// run_attention and run_attention_bwd: the kernels of attention_kernels.h on the 4-D views
// of AttentionCall. The forward of F16 and BF16 up to a head dim of 128 runs on the tensor
// cores (forward, mma), the rest with FMA. The backward runs backward_kv (a block per key tile:
// d_k, d_v) and backward_q (a block per query tile: d_q), each output element written by one
// thread.
#include <array>
#include <cstdint>

#include "backends/cuda/attention_kernels.h"
#include "backends/cuda/context.h"
#include "backends/cuda/launch.h"
#include "backends/cuda/ops.h"
#include "backends/cuda/reduce_host.h"
#include "numr/error.h"

namespace numr::cuda {
namespace {

constexpr const char* kOp = "scaled_dot_product_attention";

using Strides16 = std::array<uint64_t, kAttentionStrides>;

// The parameters every attention kernel takes, in order (attention_kernels.h).
struct Params {
  uint64_t q = 0, k = 0, v = 0, mask = 0, o = 0, lse = 0, delta = 0, d_q = 0, d_k = 0, d_v = 0,
           o_wide = 0;
  uint64_t n1 = 1, lq = 0, lk = 0, e = 0, ev = 0, tiles = 1;
  float scale = 1.0f;
  uint32_t flags = 0;
  Strides16 strides{};
};

uint64_t address(const TensorRef& t) {
  return device_address(t.base, t.offset, dtype_size(t.dtype));
}

// A 4-D view's [n0, n1, row] strides into s at `first`; the last dim must be unit-stride.
void put_strides(Strides16& s, int first, const TensorRef& t, const char* what) {
  if (t.ndim() != 4 || (t.shape[3] > 1 && t.strides[3] != 1))
    fail<BackendError>(kOp, "CUDA kernels want ", what, " as [n0, n1, L, D] with unit last stride");
  for (int i = 0; i < 3; ++i) s[size_t(first + i)] = uint64_t(t.strides[size_t(i)]);
}

Params common(const TensorRef& q, const TensorRef& k, const TensorRef& v, const TensorRef& mask,
              bool has_mask, bool causal, double scale) {
  const DType t = q.dtype;
  if (k.dtype != t || v.dtype != t)
    fail<BackendError>(kOp, "CUDA kernels want one dtype for q, k and v");
  Params p;
  p.q = address(q);
  p.k = address(k);
  p.v = address(v);
  put_strides(p.strides, 0, q, "q");
  put_strides(p.strides, 3, k, "k");
  put_strides(p.strides, 6, v, "v");
  p.n1 = uint64_t(q.shape[1]);
  p.lq = uint64_t(q.shape[2]);
  p.lk = uint64_t(k.shape[2]);
  p.e = uint64_t(q.shape[3]);
  p.ev = uint64_t(v.shape[3]);
  p.scale = float(scale);
  p.flags = causal ? 1u : 0u;
  if (has_mask) {
    if (mask.ndim() != 4) fail<BackendError>(kOp, "CUDA kernels want the mask as 4-D");
    p.mask = address(mask);
    p.flags |= (mask.dtype == DType::Bool ? 1u : 2u) << 1;
    for (int i = 0; i < 4; ++i) p.strides[size_t(12 + i)] = uint64_t(mask.strides[size_t(i)]);
  }
  return p;
}

void launch_attention(CudaDevice& dev, AttentionKernel kind, DType t, int dmax, Params p,
                      int64_t batch, int64_t rows) {
  AttentionKernelConfig cfg{kind, t, dmax};
  // The tensor-core forward where it exists: F16 and BF16 up to a head dim of 128.
  cfg.mma = kind == AttentionKernel::forward && t != DType::F32 && dmax <= 128;
  const int64_t tiles = ceil_div(rows, cfg.tile());
  if (batch * tiles > int64_t(INT32_MAX))
    fail<BackendLimitation>(kOp, "more than 2^31 - 1 tiles on CUDA");
  p.tiles = uint64_t(tiles);
  const CUfunction f = reduce_family_kernel(
      dev, cfg.name(), [&](const ptx::Target& tg) { return generate_attention_kernel(cfg, tg); });
  const LaunchConfig lc{
      {unsigned(batch * tiles)}, {unsigned(cfg.threads())}, unsigned(cfg.shared_bytes())};
  launch_kernel(dev, f, lc, cfg.name(), p.q, p.k, p.v, p.mask, p.o, p.lse, p.delta, p.d_q, p.d_k,
                p.d_v, p.o_wide, p.n1, p.lq, p.lk, p.e, p.ev, p.tiles, p.scale, p.flags, p.strides);
}

}  // namespace

void run_attention(CudaDevice& dev, const AttentionCall& call) {
  Params p = common(call.q, call.k, call.v, call.mask, call.has_mask, call.causal, call.scale);
  const int64_t batch = call.q.shape[0] * call.q.shape[1];
  if (batch == 0 || p.lq == 0) return;
  p.o = address(call.out);
  p.lse = address(call.lse);
  if (call.has_out_wide) {
    p.o_wide = address(call.out_wide);
    p.flags |= 8u;
  }
  const TensorRef& o = call.out;
  p.strides[9] = uint64_t(o.shape[1] * o.shape[2] * o.shape[3]);
  p.strides[10] = uint64_t(o.shape[2] * o.shape[3]);
  p.strides[11] = uint64_t(o.shape[3]);
  launch_attention(dev, AttentionKernel::forward, call.q.dtype,
                   attention_dmax(int64_t(p.e), int64_t(p.ev)), p, batch, int64_t(p.lq));
}

void run_attention_bwd(CudaDevice& dev, const AttentionBwdCall& call) {
  Params p = common(call.q, call.k, call.v, call.mask, call.has_mask, call.causal, call.scale);
  const int64_t batch = call.q.shape[0] * call.q.shape[1];
  if (batch == 0) return;
  p.o = address(call.grad);
  put_strides(p.strides, 9, call.grad, "grad");
  p.lse = address(call.lse);
  p.delta = address(call.delta);
  p.d_q = address(call.d_q);
  p.d_k = address(call.d_k);
  p.d_v = address(call.d_v);
  const int dmax = attention_dmax(int64_t(p.e), int64_t(p.ev));
  if (p.lk > 0)
    launch_attention(dev, AttentionKernel::backward_kv, call.q.dtype, dmax, p, batch,
                     int64_t(p.lk));
  if (p.lq > 0)
    launch_attention(dev, AttentionKernel::backward_q, call.q.dtype, dmax, p, batch, int64_t(p.lq));
}

}  // namespace numr::cuda
