// A Hopper (sm_90a) GEMM with a fused epilogue, generated as PTX text:
//
//   D[M, N] = act(A[M, K] @ B[K, N] + bias[N])
//
// A and B row-major BF16, bias F32 or BF16, D row-major BF16, accumulation in f32, act one of
// None, Relu, Gelu (tanh form), Silu, evaluated in f32 with one rounding to BF16. Or, the
// TF32 form (Sm90GemmConfig::dtype F32): A, B and D F32, the products on TF32 tensor cores.
//
// gemm_epilogue_own.h sends it the matmul_bias_activation calls it can take. It takes M a
// multiple of 128, N a multiple of 256 and K a multiple of 64 (32 for TF32) only
// (BackendLimitation otherwise). bench/gpu/sm90_gemm_probe.cpp checks it against
// matmul_bias_activation's cuBLASLt path and times it; BENCHMARKS.md ("Hopper GEMM") has
// the measurements behind its design.
//
// The kernel (sm90_gemm_parts.h lists the files that generate each part):
//  - one CTA of 384 threads per SM, persistent over work units, K in steps of 64: unit u,
//    u + (number of clusters), ... where a unit is one tile, or with clusters of 2 CTAs two
//    tiles stacked along M whose common B tile each CTA loads half of, into both CTAs'
//    shared memory (multicast); units in groups of 16 unit rows, M fastest inside a group,
//    so that the tiles in flight share columns of B in L2;
//  - warpgroup 0 is the producer: one thread issues the bulk tensor copies (TMA) of A and B
//    into a ring of 4 shared-memory stages of 48 KiB, with 128-byte swizzle;
//  - warpgroups 1 and 2 are the consumers, both on one 128 x 256 tile, 64 rows each
//    (wgmma.mma_async m64n256k16, 128 f32 accumulators per thread); then the epilogue (bias,
//    activation, BF16, 16-byte stores from registers). The BF16 kernel defers the epilogue
//    of 5 of its 8 column groups into the next tile's main loop, so that it overlaps the
//    products;
//  - split tail (BF16 with clusters of 1): when the last wave of tiles would fill at most
//    half of the grid, its tiles are split along K over every CTA (stream-K), the CTA with
//    a tile's last k blocks adding the other parts (a fixed order);
//  - the stages are handed over through mbarriers: full[s] (producer's expect_tx, completed
//    by the copies' bytes) and empty[s] (one arrival per consumer warp reading the stage, of
//    every CTA of the cluster, once its wgmma reading the stage has completed).
//
// TF32. wgmma reads 32-bit operands from shared memory only K-major, and B [K, N] is
// N-major. So the TF32 form computes D^T = B^T A^T: A's tile, K-major as loaded, is wgmma's
// B operand, and B^T is wgmma's A operand, from registers loaded from the B stage so that
// each thread ends up with 4 consecutive columns of D per row: the epilogue stores 16 bytes
// per row with no exchange between lanes. K steps of 32 (one 128-byte row).
#pragma once

#include <cstdint>
#include <string>

#include "backends/cuda/driver_api.h"
#include "numr/ops.h"
#include "numr/tensor.h"

namespace numr::cuda {

class CudaDevice;

// The shape granularity of the kernel and its thread count.
struct Sm90GemmTile {
  static constexpr int kM = 128;        // rows of D per CTA tile
  static constexpr int kN = 256;        // columns of D the shapes must be a multiple of
  static constexpr int kK = 64;         // K per stage (one 128-byte swizzle row of BF16)
  static constexpr int kThreads = 384;  // producer warpgroup + 2 consumer warpgroups
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
  // BF16: A, B and D BF16. F32: A, B and D F32, the products on TF32 tensor cores (the
  // tensor cores read each operand's upper 19 bits); see "TF32" above. Gelu and Silu divide
  // with reciprocals (sm90_gemm_activation.cpp): in TF32 with div.full.f32's bits, in BF16
  // with one reciprocal per pair of values, whose quotients are within a few f32 ulp of
  // div.full.f32's, so that a BF16 result may differ from the staged path's by one BF16 ulp
  // where its f32 value lies that close to a rounding boundary.
  DType dtype = DType::BF16;
  // The bias's dtype: F32, or BF16 (BF16 operands only), widened in the kernel; "_bias16"
  // in the name.
  DType bias_dtype = DType::F32;
  // BF16 with clusters of 1 only ("_sk" in the name): the tiles of a last wave that would
  // leave at least half of the grid idle are split along K over every CTA (stream-K;
  // sm90_gemm_split_tiles says when). Each CTA computes its part of them after its whole
  // tiles; the CTA with a tile's last k blocks adds the other parts' f32 accumulators (from
  // a workspace, in a fixed order) and runs the epilogue. A split tile's sum is grouped
  // differently from the unsplit kernel's, so its outputs may differ from it (and from the
  // staged path) by the rounding of those f32 additions; they are the same on every call
  // with the same grid. sm90_gemm_schedule.cpp has the rest.
  bool split_tail = false;

