// The interface every backend implements. Front ends in src/ops validate arguments and
// allocate outputs, then call one method per op family with a typed call struct; the
// backend only computes. Backends are registered per DeviceType at run time.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "numr/device.h"
#include "numr/dtype.h"
#include "numr/op_info.h"
#include "numr/ops.h"
#include "numr/shape.h"

namespace numr {

class Tensor;

// A strided view of backend memory: element (i0, i1, ...) lives at
// base + (offset + Σ i_k * strides[k]) * dtype_size.
struct TensorRef {
  void* base = nullptr;  // Storage::handle()
  int64_t offset = 0;    // in elements
  DType dtype = DType::F32;
  Shape shape;
  Strides strides;

  int64_t numel() const { return shape_numel(shape); }
  int64_t ndim() const { return int64_t(shape.size()); }
};
TensorRef ref_of(const Tensor& t);

// out = op(in...), elementwise. Every input's shape equals out's; broadcast inputs carry
// stride 0. out is contiguous and never overlaps an input.
// Scalars: scalar ops use scalars[0]; leaky_relu/elu their slope/alpha in scalars[0];
// clamp uses scalars[0] (lo) and scalars[1] (hi), with has_lo/has_hi.
// ActMulBwd ops have two outputs: out (d_a) and out2 (d_b), both contiguous.
// Complex operands (Complex64, Complex128) come only for the ops of
// complex_elementwise_op, and only where supports(op, that dtype) says so: mul and div of
// two complex tensors into one, abs of one into its part dtype (F32, F64), each element
// computed from its (re, im) pair by the formulas of src/math/complex.h.
struct ElementwiseCall {
  OpId op;
  TensorRef out;
  TensorRef out2;
  int n_out = 1;
  std::array<TensorRef, 3> in;
  int n_in = 0;
  std::array<double, 2> scalars{0.0, 0.0};
  bool has_lo = true, has_hi = true;
};

// Reduces `in` over its last `in.ndim() - n_keep` dims into the contiguous `out`, whose
// element count is the product of the first n_keep dims of `in` (front ends permute the
// reduced dims to the end). op is a Reduce-family op. For var/std `correction` applies.
// argmax/argmin write I64 indexes into the reduced block (row-major over reduced dims).
struct ReduceCall {
  OpId op;
  TensorRef in;
  int n_keep = 0;
  TensorRef out;
  int64_t correction = 1;
};

// Scan-family (cumsum, cumprod) and Softmax-family ops along one axis. in and out are
// contiguous, with the logical shape [outer, n, inner] and the op running along n.
struct AxisCall {
  OpId op;
  TensorRef in;
  TensorRef out;
  int64_t outer = 1, n = 1, inner = 1;
};

// out[b] = a[b] @ b_[b] for each batch index b. a: [batch.., M, K], b: [batch.., K, N]
// (batch dims already broadcast, stride 0 where broadcast), out: contiguous
// [batch.., M, N]. Any strides on a and b.
struct MatmulCall {
  TensorRef a, b, out;
};

// out = act(a @ b + bias) (+ residual); pre = a @ b + bias when has_pre. a, b as in
// MatmulCall; bias [N]; residual, out and pre contiguous [batch.., M, N].
struct GemmEpilogueCall {
  TensorRef a, b, bias, residual, out, pre;
  Activation act = Activation::None;
  bool has_residual = false, has_pre = false;
};

// grad, saved and grad_pre contiguous [rows, N]; d_bias [N]:
// grad_pre = grad * act'(x), where x is saved (the pre-activation) when saved_is_pre, and
// act' is computed from the output saved otherwise; d_bias = Σ_rows grad_pre.
struct BiasActBwdCall {
  TensorRef grad, saved, grad_pre, d_bias;
  Activation act = Activation::None;
  bool saved_is_pre = true;
};

// rms_norm or layer_norm (op) over rows of d elements: x and out contiguous [rows, d];
// weight and bias (layer_norm only) contiguous [d]; all of one float dtype. When has_stats,
// mean (layer_norm only) and rstd, contiguous [rows] in compute_dtype, receive the row
// statistics. Statistics in compute_dtype; out rounded once. When has_residual (the fused
// add-norms), the row normalised is x + residual (contiguous [rows, d]) rounded to x's dtype,
// which also goes to sum (contiguous [rows, d]).
struct RowNormCall {
  OpId op;
  TensorRef x, weight, bias, out, mean, rstd;
  int64_t rows = 0, d = 0;
  double eps = 0.0;
  bool has_stats = false;
  TensorRef residual, sum;
  bool has_residual = false;
};

// The backward of RowNormCall from grad and x (contiguous [rows, d]), weight [d] and the
// statistics the forward saved (mean for layer_norm only, rstd): d_x contiguous [rows, d],
// d_weight and d_bias (layer_norm only) [d], summed over the rows; all of x's dtype.
struct RowNormBwdCall {
  OpId op;
  TensorRef grad, x, weight, mean, rstd, d_x, d_weight, d_bias;
  int64_t rows = 0, d = 0;
};

// Sorts each row of the contiguous [rows, n] input `in` (a NUMERIC dtype) and writes its
// first k sorted elements to values (in's dtype) and their positions in the row to indices
// (I64), both contiguous [rows, k]. The order is ascending, or descending when asked; it is
// stable (equal elements keep their order in the row), F16 and BF16 compare as their float
// values, NaN is larger than every number, and -0.0 equals +0.0.
struct SortCall {
  TensorRef in, values, indices;
  int64_t rows = 0, n = 0, k = 0;
  bool descending = false;
};

// For each row r: out[r, j] = the number of elements of seq[r] that sort before values[r, j]
// (right: that do not sort after it), in sort's order (NaN largest, -0.0 equal to +0.0).
// seq contiguous [rows, n], sorted ascending in that order; values contiguous [rows, m] of
// seq's dtype; out contiguous I64 [rows, m].
struct SearchSortedCall {
  TensorRef seq, values, out;
  int64_t rows = 0, n = 0, m = 0;
  bool right = false;
};

// out[o, j, i] = x[o, index[o, j, i], i] for o < outer, j < m, i < inner: x is [outer, n,
// inner] and index (I64) [outer, m, inner], each with any strides (0 where broadcast: that
// is how index_select, embedding_lookup and take give a 1-D index to every o and i); out is
// contiguous [outer, m, inner] of x's dtype. Every index is in [0, n): the front end has
// checked them, so a kernel never reads outside x.
struct GatherCall {
  TensorRef x, index, out;
};

// How index_scatter combines a value with the one already at its target.
enum class ScatterOp : uint8_t { Assign, Sum, Prod, Amax, Amin };
// For o < outer, i < inner and j = 0, 1, ..., m - 1 in that order:
//   out[o, index[o, j, i], i] = op(out[o, index[o, j, i], i], src[o, j, i])
// out is [outer, n, inner] (any strides, a view of a result the front end owns: its
// contiguous output or a box of it) already holding the initial values; index (I64) and
// src are [outer, m, inner] with any strides. Assign keeps the last j; Amax and Amin are
// NaN-sticky like max and min; integer Sum and Prod wrap. F16 and BF16 reduce in F32 and
// round once per element. The result must not depend on thread timing (no float atomics):
// each (o, i) column is one thread's, walked in order of j. Indexes are in [0, n).
struct ScatterCall {
  ScatterOp op = ScatterOp::Assign;
  TensorRef out, index, src;
};

// dst = src converted to dst's dtype; equal shapes, any strides on both (dst may be a view
// into a larger tensor; dst never overlaps src).
struct CopyCall {
  TensorRef src, dst;
};

// Every element of dst (any strides) = value converted to dst's dtype.
struct FillCall {
  TensorRef dst;
  double value = 0.0;
};

// Contiguous out[i] = start + i * step (computed in double, then converted; the product is
// rounded before the add, never fused, so every backend gives the same values).
// linspace: out[i] = start + i * step for i < n/2, end - (n-1-i) * step after (symmetric).
struct SequenceCall {
  TensorRef out;
  double start = 0.0, step = 1.0, end = 0.0;
  bool symmetric = false;
};

enum class RandomKind : uint8_t { Uniform, Normal, Integer };
// Contiguous out[i] from philox4x32(counter = offset + i, seed); see random.h for the
// exact mapping of the random words to values.
struct RandomCall {
  TensorRef out;
  RandomKind kind = RandomKind::Uniform;
  uint64_t seed = 0, offset = 0;
  int64_t low = 0, high = 1;
};

// scaled_dot_product_attention on 4-D views [n0, n1, L, D] (the batch dims merged into
// two; stride 0 where broadcast), the last dim of q, k, v and grad of stride 1:
//   out[b, i] = Σ_j p[b, i, j] v[b, j],  p = softmax_j(scale * q[b, i] · k[b, j] + bias),
// over the keys j kept by the causal triangle (j <= i) and the mask. mask (when has_mask)
// is [n0, n1, Lq, Lk] with any strides, Bool (true: kept) or q's dtype (added). q [.., Lq,
// E], k [.., Lk, E], v [.., Lk, Ev]; E, Ev <= kAttentionMaxDim (the front end runs the
// composition beyond). out contiguous [n0, n1, Lq, Ev] in q's dtype; lse contiguous F32
// [n0, n1, Lq]: log Σ_j exp(score), +inf for a query with no key kept (its output is 0).
// When has_out_wide, out_wide (contiguous F32, out's shape) also receives the output
// before its rounding to q's dtype. Scores, softmax and sums in F32; nothing of size
// Lq x Lk is stored.
inline constexpr int64_t kAttentionMaxDim = 256;
struct AttentionCall {
  TensorRef q, k, v, mask, out, lse, out_wide;
  double scale = 1.0;
  bool causal = false, has_mask = false, has_out_wide = false;
};

// The backward of AttentionCall from grad (dO, [n0, n1, Lq, Ev], last stride 1), the
// forward's lse and delta (contiguous F32 [n0, n1, Lq], delta = Σ_c dO * out, from the
// output before its rounding): d_q, d_k,
// d_v contiguous [n0, n1, L, D] in q's dtype, per batch index (the front end sums
// broadcast dims). P is recomputed from q, k and lse; the result does not depend on
// thread timing.
struct AttentionBwdCall {
  TensorRef q, k, v, mask, grad, lse, delta, d_q, d_k, d_v;
  double scale = 1.0;
  bool causal = false, has_mask = false;
};

// A backend: a small required core (memory, elementwise, reduce, copy, fill, sequence,
// random), which must take every op of those families at every dtype the op table lists,
// and optional families. supports(op, dtype) says which optional ops have a kernel; the
// front ends run an op's composition (src/ops/compose) where it says no, and never call
// an optional family method for it. The defaults answer no and refuse the call.
class Backend {
 public:
  virtual ~Backend() = default;
  virtual Device device() const = 0;
  virtual std::string name() const = 0;

