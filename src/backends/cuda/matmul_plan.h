// How numr's strided views become cuBLASLt operands, without copies where the layout
// allows, and the loop over batch items that cuBLASLt's single batch stride cannot express.
//
// A matrix [rows, cols] with element strides (rs, cs) is read in place when
//   cs == 1 and rs >= cols: row-major with ld = rs (cuBLASLt: no transpose), or
//   rs == 1 and cs >= rows: column-major with ld = cs, i.e. a transposed view (TRANS).
// Strides along dims of extent 1 are never followed, so they constrain nothing. Anything
// else (negative or zero strides inside the matrix, overlapping rows) is first copied into
// a dense row-major temporary on the device, with broadcast batch dims kept broadcast (each
// distinct matrix copied once).
//
// Batch dims (already broadcast by the front end, stride 0 where broadcast) are merged from
// the innermost outward while a single stride per operand describes them: those form one
// strided-batched cuBLASLt call. Dims that do not merge (a broadcast dim outside a
// non-broadcast one, say) are looped over on the host, one call per outer index, and so are
// batch counts above kMaxBatchCount.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "backends/cuda/cublaslt_api.h"
#include "backends/cuda/cublaslt_matmul.h"
#include "core/backend.h"

namespace numr::cuda {

class CudaDevice;

// Batch items per cuBLASLt call at most: a batch count is an int32 there, and a grid's
// y/z extent is 65535, which some kernels put the batch on.
inline constexpr int64_t kMaxBatchCount = 65535;

// Device memory from the device's caching allocator, freed stream-ordered on destruction
// (work queued before then may still read it).
class DeviceTemp {
 public:
  DeviceTemp(CudaDevice& dev, size_t bytes);
  ~DeviceTemp();
  DeviceTemp(const DeviceTemp&) = delete;
  DeviceTemp& operator=(const DeviceTemp&) = delete;
  void* get() const { return ptr_; }

 private:
  CudaDevice& dev_;
  void* ptr_ = nullptr;
};

// The device address of element `offset` of a tensor stored at base.
uint64_t operand_address(const void* base, int64_t offset, DType dt);

// dst = src (equal shapes, any strides and dtypes) on dev's stream: one cuMemcpyDtoDAsync
// when both are dense with one dtype, else the copy kernels (run_copy).
void copy_on_device(CudaDevice& dev, const TensorRef& src, const TensorRef& dst);

// Operands copied into dense temporaries so far, process-wide: lets tests check which
// views are read in place.
uint64_t gemm_operand_copies();

// cuBLASLt's types for a numr dtype. F32 uses TF32 tensor cores only when
// numr::allow_tf32() is on; F16 and BF16 accumulate and scale in f32, F64 in f64.
struct LtTypes {
  cudaDataType_t data = CUDA_R_32F;
  cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
  cudaDataType_t scale = CUDA_R_32F;
};
LtTypes lt_types(DType dt);

// How a matrix [rows, cols] with element strides (rs, cs) can be read in place (see the
// top of this file); ok is false when it cannot.
struct MatrixLayout {
  bool ok = false;
  bool col_major = false;
  int64_t ld = 0;
};
MatrixLayout lt_matrix_layout(int64_t rows, int64_t cols, int64_t rs, int64_t cs);

// One operand (a or b) as cuBLASLt reads it.
struct LtOperandView {
  uint64_t addr = 0;  // the first element of batch item 0
  bool col_major = false;
  int64_t ld = 0;
  std::vector<int64_t> batch_strides;  // one per batch dim of the plan, >= 0
};

// One cuBLASLt call of a plan: element offsets from each operand's address (d's also
// applies to every output shaped like out: C, aux) and the batch items it covers.
struct GemmPiece {
  int64_t a_off = 0, b_off = 0, d_off = 0;
  int64_t count = 1;
  friend bool operator==(const GemmPiece&, const GemmPiece&) = default;
};

// The batch of a product: `inner_count` items per call with one stride per operand, the
// dims that did not merge looped over. rows_folded: a shared b (stride 0) and a stack of
// row-major a items (a_stride = m * ld) became one product with inner_count * m rows.
struct BatchPlan {
  int64_t inner_count = 1, a_stride = 0, b_stride = 0, d_stride = 0;
  bool rows_folded = false;
  std::vector<int64_t> outer_extents;
  std::vector<int64_t> outer_a, outer_b, outer_d;  // strides of the looped dims

