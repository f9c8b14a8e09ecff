// linalg ops written once over Tensor or Var (the same op names), so the Var form is the
// composition itself and differentiates to any order.
#pragma once

#include <cmath>
#include <string_view>

#include "numr/complex.h"
#include "numr/ops.h"
#include "ops/linalg.h"

namespace numr::linalg::detail {

// a [.., p, q], b [.., r, s] -> [.., p r, q s]: out[i r + k, j s + l] = a[i, j] b[k, l].
template <class T>
T kron_of(const T& a, const T& b) {
  const T a4 = unsqueeze(unsqueeze(a, -1), -3);  // [.., p, 1, q, 1]
  const T b4 = unsqueeze(unsqueeze(b, -2), -4);  // [.., 1, r, 1, s]
  const T outer = a4 * b4;                       // [.., p, r, q, s]
  Shape s(outer.shape().begin(), outer.shape().end() - 4);
  const int64_t p = a.shape().end()[-2], q = a.shape().back();
  const int64_t r = b.shape().end()[-2], t = b.shape().back();
  s.push_back(p * r);
  s.push_back(q * t);
  return outer.reshape(s);
}

// exp(a) = (exp(a / 2^s))^(2^s), the inner one by its Taylor polynomial of the plan's
// degree in Horner form: I + x (I + x/2 (I + x/3 (...))).
template <class T>
T matrix_exp_of(const T& a, const ExpPlan& p) {
  const int64_t n = a.shape().back();
  const Tensor id = eye_of(n, n, a.dtype(), a.device());
  const T x = a * std::ldexp(1.0, -p.squarings);
  T e = x * (1.0 / p.degree) + id;
  for (int j = p.degree - 1; j >= 1; --j) e = matmul(x, e) * (1.0 / j) + id;
  for (int i = 0; i < p.squarings; ++i) e = matmul(e, e);
  return e;
}

}  // namespace numr::linalg::detail

namespace numr::linalg::detail {

// ||x||_ord over dims (all when empty): max |x| (inf), min |x| (-inf), the number of
// nonzeros (0), else (Σ |x|^ord)^(1/ord), with ord 2 as sqrt(Σ x²) and 1 as Σ |x|.
template <class T>
T vector_norm_of(const T& x, double ord, const std::vector<int64_t>& dims, bool keepdim) {
  if (std::isinf(ord)) return ord > 0 ? max(abs(x), dims, keepdim) : min(abs(x), dims, keepdim);
  if (ord == 0)
    return sum(cast(ne(x, x * 0.0), x.dtype()), dims, keepdim);  // x * 0: NaN for ±inf, NaN
  if (ord == 1) return sum(abs(x), dims, keepdim);
  if (ord == 2) return sqrt(sum(x * x, dims, keepdim));
  return pow_scalar(sum(pow_scalar(abs(x), ord), dims, keepdim), 1.0 / ord);
}

// Σ |a_ij| over rows (columns' sums, over = -2) or columns (over = -1), its max or min.
template <class T>
T abs_sum_extreme(const T& a, int64_t over, bool largest, bool keepdim) {
  const T s = sum(abs(a), {over}, true);
  const int64_t other = over == -2 ? -1 : -2;
  T r = largest ? max(s, {other}, true) : min(s, {other}, true);
  return keepdim ? r : squeeze(squeeze(r, -1), -1);
}

// s [.., k] -> [..] or [.., 1, 1].
template <class T>
T per_matrix_keep(const T& s, bool keepdim) {
  return keepdim ? unsqueeze(unsqueeze(s, -1), -1) : s;
}

}  // namespace numr::linalg::detail

