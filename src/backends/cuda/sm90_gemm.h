// A Hopper (sm_90a) GEMM with a fused epilogue, generated as PTX text:
//
//   D[M, N] = act(A[M, K] @ B[K, N] + bias[N])
//
// A and B row-major BF16, bias F32, D row-major BF16, accumulation in f32, act one of
// None, Relu, Gelu (tanh form), Silu, evaluated in f32 with one rounding to BF16.
//
// A prototype, standalone: numr's ops do not call it yet. It takes M a multiple of 128, N a
// multiple of 256 and K a multiple of 64 only (BackendLimitation otherwise).
// bench/gpu/sm90_gemm_probe.cpp checks and times it. On an H100 (driver 580, 8192 x 4096 x
// 4096) it took 0.43-0.45 ms: 1.12-1.17 times the plain cuBLASLt matmul's time and
// 0.93-0.96 times matmul_bias_activation's, whose results it matched bit for bit in every
// case the probe checks.
//
// The kernel (sm90_gemm.cpp has the details):
//  - tiles of 128 x 256 outputs, K in steps of 64; one CTA of 384 threads per SM, persistent
//    over work units: unit u, u + (number of clusters), ... where a unit is one tile, or
//    with clusters of 2 CTAs two tiles stacked along M whose common B tile each CTA loads
//    half of, into both CTAs' shared memory (multicast);
//  - warpgroup 0 is the producer: one thread issues the bulk tensor copies (TMA) of A and B
//    into a ring of 4 shared-memory stages (48 KiB each), with 128-byte swizzle;
//  - warpgroups 1 and 2 are the consumers: 64 rows x 256 columns each, with
//    wgmma.mma_async m64n256k16 (128 f32 accumulators per thread), then the epilogue
//    (bias, activation, BF16) from registers straight to global memory;
//  - the stages are handed over through mbarriers: full[s] (producer's expect_tx, completed
//    by the copies' bytes) and empty[s] (one arrival per consumer warp of every CTA of the
//    cluster once its wgmma reading the stage has completed).
#pragma once

#include <cstdint>
#include <string>

#include "backends/cuda/driver_api.h"
#include "numr/ops.h"
#include "numr/tensor.h"

namespace numr::cuda {

class CudaDevice;

// The tile and pipeline the generator emits (fixed in this version).
struct Sm90GemmTile {
  static constexpr int kM = 128;               // rows of D per CTA tile
  static constexpr int kN = 256;               // columns of D per CTA tile
  static constexpr int kK = 64;                // K per stage (one 128-byte swizzle row of BF16)
  static constexpr int kStages = 4;            // shared-memory ring depth
  static constexpr int kThreads = 384;         // producer warpgroup + 2 consumer warpgroups
  static constexpr int kABytes = kM * kK * 2;  // 16 KiB per stage
  static constexpr int kBBytes = kK * kN * 2;  // 32 KiB per stage
  static constexpr int kStageBytes = kABytes + kBBytes;  // 48 KiB: the full barrier's tx count
  // Ring, then 2 * kStages mbarriers of 8 bytes; 1 KiB more so the kernel can round the
  // dynamic shared base up to the 1024-byte alignment the 128-byte swizzle pattern needs.
  static constexpr int kBarrierOffset = kStages * kStageBytes;
  static constexpr int kSharedBytes = kBarrierOffset + 2 * kStages * 8 + 1024;
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

  // The entry point's name: "sm90_gemm_bf16_<act>_128x256x64_s4", "_c2" appended for
  // clusters of 2.
  std::string name() const;
};

// The PTX module (`.target sm_90a`) with the kernel `config.name()`. Its parameters, in
// order: tensor map of A (128 bytes), tensor map of B (128 bytes), D (u64 address), bias
// (u64 address of F32), N (u32, D's row stride in elements), tiles along N (u32), work
// units (u32: tiles / cluster; a unit is `cluster` tiles stacked along M), K blocks of 64
// (u32). Launch with Sm90GemmTile::kThreads threads, Sm90GemmTile::kSharedBytes bytes of
// dynamic shared memory and a grid of a multiple of `cluster` CTAs (the kernel declares its
// cluster shape, .reqnctapercluster). Throws BackendError for an activation it does not
// implement, an ISA older than 8.0 or a cluster size other than 1 or 2.
std::string sm90_gemm_ptx(const Sm90GemmConfig& config);

// Raw operands: device addresses of dense row-major matrices on `dev`, 16-byte aligned.
struct Sm90GemmArgs {
  uint64_t a = 0;     // BF16 [m, k]
  uint64_t b = 0;     // BF16 [k, n]
  uint64_t bias = 0;  // F32 [n]
  uint64_t d = 0;     // BF16 [m, n]
  int64_t m = 0, n = 0, k = 0;
  Activation act = Activation::None;
  int max_ctas = 0;  // grid size cap; 0: one CTA per SM (tests use 1 to run many tiles per CTA)
  int cluster = 0;   // 1 or 2 (Sm90GemmConfig::cluster); 0: 2 where m % 256 == 0, else 1
};

// The cluster size sm90_gemm_bias_act uses for args.
int sm90_gemm_cluster(const Sm90GemmArgs& args);

// Whether `dev` can run the kernel: compute capability 9.0, a driver with PTX ISA 8.0 or
// newer and cuTensorMapEncodeTiled. When not, *reason (if given) says why.
bool sm90_gemm_supported(const CudaDevice& dev, std::string* reason = nullptr);

// Shapes the kernel takes: m % 128 == 0, n % 256 == 0, k % 64 == 0, all positive.
bool sm90_gemm_shape_ok(int64_t m, int64_t n, int64_t k);

// The two tensor maps (A: dims {k, m}, box {64, 128}; B: dims {n, k}, box {64, 64}; BF16,
// 128-byte swizzle). Throws BackendError naming the map when the driver refuses it.
void sm90_gemm_tensor_maps(const Sm90GemmArgs& args, CUtensorMap& map_a, CUtensorMap& map_b);

// Queues the kernel on dev's stream. Throws BackendUnavailable when !sm90_gemm_supported,
// BackendLimitation for other shapes (or a cluster of 2 with m % 256 != 0),
// InvalidArgument for misaligned addresses.
void sm90_gemm_bias_act(CudaDevice& dev, const Sm90GemmArgs& args);

// The same on tensors: a BF16 [m, k], b BF16 [k, n], bias F32 [n], all contiguous on one
// CUDA device. Returns D, a new BF16 [m, n] tensor.
Tensor sm90_gemm_bias_act(const Tensor& a, const Tensor& b, const Tensor& bias, Activation act,
                          int max_ctas = 0, int cluster = 0);

}  // namespace numr::cuda
