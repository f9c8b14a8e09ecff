// Shared argument checks and helpers for the op front ends.
#pragma once

#include <string_view>
#include <vector>

#include "core/backend.h"
#include "core/composition.h"
#include "core/op_scope.h"
#include "numr/error.h"
#include "numr/op_info.h"
#include "numr/tensor.h"

namespace numr::ops {

// Throws InvalidArgument when t is undefined.
void check_defined(std::string_view op, const Tensor& t);
// Throws InvalidArgument "[op] invalid dtype N" for a value outside the DType enum (a cast
// from a bad integer), which would index past the per-dtype tables.
void check_dtype_valid(std::string_view op, DType t);
// Throws InvalidArgument for an invalid dtype, UnsupportedDType unless the op table lists t
// for op.
void check_dtype(OpId op, DType t);
// All defined, one device (DeviceMismatch) and one dtype (DTypeMismatch).
void check_same(std::string_view op, std::initializer_list<const Tensor*> ts);
// The view of t broadcast to `shape` (stride 0 on broadcast dims).
TensorRef broadcast_ref(const Tensor& t, const Shape& shape);
// Normalises and de-duplicates reduction dims; empty means all.
std::vector<int64_t> reduce_dims(std::string_view op, const std::vector<int64_t>& dims,
                                 int64_t ndim);
// Whether s is an integer that t (an integer dtype or Bool) holds exactly.
bool holds_integer(double s, DType t);
// Checks an integer-valued scalar for an integer dtype (no silent truncation).
void check_scalar_fits(std::string_view op, double s, DType t);

// The most dims the backends' strided kernels walk after merging (the CPU's
// LoopPlan::kMaxDims, CUDA's kMapMaxRank).
inline constexpr int kMaxLoopDims = 16;
// Dims left of `shape` when extents of 1 are dropped and each dim is merged into the one
// before it wherever every operand steps through the pair as one (both backends' rule).
int merged_rank(const Shape& shape, std::initializer_list<const Strides*> strides);
// be.copy(src -> dst), as several copies over the leading dims when the pair has more
// unmergeable dims than the backends walk, so any view can be copied.
void copy_any_rank(Backend& be, const TensorRef& src, const TensorRef& dst);
// Every element of dst (any strides) = value (value + 0i for a complex dst).
void fill_values(const Tensor& dst, double value);
// dst = src converted to dst's dtype (equal shapes, any strides, same device). Complex
// tensors copy through their pair views; a real src fills a complex dst's real parts and
// zeroes its imaginary parts. A complex src into a real dst is an error (it would drop
// the imaginary parts).
void copy_values(const Tensor& src, const Tensor& dst);

// For an op that runs only as its composition (no backend family has a kernel call for it
// yet): counts the composition, and refuses a backend whose supports() claims a kernel.
void composition_only(OpId op, const Tensor& x);

}  // namespace numr::ops