  // Calls f once per cuBLASLt call, in order (folded: one piece of count 1).
  void for_each_piece(const std::function<void(const GemmPiece&)>& f) const;
};

// Plans the batch dims `batch` of a product with a [.., m, k] and b [.., k, n] (their batch
// strides, >= 0, one per dim) into a contiguous out [.., m, n]. a_row_major_ld: a's ld when
// it is read row-major, 0 otherwise (only such an a folds).
BatchPlan plan_batch(const Shape& batch, const std::vector<int64_t>& a_strides,
                     const std::vector<int64_t>& b_strides, int64_t m, int64_t n,
                     int64_t a_row_major_ld);

// out[i] = a[i] @ b[i] for the batch items i of out's batch shape, out contiguous.
class GemmPlan {
 public:
  // Reads a and b in place where their layouts allow (copy_all: copy both, dense and
  // freshly allocated, hence aligned for every cuBLASLt kernel), and plans the batch.
  GemmPlan(CudaDevice& dev, const TensorRef& a, const TensorRef& b, const Shape& batch,
           bool copy_all);
  GemmPlan(const GemmPlan&) = delete;
  GemmPlan& operator=(const GemmPlan&) = delete;

  int64_t m = 0, n = 0, k = 0;
  LtOperandView a, b;
  BatchPlan batch;
  // Rows of D per call (m, or inner_count * m when folded).
  int64_t rows_per_call() const { return batch.rows_folded ? batch.inner_count * m : m; }

 private:
  std::vector<std::unique_ptr<DeviceTemp>> temps_;  // copies of a and b, if any
};

// The cuBLASLt description of one call of a plan covering `count` items with `rows` rows
// of D each (plan.rows_per_call()): the transposes and the layouts of cuBLASLt's A (our
// b), B (our a) and D (also C's). Its A pointer is b.addr + the piece's b offset, its B
// pointer a.addr + the a offset.
struct LtShape {
  LtMatmulDesc desc;
  LtLayout a, b, d;
};
LtShape describe_gemm(const LtTypes& types, int64_t rows, int64_t n, int64_t k,
                      const LtOperandView& a, const LtOperandView& b, const BatchPlan& batch,
                      int64_t count);

// What a GEMM writes besides the product: D = epilogue(A @ B + [C] + [bias]).
struct GemmOutputs {
  uint64_t d = 0;  // contiguous [batch.., m, n]
  // D (and C) in f32 whatever the operands' dtype: the unrounded f32 accumulators of an
  // F16/BF16 product (cuBLASLt supports 16-bit A/B with 32F C/D under COMPUTE_32F).
  bool d_f32 = false;
  cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;
  uint64_t bias = 0;  // [n], shared by every batch item
  uint64_t aux = 0;   // GELU_AUX: the pre-activation, like d
  uint64_t c = 0;     // added with beta = 1; like d
};

// Queues the plan's cuBLASLt calls. Returns false when cuBLASLt has no algorithm for this
// configuration; earlier pieces may then have been written already, which is harmless
// since every fallback rewrites all of d.
bool run_gemm(CudaDevice& dev, DType dt, const GemmPlan& plan, const GemmOutputs& out);

// Queues one cuBLASLt call: piece.count items of `rows` rows of D each (rows_per_call(),
// or fewer for a slice of the rows whose a offset the caller moved), piece.d_off counted
// in D's elements. Returns false, having queued nothing, when cuBLASLt has no algorithm.
bool run_gemm_call(CudaDevice& dev, DType dt, const GemmPlan& plan, const GemmPiece& piece,
                   int64_t rows, const GemmOutputs& out);

}  // namespace numr::cuda
