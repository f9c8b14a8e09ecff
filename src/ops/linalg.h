// Helpers the linalg front ends (linalg.cpp) share with their Var forms (linalg_grad.cpp).
#pragma once

#include <optional>
#include <string_view>

#include "numr/linalg.h"

namespace numr::linalg::detail {

// t's dims but the last `trailing`.
Shape lead(const Tensor& t, int64_t trailing);
// b defined, of a's dtype and on a's device.
void check_same_kind(std::string_view op, const Tensor& a, const Tensor& b);
// Throws unless a is a defined F32/F64 (or, allow_complex, Complex64/Complex128) tensor of
// at least 2 dims (square when asked).
void check_matrix(std::string_view op, const Tensor& a, bool square, bool allow_complex = false);
// a [.., n, n] and b [.., n, k] (left) or [.., k, n] as solve_triangular takes them.
void check_triangular_operands(const Tensor& a, const Tensor& b, bool left);
// b is a vector right-hand side of solve for a (see solve in numr/linalg.h).
bool solve_is_vector(const Tensor& a, const Tensor& b);
// The batch shape that a [.., n, n] and b [.., n, k] broadcast to, checked.
Shape solve_batch(std::string_view op, const Tensor& a, const Tensor& b);
// The diagonal of each matrix, [.., n] from [.., n, n] (any backend: a masked sum); real or
// complex.
Tensor diagonal(const Tensor& a);
// triu(a, k) (upper) or tril(a, k) of a real or complex a.
Tensor triangle(const Tensor& a, bool upper, int64_t k);
// eye(n, m) of any floating or complex dtype.
Tensor eye_of(int64_t n, int64_t m, DType t, Device d);
// z * r for complex z (or real) and real r of z's shape.
Tensor scale_parts(const Tensor& z, const Tensor& r);
// The product over the last dim of a complex z.
Tensor complex_prod(Tensor z);
// a and b matrices (dims >= 2) of one dtype and device, batch dims broadcasting.
void check_kron(const Tensor& a, const Tensor& b);
// x defined and of a floating dtype.
void check_floating(std::string_view op, const Tensor& x);
// A numeric matrix_norm / cond order, or a named one.
void check_norm_ord(std::string_view op, double ord);
void check_norm_name(std::string_view op, std::string_view ord);
// a [.., m, n] and b [.., m, k] or [.., m] for lstsq.
void check_lstsq(const Tensor& a, const Tensor& b);
// max(m, n) eps of a's dtype: pinv's and matrix_rank's relative cutoff.
double default_rtol(const Tensor& a);
// lstsq's driver checked ("gels" or "gelsd") and its rcond (max(m, n) eps by default).
double lstsq_rcond(const Tensor& a, std::string_view driver, std::optional<double> rcond);
// matrix_exp's scaling: the number of squarings s and the Taylor degree for a.
struct ExpPlan {
  int squarings = 0, degree = 0;
};
ExpPlan matrix_exp_plan(const Tensor& a);

}  // namespace numr::linalg::detail
