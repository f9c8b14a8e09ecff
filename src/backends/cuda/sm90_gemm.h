// A Hopper (sm_90a) GEMM with a fused epilogue, generated as PTX text:
//
//   D[M, N] = act(A[M, K] @ B[K, N] + bias[N])
//
// A and B row-major BF16, bias F32 or BF16, D row-major BF16, accumulation in f32, act one of
// None, Relu, Gelu (tanh form), Silu, evaluated in f32 with one rounding to BF16. Or, the
// TF32 form (Sm90GemmConfig::dtype F32): A, B and D F32, the products on TF32 tensor cores.
//
// gemm_epilogue_own.h sends it the matmul_bias_activation calls it can take.
// It takes M a multiple of 128, N a multiple of 256 and K a multiple of 64 only
// (BackendLimitation otherwise). bench/gpu/sm90_gemm_probe.cpp checks it against
// matmul_bias_activation's cuBLASLt path (within its tolerance; the tests require the bits
// of the staged path but for grouped reciprocals and split tails, below) and
// times it. The history below is the ping-pong schedule's (sm90_gemm_default_config has
// the measurements behind the current choice). On an H200 (driver 580, 700 W limit: SM
// clocks 1.2-1.4 GHz under this load),
// its time over the plain cuBLASLt matmul's at 8192 x 4096 x 4096, clusters of 1 / 2, the
// median of 31 rounds interleaved with the matmul and the variants below:
//   none 1.004 / 1.005, relu 0.998 / 1.007, gelu 1.050 / 1.045, silu 1.003 / 1.006;
// the previous epilogue (16-byte stores, div.full.f32) in the same rounds: none 1.006 /
// 1.007, relu 1.003 / 1.019, gelu 1.077 / 1.098, silu 1.057 / 1.057. In the same rounds of
// two runs, the split division (Sm90GemmConfig::split_division) took 0.3-1.2% off gelu
// and 0.9-1.5% off silu (with 8-byte stores), the 8-byte stores (store_width) 0.2-1.6% off
// none and relu, 0.3-4% off gelu and silu. Whole runs move by 2-3% (silu's 1.057 was 1.033
// in the run before). With the previous epilogue, one run
// each: 8192 x 8192 x 8192 none 0.962 / 1.013, relu 0.936 / 0.990, gelu 0.991 / 1.022, silu
// 0.962 / 1.015; 4096 x 4096 x 4096 none 1.007 / 1.013, relu 1.015 / 1.022, gelu 1.097 /
// 1.082, silu 1.045 / 1.052. The first version (cooperative, 4-byte stores) took 1.08-1.13
// at the first shape. What keeps gelu above none is the epilogue's arithmetic itself: the
// GPU runs at its power limit, so the extra work costs clock even where it overlaps the
// products (ping-pong); each f32 instruction executed per element (not predicated off)
// costs roughly 0.5-1%, and gelu's formula had 11 of them (silu's 6). Since gelu's
// exponent is taken in base 2 (math::gelu_exp2_arg: 7 instructions) it costs what none
// and silu cost: on an H100, one run, none 1.064 / 1.079, relu 1.035 / 1.071, gelu 1.080 /
// 1.083, silu 1.087 / 1.069 (on that GPU the kernel itself is 3.5-8% above cuBLASLt).
//
// The kernel (sm90_gemm.cpp has the details):
//  - one CTA of 384 threads per SM, persistent over work units, K in steps of 64: unit u,
//    u + (number of clusters), ... where a unit is one tile, or with clusters of 2 CTAs two
//    tiles stacked along M whose common B tile each CTA loads half of, into both CTAs'
//    shared memory (multicast); units in groups of 16 unit rows, M fastest inside a group,
//    so that the tiles in flight share columns of B in L2;
//  - warpgroup 0 is the producer: one thread issues the bulk tensor copies (TMA) of A and B
//    into a ring of shared-memory stages, with 128-byte swizzle;
//  - warpgroups 1 and 2 are the consumers, ping-pong (or cooperative, which
//    sm90_gemm_default_config picks for every kernel): each takes every other
//    tile of 128 x 128 outputs (two wgmma.mma_async m64n128k16 per k step, 128 f32
//    accumulators per thread), their main loops taking turns so that one's epilogue (bias,
//    activation, BF16, 8-byte stores from registers) runs while the other's products do;
//    6 stages of 32 KiB. (Cooperative: both on one 128 x 256 tile, 64 rows each with
//    m64n256k16, 4 stages of 48 KiB.)
//  - split tail (the default for BF16 with clusters of 1): when the last wave of tiles
//    would fill at most half of the grid, its tiles are split along K over every CTA
//    (stream-K), the CTA with a tile's last k blocks adding the other parts (a fixed order);
//  - the stages are handed over through mbarriers: full[s] (producer's expect_tx, completed
//    by the copies' bytes) and empty[s] (one arrival per consumer warp reading the stage, of
//    every CTA of the cluster, once its wgmma reading the stage has completed).
//
// TF32. wgmma reads 32-bit operands from shared memory only K-major, and B [K, N] is
// N-major. So the TF32 form computes D^T = B^T A^T: A's tile, K-major as loaded, is wgmma's
// B operand (through a descriptor), and B^T is wgmma's A operand, from registers: each
// thread loads its fragments from the B stage with 16-byte ld.shared (4 consecutive columns
// of one k row), whose order among the tile's 128 rows of D^T is free and is chosen so that
// the loads of a quarter warp hit 8 different 16-byte chunks under the 128-byte swizzle (no
// bank conflicts) and each thread ends up holding 4 consecutive columns of D per row: the
// epilogue stores 16 bytes per row with no exchange between lanes. K steps of 32 (one
// 128-byte row), two fragment sets used in turn so that one k block's fragments load while
// the previous block's products run. Both schedules: a warpgroup's tile is 128 x 128 of D
// either way; cooperative, the two share A's stage and take the two halves of a 256-column
// B stage. On an H200 (the probe with --tf32 --variants, 8192 x 4096 x 4096, over cuBLASLt's
// TF32 matmul in the same rounds; clusters of 1 / 2): from an idle GPU, cooperative none
// 0.918 / 0.912, relu 0.914 / 0.909, gelu 0.924 / 0.931, silu 0.936 / 0.929, ping-pong
// 1.045-1.068; back to back at the power limit, cooperative 0.863-0.886 (cluster 1,
// per-round medians 0.857-0.883), ping-pong 1.001-1.017. (Ping-pong in earlier runs at
// the power limit: cluster 1 none 0.989, relu 1.011, gelu 0.988, silu 0.985.)
#pragma once

