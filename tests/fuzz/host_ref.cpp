#include "fuzz/host_ref.h"

#include <cmath>
#include <limits>
#include <sstream>
#include <type_traits>

namespace numr::fuzz {

int64_t numel_of(const Shape& s) {
  int64_t n = 1;
  for (int64_t e : s) n *= e;
  return n;
}

int64_t flat_index(const Shape& s, const std::vector<int64_t>& idx) {
  int64_t off = 0;
  for (size_t d = 0; d < s.size(); ++d) off = off * s[d] + idx[d];
  return off;
}

double at_broadcast(const Host& h, const std::vector<int64_t>& out_idx) {
  const size_t k = h.shape.size(), n = out_idx.size();
  int64_t off = 0;
  for (size_t i = 0; i < k; ++i) off = off * h.shape[i] + (h.shape[i] == 1 ? 0 : out_idx[n - k + i]);
  return h.v[size_t(off)];
}

bool broadcast(const Shape& a, const Shape& b, Shape& out) {
  const size_t n = std::max(a.size(), b.size());
  out.assign(n, 1);
  for (size_t i = 0; i < n; ++i) {
    const int64_t x = i < n - a.size() ? 1 : a[i - (n - a.size())];
    const int64_t y = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (x != y && x != 1 && y != 1) return false;
    out[i] = x == 1 ? y : x;
  }
  return true;
}

HostView identity_view(const Shape& s) {
  HostView v{s, Strides(s.size(), 1), 0};
  for (size_t d = s.size(); d-- > 1;) v.strides[d - 1] = v.strides[d] * s[d];
  return v;
}

Host gather(const Host& base, const HostView& view) {
  Host out{view.shape, base.dtype, {}};
  out.v.reserve(size_t(numel_of(view.shape)));
  for_each_index(view.shape, [&](const std::vector<int64_t>& idx) {
    int64_t off = view.offset;
    for (size_t d = 0; d < idx.size(); ++d) off += idx[d] * view.strides[d];
    out.v.push_back(base.v[size_t(off)]);
  });
  return out;
}

double round_to(double x, DType t) {
  switch (t) {
    case DType::F32: return double(float(x));
    case DType::F16: return double(f16(x));
    case DType::BF16: return double(bf16(x));
    default: return x;
  }
}

double wrap_to(DType t, uint64_t bits) {
  switch (t) {
    case DType::I64: return double(int64_t(bits));
    case DType::I32: return double(int32_t(uint32_t(bits)));
    case DType::U8: return double(uint8_t(bits));
    case DType::Bool: return bits != 0 ? 1.0 : 0.0;
    default: return double(int64_t(bits));
  }
}

double cast_value(double x, DType to) {
  if (to == DType::Bool) return (x != 0.0 || std::isnan(x)) ? 1.0 : 0.0;
  if (is_floating(to)) return round_to(x, to);
  if (std::isnan(x)) return 0.0;
  double lo = 0, hi = 255;
  if (to == DType::I32) {
    lo = -2147483648.0;
    hi = 2147483647.0;
  } else if (to == DType::I64) {
    lo = -0x1p63;
    hi = 0x1p63;  // INT64_MAX read back as a double
  }
  const double t = std::trunc(x);
  return t < lo ? lo : t > hi ? hi : t;
}

Tensor to_tensor(const Host& h) {
  return visit_dtype(h.dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, bool>) {
      std::vector<bool> d;
      for (double x : h.v) d.push_back(x != 0.0);
      return Tensor::from_vector(d, h.shape);
    } else {
      std::vector<T> d;
      d.reserve(h.v.size());
      for (double x : h.v) {
        if constexpr (std::is_same_v<T, f16> || std::is_same_v<T, bf16>)
          d.push_back(T(x));
        else
          d.push_back(static_cast<T>(x));
      }
      return Tensor::from_vector(d, h.shape);
    }
  });
}

Host from_tensor(const Tensor& t) {
  Host h{t.shape(), t.dtype(), {}};
  visit_dtype(t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    for (const auto& x : t.to_vector<T>()) {
      if constexpr (std::is_same_v<T, bool>)
        h.v.push_back(x ? 1.0 : 0.0);
      else
        h.v.push_back(static_cast<double>(x));
    }
  });
  return h;
}

std::string describe(const Shape& s) { return shape_str(s); }

std::string compare(const Tensor& got, const Host& ref, const Tolerance& tol) {
  if (got.dtype() != ref.dtype) {
    std::ostringstream os;
    os << "dtype " << got.dtype() << " != reference " << ref.dtype;
    return os.str();
  }
  if (got.shape() != ref.shape)
    return "shape " + shape_str(got.shape()) + " != reference " + shape_str(ref.shape);
  const Host g = from_tensor(got);
  double err2 = 0, ref2 = 0;
  for (size_t i = 0; i < g.v.size(); ++i) {
    const double r = round_to(ref.v[i], got.dtype()), x = g.v[i];
    std::ostringstream os;
    os << "element " << i << ": got " << x << ", reference " << r;
    if (std::isnan(r) || std::isnan(x)) {
      if (std::isnan(r) != std::isnan(x)) return "NaN mismatch at " + os.str();
      continue;
    }
    if (std::isinf(r) || std::isinf(x)) {
      if (r != x) return "Inf mismatch at " + os.str();
      continue;
    }
    const double e = std::fabs(x - r);
    if (e > tol.atol + tol.rtol * std::fabs(r)) return os.str();
    err2 += e * e;
    ref2 += r * r;
  }
  if (std::sqrt(err2) > tol.rel_norm * std::sqrt(ref2) + tol.atol * std::sqrt(double(g.v.size()))) {
    std::ostringstream os;
    os << "relative norm error " << std::sqrt(err2 / (ref2 > 0 ? ref2 : 1.0)) << " > "
       << tol.rel_norm;
    return os.str();
  }
  return "";
}

}  // namespace numr::fuzz
