// Every op of ops.h for Var, with the same name and meaning. Ops that are not
// differentiable (compare, logical, predicates, argmax, ...) return Vars without history.
#pragma once

#include <initializer_list>
#include <optional>
#include <string_view>
#include <vector>

#include "numr/indexing.h"

namespace numr {

class Var;

#define NUMR_UNARY(name, dtypes, grad) Var name(const Var& x);
#define NUMR_UNARY_PRED(name, dtypes, grad) Var name(const Var& x);
#define NUMR_BINARY(name, dtypes, grad) Var name(const Var& a, const Var& b);
#define NUMR_COMPARE(name, dtypes, grad) Var name(const Var& a, const Var& b);
#define NUMR_LOGICAL(name, dtypes, grad) Var name(const Var& a, const Var& b);
#define NUMR_TERNARY(name, dtypes, grad) Var name(const Var& a, const Var& b, const Var& c);
#define NUMR_SCALAR(name, dtypes, grad) Var name(const Var& x, double s);
#include "numr/op_table.def"
#define NUMR_ACTIVATION(name, dtypes, grad) Var name(const Var& x);
#define NUMR_ACTIVATION_P(name, param, default_value, dtypes, grad) \
  Var name(const Var& x, double param = default_value);
#include "numr/op_table.def"
// Fused gates act(a) * b; gradients through the fused backward kernel.
#define NUMR_ACT_MUL(name, dtypes, grad) Var name(const Var& a, const Var& b);
#include "numr/op_table.def"
Var where_cond(const Var& cond, const Var& x, const Var& y);
Var clamp(const Var& x, std::optional<double> lo, std::optional<double> hi);
// polygamma(n, x), the same as polygamma(x, n).
Var polygamma(int64_t n, const Var& x);

Var operator+(const Var& a, const Var& b);
Var operator-(const Var& a, const Var& b);
Var operator*(const Var& a, const Var& b);
Var operator/(const Var& a, const Var& b);
Var operator-(const Var& x);
Var operator+(const Var& a, double s);
Var operator-(const Var& a, double s);
Var operator*(const Var& a, double s);
Var operator/(const Var& a, double s);
Var operator+(double s, const Var& a);
Var operator-(double s, const Var& a);
Var operator*(double s, const Var& a);

Var sum(const Var& x, const std::vector<int64_t>& dims = {}, bool keepdim = false);
Var mean(const Var& x, const std::vector<int64_t>& dims = {}, bool keepdim = false);
Var max(const Var& x, const std::vector<int64_t>& dims = {}, bool keepdim = false);
Var min(const Var& x, const std::vector<int64_t>& dims = {}, bool keepdim = false);
Var prod(const Var& x, const std::vector<int64_t>& dims = {}, bool keepdim = false);
Var any(const Var& x, const std::vector<int64_t>& dims = {}, bool keepdim = false);
Var all(const Var& x, const std::vector<int64_t>& dims = {}, bool keepdim = false);
Var argmax(const Var& x, std::optional<int64_t> dim = std::nullopt, bool keepdim = false);
Var argmin(const Var& x, std::optional<int64_t> dim = std::nullopt, bool keepdim = false);
Var var(const Var& x, const std::vector<int64_t>& dims = {}, int64_t correction = 1,
        bool keepdim = false);
Var std(const Var& x, const std::vector<int64_t>& dims = {}, int64_t correction = 1,
        bool keepdim = false);
Var logsumexp(const Var& x, const std::vector<int64_t>& dims = {}, bool keepdim = false);
Var cumsum(const Var& x, int64_t dim);
Var cumprod(const Var& x, int64_t dim);
Var softmax(const Var& x, int64_t dim);
Var log_softmax(const Var& x, int64_t dim);

Var matmul(const Var& a, const Var& b);

// GEMM epilogues (see ops.h). By default the forward saves only what the derivative
// needs: the output for None, Relu, Sigmoid and Tanh, the pre-activation for Gelu and
// Silu. recompute_preactivation saves nothing extra and recomputes a @ b + bias in the
// backward instead: less memory for one more GEMM.
struct EpilogueOptions {
  bool recompute_preactivation = false;
};
Var matmul_bias_activation(const Var& a, const Var& b, const Var& bias, Activation act,
                           EpilogueOptions options = {});
Var matmul_bias_residual(const Var& a, const Var& b, const Var& bias, const Var& residual);

Var cat(const std::vector<Var>& xs, int64_t dim);
Var stack(const std::vector<Var>& xs, int64_t dim);
Var cat(std::initializer_list<Var> xs, int64_t dim);
Var stack(std::initializer_list<Var> xs, int64_t dim);
std::vector<Var> split(const Var& x, int64_t split_size, int64_t dim);
std::vector<Var> chunk(const Var& x, int64_t chunks, int64_t dim);
Var repeat(const Var& x, const std::vector<int64_t>& repeats);
Var pad(const Var& x, const std::vector<int64_t>& pads, double value = 0.0);
Var roll(const Var& x, const std::vector<int64_t>& shifts, const std::vector<int64_t>& dims = {});
Var repeat_interleave(const Var& x, int64_t repeats, std::optional<int64_t> dim = std::nullopt);
Var repeat_interleave(const Var& x, const Tensor& repeats,
                      std::optional<int64_t> dim = std::nullopt);
std::vector<Var> meshgrid(const std::vector<Var>& xs, std::string_view indexing = "ij");
Var slice_assign(const Var& x, const Var& src, int64_t dim, int64_t start);
Var masked_fill(const Var& x, const Tensor& mask, double value);
Var one_hot(const Var& index, int64_t num_classes = -1);  // no gradient (integer result)
Var einsum(std::string_view equation, const std::vector<Var>& operands);
// The gradient is the incoming one times the same scaled mask.
Var dropout(const Var& x, double p, Generator& gen);

Var reshape(const Var& x, const Shape& shape);
Var view(const Var& x, const Shape& shape);
Var transpose(const Var& x, int64_t d0, int64_t d1);
Var permute(const Var& x, const std::vector<int64_t>& dims);
Var narrow(const Var& x, int64_t dim, int64_t start, int64_t length);
Var broadcast_to(const Var& x, const Shape& shape);
Var squeeze(const Var& x, std::optional<int64_t> dim = std::nullopt);
Var unsqueeze(const Var& x, int64_t dim);
Var flatten(const Var& x, int64_t start_dim = 0, int64_t end_dim = -1);
Var flip(const Var& x, const std::vector<int64_t>& dims);
Var unfold(const Var& x, int64_t dim, int64_t size, int64_t step);
Var contiguous(const Var& x);
Var clone(const Var& x);
Var cast(const Var& x, DType dtype);
Var to_device(const Var& x, Device device);

// ---- conveniences (src/autograd/mixed_ops.cpp) ----
// std under another name: `std(x)` is ambiguous after `using namespace numr;`.
Var stddev(const Var& x, const std::vector<int64_t>& dims = {}, int64_t correction = 1,
           bool keepdim = false);
// Var with Tensor: the Tensor takes part as a constant (no gradient flows into it).
Var operator+(const Var& a, const Tensor& b);
Var operator-(const Var& a, const Tensor& b);
Var operator*(const Var& a, const Tensor& b);
Var operator/(const Var& a, const Tensor& b);
Var operator+(const Tensor& a, const Var& b);
Var operator-(const Tensor& a, const Var& b);
Var operator*(const Tensor& a, const Var& b);
Var operator/(const Tensor& a, const Var& b);
Var operator/(double s, const Var& x);
// where_cond with a scalar branch, or with a plain Bool Tensor as the condition.
Var where_cond(const Var& cond, const Var& x, double y);
Var where_cond(const Var& cond, double x, const Var& y);
Var where_cond(const Tensor& cond, const Var& x, const Var& y);
Var where_cond(const Tensor& cond, const Var& x, double y);
Var where_cond(const Tensor& cond, double x, const Var& y);
// As for Tensor (ops.h); the gradient is the incoming one masked to the kept triangle.
// Indexing (numr/indexing.h), differentiable in x, src and values (not in the indexes).
// scatter_reduce has gradients for Sum, Mean, Amax and Amin (shared equally among the
// elements that attain the extreme, as in PyTorch); Prod throws InvalidArgument.
Var gather(const Var& x, int64_t dim, const Tensor& index);
Var scatter(const Var& x, int64_t dim, const Tensor& index, const Var& src);
Var scatter_reduce(const Var& x, int64_t dim, const Tensor& index, const Var& src,
                   ScatterReduce reduce, bool include_self = true);
Var index_select(const Var& x, int64_t dim, const Tensor& index);
Var take(const Var& x, const Tensor& index);
Var embedding_lookup(const Var& weight, const Tensor& index);
Var gather_nd(const Var& x, const Tensor& index);
Var index_put(const Var& x, const std::vector<Tensor>& indices, const Var& values,
              bool accumulate = false);
Var put(const Var& x, const Tensor& index, const Var& values, bool accumulate = false);
Var masked_select(const Var& x, const Tensor& mask);

Var tril(const Var& x, int64_t diagonal = 0);
Var triu(const Var& x, int64_t diagonal = 0);
template <ShapeLike S>
Var reshape(const Var& x, const S& shape) {
  return reshape(x, to_shape("reshape", shape));
}
template <ShapeLike S>
Var view(const Var& x, const S& shape) {
  return view(x, to_shape("view", shape));
}

}  // namespace numr