#include <cstdint>
#include <string>

#include "backends/cuda/driver_api.h"
#include "numr/ops.h"
#include "numr/tensor.h"

namespace numr::cuda {

class CudaDevice;

// The shape granularity of the kernel and its thread count (every schedule).
struct Sm90GemmTile {
  static constexpr int kM = 128;        // rows of D per CTA tile
  static constexpr int kN = 256;        // columns of D the shapes must be a multiple of
  static constexpr int kK = 64;         // K per stage (one 128-byte swizzle row of BF16)
  static constexpr int kThreads = 384;  // producer warpgroup + 2 consumer warpgroups
};

// How the two consumer warpgroups share the work (sm90_gemm.cpp has the details).
enum class Sm90Schedule {
  // Both on one 128 x 256 tile, 64 rows each (m64n256k16); they finish a tile together,
  // and the tensor cores wait while both run the epilogue.
  Cooperative,
  // Each on its own 128 x 128 tile (two m64n128k16 per k step), the tiles alternating
  // between them: one runs its epilogue while the other's products run.
  PingPong,
};

struct Sm90GemmConfig {
  Activation act = Activation::None;  // None, Relu, Gelu or Silu
  // CTAs per cluster. 2: the CTAs of a cluster take vertically adjacent tiles (same
  // columns) and each loads half of their common B tile into both CTAs' shared memory
  // (multicast), halving B's traffic from L2; needs m % 256 == 0.
  int cluster = 1;
  // The PTX ISA written in `.version`: the driver's (DeviceProperties::ptx_isa_*); wgmma,
  // setmaxnreg and the sm_90a target need 8.0 or newer.
  int ptx_major = 8, ptx_minor = 0;
  Sm90Schedule schedule = Sm90Schedule::PingPong;
  // Shared-memory ring depth; 0: the schedule's default (4 cooperative, 6 ping-pong).
  int stages = 0;
  // Tile order: 0, N fastest (unit u covers unit row u / tiles_n, column u % tiles_n);
  // g > 0, groups of g unit rows taken M fastest inside a group, so that the tiles in
  // flight at once span fewer columns of B.
  int group_rows = 16;
  // Bytes each lane stores per row and st.global: 16, after a 4 x 4 word exchange among the
  // lanes of a quad (two shuffle rounds); 8, after a 2 x 2 exchange between lane pairs (one
  // round: half the selects and shuffles), each quad still writing whole 32-byte sectors.
  int store_width = 8;
  // Gelu, Silu: x / den (den = 1 + exp(-z) >= 1) as x * rcp.approx.ftz(den) for every den in
  // [1, 2^126], where div.full.f32 takes that very reciprocal and product (it scales both
  // operands by 1/4 only above 2^126, and by 2^24 only below 2^-126); one setp per quotient
  // checks the range, and a batch of 8 with any den above it (or NaN) is redone with
  // div.full.f32. The probe checks the equality on the GPU for every den in the range.
  bool split_division = true;
  // BF16 Gelu, Silu with split_division: the quotients x_i / d_i of a group of this many
  // values (1, 2 or 4) from one reciprocal r = rcp(d_0 ... d_n-1), x_i / d_i = x_i * (r *
  // the other d's product), wherever that product is at most 2^126 (else the batch is
  // redone with div.full.f32): 1 + 1/n MUFU operations per value instead of 2 (ex2, rcp).
  // The quotients then differ from div.full.f32's by a few ulp of f32, so a BF16 result may
  // differ from the staged path's by one BF16 ulp where its f32 value lies that close to a
  // rounding boundary. "_q2", "_q4" in the name. sm90_gemm_default_config takes 2 for BF16:
  // the epilogue at a tile's end is bound by the MUFU unit (16 results per clock and SM), and
  // at 8192 x 4096 x 4096 on an H100 (probe, from an idle GPU, clusters of 1) Gelu took
  // 1.020-1.027 of the plain matmul's time against 1.029-1.038 with 1, Silu 1.018-1.025
  // against 1.020-1.027, in the same rounds; 4 gained nothing over 2.
  int reciprocal_group = 1;
  // BF16: A, B and D BF16. F32: A, B and D F32, the products on TF32 tensor cores (the
  // tensor cores read each operand's upper 19 bits); see "TF32" above.
  DType dtype = DType::BF16;
  // Cooperative BF16 only: the epilogue of the tile's last `deferred_groups` column groups
  // of 32 (0 .. 8) waits in registers as acc + bias (16 per group and thread) and runs
  // while the next tile's products do, one row set of one group per k block (every unit
  // left in the last one); the CTA's last tile's before it exits. Up to 5 fit beside the
  // accumulators without spills.
  int deferred_groups = 0;
  // The bias's dtype: F32, or BF16 (BF16 operands only), widened in the kernel; "_bias16"
  // in the name.
  DType bias_dtype = DType::F32;
  // Cooperative BF16 with clusters of 1 only ("_sk" in the name): the tiles of a last wave
  // that would leave at least half of the grid idle are split along K over every CTA
  // (stream-K; sm90_gemm_split_tiles says when). Each CTA computes its part of them after
  // its whole tiles; the CTA with a tile's last k blocks adds the other parts' f32
  // accumulators (from a workspace, in a fixed order) and runs the epilogue. A split
  // tile's sum is grouped differently from the unsplit kernel's, so its outputs may differ
  // from it (and from the staged path) by the rounding of those f32 additions; they are
  // the same on every call with the same grid. sm90_gemm.cpp, "Split tail", has the rest.
  bool split_tail = false;