namespace numr::linalg::detail {

inline const Tensor& value_of(const Tensor& t) { return t; }
inline const Tensor& value_of(const Var& v) { return v.tensor(); }

// ord "fro" or "nuc" (checked by the caller).
template <class T>
T matrix_norm_named(const T& a, std::string_view ord, bool keepdim) {
  if (ord == "fro") return sqrt(sum(a * a, {-2, -1}, keepdim));
  return per_matrix_keep(sum(svdvals(a), {-1}), keepdim);
}

// ord 2, -2 (largest, smallest singular value), 1, -1 (column sums), ±inf (row sums).
template <class T>
T matrix_norm_p(const T& a, double ord, bool keepdim) {
  if (std::abs(ord) == 2) {
    const T s = svdvals(a);
    const int64_t k = s.shape().back();
    return per_matrix_keep(squeeze(narrow(s, -1, ord > 0 ? 0 : k - 1, 1), -1), keepdim);
  }
  if (std::abs(ord) == 1) return abs_sum_extreme(a, -2, ord > 0, keepdim);
  return abs_sum_extreme(a, -1, ord > 0, keepdim);
}

// The adjoint of each matrix: the transpose, conjugated for complex x.
template <class T>
T adjoint_of(const T& x) {
  const T t = transpose(x, -2, -1);
  return is_complex(x.dtype()) ? conj(t) : t;
}

// The real r in like's dtype (r + 0i where like is complex), so that the two multiply.
template <class T>
T like_dtype(const T& r, const T& like) {
  return is_complex(like.dtype()) ? complex(r, r * 0.0) : r;
}

// The pseudo-inverse [.., n, m] from the SVD, singular values at most rtol s_max counted as
// zero (PyTorch's default rtol is max(m, n) eps).
template <class T>
T pinv_of(const T& a, double rtol) {
  if (std::min(a.shape().end()[-2], a.shape().back()) == 0) return transpose(a, -2, -1) * 0.0;
  const auto r = svd(a, /*full_matrices=*/false);
  const Tensor s = value_of(r.S);
  const Tensor keep = gt(s, s.narrow(-1, 0, 1) * rtol);
  const T s_inv = where_cond(keep, 1.0 / where_cond(keep, r.S, 1.0), 0.0);
  return matmul(adjoint_of(r.Vh) * unsqueeze(like_dtype(s_inv, a), -2), adjoint_of(r.U));
}

// The least-squares solution of a x = b for full-rank a [.., m, n], b [.., m, k]: from
// a = Q R when m >= n; the minimum-norm one from aᵀ = Q R (x = Q R⁻ᵀ b) when m < n.
template <class T>
T lstsq_of(const T& a, const T& b) {
  const int64_t m = a.shape().end()[-2], n = a.shape().back();
  if (m >= n) {
    const auto f = qr(a);
    return solve_triangular(f.R, matmul(adjoint_of(f.Q), b), /*upper=*/true);
  }
  const auto f = qr(adjoint_of(a));
  return matmul(f.Q, solve_triangular(adjoint_of(f.R), b, /*upper=*/false));
}

// lstsq's results (torch.linalg.lstsq's four); a result the driver does not compute is an
// empty [0] tensor (rank I64, the others a's dtype).
template <class T>
struct LstsqOf {
  T solution, residuals;
  Tensor rank;
  T singular_values;
};

// ||a x - b||² of each column [.., k] where m > n and (for the SVD) every matrix has full
// rank, as PyTorch returns it; else the empty tensor.
template <class T>
T lstsq_residuals(const T& a, const T& b, const T& x, bool computed) {
  if (!computed) return T(Tensor::empty(Shape{0}, complex_part_dtype(a.dtype()), a.device()));
  const T r = matmul(a, x) - b;
  const T mag = is_complex(r.dtype()) ? abs(r) : r;
  return sum(mag * mag, {-2});
}

// driver "gels": lstsq_of (a of full rank). "gelsd": the minimum-norm solution through the
// SVD, x = V diag(1/s) Uᵀ b over the singular values above rcond s_max (the others count as
// zero), which handles a of any rank; with the rank and the singular values.
template <class T>
LstsqOf<T> lstsq_driver_of(const T& a, const T& b, std::string_view driver, double rcond) {
  const int64_t m = a.shape().end()[-2], n = a.shape().back(), k = std::min(m, n);
  const auto empty = [&](DType t) { return Tensor::empty(Shape{0}, t, a.device()); };
  LstsqOf<T> out;
  if (driver == "gels") {
    out.solution = lstsq_of(a, b);
    out.residuals = lstsq_residuals(a, b, out.solution, m > n);
    out.rank = empty(DType::I64);
    out.singular_values = T(empty(complex_part_dtype(a.dtype())));
    return out;
  }
  Shape lead(a.shape().begin(), a.shape().end() - 2);
  if (k == 0) {  // nothing to invert: x = 0, rank 0
    out.solution = matmul(adjoint_of(a), b) * 0.0;
    out.rank = zeros(lead, DType::I64, a.device());
    Shape ss = lead;
    ss.push_back(0);
    out.singular_values = T(zeros(ss, complex_part_dtype(a.dtype()), a.device()));
    out.residuals = lstsq_residuals(a, b, out.solution, false);
    return out;
  }
  const auto r = svd(a, /*full_matrices=*/false);
  const Tensor s = value_of(r.S);
  const Tensor keep = gt(s, s.narrow(-1, 0, 1) * rcond);
  const T s_inv = where_cond(keep, 1.0 / where_cond(keep, r.S, 1.0), 0.0);
  out.solution =
      matmul(adjoint_of(r.Vh) * unsqueeze(like_dtype(s_inv, a), -2), matmul(adjoint_of(r.U), b));
  const Tensor rank = sum(keep.cast(DType::I64), {-1});
  out.rank = rank;
  bool full = m > n;
  for (int64_t rk : rank.to(Device::cpu()).contiguous().to_vector<int64_t>()) full &= rk == n;
  out.residuals = lstsq_residuals(a, b, out.solution, full);
  out.singular_values = r.S;
  return out;
}

}  // namespace numr::linalg::detail
