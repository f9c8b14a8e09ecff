// The op set: free functions in namespace numr, dispatched on the tensors' device.
// Shapes broadcast as in NumPy; dtypes never promote (mixed dtypes throw DTypeMismatch).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "numr/op_info.h"
#include "numr/random.h"
#include "numr/tensor.h"

namespace numr {

// ---- elementwise, one input (op_table.def: Unary, Activation, UnaryPred) ----
// Activation parameters must be finite (InvalidArgument otherwise).
#define NUMR_UNARY(name, dtypes, grad) Tensor name(const Tensor& x);
#define NUMR_UNARY_PRED(name, dtypes, grad) Tensor name(const Tensor& x);  // -> Bool
#define NUMR_ACTIVATION(name, dtypes, grad) Tensor name(const Tensor& x);
#define NUMR_ACTIVATION_P(name, param, default_value, dtypes, grad) \
  Tensor name(const Tensor& x, double param = default_value);
#include "numr/op_table.def"

// ---- elementwise, several inputs, broadcasting ----
#define NUMR_BINARY(name, dtypes, grad) Tensor name(const Tensor& a, const Tensor& b);
#define NUMR_COMPARE(name, dtypes, grad) Tensor name(const Tensor& a, const Tensor& b);
#define NUMR_LOGICAL(name, dtypes, grad) Tensor name(const Tensor& a, const Tensor& b);
#define NUMR_TERNARY(name, dtypes, grad) \
  Tensor name(const Tensor& a, const Tensor& b, const Tensor& c);
#define NUMR_SCALAR(name, dtypes, grad) Tensor name(const Tensor& x, double s);
#include "numr/op_table.def"
// polygamma(n, x): the n-th derivative of digamma at x (n >= 0), as torch.special.polygamma;
// the same as the table's polygamma(x, n).
Tensor polygamma(int64_t n, const Tensor& x);

// ---- fused gates (op_table.def: ActMul, ActBwd, ActMulBwd) ----
// act_mul(a, b) = act(a) * b in one pass; a and b broadcast.
// act_bwd(grad_out, x) = grad_out * act'(x).
// act_mul_bwd(grad_out, a, b) = (grad_out * b * act'(a), grad_out * act(a)) in one pass,
// each reduced to its input's shape when that input was broadcast.
#define NUMR_ACT_MUL(name, dtypes, grad) Tensor name(const Tensor& a, const Tensor& b);
#define NUMR_ACT_BWD(name, dtypes, grad) Tensor name(const Tensor& grad_out, const Tensor& x);
#define NUMR_ACT_MUL_BWD(name, dtypes, grad) \
  std::pair<Tensor, Tensor> name(const Tensor& grad_out, const Tensor& a, const Tensor& b);
#include "numr/op_table.def"

// cond (Bool) ? x : y, all three broadcast together.
Tensor where_cond(const Tensor& cond, const Tensor& x, const Tensor& y);
// min(max(x, lo), hi); either bound may be absent.
Tensor clamp(const Tensor& x, std::optional<double> lo, std::optional<double> hi);

Tensor operator+(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a, const Tensor& b);
Tensor operator*(const Tensor& a, const Tensor& b);
Tensor operator/(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& x);
Tensor operator+(const Tensor& a, double s);
Tensor operator-(const Tensor& a, double s);
Tensor operator*(const Tensor& a, double s);
Tensor operator/(const Tensor& a, double s);
Tensor operator+(double s, const Tensor& a);
Tensor operator-(double s, const Tensor& a);
Tensor operator*(double s, const Tensor& a);

// ---- reductions over a set of dims (empty = all dims) ----
Tensor sum(const Tensor& x, const std::vector<int64_t>& dims = {}, bool keepdim = false);
Tensor mean(const Tensor& x, const std::vector<int64_t>& dims = {}, bool keepdim = false);
Tensor max(const Tensor& x, const std::vector<int64_t>& dims = {}, bool keepdim = false);
Tensor min(const Tensor& x, const std::vector<int64_t>& dims = {}, bool keepdim = false);
Tensor prod(const Tensor& x, const std::vector<int64_t>& dims = {}, bool keepdim = false);
Tensor any(const Tensor& x, const std::vector<int64_t>& dims = {}, bool keepdim = false);
Tensor all(const Tensor& x, const std::vector<int64_t>& dims = {}, bool keepdim = false);
// Index (I64) of the first max/min along one dim; the flattened index when dim is absent.
Tensor argmax(const Tensor& x, std::optional<int64_t> dim = std::nullopt, bool keepdim = false);
Tensor argmin(const Tensor& x, std::optional<int64_t> dim = std::nullopt, bool keepdim = false);
// Variance with Bessel's correction by default (correction = 1).
Tensor var(const Tensor& x, const std::vector<int64_t>& dims = {}, int64_t correction = 1,
           bool keepdim = false);
Tensor std(const Tensor& x, const std::vector<int64_t>& dims = {}, int64_t correction = 1,
           bool keepdim = false);
Tensor logsumexp(const Tensor& x, const std::vector<int64_t>& dims = {}, bool keepdim = false);

// ---- along one dim ----
Tensor cumsum(const Tensor& x, int64_t dim);
Tensor cumprod(const Tensor& x, int64_t dim);
Tensor softmax(const Tensor& x, int64_t dim);
Tensor log_softmax(const Tensor& x, int64_t dim);

// ---- matmul: a [.., M, K] @ b [.., K, N] -> [.., M, N]; batch dims broadcast ----
// A 1-D operand is promoted as in NumPy and the added dim dropped: [K] @ [K] -> [],
// [.., M, K] @ [K] -> [.., M], [K] @ [.., K, N] -> [.., N]. 0-d operands are errors.
Tensor matmul(const Tensor& a, const Tensor& b);

// ---- out= forms: the result written into a preallocated tensor ----
// out must have exactly the result's shape, dtype and device (else ShapeMismatch,
// DTypeMismatch or DeviceMismatch naming the op, and nothing is written; numr never
// resizes or converts into out). out may be a view (not one with overlapping elements,
// InvalidArgument) and may share memory with a or b: the result is as if a and b had been
// read completely first. Returns out; bumps its storage's version (see Storage::version).
Tensor& add(const Tensor& a, const Tensor& b, Tensor& out);
Tensor& sub(const Tensor& a, const Tensor& b, Tensor& out);
Tensor& mul(const Tensor& a, const Tensor& b, Tensor& out);
Tensor& div(const Tensor& a, const Tensor& b, Tensor& out);
Tensor& matmul(const Tensor& a, const Tensor& b, Tensor& out);

// ---- GEMM epilogues ----
// The activation a fused epilogue applies (op_table.def lists them, with the op each one
// computes). Gelu is the tanh approximation.
enum class Activation : uint8_t {
  None,
#define NUMR_EPILOGUE_ACTIVATION(Name, op) Name,
#include "numr/op_table.def"
};
std::string_view activation_name(Activation act);
// Whether the backward of act needs the pre-activation (Gelu, Silu) or only the output
// (None, Relu, Sigmoid, Tanh).
bool needs_preactivation(Activation act);

// act(a @ b + bias), the epilogue applied while each output block is in cache.
// a: [M, K] or [B, M, K]; b: [K, N] (shared by every batch) or [B, K, N]; bias: [N]
// -> [M, N] or [B, M, N].
Tensor matmul_bias_activation(const Tensor& a, const Tensor& b, const Tensor& bias, Activation act);
// a @ b + bias + residual; residual has the output's shape.
Tensor matmul_bias_residual(const Tensor& a, const Tensor& b, const Tensor& bias,
                            const Tensor& residual);

// The forward that also returns what its backward needs: `saved` is the pre-activation
// a @ b + bias when needs_preactivation(act), else the output itself.
struct EpilogueForward {
  Tensor out, saved;
};
EpilogueForward matmul_bias_activation_fwd(const Tensor& a, const Tensor& b, const Tensor& bias,
                                           Activation act);

struct EpilogueGrads {
  Tensor d_a, d_b, d_bias;
};
// Backward from what the forward saved (see matmul_bias_activation_fwd): one fused pass
// for grad_pre = grad * act'(...) and d_bias = Σ rows of grad_pre, then d_a = grad_pre @ bᵀ
// and d_b = aᵀ @ grad_pre (summed over batches when b is shared, per batch otherwise).
EpilogueGrads matmul_bias_activation_bwd_saved(const Tensor& grad, const Tensor& a, const Tensor& b,
                                               const Tensor& saved, Activation act);
// numr's signature: recomputes a @ b + bias first.
EpilogueGrads matmul_bias_activation_bwd(const Tensor& grad, const Tensor& a, const Tensor& b,
                                         const Tensor& bias, Activation act);
// The fused pass alone: grad [.., N] and saved of the same shape ->
// (grad_pre = grad * act'(...), d_bias = Σ over all leading dims of grad_pre).
std::pair<Tensor, Tensor> bias_activation_bwd(const Tensor& grad, const Tensor& saved,
                                              Activation act);

// ---- shape ----
Tensor cat(const std::vector<Tensor>& xs, int64_t dim);
Tensor stack(const std::vector<Tensor>& xs, int64_t dim);
// Brace lists: cat({a, b}, 0).
inline Tensor cat(std::initializer_list<Tensor> xs, int64_t dim) {
  return cat(std::vector<Tensor>(xs), dim);
}
inline Tensor stack(std::initializer_list<Tensor> xs, int64_t dim) {
  return stack(std::vector<Tensor>(xs), dim);
}
std::vector<Tensor> split(const Tensor& x, int64_t split_size, int64_t dim);  // views
std::vector<Tensor> chunk(const Tensor& x, int64_t chunks, int64_t dim);      // views
Tensor repeat(const Tensor& x, const std::vector<int64_t>& repeats);          // torch.repeat
// pads: (before, after) pairs starting from the last dim, as in torch.nn.functional.pad.
Tensor pad(const Tensor& x, const std::vector<int64_t>& pads, double value = 0.0);
// Elements shifted by shifts[i] along dims[i] (wrapping around), as torch.roll; with no
// dims, x flattened is rolled by the single shift and reshaped back.
Tensor roll(const Tensor& x, const std::vector<int64_t>& shifts,
            const std::vector<int64_t>& dims = {});
// Each element repeated `repeats` times along dim: [.., n, ..] -> [.., n * repeats, ..];
// with no dim, x is flattened first.
Tensor repeat_interleave(const Tensor& x, int64_t repeats,
                         std::optional<int64_t> dim = std::nullopt);
// Element i along dim repeated repeats[i] times (repeats: I64 or I32 on x's device, 0-d or
// 1-D of length 1 or x.size(dim), each >= 0). The output's length depends on the values, so
// they are read to the host (on a GPU this waits for queued work).
Tensor repeat_interleave(const Tensor& x, const Tensor& repeats,
                         std::optional<int64_t> dim = std::nullopt);
// [0, 1, ..] with i repeated repeats[i] times (I64), as torch.repeat_interleave(repeats).
Tensor repeat_interleave(const Tensor& repeats);
// xs: k tensors of 1 element or 1 dim [n_i] -> k views (stride 0 where broadcast) of shape
// [n_0, .., n_k-1] with "ij" indexing, or [n_1, n_0, n_2, ..] with "xy".
std::vector<Tensor> meshgrid(const std::vector<Tensor>& xs, std::string_view indexing = "ij");
// A new tensor equal to x except x.narrow(dim, start, src.size(dim)), which holds src.
// src has x's shape except along dim; start may be negative (counted from the end).
Tensor slice_assign(const Tensor& x, const Tensor& src, int64_t dim, int64_t start);
// x where mask (Bool, broadcast to x's shape) is false, value where it is true.
Tensor masked_fill(const Tensor& x, const Tensor& mask, double value);
// index (I64 or I32, any shape) -> I64 [.., num_classes], 1 at each index's class.
// num_classes = -1 takes max(index) + 1. An index outside [0, num_classes) is an
// IndexOutOfBounds error.
Tensor one_hot(const Tensor& index, int64_t num_classes = -1);
// Einstein summation over 1 or more operands (contracted left to right, each pair with one
// batched matmul), as torch.einsum: "ij,jk->ik", implicit output ("ij,jk"), "..." for
// broadcast dims, a subscript repeated in one operand for its diagonal.
Tensor einsum(std::string_view equation, const std::vector<Tensor>& operands);
// Each element zeroed with probability p, the rest scaled by 1 / (1 - p). The mask is
// rand(x.shape(), F32, x.device(), gen) >= p, so a seed gives the same mask on every
// backend; the draw advances gen by x.numel(). p = 0 returns x and p = 1 gives x * 0,
// neither drawing.
Tensor dropout(const Tensor& x, double p, Generator& gen);

// ---- views and copies (same as the Tensor methods) ----
Tensor reshape(const Tensor& x, const Shape& shape);  // copies only if it must
Tensor view(const Tensor& x, const Shape& shape);     // never copies; throws NotContiguous
Tensor transpose(const Tensor& x, int64_t d0, int64_t d1);
Tensor permute(const Tensor& x, const std::vector<int64_t>& dims);
Tensor narrow(const Tensor& x, int64_t dim, int64_t start, int64_t length);
Tensor broadcast_to(const Tensor& x, const Shape& shape);
Tensor squeeze(const Tensor& x, std::optional<int64_t> dim = std::nullopt);
Tensor unsqueeze(const Tensor& x, int64_t dim);
Tensor flatten(const Tensor& x, int64_t start_dim = 0, int64_t end_dim = -1);
Tensor flip(const Tensor& x, const std::vector<int64_t>& dims);
// Windows of `size` elements every `step` along dim, as torch.Tensor.unfold:
// [.., n, ..] -> [.., (n - size) / step + 1, .., size]. A view: windows that overlap share
// elements, so the result cannot be written into.
Tensor unfold(const Tensor& x, int64_t dim, int64_t size, int64_t step);
Tensor contiguous(const Tensor& x);
Tensor clone(const Tensor& x);
Tensor cast(const Tensor& x, DType dtype);
Tensor to_device(const Tensor& x, Device device);

// ---- creation ----
Tensor zeros(const Shape& shape, DType dtype = DType::F32, Device device = Device::cpu());
Tensor ones(const Shape& shape, DType dtype = DType::F32, Device device = Device::cpu());
Tensor full(const Shape& shape, double value, DType dtype = DType::F32,
            Device device = Device::cpu());
// [start, end) in steps of step; count = ceil((end - start) / step).
Tensor arange(double start, double end, double step = 1.0, DType dtype = DType::F32,
              Device device = Device::cpu());
Tensor linspace(double start, double end, int64_t steps, DType dtype = DType::F32,
                Device device = Device::cpu());
Tensor eye(int64_t n, std::optional<int64_t> m = std::nullopt, DType dtype = DType::F32,
           Device device = Device::cpu());
Tensor rand(const Shape& shape, DType dtype, Device device, Generator& gen);   // [0, 1)
Tensor randn(const Shape& shape, DType dtype, Device device, Generator& gen);  // N(0, 1)
// Integers in [low, high); for a floating dtype, every integer of the range must be one of
// its values (|low|, |high - 1| <= 2^53 F64, 2^24 F32, 2^11 F16, 2^8 BF16).
Tensor randint(int64_t low, int64_t high, const Shape& shape, DType dtype, Device device,
               Generator& gen);

// ---- conveniences (src/ops/conveniences.cpp) ----
// std under another name: `std(x)` is ambiguous after `using namespace numr;`.
Tensor stddev(const Tensor& x, const std::vector<int64_t>& dims = {}, int64_t correction = 1,
              bool keepdim = false);
// s / x elementwise (floating dtypes, like div).
Tensor operator/(double s, const Tensor& x);
// New tensors shaped like x, of x's dtype and device unless dtype is given.
Tensor empty_like(const Tensor& x, std::optional<DType> dtype = std::nullopt);
Tensor zeros_like(const Tensor& x, std::optional<DType> dtype = std::nullopt);
Tensor ones_like(const Tensor& x, std::optional<DType> dtype = std::nullopt);
Tensor full_like(const Tensor& x, double value, std::optional<DType> dtype = std::nullopt);
// where_cond with one branch a scalar of the other branch's dtype (integer dtypes need an
// integer scalar they hold).
Tensor where_cond(const Tensor& cond, const Tensor& x, double y);
Tensor where_cond(const Tensor& cond, double x, const Tensor& y);
// The lower (tril) or upper (triu) triangle of the last two dims, zero elsewhere: entry
// (i, j) is kept when j - i <= diagonal (tril) or j - i >= diagonal (triu). x needs at
// least 2 dims; leading dims are batches.
Tensor tril(const Tensor& x, int64_t diagonal = 0);
Tensor triu(const Tensor& x, int64_t diagonal = 0);

// Shapes as any range of integers (see shape_like.h); the Shape forms above do the work.
template <ShapeLike S>
Tensor zeros(const S& shape, DType dtype = DType::F32, Device device = Device::cpu()) {
  return zeros(to_shape("zeros", shape), dtype, device);
}
template <ShapeLike S>
Tensor ones(const S& shape, DType dtype = DType::F32, Device device = Device::cpu()) {
  return ones(to_shape("ones", shape), dtype, device);
}
template <ShapeLike S>
Tensor full(const S& shape, double value, DType dtype = DType::F32, Device device = Device::cpu()) {
  return full(to_shape("full", shape), value, dtype, device);
}
template <ShapeLike S>
Tensor rand(const S& shape, DType dtype, Device device, Generator& gen) {
  return rand(to_shape("rand", shape), dtype, device, gen);
}
template <ShapeLike S>
Tensor randn(const S& shape, DType dtype, Device device, Generator& gen) {
  return randn(to_shape("randn", shape), dtype, device, gen);
}
template <ShapeLike S>
Tensor reshape(const Tensor& x, const S& shape) {
  return reshape(x, to_shape("reshape", shape));
}
template <ShapeLike S>
Tensor view(const Tensor& x, const S& shape) {
  return view(x, to_shape("view", shape));
}
template <ShapeLike S>
Tensor broadcast_to(const Tensor& x, const S& shape) {
  return broadcast_to(x, to_shape("broadcast_to", shape));
}

}  // namespace numr
