// Kernels of scaled_dot_product_attention (AttentionCall, AttentionBwdCall) for F32, F16 and
// BF16 with F32 scores, softmax and sums; the [Lq, Lk] scores live only in tiles of shared
// memory.
//
// A block of kAttentionThreads threads is a 16 x 16 grid (ty = tid / 16, tx = tid % 16, so
// a half warp shares ty); it owns one tile of `tile` rows (queries, or keys for backward_kv)
// of one batch index and walks the tiles of the other sequence. Tiles are copied to shared
// memory as F32 rows of dmax + 1 floats (zeros past the head dim and past the sequence; the
// odd stride keeps the 16 rows a half warp reads in distinct banks). Thread (ty, tx) computes
// the scores of rows ty + 16 r and columns tx + 16 c (r, c < tile / 16), and owns the output
// columns tx + 16 c (c < dmax / 16) of the same rows, so each output element is summed by one
// thread in a fixed order: no atomics, the result does not depend on timing.
//
//   forward:     per key tile: s = scale q·k (+ additive mask; -inf where not kept); online
//                softmax (m = running row max, l = running Σ exp(s - m), acc scaled by
//                exp(m_old - m_new)); p = exp(s - m) to shared, then acc += p v (v in the
//                buffer k used). out = acc / l, lse = m + log l; a row with l = 0 (no key
//                kept) gets out = 0 and lse = +inf.
//   backward_kv: a block per key tile, looping over query tiles: p = exp(s - lse_i) (0 where
//                not kept, and for lse = +inf), dp = v·dO_i, ds = p (dp - delta_i);
//                d_v += p dO, d_k += ds q; d_k scaled once by `scale` at the end.
//   backward_q:  a block per query tile, looping over key tiles: the same p and ds;
//                d_q += ds k, scaled by `scale` at the end.
//   forward, mma: the same algorithm on the tensor cores (mma.sync m16n8k16, F32
//                accumulation) for F16 and BF16, kMmaThreads = 128 threads: warp w owns
//                query rows 16 w .. 16 w + 15 of the tile, holds them as A fragments, and
//                keeps the scores and p in registers (p enters the p v product as two
//                16-bit parts, its rounding and the remainder, so it is not rounded to 16
//                bits); tiles are stored as raw 16-bit rows padded by 8 elements, v
//                transposed so that each B fragment is one 32-bit load.
// The causal triangle skips whole tiles past the diagonal (and, for backward_kv, query tiles
// before it).
//
// Parameters, the same for every kind (unused ones 0): q, k, v, mask, o (forward: out;
// backward: dO), lse, delta, d_q, d_k, d_v, o_wide (u64); n1, lq, lk, e, ev, tiles (u64:
// tiles is the number of row tiles per batch index); scale (f32); flags (u32: bit 0 causal,
// bits 1-2 the mask: 0 none, 1 Bool, 2 additive; bit 3: the forward also writes out in F32
// to o_wide); strides (u64[16], in elements: q, k, v, o as
// [n0, n1, row], then the mask's [n0, n1, row, column]). The grid is one-dimensional:
// block = batch index * tiles + tile, batch index = i0 * n1 + i1.
#pragma once

#include <cstdint>
#include <string>

#include "backends/cuda/module.h"
#include "codegen/ptx/types.h"
#include "numr/dtype.h"

namespace numr::cuda {

inline constexpr int kAttentionThreads = 256;
inline constexpr int kAttentionStrides = 16;

enum class AttentionKernel : uint8_t { forward, backward_kv, backward_q };

struct AttentionKernelConfig {
  AttentionKernel kind = AttentionKernel::forward;
  DType dtype = DType::F32;  // F32, F16 or BF16
  int dmax = 64;             // 32, 64, 128 or 256: E and Ev at most this
  bool mma = false;          // forward on the tensor cores (F16, BF16; dmax <= 128)

  int threads() const;
  // Rows of a tile: 64, or 32 for the backward above a head dim of 64 (shared memory).
  int tile() const;
  // The dynamic shared memory the kernel needs.
  int64_t shared_bytes() const;
  std::string name() const;
};

// The smallest dmax that holds head dims e and ev (both <= 256).
int attention_dmax(int64_t e, int64_t ev);

GeneratedKernel generate_attention_kernel(const AttentionKernelConfig& cfg,
                                          const ptx::Target& target);

}  // namespace numr::cuda