  // The entry point's name, e.g. "sm90_gemm_bf16_gelu_128x256x64_s4_g16_rcp_q2_d5_sk";
  // "_c2" appended for clusters of 2.
  std::string name() const;
};

// Tile, ring and shared memory of the kernel `config` selects.
struct Sm90GemmLayout {
  int tile_n = 0;        // columns of a tile (256)
  int stages = 0;        // ring depth
  int stage_bytes = 0;   // A (128 x k step) + B (k step x tile_n): the full barrier's tx count
  int shared_bytes = 0;  // dynamic shared memory to launch with
};
Sm90GemmLayout sm90_gemm_layout(const Sm90GemmConfig& config);

// The PTX module (`.target sm_90a`) with the kernel `config.name()`. Its parameters, in
// order: tensor map of A (128 bytes), tensor map of B (128 bytes), D (u64 address), bias
// (u64 address of config.bias_dtype), N (u32, D's row stride in elements), tiles along N (u32: N /
// layout's tile_n), work units (u32: tiles / cluster; a unit is `cluster` tiles stacked
// along M), K blocks (u32, of sm90_gemm_k_step); with split_tail four more: the tiles computed
// whole (u32: the first ones in tile order; the rest are split), the call's sequence number (u32,
// never 0, new for every call while the flags live), the CTAs' flags (u64 address, one u64 per CTA
// of the grid, never written by anything else), their workspace (u64 address, kSplitTileBytes per
// CTA of the grid). Launch with Sm90GemmTile::kThreads threads,
// sm90_gemm_layout(config).shared_bytes bytes of dynamic shared memory and a grid of a
// multiple of `cluster` CTAs (the kernel declares its cluster shape, .reqnctapercluster).
// Throws BackendError for an activation it does not implement, an ISA older than 8.0, a
// cluster size other than 1 or 2, a dtype or bias dtype it does not take, or split tail
// where it does not apply.
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
  // 1 or 2 (Sm90GemmConfig::cluster); 0: 1, since clusters of 2 measured no faster.
  int cluster = 0;
  // The kernel to run (its act must be `act`, its cluster the one sm90_gemm_cluster
  // chooses; tests use it to turn split tail off); null: sm90_gemm_default_config's.
  const Sm90GemmConfig* kernel = nullptr;
  DType dtype = DType::BF16;      // of a, b and d: BF16, or F32 multiplied as TF32
  DType bias_dtype = DType::F32;  // F32, or BF16 with BF16 operands
};

// The cluster size sm90_gemm_bias_act uses for args.
int sm90_gemm_cluster(const Sm90GemmArgs& args);

// Split tail (Sm90GemmConfig::split_tail): how many of `units` tiles of `k_blocks` k blocks
// a grid of `grid` CTAs splits along K: the last wave's (units % grid), when it fills at
// most half of the grid, each CTA has at least two whole tiles before it and there are at
// least 4 k blocks; else 0. Past half full, splitting measured slower than not.
int64_t sm90_gemm_split_tiles(int64_t units, int64_t grid, int64_t k_blocks);
// Workspace bytes per CTA of a split-tail grid: one tile's 128 x 256 f32 accumulators.
inline constexpr int64_t kSplitTileBytes = int64_t(Sm90GemmTile::kM) * Sm90GemmTile::kN * 4;

// The kernel sm90_gemm_bias_act runs when the call names none: `act`, `cluster` and
// `dtype` as given, an F32 bias, split tail where it applies (BF16, clusters of 1).
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
// 128-byte swizzle; for F32 boxes {32, 128} and {32, 32}). Throws
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
