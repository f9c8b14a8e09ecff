// The fuzz target's oracle: tensors as row-major doubles on the host, and plain loops over
// logical indexes. Nothing here calls numr's ops.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "numr/numr.h"
#include "support/tolerance.h"

namespace numr::fuzz {

using test::Tolerance;

// Values in row-major order, each already a value of dtype.
struct Host {
  Shape shape;
  DType dtype = DType::F32;
  std::vector<double> v;
};

int64_t numel_of(const Shape& s);
// Calls f(index) for every multi-index of s in row-major order.
template <class F>
void for_each_index(const Shape& s, F&& f) {
  const int64_t n = numel_of(s);
  std::vector<int64_t> idx(s.size(), 0);
  for (int64_t k = 0; k < n; ++k) {
    f(idx);
    for (size_t d = s.size(); d-- > 0;) {
      if (++idx[d] < s[d]) break;
      idx[d] = 0;
    }
  }
}
// Row-major position of idx in s.
int64_t flat_index(const Shape& s, const std::vector<int64_t>& idx);
// The element of h that broadcasting maps to index out_idx of a larger shape.
double at_broadcast(const Host& h, const std::vector<int64_t>& out_idx);
// NumPy broadcasting; false when the shapes do not broadcast.
bool broadcast(const Shape& a, const Shape& b, Shape& out);

// A strided view of a row-major base: what numr's views do, written out.
struct HostView {
  Shape shape;
  Strides strides;
  int64_t offset = 0;
};
HostView identity_view(const Shape& s);
Host gather(const Host& base, const HostView& view);

// x rounded to a value of t (integers and Bool: x must already be one).
double round_to(double x, DType t);
// Two's complement wrap of an integer to t (I64 I32 U8; Bool: nonzero).
double wrap_to(DType t, uint64_t bits);
// cast's rules for a floating source: truncation and saturation to integers, NaN -> 0,
// nonzero (NaN too) -> true.
double cast_value(double x, DType to);

Tensor to_tensor(const Host& h);
Host from_tensor(const Tensor& t);  // via to_vector in the tensor's own type

// "" when got matches ref (dtype, shape, values within tol; NaN must match NaN).
std::string compare(const Tensor& got, const Host& ref, const Tolerance& tol);

std::string describe(const Shape& s);

}  // namespace numr::fuzz