  // Whether op runs here as a kernel at dtype t. Only asked for composed ops
  // (OpInfo::composed) and for complex_elementwise_op ops at complex dtypes; the required
  // core's ops are otherwise always supported.
  virtual bool supports(OpId op, DType t) const;

  // Memory. allocate throws OutOfMemory; deallocate(nullptr) is a no-op.
  virtual void* allocate(size_t nbytes) = 0;
  virtual void deallocate(void* handle) noexcept = 0;
  virtual void copy_from_host(void* dst_handle, size_t dst_offset_bytes, const void* src,
                              size_t nbytes) = 0;
  virtual void copy_to_host(void* dst, const void* src_handle, size_t src_offset_bytes,
                            size_t nbytes) = 0;
  virtual void synchronize() = 0;
  // Sets nbytes bytes at handle to `value` (used to poison fresh outputs in tests).
  virtual void fill_bytes(void* handle, size_t nbytes, uint8_t value) = 0;

  // The required core. elementwise takes the ActMul, ActBwd and ActMulBwd ops only where
  // supports() says so; reduce takes mean, var, std and logsumexp likewise.
  virtual void elementwise(const ElementwiseCall& call) = 0;
  virtual void reduce(const ReduceCall& call) = 0;
  virtual void copy(const CopyCall& call) = 0;
  virtual void fill(const FillCall& call) = 0;
  virtual void sequence(const SequenceCall& call) = 0;
  virtual void random(const RandomCall& call) = 0;