  // The entry point's name, e.g. "sm90_gemm_bf16_gelu_pp128x128x64_s6_g16_w8_rcp" (the
  // defaults; "_w8" for 8-byte stores, "_rcp" for split division where the activation
  // divides), "sm90_gemm_bf16_gelu_128x256x64_s4" (cooperative, N fastest, store_width 16,
  // no split division); "_c2" appended for clusters of 2.
  std::string name() const;
};

// Tile, ring and shared memory of the kernel `config` selects.
struct Sm90GemmLayout {
  int tile_n = 0;        // columns of one consumer tile (256 cooperative, 128 ping-pong)
  int stages = 0;        // ring depth
  int stage_bytes = 0;   // A (128 x 64 BF16) + B (64 x tile_n BF16): the full barrier's tx count
  int shared_bytes = 0;  // dynamic shared memory to launch with
};
Sm90GemmLayout sm90_gemm_layout(const Sm90GemmConfig& config);

// The PTX module (`.target sm_90a`) with the kernel `config.name()`. Its parameters, in
// order: tensor map of A (128 bytes), tensor map of B (128 bytes), D (u64 address), bias
// (u64 address of config.bias_dtype), N (u32, D's row stride in elements), tiles along N (u32: N /
// layout's tile_n), work units (u32: tiles / cluster; a unit is `cluster` tiles stacked
// along M), K blocks of 64 (u32); with split_tail four more: the tiles computed whole
// (u32: the first ones in tile order; the rest are split), the call's sequence number
// (u32, never 0, new for every call while the flags live), the CTAs' flags (u64 address,
// one u64 per CTA of the grid, never written by anything else), their workspace (u64
// address, kSplitTileBytes per CTA of the grid). Launch with Sm90GemmTile::kThreads threads,
// sm90_gemm_layout(config).shared_bytes bytes of dynamic shared memory and a grid of a
// multiple of `cluster` CTAs (the kernel declares its cluster shape, .reqnctapercluster).
// Throws BackendError for an activation it does not implement, an ISA older than 8.0, a
// cluster size other than 1 or 2, or a ring that does not fit.
std::string sm90_gemm_ptx(const Sm90GemmConfig& config);

// Raw operands: device addresses of dense row-major matrices on `dev`, 16-byte aligned.
struct Sm90GemmArgs {
  uint64_t a = 0;     // [m, k] of `dtype`
  uint64_t b = 0;     // [k, n] of `dtype`
  uint64_t bias = 0;  // [n] of bias_dtype
  uint64_t d = 0;     // [m, n] of `dtype`
  int64_t m = 0, n = 0, k = 0;
  Activation act = Activation::None;
  int max_ctas = 0;  // grid size cap; 0: one CTA per SM (tests use 1 to run many tiles per CTA)
  // 1 or 2 (Sm90GemmConfig::cluster); 0: 1. At 8192 x 4096 x 4096 clusters of 2 took
  // 0.5-1.8% longer for the default BF16 kernel (H100 and H200, from an idle GPU), and on
  // an H200 1.4-5% longer for the cooperative TF32 kernel back to back (within 0.8% either
  // way from an idle GPU).
  int cluster = 0;
  // The kernel to run (its act must be `act`, its cluster the one sm90_gemm_cluster
  // chooses); null: sm90_gemm_default_config's.
  const Sm90GemmConfig* kernel = nullptr;
  DType dtype = DType::BF16;      // of a, b and d: BF16, or F32 multiplied as TF32
  DType bias_dtype = DType::F32;  // F32, or BF16 with BF16 operands
};

// The cluster size sm90_gemm_bias_act uses for args.
int sm90_gemm_cluster(const Sm90GemmArgs& args);

// Split tail (Sm90GemmConfig::split_tail): how many of `units` tiles of `k_blocks` k blocks
// a grid of `grid` CTAs splits along K: the last wave's (units % grid), when it fills at
// most half of the grid, each CTA has at least two whole tiles before it and there are at
// least 4 k blocks; else 0. On an H100 (numr_sm90_gemm_probe --variants --gap-ms 50, N = K
// = 4096, over the unsplit kernel, Gelu / None): a last wave 12% full (M = 8576) 0.966 /
// 0.966, 48% (8960) 0.992 / 0.998, 61% (9088) 1.006 / 1.007, 76% (8192) 1.010 / 1.015.
int64_t sm90_gemm_split_tiles(int64_t units, int64_t grid, int64_t k_blocks);
// Workspace bytes per CTA of a split-tail grid: one tile's 128 x 256 f32 accumulators.
inline constexpr int64_t kSplitTileBytes = int64_t(Sm90GemmTile::kM) * Sm90GemmTile::kN * 4;

// The kernel sm90_gemm_bias_act runs when the call names none: cooperative 128 x 256 tiles
// (BF16 with 16-byte stores); TF32 "TF32" above has the figures. BF16 over the plain matmul
// at 8192 x 4096 x 4096 (numr_sm90_gemm_probe --variants; ranges over clusters of 1 and 2):
//   H200, every batch of calls from an idle GPU: cooperative None 1.015-1.017, Relu
//     1.021-1.023, Gelu 1.052-1.060, Silu 1.053-1.057; ping-pong 1.13-1.14 for every
//     activation;
//   H200, back to back at the power limit: cooperative None 1.01-1.02, Relu 1.01, Gelu 1.11,
//     Silu 1.08; ping-pong None 1.00-1.03, Relu 1.00-1.02, Gelu 1.03-1.04, Silu 1.00-1.02
//     (its epilogue overlaps the other warpgroup's products);
//   H100, from an idle GPU: cooperative None 1.022, Relu 1.020-1.023, Gelu 1.051-1.061, Silu
//     1.051-1.058; ping-pong Gelu 1.27-1.34, Silu 1.27-1.37;
//   H100, back to back: cooperative None 1.02-1.04, Relu 1.02, Gelu 1.085, Silu
//     1.09 (per-round medians); ping-pong Gelu 1.20-1.23, Silu 1.09.
// A ping-pong tile loads its stages for half as many outputs as a cooperative one; only on
// the H200 at its power limit did the overlap of its epilogue pay for that. The cooperative
// epilogue itself does not overlap the products: Gelu and Silu take two MUFU operations per
// value (ex2, rcp), about 4% of a tile's time. The figures above are without a deferred
// epilogue; the default BF16 kernel defers 5 of its 8 column groups (deferred_groups), clusters
// of 1 (d0, d4, d5: deferred groups; probe --variants --gap-ms 50, from an idle GPU):
//   H100: None d0 1.015, d4 1.007, d5 1.002; Gelu 1.051, 1.028, 1.025; Silu 1.046, 1.027,
//     1.021 (back to back: Gelu d0 1.100, d5 1.036; Silu 1.081, 1.037);
//   H200: None 1.018, 1.010, 1.007; Gelu 1.048, 1.028, 1.026; Silu 1.037, 1.020, 1.018.
// With 4 column groups in registers and 2 more in shared memory, or all 8 (4 in shared
// memory) with 3 stages, Gelu and Silu ran no faster than d5 (1.027-1.028, and 1.041-1.042
// with 3 stages, H100); 6 groups in registers spill. Since then BF16 Gelu and Silu also
// take one reciprocal per pair of values (reciprocal_group 2): 1.5 MUFU operations per value.
Sm90GemmConfig sm90_gemm_default_config(Activation act, int cluster, DType dtype);

// Whether `dev` can run the kernel: compute capability 9.0, a driver with PTX ISA 8.0 or
// newer and cuTensorMapEncodeTiled. When not, *reason (if given) says why.
bool sm90_gemm_supported(const CudaDevice& dev, std::string* reason = nullptr);

// K per stage: 64 for BF16, 32 for F32 (one 128-byte row either way).
int sm90_gemm_k_step(DType dtype);

// Shapes the kernel takes: m % 128 == 0, n % 256 == 0, k % sm90_gemm_k_step(dtype) == 0,
// all positive (and at most 2^31 - 1 tiles of 128 x 128).
bool sm90_gemm_shape_ok(int64_t m, int64_t n, int64_t k, DType dtype = DType::BF16);

// The two tensor maps (A: dims {k, m}, box {64, 128}; B: dims {n, k}, box {64, 64}; BF16,
// 128-byte swizzle; for F32 boxes {32, 128} and {32, 32}); the same for every schedule. Throws
// BackendError naming the map when the driver refuses it.
void sm90_gemm_tensor_maps(const Sm90GemmArgs& args, CUtensorMap& map_a, CUtensorMap& map_b);

// Queues the kernel on dev's stream. Throws BackendUnavailable when !sm90_gemm_supported,
// BackendLimitation for other shapes (or a cluster of 2 with m % 256 != 0),
// InvalidArgument for misaligned addresses.
void sm90_gemm_bias_act(CudaDevice& dev, const Sm90GemmArgs& args);

// The same on tensors: a [m, k] and b [k, n] both BF16 or both F32 (TF32 products), bias
// [n] F32 (or BF16 with BF16 operands), all contiguous on one CUDA device. Returns D, a new
// [m, n] tensor of a's dtype. `kernel` as in Sm90GemmArgs.
Tensor sm90_gemm_bias_act(const Tensor& a, const Tensor& b, const Tensor& bias, Activation act,
                          int max_ctas = 0, int cluster = 0,
                          const Sm90GemmConfig* kernel = nullptr);

}  // namespace numr::cuda
