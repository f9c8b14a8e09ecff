// The float64 reference: plain loops over contiguous row-major double arrays. It is the
// executable specification the parity tests compare every backend with. Elementwise
// formulas come from src/math instantiated with double; everything else is written here
// as the simplest loop that states the op's meaning.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "numr/indexing.h"
#include "numr/op_info.h"
#include "numr/ops.h"
#include "numr/shape.h"

namespace numr::reference {

struct RefTensor {
  Shape shape;
  std::vector<double> v;  // row-major, v.size() == shape_numel(shape)
};

// Elementwise families (Unary, Activation, UnaryPred, Binary, Ternary, Scalar, Compare,
// Logical, Select, Clamp) with NumPy broadcasting. Results of predicates, compares and
// logical ops are 1.0 / 0.0. scalars as in ElementwiseCall. `integer` selects the integer
// semantics (wrapping is not modelled: tests keep integer values small).
// ActMulBwd ops have two outputs: `output` 0 is d_a, 1 is d_b (in the broadcast shape).
RefTensor elementwise(OpId op, const std::vector<const RefTensor*>& ins, double s0 = 0.0,
                      double s1 = 0.0, bool has_lo = true, bool has_hi = true, int output = 0);

// Reduce family over sorted unique dims (empty = all). argmax/argmin take at most one dim
// (none = flattened). correction for var/std.
RefTensor reduce(OpId op, const RefTensor& x, const std::vector<int64_t>& dims, bool keepdim,
                 int64_t correction = 1);

// Scan (cumsum, cumprod) and Softmax (softmax, log_softmax) along one dim.
RefTensor along_axis(OpId op, const RefTensor& x, int64_t dim);

// a [.., M, K] @ b [.., K, N] with broadcast batch dims.
RefTensor matmul(const RefTensor& a, const RefTensor& b);
// c (m x n) = a (m x k) @ b (k x n), row-major; each element sums its k products in order.
void gemm_rows(const double* a, const double* b, double* c, int64_t m, int64_t k, int64_t n);

// GEMM epilogues. a [M, K] or [B, M, K]; b [K, N] (shared) or [B, K, N]; bias [N];
// residual (may be null) shaped like the output. Returns act(a @ b + bias) (+ residual);
// pre, when given, receives a @ b + bias.
RefTensor matmul_bias_act(const RefTensor& a, const RefTensor& b, const RefTensor& bias,
                          Activation act, const RefTensor* residual = nullptr,
                          RefTensor* pre = nullptr);
// grad_pre = grad * act'(x) (x the pre-activation when saved_is_pre, else act' from the
// output), a non-finite derivative counting as 0; d_bias [N] = Σ over all leading dims.
void bias_act_bwd(const RefTensor& grad, const RefTensor& saved, Activation act, bool saved_is_pre,
                  RefTensor& grad_pre, RefTensor& d_bias);

// rms_norm (bias null, centred false) and layer_norm over the last dim; weight, bias [D].
RefTensor row_norm(const RefTensor& x, const RefTensor& weight, const RefTensor* bias, double eps,
                   bool centred);
// Their backward from grad and x (statistics recomputed from x): d_x, and d_weight and
// d_bias [D] summed over the rows.
// group_norm of x [N, C, *] with weight, bias [C].
RefTensor group_norm(const RefTensor& x, int64_t groups, const RefTensor& weight,
                     const RefTensor& bias, double eps);
void row_norm_bwd(const RefTensor& grad, const RefTensor& x, const RefTensor& weight, double eps,
                  bool centred, RefTensor& d_x, RefTensor& d_weight, RefTensor& d_bias);

// scaled_dot_product_attention with q [.., Lq, E], k [.., Lk, E], v [.., Lk, Ev] of equal
// leading dims; mask (may be null) of the full shape [.., Lq, Lk]: keep where nonzero when
// mask_is_bool, else added to the scores. A query with every key masked out gives zeros.
RefTensor attention(const RefTensor& q, const RefTensor& k, const RefTensor& v,
                    const RefTensor* mask, bool mask_is_bool, bool causal, double scale);

// Sort's order on doubles: a sorts strictly before b (ascending; NaN after every number,
// -0.0 equal to +0.0).
bool sorts_before(double a, double b);
// x sorted along dim by a stable insertion sort, the first k of each line kept: values and
// the positions they came from (as doubles), x's shape with k along dim.
void sort(const RefTensor& x, int64_t dim, int64_t k, bool descending, RefTensor& values,
          RefTensor& indices);
// How many elements of each row of seq [.., n] sort before each value of values [.., m]
// (right: do not sort after it); a 1-D seq serves every value (values any shape).
RefTensor searchsorted(const RefTensor& seq, const RefTensor& values, bool right);
// The distinct elements of x, ascending (each NaN distinct), and how often each occurs.
void unique(const RefTensor& x, RefTensor& values, RefTensor& counts);
// Indexing. Indexes are doubles holding integers in range (the tests check bounds apart).
// gather along dim: out has index's shape.
RefTensor gather(const RefTensor& x, int64_t dim, const RefTensor& index);
// scatter (reduce = nullopt: the last value wins) or scatter_reduce along dim: a copy of x
// with src's values (src at least index's extents) combined in row-major order of index.
// `integer`: Mean rounds down.
RefTensor scatter(const RefTensor& x, int64_t dim, const RefTensor& index, const RefTensor& src,
                  std::optional<ScatterReduce> reduce, bool include_self, bool integer);
RefTensor index_select(const RefTensor& x, int64_t dim, const RefTensor& index);
RefTensor take(const RefTensor& x, const RefTensor& index);
RefTensor embedding_lookup(const RefTensor& weight, const RefTensor& index);
RefTensor gather_nd(const RefTensor& x, const RefTensor& index);
RefTensor index_put(const RefTensor& x, const std::vector<RefTensor>& indices,
                    const RefTensor& values, bool accumulate);
RefTensor put(const RefTensor& x, const RefTensor& index, const RefTensor& values, bool accumulate);
RefTensor masked_select(const RefTensor& x, const RefTensor& mask);
RefTensor nonzero(const RefTensor& x);
RefTensor bincount(const RefTensor& x, const RefTensor* weights, int64_t minlength);

}  // namespace numr::reference