  // Optional families.
  virtual void along_axis(const AxisCall& call);
  virtual void matmul(const MatmulCall& call);
  virtual void matmul_epilogue(const GemmEpilogueCall& call);
  virtual void bias_activation_bwd(const BiasActBwdCall& call);
  // rms_norm and layer_norm, forward and backward, where supports() says so.
  virtual void row_norm(const RowNormCall& call);
  virtual void row_norm_bwd(const RowNormBwdCall& call);
  // sort, argsort and topk (sort_rows), searchsorted (search_sorted), where supports() says so.
  virtual void sort_rows(const SortCall& call);
  virtual void search_sorted(const SearchSortedCall& call);
  // The indexing primitives (gather, scatter, scatter_reduce and the ops built on them).
  virtual void index_gather(const GatherCall& call);
  virtual void index_scatter(const ScatterCall& call);
  // scaled_dot_product_attention, forward and backward, where supports() says so.
  virtual void attention(const AttentionCall& call);
  virtual void attention_bwd(const AttentionBwdCall& call);

  // Whether tensors of dtype t can live and compute here at all (WebGPU has no F64); ops
  // on one that cannot throw UnsupportedDType naming the backend.
  virtual bool supports_dtype(DType) const { return true; }
};

// Test support: when on, every new tensor's memory is filled with the byte 0x5A, so
// elements an op forgets to write show up as wrong values.
void set_poison_allocations(bool on);
bool poison_allocations();

// A backend's supports() from the list of composed ops it has written kernels for: true
// for the required core's ops, for the fused gates (ActMul, ActBwd, ActMulBwd, whose
// kernels every backend generates from their formulas) and for the ops in `kernels`. A
// composed op added to the table is in no list, so it runs as its composition on every
// backend until a kernel is written and listed.
bool has_listed_kernel(OpId op, std::span<const OpId> kernels);

// The ops that elementwise() may take with complex operands (see ElementwiseCall): mul,
// div, abs. For the rest, and on backends whose supports() says no, the front ends run the
// complex op as real ops on the parts (src/ops/complex_ops.h).
bool complex_elementwise_op(OpId op);

// The backend for a device; throws BackendUnavailable with the reason when its driver or
// the device is missing.
Backend& backend_for(Device device);

// One row of the backend table (src/core/backend_registry.cpp): how to reach the backend of
// each index of a device type, and how many devices of that type this machine has.
struct BackendEntry {
  DeviceType type;
  const char* name;
  Backend& (*get)(int index);  // throws BackendUnavailable saying why
  int (*count)();              // 0 when the driver or devices are missing; never throws
};
std::span<const BackendEntry> backend_table();

}  // namespace numr
