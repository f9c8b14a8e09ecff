// Front ends of the Sort family. sort, argsort, topk and searchsorted move the dim they work
// along last, make it contiguous and call the backend's kernel, or run the composition
// (src/ops/compose/sort.cpp) where it has none; unique is always built from sort.
#include "ops/sort.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "numr/ops.h"
#include "ops/common.h"
#include "ops/compose/sort.h"

namespace numr {
namespace ops {

int64_t check_sort(OpId op, const Tensor& x, int64_t dim) {
  const std::string_view name = op_name(op);
  check_defined(name, x);
  check_dtype(op, x.dtype());
  return wrap_dim(name, dim, std::max<int64_t>(x.dim(), 1));
}

int64_t sort_size(const Tensor& x, int64_t dim) { return x.dim() == 0 ? 1 : x.size(dim); }

void check_topk_k(const Tensor& x, int64_t k, int64_t dim) {
  const int64_t size = sort_size(x, dim);
  if (k < 0 || k > size)
    fail<InvalidArgument>("topk", "k must be in [0, ", size, "] (the size of dim ", dim, "), got ",
                          k);
}

SortResult sort_along(OpId op, const Tensor& x, int64_t dim, int64_t k, bool descending) {
  const Tensor xs = x.dim() == 0 ? x.reshape(Shape{1}) : x;
  const int64_t last = xs.dim() - 1;
  const Tensor xm = xs.transpose(dim, last);
  Shape shape = xm.shape();
  shape.back() = k;
  SortResult r;
  if (xm.numel() == 0 || k == 0) {
    r.values = Tensor::empty(shape, x.dtype(), x.device());
    r.indices = Tensor::empty(shape, DType::I64, x.device());
  } else if (Backend& be = backend_for(x.device()); use_kernel(be, op, x.dtype())) {
    const Tensor xc = xm.contiguous();
    r.values = Tensor::empty(shape, x.dtype(), x.device());
    r.indices = Tensor::empty(shape, DType::I64, x.device());
    SortCall call;
    call.in = ref_of(xc);
    call.values = ref_of(r.values);
    call.indices = ref_of(r.indices);
    call.n = xm.size(-1);
    call.rows = xm.numel() / call.n;
    call.k = k;
    call.descending = descending;
    be.sort_rows(call);
  } else {
    r = compose::sort_last(xm, k, descending);
  }
  if (dim != last) {
    r.values = r.values.transpose(dim, last).contiguous();
    r.indices = r.indices.transpose(dim, last).contiguous();
  }
  if (x.dim() == 0 && k == 1) {  // topk(k = 0) of a 0-d x keeps its shape [0]
    r.values = r.values.reshape(Shape{});
    r.indices = r.indices.reshape(Shape{});
  }
  return r;
}

}  // namespace ops

SortResult sort(const Tensor& x, int64_t dim, bool descending) {
  const OpScope scope("sort");
  const int64_t d = ops::check_sort(OpId::sort, x, dim);
  return ops::sort_along(OpId::sort, x, d, ops::sort_size(x, d), descending);
}

Tensor argsort(const Tensor& x, int64_t dim, bool descending) {
  const OpScope scope("argsort");
  const int64_t d = ops::check_sort(OpId::argsort, x, dim);
  return ops::sort_along(OpId::argsort, x, d, ops::sort_size(x, d), descending).indices;
}

SortResult topk(const Tensor& x, int64_t k, int64_t dim, bool largest, bool /*sorted*/) {
  const OpScope scope("topk");
  const int64_t d = ops::check_sort(OpId::topk, x, dim);
  ops::check_topk_k(x, k, d);
  return ops::sort_along(OpId::topk, x, d, k, largest);
}

Tensor searchsorted(const Tensor& sorted_sequence, const Tensor& values, bool right) {
  constexpr std::string_view kName = "searchsorted";
  const OpScope scope(kName);
  const Tensor &seq = sorted_sequence, &v = values;
  ops::check_defined(kName, seq);
  ops::check_defined(kName, v);
  ops::check_dtype(OpId::searchsorted, seq.dtype());
  ops::check_same(kName, {&seq, &v});
  if (seq.dim() < 1)
    fail<InvalidDimension>(kName, "sorted_sequence must have at least 1 dim, got a 0-d tensor");
  const int64_t n = seq.size(-1);
  int64_t rows = 1;
  if (seq.dim() > 1) {
    const Shape lead(seq.shape().begin(), seq.shape().end() - 1);
    if (v.dim() != seq.dim() || Shape(v.shape().begin(), v.shape().end() - 1) != lead)
      fail<ShapeMismatch>(kName, "values must have sorted_sequence's leading dims ",
                          shape_str(lead), " and one more, got ", shape_str(v.shape()));
    rows = shape_numel(lead);
  }
  const int64_t m = rows == 0 ? 0 : v.numel() / rows;
  const Tensor s2 = seq.reshape(Shape{rows, n}), v2 = v.reshape(Shape{rows, m});
  Tensor out;
  if (rows * m == 0) {
    out = Tensor::empty(Shape{rows, m}, DType::I64, v.device());
  } else if (Backend& be = backend_for(v.device()); use_kernel(be, OpId::searchsorted, v.dtype())) {
    const Tensor sc = s2.contiguous(), vc = v2.contiguous();
    out = Tensor::empty(Shape{rows, m}, DType::I64, v.device());
    SearchSortedCall call;
    call.seq = ref_of(sc);
    call.values = ref_of(vc);
    call.out = ref_of(out);
    call.rows = rows;
    call.n = n;
    call.m = m;
    call.right = right;
    be.search_sorted(call);
  } else {
    out = compose::searchsorted_last(s2, v2, right);
  }
  return out.reshape(v.shape());
}

namespace {

// The sorted elements of x, where each run of equal ones starts (NaNs each start one), and
// how many runs there are.
struct Runs {
  Tensor sorted, first;
  int64_t count = 0;
};

Runs runs_of(OpId op, const Tensor& x) {
  ops::check_defined(op_name(op), x);
  ops::check_dtype(op, x.dtype());
  ops::composition_only(op, x);
  const int64_t n = x.numel();
  Runs r;
  r.sorted = ops::sort_along(OpId::sort, x.reshape(Shape{n}), 0, n, false).values;
  if (n == 0) return r;
  const Tensor later = ne(r.sorted.narrow(0, 1, n - 1), r.sorted.narrow(0, 0, n - 1));
  r.first = cat({full(Shape{1}, 1.0, DType::Bool, x.device()), later}, 0);
  r.count = sum(r.first.cast(DType::I64)).item<int64_t>();
  return r;
}

// The first element of each run, in order: every other element replaced by one that sorts
// last (NaN, or the dtype's largest value, which stands for itself), sorted again.
Tensor run_values(const Runs& r) {
  const DType t = r.sorted.dtype();
  const Device dev = r.sorted.device();
  Tensor last;
  if (t == DType::I64)  // INT64_MAX has no double
    last = Tensor::from_vector(std::vector<int64_t>{std::numeric_limits<int64_t>::max()}, Shape{})
               .to(dev);
  else if (t == DType::I32)
    last = full(Shape{}, double(std::numeric_limits<int32_t>::max()), t, dev);
  else if (t == DType::U8)
    last = full(Shape{}, 255.0, t, dev);
  else
    last = full(Shape{}, std::numeric_limits<double>::quiet_NaN(), t, dev);
  const Tensor firsts = where_cond(r.first, r.sorted, last);
  return ops::sort_along(OpId::sort, firsts, 0, r.count, false).values;
}

}  // namespace

Tensor unique(const Tensor& x) {
  const OpScope scope("unique");
  const Runs r = runs_of(OpId::unique, x);
  if (r.count == 0) return r.sorted;
  return run_values(r);
}

UniqueCounts unique_with_counts(const Tensor& x) {
  const OpScope scope("unique_with_counts");
  const Runs r = runs_of(OpId::unique_with_counts, x);
  const int64_t n = r.sorted.numel();
  if (r.count == 0) return {r.sorted, Tensor::empty(Shape{0}, DType::I64, x.device())};
  // Where each run starts: the positions of the firsts, the others pushed past the end.
  const Tensor pos = arange(0, double(n), 1, DType::I64, x.device());
  const Tensor starts =
      ops::sort_along(OpId::sort, where_cond(r.first, pos, double(n)), 0, r.count, false).values;
  const Tensor ends =
      cat({starts.narrow(0, 1, r.count - 1), full(Shape{1}, double(n), DType::I64, x.device())}, 0);
  return {run_values(r), ends - starts};
}

}  // namespace numr
