#include "ops/common.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/dim_merge.h"
#include "core/op_scope.h"
#include "numr/complex.h"

namespace numr::ops {

void check_defined(std::string_view op, const Tensor& t) {
  if (!t.defined()) fail<InvalidArgument>(op, "undefined tensor");
}

void check_dtype_valid(std::string_view op, DType t) {
  if (uint8_t(t) > uint8_t(kLastDType)) fail<InvalidArgument>(op, "invalid dtype ", unsigned(t));
}

void check_dtype(OpId op, DType t) {
  check_dtype_valid(op_name(op), t);
  if (!op_accepts(op, t)) {
    const uint32_t mask = op_info(op).dtype_mask;
    std::string ok;
    for (unsigned i = 0; i <= unsigned(kLastDType); ++i)
      if (const auto d = DType(i); mask & (uint32_t(1) << i)) {
        if (!ok.empty()) ok += ' ';
        ok += dtype_name(d);
      }
    fail<UnsupportedDType>(op_name(op), "unsupported dtype ", t, " (accepts ", ok, ")");
  }
}

void check_same(std::string_view op, std::initializer_list<const Tensor*> ts) {
  const Tensor* first = nullptr;
  for (const Tensor* t : ts) {
    check_defined(op, *t);
    if (!first) {
      first = t;
      continue;
    }
    if (t->device() != first->device())
      fail<DeviceMismatch>(op, "tensors on ", first->device(), " and ", t->device());
    if (t->dtype() != first->dtype())
      fail<DTypeMismatch>(op, "dtypes ", first->dtype(), " and ", t->dtype(),
                          " differ (numr never promotes; use cast)");
  }
}

TensorRef broadcast_ref(const Tensor& t, const Shape& shape) {
  TensorRef r = ref_of(t);
  const size_t n = shape.size(), k = t.shape().size();
  r.shape = shape;
  r.strides.assign(n, 0);
  for (size_t i = 0; i < k; ++i) {
    const size_t o = n - k + i;
    r.strides[o] = t.shape()[i] == 1 && shape[o] != 1 ? 0 : t.strides()[i];
  }
  return r;
}

std::vector<int64_t> reduce_dims(std::string_view op, const std::vector<int64_t>& dims,
                                 int64_t ndim) {
  std::vector<int64_t> out;
  if (dims.empty()) {
    for (int64_t i = 0; i < ndim; ++i) out.push_back(i);
    return out;
  }
  for (int64_t d : dims) {
    const int64_t w = wrap_dim(op, d, ndim);
    if (std::find(out.begin(), out.end(), w) != out.end())
      fail<InvalidDimension>(op, "dim ", d, " appears more than once");
    out.push_back(w);
  }
  std::sort(out.begin(), out.end());
  return out;
}

bool holds_integer(double s, DType t) {
  // [lo, end): end is a power of two, exact in double (unlike INT64_MAX).
  double lo = 0, end = 2;
  switch (t) {
    case DType::I64:
      lo = -0x1p63;
      end = 0x1p63;
      break;
    case DType::I32:
      lo = -0x1p31;
      end = 0x1p31;
      break;
    case DType::U8:
      lo = 0;
      end = 256;
      break;
    default: break;
  }
  return s == std::trunc(s) && s >= lo && s < end;
}

void check_scalar_fits(std::string_view op, double s, DType t) {
  if (is_floating(t) || is_complex(t)) return;
  if (!holds_integer(s, t)) fail<InvalidArgument>(op, "scalar ", s, " is not representable in ", t);
}

int merged_rank(const Shape& shape, std::initializer_list<const Strides*> strides) {
  return int(merge_dims(shape, std::span<const Strides* const>(strides)).extents.size());
}

void copy_any_rank(Backend& be, const TensorRef& src, const TensorRef& dst) {
  if (dst.numel() == 0) return;
  if (merged_rank(dst.shape, {&dst.strides, &src.strides}) <= kMaxLoopDims) {
    be.copy(CopyCall{src, dst});
    return;
  }
  // Peel the outermost dim of extent > 1: one copy per index, each a dim fewer.
  size_t d = 0;
  while (dst.shape[d] == 1) ++d;
  TensorRef s = src, t = dst;
  s.shape.erase(s.shape.begin() + ptrdiff_t(d));
  s.strides.erase(s.strides.begin() + ptrdiff_t(d));
  t.shape = s.shape;
  t.strides.erase(t.strides.begin() + ptrdiff_t(d));
  for (int64_t i = 0; i < dst.shape[d]; ++i) {
    s.offset = src.offset + i * src.strides[d];
    t.offset = dst.offset + i * dst.strides[d];
    copy_any_rank(be, s, t);
  }
}

void fill_values(const Tensor& dst, double value) {
  if (dst.numel() == 0) return;
  Backend& be = backend_for(dst.device());
  if (!is_complex(dst.dtype())) {
    be.fill(FillCall{ref_of(dst), value});
    return;
  }
  be.fill(FillCall{ref_of(real(dst)), value});
  be.fill(FillCall{ref_of(imag(dst)), 0.0});
}

void copy_values(const Tensor& src, const Tensor& dst) {
  if (dst.numel() == 0) return;
  Backend& be = backend_for(dst.device());
  if (!is_complex(dst.dtype())) {
    if (is_complex(src.dtype()))
      fail<UnsupportedDType>(current_op("cast"), "casting ", src.dtype(), " to ", dst.dtype(),
                             " would drop the imaginary parts (take real() first)");
    copy_any_rank(be, ref_of(src), ref_of(dst));
    return;
  }
  const Tensor parts = view_as_real(dst);
  if (is_complex(src.dtype())) {
    copy_any_rank(be, ref_of(view_as_real(src)), ref_of(parts));
    return;
  }
  copy_any_rank(be, ref_of(src), ref_of(real(dst)));
  fill_values(imag(dst), 0.0);
}

void composition_only(OpId op, const Tensor& x) {
  if (use_kernel(backend_for(x.device()), op, x.dtype()))
    fail<BackendError>(op_name(op), "the ", backend_for(x.device()).name(),
                       " backend lists a kernel for it, but no backend family calls one");
}

}  // namespace numr::ops
